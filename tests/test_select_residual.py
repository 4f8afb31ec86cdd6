"""Models on the analytic model (`select train --predictor residual`): the prediction is the analytic
model's times exp of the trees' scaled output, the analytic model's alone for a problem choosing among kernels
outside the training domain the spec records (a problem outside it is corrected as one inside); `select`, `select
eval` and `generate --for --model` say what lies outside and what ckast did; the reader refuses a bad predictor or
domain."""

from __future__ import annotations

import csv
import json
import math
import shutil

import attrs
import numpy as np
import pytest
from click.testing import CliRunner

from ckast.arch.hardware import hardware
from ckast.cli import main as cli
from ckast.select.models.analytic import AnalyticPredictor
from ckast.select.serving.library import load_library
from ckast.select.models.lightgbm_model import load_model
from ckast.select.models.inputs import model_features
from ckast.select.problem import ConvProblem

from .select_helpers import ROOT, conv_entries, python_ranking, synth_module, write_library

pytest.importorskip("lightgbm")

REAL = ROOT / "examples" / "ck-real"
CONFIG = REAL / "grouped_conv_fwd_bf16_gfx950.json"
TABLE = REAL / "grouped_conv_fwd_bf16_gfx950_train.csv"
KERNELS = REAL / "grouped_conv_fwd_bf16_gfx950_kernels.csv"
PROBLEM = ConvProblem(direction="forward", G=1, N=4, C=64, K=128, input=(28, 28), filter=(3, 3), stride=(1, 1),
                      dilation=(1, 1), left_pad=(1, 1), right_pad=(1, 1))


def _invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The fp16 2-D forward kernels (655); a 30-tree residual model trained on runs of their compv3 kernels only;
    the same model with a domain that holds everything (`wide`) and with one that holds every kernel, its problems
    the trained model's (`kernels`); the synthetic table of every kernel."""
    root = tmp_path_factory.mktemp("residual")
    lib = write_library(root / "lib", conv_entries("forward"))
    synth = synth_module()
    rows = synth.synthesize(lib, "forward", 30, 200, 1, 0.02, 0.08)
    synth.write([r for r in rows if "_compv3_" in r["kernel"]], root / "train.csv")
    synth.write(rows, root / "all.csv")
    code, out, err = _invoke("select", "train", "--data", root / "train.csv", "--library", lib, "-o", root / "model",
                             "--trees", "30", "--folds", "0")
    assert code == 0, err
    assert "(a correction of the analytic model)" in out
    shutil.copytree(root / "model", root / "wide")
    spec = json.loads((root / "wide" / "feature_spec.json").read_text())
    spec["domain"] = {"problems": {}, "kernels": {}}
    (root / "wide" / "feature_spec.json").write_text(json.dumps(spec))
    shutil.copytree(root / "model", root / "kernels")
    spec = json.loads((root / "kernels" / "feature_spec.json").read_text())
    spec["domain"]["kernels"] = {}
    (root / "kernels" / "feature_spec.json").write_text(json.dumps(spec))
    return {"lib": lib, "model": root / "model", "wide": root / "wide", "kernels": root / "kernels",
            "all": root / "all.csv"}


def test_prediction_is_analytic_times_exp_of_the_scaled_trees(models):
    library, model = load_library(models["lib"]), load_model(models["wide"])
    part = library.part(PROBLEM)
    hw = hardware(part.arch)
    x = model_features("grouped_conv").matrix(PROBLEM, part.table, model.hw)[:, model.columns]
    analytic = AnalyticPredictor().predict_tflops(PROBLEM, part, hw)
    expected = [a * math.exp(0.5 * r) for a, r in zip(analytic.tolist(), model.forest.predict(x).tolist())]
    got = model.predict_tflops(PROBLEM, part, hw)
    assert model.base == "analytic" and model.residual_scale == 0.5
    assert got.tolist() == expected and not np.array_equal(got, analytic)
    mask = np.ones((2, len(part)), dtype=bool)
    mask[1, ::3] = False
    many = model.predict_many([PROBLEM, attrs.evolve(PROBLEM, N=8)], part, hw, mask)
    assert many[0].tolist() == expected
    assert many[1][mask[1]].tolist() == model.predict_tflops(attrs.evolve(PROBLEM, N=8), part, hw,
                                                             np.flatnonzero(mask[1])).tolist()


def test_among_kernels_outside_the_domain_the_ranking_is_the_analytic_models(models):
    library = load_library(models["lib"])
    wide, model = load_model(models["wide"]), load_model(models["model"])
    far = attrs.evolve(PROBLEM, N=4096, input=(300, 300))
    analytic = python_ranking(library, far, AnalyticPredictor())
    assert python_ranking(library, far, model) == analytic
    assert python_ranking(library, far, wide) != analytic  # the trees do change it where they count
    assert model.domain.problems_outside(far)[0].startswith("N=4096 (trained")
    assert set(model.spec["domain"]) == {"problems", "kernels"}
    assert model.spec["domain"]["kernels"]["is_compv3"] == [1]


def test_a_problem_outside_the_domain_is_corrected_as_one_inside(models):
    """A problem outside the problems trained on, among kernels inside the domain: the trees' (halved) correction
    counts as it does inside (the ranking of a model whose domain holds every problem), not the analytic model
    alone; `select` says the problem lies outside and that the trees corrected it."""
    library = load_library(models["lib"])
    kernels, wide = load_model(models["kernels"]), load_model(models["wide"])
    far = attrs.evolve(PROBLEM, N=4096, input=(300, 300))
    assert kernels.domain.problems_outside(far) and kernels.kernels_inside(library.part(far)).all()
    ranking = python_ranking(library, far, kernels)
    assert ranking == python_ranking(library, far, wide) != python_ranking(library, far, AnalyticPredictor())
    code, out, err = _invoke("select", "--library", models["lib"], "--model", models["kernels"], "--problem",
                             "G=1,N=4096,C=64,K=128,Hi=28,Wi=28,Y=3,X=3,pad_h=1,pad_w=1", "--json")
    assert code == 0, err
    domain = json.loads(out)["problems"][0]["domain"]
    assert domain["ranked_by"] == "model" and domain["kernels_outside"] == 0
    assert domain["problem_outside"][0].startswith("N=4096 (trained ")
    assert err.endswith("1 of 1 problem outside the model's training domain: 0 problems ranked by the analytic model "
                        "alone, 1 problem outside ranked by the analytic model with the trees' correction, as inside\n")


def test_each_model_keeps_its_own_domain_on_a_part(models, monkeypatch):
    """What a part remembers of a model is the model's, even where two models share an id (a freed model's address
    taken by the next: the C++ and Python rankings of the compv3-only model then differed, the Python side using
    the widened model's domain)."""
    import ckast.select.models.lightgbm_model as lightgbm_model

    monkeypatch.setattr(lightgbm_model, "id", lambda obj: 0, raising=False)
    library = load_library(models["lib"])
    part = library.part(PROBLEM)
    wide, model = load_model(models["wide"]), load_model(models["model"])
    assert wide.kernels_inside(part).all()
    assert not model.kernels_inside(part).all()


def test_select_and_eval_say_what_lies_outside(models):
    code, out, err = _invoke("select", "--library", models["lib"], "--model", models["model"], "--problem",
                             "G=1,N=4,C=64,K=128,Hi=28,Wi=28,Y=3,X=3,pad_h=1,pad_w=1", "-k", "1")
    assert code == 0, err
    line = out.splitlines()[-1]
    assert line.endswith(" of 655 kernels outside the model's training domain: 1 problem "
                                                 "ranked by the analytic model alone")
    outside = int(line.split()[0])
    assert 400 < outside < 655
    code, out, err = _invoke("select", "--library", models["lib"], "--model", models["model"], "--problem",
                             "G=1,N=4096,C=64,K=128,Hi=28,Wi=28,Y=3,X=3,pad_h=1,pad_w=1", "--json")
    assert code == 0, err
    domain = json.loads(out)["problems"][0]["domain"]
    assert domain["ranked_by"] == "analytic model" and domain["kernels_outside"] == outside
    assert domain["problem_outside"][0].startswith("N=4096 (trained ")
    assert err.endswith("and 1 of 1 problem outside the model's training domain: 1 problem ranked by the analytic "
                        "model alone\n")
    code, out, err = _invoke("select", "--library", models["lib"], "--model", models["wide"], "--problem",
                             "G=1,N=4096,C=64,K=128,Hi=28,Wi=28,Y=3,X=3,pad_h=1,pad_w=1")
    assert code == 0 and "training domain" not in out + err
    code, out, err = _invoke("select", "eval", "--data", models["all"], "--library", models["lib"], "--model",
                             models["model"])
    assert code == 0, err
    assert f"; predictor: residual model {models['model']} (analytic model, " in out  # not a plain LightGBM model
    said = [line for line in out.splitlines() if "training domain" in line]
    assert len(said) == 1 and said[0].endswith("outside the model's training domain: 30 problems ranked by the "
                                               "analytic model alone")
    code, out, err = _invoke("select", "eval", "--data", models["all"], "--library", models["lib"], "--model",
                             models["model"], "--json")
    assert len(json.loads(out)["domain"]["problems"]) == 30


def test_generate_for_a_workload_says_what_lies_outside(tmp_path):
    """A model trained on the compv3 kernels of CK's MI355X table ranks its compv4 kernels by the analytic model."""
    with TABLE.open() as f:
        rows = [r for r in csv.DictReader(f) if "_compv4" not in r["kernel"]]
    with (tmp_path / "train.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    code, _, err = _invoke("generate", "--config", CONFIG, "-o", tmp_path / "lib")
    assert code == 0, err
    code, _, err = _invoke("select", "train", "--data", tmp_path / "train.csv", "--kernels", KERNELS, "--library",
                           tmp_path / "lib", "-o", tmp_path / "model", "--trees", "20", "--folds", "0")
    assert code == 0, err
    (tmp_path / "shapes.csv").write_text("G,N,C,K,Hi,Wi,Y,X,pad_h,pad_w\n1,4,64,128,28,28,3,3,1,1\n"
                                         "1,1,64,64,14,14,1,1,0,0\n")
    code, out, err = _invoke("generate", "--config", CONFIG, "--for", tmp_path / "shapes.csv", "--budget", "2",
                             "--model", tmp_path / "model", "-o", tmp_path / "chosen")
    assert code == 0, err
    assert ("3 of 13 kernels outside the model's training domain: 2 problems ranked by the analytic model alone"
            in out.splitlines())


@pytest.mark.parametrize(("change", "message"), [
    ({"predictor": "physics"}, 'predictor: "physics" is not one of analytic, lightgbm, residual'),
    ({"predictor": "lightgbm", "residual_scale": 0.5},
     "residual_scale: expected a number in (0, 1] beside predictor residual"),
    ({"residual_scale": 0}, "residual_scale: expected a number in (0, 1] beside predictor residual, not 0"),
    ({"domain": []}, "domain: expected {\"problems\": ..., \"kernels\": ...}"),
    ({"domain": {"problems": {"Q": [1, 2]}, "kernels": {}}}, "domain.problems.Q: not a grouped_conv problem column"),
    ({"domain": {"problems": {"N": [4, 2]}, "kernels": {}}}, "domain.problems.N: expected [min, max]"),
    ({"domain": {"problems": {}, "kernels": {"knob_tile_m": "64"}}}, "domain.kernels.knob_tile_m: expected a list"),
    ({"domain": {"problems": {}, "kernels": {"gemm_m": [1]}}}, "domain.kernels.gemm_m: not a kernel feature"),
])
def test_the_reader_refuses_a_bad_predictor_or_domain(models, tmp_path, change, message):
    shutil.copytree(models["model"], tmp_path / "m")
    spec = json.loads((tmp_path / "m" / "feature_spec.json").read_text())
    (tmp_path / "m" / "feature_spec.json").write_text(json.dumps({**spec, **change}))
    code, out, err = _invoke("select", "--library", models["lib"], "--model", tmp_path / "m", "--problem",
                             "G=1,N=4,C=64,K=128,Hi=28,Wi=28,Y=3,X=3,pad_h=1,pad_w=1")
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith(f"{tmp_path / 'm' / 'feature_spec.json'}: {message}"), err
