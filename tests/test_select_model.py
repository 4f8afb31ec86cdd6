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
from ckast.select.serving.library import load_library
from ckast.select.models.lightgbm_model import ModelError, load_model
from ckast.select.serving.problem_read import gemm_problem

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
    "spec not json": "feature_spec.json: not valid JSON",
    "garbage model": "not a LightGBM text model",
    "truncated model": "no 'end of trees'",
    "broken tree": "model_tflops.lgbm: Tree=3: leaf_value: missing",
    "corrupt gzip": "model_tflops.lgbm.gz: not a complete gzip file",
    "spec names other features": "feature_names: the model has 72 features, the spec 71",
    "unknown feature": "feature_names: 'warp_speed' is not a feature ckast computes",
    "numeric as categorical": "categorical_features: 'tile_m' is not categorical",
    "unknown encoding": "categorical_encodings.pipeline: 'compv9' is code 7 in the model, no code",
    "other code": "categorical_encodings.scheduler: 'intrawave' is code 1 in the model, code 0",
    "other arch": "arch: the model is for gfx950, the kernels are gfx942",
    "bad op_type": 'op_type: "fmha" is not one of',
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
    assert data["predictor"] == {"name": "lightgbm", "model": str(model), "trees": 20, "estimated": True}
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
    from ckast.select.models.inputs import model_features

    for kind, count in (("gemm", 72), ("grouped_conv", 97)):
        ours, ck = model_features(kind), feature_set(kind)
        assert ours.names[:count] == ck.names and len(ck.names) == count
        extra = [n for n in ours.names[count:] if not n.startswith("ckast_")]
        assert all(n.startswith("knob_") for n in extra) and not {n[5:] for n in extra} & set(ck.names)
    conv = model_features("grouped_conv")
    assert {"knob_vector_size_a", "knob_specialization", "knob_tile_h", "knob_num_groups_to_merge"} <= set(conv.names)
    assert conv.categorical["knob_specialization"]["filter3x3"] == 3


DERIVED = {
    "gemm": ("ckast_pad_eff_m", "ckast_blocks_per_cu", "ckast_wave_eff", "ckast_mfma_utilization",
             "ckast_split_k_share"),
    "grouped_conv": ("ckast_gemm_m", "ckast_pad_eff", "ckast_waves", "ckast_wave_eff", "ckast_simd_share",
                     "ckast_dw_tile_eff", "ckast_dw_wave_eff"),
}


@pytest.mark.parametrize("kind", ["gemm", "grouped_conv"])
def test_derived_features_are_declared_after_cks_and_the_knobs(kind):
    """The `ckast_*` features are expression trees of the table, after CK's and the knob features."""
    from ckast.select.models.derived import derived_features
    from ckast.select.expr import Expr
    from ckast.select.models.inputs import model_features

    names = model_features(kind).names
    derived = [f.name for f in derived_features(kind)]
    assert set(DERIVED[kind]) <= set(derived) and all(n.startswith("ckast_") for n in derived)
    assert list(names[-len(derived):]) == derived and names[:len(feature_set(kind).names)] == feature_set(kind).names
    assert all(isinstance(f.expr, Expr) and f.encoding is None for f in derived_features(kind))


@pytest.mark.parametrize("kind, problem", [
    ("gemm", "M=1000,N=520,K=260,k_batch=2"),
    ("grouped_conv", "G=1,N=4,C=64,K=96,Hi=30,Wi=28,Y=3,X=3,pad_h=1,pad_w=1"),
    ("grouped_conv", "G=32,N=2,C=32,K=32,Hi=17,Wi=20,Y=3,X=3,stride_h=2,stride_w=2,pad_h=1,pad_w=1"),
    ("grouped_conv", "G=4,N=8,C=64,K=128,Hi=14,Wi=14,Y=3,X=3,direction=bwd_weight"),
])
def test_derived_features_batch_and_single_agree(tmp_path, kind, problem):
    """Each kernel's row of the batch matrix is the vector of its config alone, bit for bit."""
    from ckast.select.models.inputs import model_features
    from ckast.select.serving.problem_read import conv_problem, parse_pairs

    from .select_helpers import conv_entries

    if kind == "gemm":
        parsed, entries = gemm_problem(parse_pairs(problem)), gemm_entries(tmp_path)
    else:
        parsed = conv_problem(parse_pairs(problem))
        entries = conv_entries(parsed.direction, *(("forward_depthwise",) if parsed.direction == "forward" else ()))
    part = load_library(write_library(tmp_path / "lib", entries)).part(parsed)
    features, hw = model_features(kind), hardware("gfx942")
    columns = [i for i, n in enumerate(features.names) if n.startswith("ckast_")]
    batch = features.matrix(parsed, part.table, hw)[:, columns]
    single = np.array([features.vector(parsed, config, hw)[columns] for config in part.configs])
    assert batch.shape == (len(part.configs), len(columns)) and len(part.configs) > 1
    np.testing.assert_array_equal(batch, single)
    assert np.isfinite(batch[:, features.names[columns[0]:].index("ckast_wave_eff")]).any()


def test_derived_features_are_physical_on_a_known_shape():
    """A 64x64x64 tile, 4 warps, single LDS buffer: 64 KiB / 16 KiB = 4 blocks per CU (8 warps / 4 = 2 cap);
    a 1000x520x260 GEMM pads M to 1024 and waves 16 x 9 = 144 tiles over 304 x 2 slots."""
    from ckast.select.models.inputs import model_features

    config = {"kind": "gemm", "variant": "standard", "datatype": "fp16", "tile_m": 64, "tile_n": 64, "tile_k": 64,
              "warp_m": 2, "warp_n": 2, "warp_k": 1, "pipeline": "compv3", "double_smem_buffer": False}
    features = model_features("gemm")
    row = dict(zip(features.names, features.vector(gemm_problem({"M": 1000, "N": 520, "K": 260}), config,
                                                   hardware("gfx942"))))
    assert row["ckast_blocks_per_cu"] == 2 and row["ckast_tiles"] == 16 * 9 and row["ckast_waves"] == 1
    assert row["ckast_pad_eff_m"] == 1000 / 1024 and row["ckast_pad_eff_k"] == 260 / 320
    assert row["ckast_wave_eff"] == pytest.approx(144 / 608) and row["ckast_split_k_share"] == 0
    assert row["ckast_mfma_utilization"] == pytest.approx(1000 * 520 * 260 / (5 * 64**3 * 2 * 304))


def test_model_of_cks_conv_features_alone_still_loads(tmp_path):
    """A conv model trained on CK's 97 features (no knob or ckast_* feature) binds by name and predicts
    as LightGBM does on CK's columns of ckast's set."""
    from ckast.select.models.inputs import model_features
    from ckast.select.serving.problem_read import conv_problem, parse_pairs

    from .select_helpers import conv_entries, random_features

    ck = feature_set("grouped_conv")
    names = list(ck.names)
    x = random_features(ck, 300, 10)
    booster = lgb.train({"verbose": -1, "num_leaves": 7, "seed": 0, "deterministic": True, "num_threads": 1},
                        lgb.Dataset(x, x[:, 0] ** 2, feature_name=names,
                                    categorical_feature=list(ck.categorical)), 10)
    model = tmp_path / "ck"
    model.mkdir()
    (model / "model_tflops.lgbm").write_text(booster.model_to_string())
    (model / "feature_spec.json").write_text(json.dumps({
        "op_type": "grouped_conv", "dtype": "fp16", "arch": "gfx942", "feature_names": names,
        "categorical_features": list(ck.categorical), "log_targets": ["tflops"]}))
    predictor = load_model(model)
    problem = conv_problem(parse_pairs("G=1,N=4,C=64,K=96,Hi=30,Wi=28,Y=3,X=3,pad_h=1,pad_w=1"))
    part = load_library(write_library(tmp_path / "lib", conv_entries("forward"))).part(problem)
    full = model_features("grouped_conv").matrix(problem, part.table, predictor.hw)
    expected = np.expm1(booster.predict(full[:, :len(names)]))
    assert np.array_equal(predictor.predict_tflops(problem, part, None), expected)
