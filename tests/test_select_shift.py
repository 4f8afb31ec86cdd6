"""Validation that sees shift (`select.shift`): folds that hold out whole families of problems beside the
random group folds, the report of both for each predictor, and the model `select train` writes: the one that
does best under shift, an analytic model directory when it is the analytic model."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ckast.cli import main as cli
from ckast.select.models.forest import ModelError
from ckast.select.serving.library import load_library
from ckast.select.models.lightgbm_model import load_model
from ckast.select.serving.problem_read import conv_problem, gemm_problem
from ckast.select.ranking.shift import ANALYTIC, FAMILIES, MIN_PROBLEMS, choose, families_of, family_folds

from .select_helpers import conv_entries, synth_module, write_library

lgb = pytest.importorskip("lightgbm")


def _conv(n=2, f=3, stride=1, size=28):
    return conv_problem({"G": 1, "N": n, "C": 64, "K": 64, "Hi": size, "Wi": size, "Y": f, "X": f,
                         "stride_h": stride, "stride_w": stride, "pad_h": f // 2, "pad_w": f // 2})


def test_family_folds_hold_out_exactly_their_family():
    problems = [_conv(n, f, s, size) for n in (1, 4, 8) for f in (1, 3, 5) for s in (1, 2) for size in (14, 112)]
    group = np.repeat(np.arange(len(problems)), 3)  # three rows (kernels) per problem
    folds, skipped = family_folds(problems, group, "grouped_conv")
    by_name = {fold.label: fold for fold in folds}
    expected = {"stride 1": lambda p: p.stride == (1, 1), "stride 2+": lambda p: max(p.stride) >= 2,
                "N <= 4": lambda p: p.N <= 4, "N > 4": lambda p: p.N > 4,
                "filter 1x1": lambda p: p.filter == (1, 1), "filter 3x3": lambda p: p.filter == (3, 3),
                "other filters": lambda p: p.filter not in ((1, 1), (3, 3)),
                "image <= 56x56": lambda p: p.input[0] * p.input[1] <= 56 * 56,
                "image > 56x56": lambda p: p.input[0] * p.input[1] > 56 * 56}
    assert set(by_name) == set(expected) and skipped == []
    for name, holds in expected.items():
        rows = np.flatnonzero([holds(problems[g]) for g in group])
        assert np.array_equal(by_name[name].held, rows), name
    for axis in {f.axis for f in FAMILIES if f.kind == "grouped_conv"}:  # an axis' families part the problems
        held = np.concatenate([fold.held for fold in folds if fold.family.axis == axis])
        assert np.array_equal(np.sort(held), np.arange(len(group))), axis
    gemm = [gemm_problem({"M": m, "N": 4096, "K": 512}) for m in [1, 64, 65, 1024, 1025, 8192] * 5]
    kept, passed = families_of(gemm, "gemm")
    masks = {family.name: mask for family, mask in kept}
    assert np.array_equal(masks["M <= 64"], [m <= 64 for m in [p.M for p in gemm]])
    assert np.array_equal(masks["M 65-1024"], [64 < p.M <= 1024 for p in gemm])
    assert [s["name"] for s in passed] == ["N <= 64", "N 65-1024", "N > 1024", "K <= 1024", "K > 1024"]


def test_a_family_with_too_few_problems_is_skipped_and_said_so():
    problems = [_conv(f=1) for _ in range(3)] + [_conv(f=3, n=n) for n in range(1, 21)]
    kept, skipped = families_of(problems, "grouped_conv")
    assert "filter 1x1" not in {f.name for f, _ in kept} and "filter 3x3" not in {f.name for f, _ in kept}
    by_name = {s["name"]: s for s in skipped}
    assert by_name["filter 1x1"]["reason"] == f"3 problems (a family needs {MIN_PROBLEMS})"
    assert by_name["filter 1x1"]["where"] == "all(filter == 1)"
    assert by_name["filter 3x3"]["reason"] == f"it leaves 3 problems to train on (fewer than {MIN_PROBLEMS})"
    assert by_name["stride 2+"]["reason"] == f"0 problems (a family needs {MIN_PROBLEMS})"


def test_the_choice_is_never_below_the_analytic_model():
    shift = {ANALYTIC: {"worst": {"p10": 0.90}, "mean": {"mean": 0.98}},
             "lightgbm": {"worst": {"p10": 0.95}, "mean": {"mean": 0.97}},  # a better P10, a worse mean
             "residual": {"worst": {"p10": 0.92}, "mean": {"mean": 0.985}}}
    choice = choose(["analytic", "lightgbm", "residual"], None, shift, "lightgbm")
    assert (choice.name, choice.basis) == ("residual", "families")
    assert choose(["analytic", "lightgbm"], None, shift, "lightgbm").name == "analytic"
    tie = {n: {"worst": {"p10": 0.9}, "mean": {"mean": 0.98}} for n in ("analytic", "lightgbm")}
    assert choose(["analytic", "lightgbm"], None, tie, "lightgbm").name == "analytic"  # ties: the simpler
    random = {"analytic": {"p10": 0.9, "mean": 0.95}, "lightgbm": {"p10": 0.91, "mean": 0.96}}
    assert choose(["analytic", "lightgbm"], random, None, "lightgbm").basis == "random folds"
    assert choose(["analytic", "lightgbm"], None, None, "lightgbm").name == "lightgbm"


# select train and select eval on synthetic tables: the analytic model's timings, with a bonus for one pipeline


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return write_library(tmp_path_factory.mktemp("shift") / "lib", conv_entries("forward"))


def _table(lib, path, where):
    """40 problems x 20 kernels of the analytic model's exact TFLOPS, mem-pipeline kernels 3x as fast on the
    problems `where` holds for: a model trained there learns the bonus, and where it does not hold it is wrong."""
    synth = synth_module()
    library = load_library(lib)
    pipeline = dict(zip(library.names, (c["pipeline"] for c in library.configs)))
    rows = synth.synthesize(lib, "forward", 40, 20, 7, 0.0, 0.0)
    for row in rows:
        if where(row) and pipeline[row["kernel"]] == "mem":
            row["tflops"] = round(row["tflops"] * 3, 4)
    synth.write(rows, path)
    return path


def _rows(lines):
    """(held out or family, predictor) of a report's table rows."""
    return [(line[:22].strip(), line[22:33].strip()) for line in lines
            if line[22:33].strip() in ("analytic", "lightgbm", "residual")]


def _train(lib, data, out, *flags):
    result = CliRunner().invoke(cli, ["select", "train", "--data", str(data), "--library", str(lib), "-o", str(out),
                                      "--trees", "30", "--folds", "3", *flags])
    assert result.exit_code == 0, result.output
    return result.stdout, json.loads((out / "cv_metrics.json").read_text())


@pytest.fixture(scope="module")
def overfit(lib, tmp_path_factory):
    """The bonus only for N > 4: on the random folds LightGBM does better than the analytic model, on the family
    N <= 4 (trained on N > 4) far worse."""
    root = tmp_path_factory.mktemp("overfit")
    data = _table(lib, root / "t.csv", lambda row: row["N"] > 4)
    out, cv = _train(lib, data, root / "model")
    return {"data": data, "model": root / "model", "out": out, "cv": cv}


def test_train_reports_random_and_family_folds_for_each_predictor(overfit):
    out, cv = overfit["out"], overfit["cv"]
    lines = out.splitlines()
    assert lines[1].startswith("3-fold GroupKFold by problem shape (RMSE log1p(TFLOPS): analytic ")
    assert lines[2].split() == ["held", "out", "predictor", "problems", "mean", "P10", "P50", "min", "top-1", "top-5"]
    labels = _rows(lines[3:])
    families = [f["name"] for f in cv["families"]]
    assert "N <= 4" in families and "N > 4" in families
    assert labels == [(held, p) for held in ("3 random folds", *families, "worst family", "mean over families")
                      for p in ("analytic", "lightgbm", "residual")]
    for entry in cv["skipped"]:
        assert f"not held out: {entry['name']} ({entry['where']}): {entry['reason']}" in lines
    for name in ("analytic", "lightgbm", "residual"):
        figures = cv["predictors"][name]
        assert set(figures) == {"random", "families", "shift"} and list(figures["families"]) == families
        worst = figures["shift"]["worst"]["p10"]
        assert worst == min(f["p10"] for f in figures["families"].values())
        assert figures["families"]["N <= 4"]["problems"] + figures["families"]["N > 4"]["problems"] == 40
    # held out, each batch family lies outside the residual model's training problems but not its kernels: its
    # halved trees correct the analytic model there as the model it writes would, so the bonus learnt on N > 4
    # misleads it on N <= 4 (where the analytic model is exact), and the family held out shows it; on the random
    # folds it learns the bonus
    residual, analytic = cv["predictors"]["residual"], cv["predictors"]["analytic"]
    assert residual["families"]["N <= 4"]["mean"] < analytic["families"]["N <= 4"]["mean"] == 1.0
    assert residual["random"]["efficiency"]["mean"] > analytic["random"]["efficiency"]["mean"]


def test_the_model_written_is_the_one_that_wins_under_shift(overfit, lib, tmp_path):
    cv, model = overfit["cv"], overfit["model"]
    analytic, lightgbm = cv["predictors"]["analytic"], cv["predictors"]["lightgbm"]
    # the random folds prefer LightGBM; held out, the family it never saw undoes it
    assert lightgbm["random"]["efficiency"]["p10"] > analytic["random"]["efficiency"]["p10"]
    assert lightgbm["random"]["efficiency"]["mean"] > analytic["random"]["efficiency"]["mean"]
    assert analytic["families"]["N <= 4"]["min"] == 1.0 > 0.9 > lightgbm["families"]["N <= 4"]["mean"]
    assert analytic["shift"]["worst"]["p10"] > lightgbm["shift"]["worst"]["p10"]
    assert cv["model"] == "analytic" and cv["chosen"]["basis"] == "families"
    assert overfit["out"].splitlines()[-2].startswith("model: analytic, the highest worst-family P10 and never below "
                                                      "the analytic model (worst-family P10 / mean over families: ")
    assert overfit["out"].splitlines()[-1].startswith(f"the analytic model (no forest) -> {model} in ")
    assert sorted(p.name for p in model.iterdir()) == ["cv_metrics.json", "feature_spec.json"]
    spec = json.loads((model / "feature_spec.json").read_text())
    assert spec["predictor"] == "analytic" and spec["direction"] == "forward" and "feature_names" not in spec

    # the bonus everywhere: LightGBM learns it on every family and is written
    data = _table(lib, tmp_path / "all.csv", lambda row: True)
    out, cv = _train(lib, data, tmp_path / "m")
    lightgbm, analytic = cv["predictors"]["lightgbm"]["shift"], cv["predictors"]["analytic"]["shift"]
    assert lightgbm["worst"]["p10"] > analytic["worst"]["p10"] and lightgbm["mean"]["mean"] > analytic["mean"]["mean"]
    assert cv["model"] == "lightgbm" and "model: lightgbm, the highest worst-family P10" in out
    assert (tmp_path / "m" / "model_tflops.lgbm").is_file() and load_model(tmp_path / "m").trees == 30


def test_an_analytic_model_directory_ranks_and_emits_as_the_analytic_model(overfit, lib, tmp_path):
    model = overfit["model"]
    problem = "G=1,N=2,C=64,K=64,Hi=28,Wi=28,Y=3,X=3,pad_h=1,pad_w=1"
    runner = CliRunner()
    plain = runner.invoke(cli, ["select", "--library", str(lib), "--problem", problem, "-k", "3"])
    named = runner.invoke(cli, ["select", "--library", str(lib), "--problem", problem, "-k", "3", "--model",
                                str(model)])
    assert plain.exit_code == named.exit_code == 0, named.output
    assert f"; analytic model (as {model} names it) (estimates)" in named.stdout
    assert named.stdout.splitlines()[1:] == plain.stdout.splitlines()[1:]
    emitted = runner.invoke(cli, ["select", "emit", "--library", str(lib), "--model", str(model), "-o",
                                  str(tmp_path / "sel")])
    assert emitted.exit_code == 0 and "(0 with a LightGBM forest;" in emitted.stdout, emitted.output
    parts = json.loads((tmp_path / "sel" / "manifest.json").read_text())["selector"]["parts"]
    assert [p["predictor"] for p in parts] == ["analytic"]
    # a spec for another datatype fits no part; an unknown predictor is refused
    spec = json.loads((model / "feature_spec.json").read_text())
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "feature_spec.json").write_text(json.dumps({**spec, "dtype": "bf16"}))
    emitted = runner.invoke(cli, ["select", "emit", "--library", str(lib), "--model", str(tmp_path / "other"), "-o",
                                  str(tmp_path / "sel2")])
    assert emitted.exit_code == 2 and "fits no part of the library" in emitted.stderr
    (tmp_path / "other" / "feature_spec.json").write_text(json.dumps({**spec, "predictor": "oracle"}))
    with pytest.raises(ModelError, match='feature_spec.json: predictor: "oracle" is not one of analytic, lightgbm'):
        load_model(tmp_path / "other")


def test_eval_prints_the_figures_per_family_beside_the_analytic_model(overfit, lib, tmp_path):
    _, _ = _train(lib, overfit["data"], tmp_path / "m", "--predictor", "lightgbm")
    args = ["select", "eval", "--data", str(overfit["data"]), "--library", str(lib), "--model", str(tmp_path / "m")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = lines.index("by family of problems, beside the analytic model:")
    assert lines[start + 1].split()[:3] == ["family", "predictor", "problems"]
    rows = _rows(lines[start + 2:])
    assert ("N <= 4", "lightgbm") in rows and ("N <= 4", "analytic") in rows
    assert rows[-4:] == [("worst family", "lightgbm"), ("worst family", "analytic"), ("mean over families", "lightgbm"),
                         ("mean over families", "analytic")]
    assert lines[-1].startswith("under shift: ")
    report = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)["shift"]
    assert set(report["predictors"]) == {"lightgbm", "analytic"}
    assert report["predictors"]["analytic"]["families"]["N <= 4"]["mean"] == 1.0
    assert report["best"]["name"] in ("lightgbm", "analytic") and report["best"]["basis"] == "families"
    alone = CliRunner().invoke(cli, args[:-2])  # the analytic model alone
    assert "by family of problems:" in alone.stdout and "lightgbm" not in alone.stdout
    assert "under shift" not in alone.stdout  # one predictor: nothing to compare


def test_each_predictor_asked_for_is_written_and_says_which(overfit, lib, tmp_path):
    """`--predictor residual` and `lightgbm` write a forest whose spec names the predictor (a residual one with its
    scale and training domain); `select`, `select eval` and `select emit` read it as that predictor."""
    problem = "G=1,N=2,C=64,K=64,Hi=28,Wi=28,Y=3,X=3,pad_h=1,pad_w=1"
    for name in ("residual", "lightgbm"):
        out, cv = _train(lib, overfit["data"], tmp_path / name, "--predictor", name)
        spec = json.loads((tmp_path / name / "feature_spec.json").read_text())
        assert cv["model"] == spec["predictor"] == load_model(tmp_path / name).name == name
        assert set(cv["predictors"]) == {"analytic", "lightgbm", "residual"}
        assert ("residual_scale" in spec) == (name == "residual") and "domain" in spec
        assert f"model: {name}, as --predictor asks" in out
        assert out.splitlines()[-1].startswith("30 trees, ")
        assert ("(a correction of the analytic model)" in out) == (name == "residual")
        runner = CliRunner()
        chosen = runner.invoke(cli, ["select", "--library", str(lib), "--problem", problem, "--model",
                                     str(tmp_path / name), "--json"])
        assert chosen.exit_code == 0 and json.loads(chosen.stdout)["predictor"]["name"] == name, chosen.output
        evaluated = runner.invoke(cli, ["select", "eval", "--data", str(overfit["data"]), "--library", str(lib),
                                        "--model", str(tmp_path / name), "--json"])
        assert set(json.loads(evaluated.stdout)["shift"]["predictors"]) == {name, "analytic"}
        emitted = runner.invoke(cli, ["select", "emit", "--library", str(lib), "--model", str(tmp_path / name), "-o",
                                      str(tmp_path / f"sel_{name}")])
        assert emitted.exit_code == 0 and "(1 with a LightGBM forest;" in emitted.stdout, emitted.output
        parts = json.loads((tmp_path / f"sel_{name}" / "manifest.json").read_text())["selector"]["parts"]
        assert ("correction of the analytic model" in parts[0]["predictor"]) == (name == "residual")


def test_an_unknown_predictor_is_refused(overfit, lib, tmp_path):
    result = CliRunner().invoke(cli, ["select", "train", "--data", str(overfit["data"]), "--library", str(lib), "-o",
                                      str(tmp_path / "m"), "--trees", "3", "--predictor", "oracle"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip() == "--predictor: 'oracle' is not one of best, analytic, lightgbm, residual"
    assert not (tmp_path / "m").exists()
