"""LightGBM model directories (CK's layout): bound to ckast's feature set by name (a model of an older,
smaller feature set loads), gzip'd models load, and every unusable directory (missing, corrupt, truncated,
spec mismatch, unknown feature or encoding) is one line and exit 2."""

from __future__ import annotations

import gzip
import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from ckast.arch.hardware import hardware
from ckast.cli.select import select
from ckast.select.features import feature_set
from ckast.select.library import load_library
from ckast.select.lightgbm_model import ModelError, load_model
from ckast.select.problem import gemm_problem

from .select_helpers import gemm_entries, write_library

lgb = pytest.importorskip("lightgbm")
GEMM = "M=1024,N=512,K=256"


def _write(directory, names, spec_extra=None, trees=20, seed=0):
    """A model on random rows of the named features (categorical columns drawn from their codes)."""
    features = feature_set("gemm")
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(400, len(names))) * 100
    for j, name in enumerate(names):
        if name in features.categorical:
            x[:, j] = rng.choice(list(features.categorical[name].values()), len(x))
    y = np.log1p(np.abs(x[:, 0]) + np.abs(x[:, -1]) + 1)
    categorical = [n for n in names if n in features.categorical]
    booster = lgb.train({"verbose": -1, "num_leaves": 7, "seed": seed, "deterministic": True, "num_threads": 1},
                        lgb.Dataset(x, y, feature_name=list(names), categorical_feature=categorical), trees)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "model_tflops.lgbm").write_text(booster.model_to_string())
    spec = {"op_type": "gemm_universal", "dtype": "fp16", "arch": "gfx942", "feature_names": list(names),
            "categorical_features": categorical, "log_targets": ["tflops"], **(spec_extra or {})}
    (directory / "feature_spec.json").write_text(json.dumps(spec))
    return booster


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    root = tmp_path_factory.mktemp("lib")
    return write_library(root / "gemm", gemm_entries(root))


@pytest.fixture
def model(tmp_path):
    directory = tmp_path / "model"
    _write(directory, feature_set("gemm").names)
    return directory


def _expected(booster, lib, columns=None):
    library = load_library(lib)
    problem = gemm_problem({"M": 1024, "N": 512, "K": 256})
    part = library.part(problem)
    from ckast.arch.hardware import ck_engine_hardware

    x = feature_set("gemm").matrix(problem, part.table, ck_engine_hardware())
    return part, problem, np.expm1(booster.predict(x if columns is None else x[:, columns]))


def test_model_predicts_as_lightgbm(tmp_path, lib):
    booster = _write(tmp_path / "m", feature_set("gemm").names)
    predictor = load_model(tmp_path / "m")
    part, problem, expected = _expected(booster, lib)
    assert np.array_equal(predictor.predict_tflops(problem, part, hardware("gfx942")), expected)


def test_older_smaller_feature_set_binds_by_name(tmp_path, lib):
    names = list(feature_set("gemm").names)
    subset = [names[j] for j in (40, 3, 0, 12, 26, 1, 2, 65)]  # fewer features, another order
    booster = _write(tmp_path / "old", subset)
    part, problem, expected = _expected(booster, lib, [names.index(n) for n in subset])
    assert np.array_equal(load_model(tmp_path / "old").predict_tflops(problem, part, None), expected)


def test_gzipped_model_loads(model, lib):
    text = (model / "model_tflops.lgbm").read_bytes()
    plain = load_model(model)
    (model / "model_tflops.lgbm").unlink()
    (model / "model_tflops.lgbm.gz").write_bytes(gzip.compress(text))
    packed = load_model(model)
    assert not (model / "model_tflops.lgbm").exists()  # read in memory, nothing written beside it
    part = load_library(lib).part(gemm_problem({"M": 64, "N": 64, "K": 64}))
    problem = gemm_problem({"M": 64, "N": 64, "K": 64})
    assert np.array_equal(plain.predict_tflops(problem, part, None), packed.predict_tflops(problem, part, None))


def _break(model, how):
    spec_path, model_path = model / "feature_spec.json", model / "model_tflops.lgbm"
    spec = json.loads(spec_path.read_text())
    text = model_path.read_text()
    if how == "no directory":
        shutil.rmtree(model)
    elif how == "no spec":
        spec_path.unlink()
    elif how == "no model":
        model_path.unlink()
    elif how == "spec not json":
        spec_path.write_text("{")
    elif how == "garbage model":
        model_path.write_text("hello\n")
    elif how == "truncated model":
        model_path.write_text(text[: text.index("leaf_value=", text.index("Tree=3"))])
    elif how == "broken tree":  # LightGBM itself would abort the process on it (a tree parsed on a thread)
        start = text.index("leaf_value=", text.index("Tree=3"))
        model_path.write_text(text[:start] + text[text.index("\n", start) + 1:])
    elif how == "corrupt gzip":
        model_path.unlink()
        (model / "model_tflops.lgbm.gz").write_bytes(gzip.compress(text.encode())[:200])
    elif how == "spec names other features":
        spec["feature_names"] = spec["feature_names"][:-1]
        spec_path.write_text(json.dumps(spec))
    elif how == "unknown feature":
        spec["feature_names"][5] = "warp_speed"
        spec_path.write_text(json.dumps(spec))
        model_path.write_text(text.replace(" log2_N ", " warp_speed "))
    elif how == "numeric as categorical":
        spec["categorical_features"].append("tile_m")
        spec_path.write_text(json.dumps(spec))
    elif how == "unknown encoding":
        spec["categorical_encodings"] = {"pipeline": {"compv3": 0, "compv9": 7}}
        spec_path.write_text(json.dumps(spec))
    elif how == "other code":
        spec["categorical_encodings"] = {"scheduler": {"intrawave": 1}}
        spec_path.write_text(json.dumps(spec))
    elif how == "other arch":
        spec["arch"] = "gfx950"
        spec_path.write_text(json.dumps(spec))
    elif how == "bad op_type":
        spec["op_type"] = "fmha"
        spec_path.write_text(json.dumps(spec))


BROKEN = {
    "no directory": "not a model directory",
    "no spec": "feature_spec.json: missing",
    "no model": "model_tflops.lgbm: missing",
    "spec not json": "feature_spec.json: not JSON",
    "garbage model": "not a LightGBM text model",
    "truncated model": "no 'end of trees'",
    "broken tree": "tree 3:",
    "corrupt gzip": "model_tflops.lgbm.gz: not a complete gzip file",
    "spec names other features": "feature_names: the model has 72 features, the spec 71",
    "unknown feature": "feature_names: 'warp_speed' is not a feature ckast computes",
    "numeric as categorical": "categorical_features: 'tile_m' is not categorical",
    "unknown encoding": "categorical_encodings.pipeline: 'compv9' is code 7 in the model, no code",
    "other code": "categorical_encodings.scheduler: 'intrawave' is code 1 in the model, code 0",
    "other arch": "arch: the model is for gfx950, the kernels are gfx942",
    "bad op_type": "op_type: 'fmha' is not one of",
}


@pytest.mark.parametrize("how", sorted(BROKEN))
def test_unusable_model_is_one_line_exit_2(model, lib, how):
    _break(model, how)
    result = CliRunner().invoke(select, ["--library", str(lib), "--problem", GEMM, "--model", str(model)])
    assert result.exit_code == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and BROKEN[how] in result.stderr, result.stderr
    assert str(model) in result.stderr


def test_model_ranks_through_the_cli(model, lib):
    result = CliRunner().invoke(select, ["--library", str(lib), "--problem", GEMM, "--model", str(model), "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["predictor"] == {"name": "lightgbm", "model": str(model), "trees": 20}
    tflops = [e["predicted_tflops"] for e in data["problems"][0]["top"]]
    assert tflops == sorted(tflops, reverse=True) and len(tflops) == 5


def test_missing_hardware_figure_is_refused(model):
    spec = json.loads((model / "feature_spec.json").read_text())
    spec["hardware"] = {"num_cus": 256, "flux_capacitors": 3}
    (model / "feature_spec.json").write_text(json.dumps(spec))
    with pytest.raises(ModelError, match="hardware: unknown hardware figure"):
        load_model(model)


def test_knob_features_extend_cks_set():
    """ckast's model features: CK's, in CK's order, then every knob CK's set does not read (by name)."""
    from ckast.select.model_features import model_features

    for kind, count in (("gemm", 72), ("grouped_conv", 97)):
        ours, ck = model_features(kind), feature_set(kind)
        assert ours.names[:count] == ck.names and len(ck.names) == count
        extra = ours.names[count:]
        assert all(n.startswith("knob_") for n in extra) and not {n[5:] for n in extra} & set(ck.names)
    conv = model_features("grouped_conv")
    assert {"knob_vector_size_a", "knob_specialization", "knob_tile_h", "knob_num_groups_to_merge"} <= set(conv.names)
    assert conv.categorical["knob_specialization"]["filter3x3"] == 3
