"""`ckast select`: libraries read from their manifest, the analytic model, deterministic rankings of the
applicable kernels, --json / --features / --why-not, and bad problems refused naming the field."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ckast.arch.hardware import hardware
from ckast.cli.select import select
from ckast.select.models.analytic import AnalyticPredictor, gemm_view
from ckast.select.serving.applicability import LAYERS, checked_many
from ckast.select.ranking.batch import rank_many
from ckast.select.features import feature_set
from ckast.select.models.inputs import model_features
from ckast.select.serving.library import LibraryError, load_library
from ckast.select.models.lightgbm_model import load_model
from ckast.select.problem import ProblemError
from ckast.select.serving.problem_read import conv_problem, gemm_problem, parse_pairs
from ckast.select.ranking.rank import rank

from .select_helpers import conv_entries, gemm_entries, synth_module, write_library

CONV = "G=1,N=32,C=64,K=64,Hi=56,Wi=56,Y=3,X=3,pad_h=1,pad_w=1"
DEPTHWISE = "G=64,N=8,C=64,K=64,Hi=56,Wi=56,Y=3,X=3,pad_h=1,pad_w=1"
GEMM = "M=4096,N=4096,K=4096"


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    root = tmp_path_factory.mktemp("libs")
    conv = conv_entries("forward", "forward_depthwise", "bwd_data")
    gemm = gemm_entries(root)
    return {"conv": write_library(root / "conv", conv), "gemm": write_library(root / "gemm", gemm),
            "mixed": write_library(root / "mixed", gemm + conv),
            "two_dtypes": write_library(root / "two", gemm_entries(root, ("fp16", "bf16")))}


def _run(*args: str):
    result = CliRunner().invoke(select, list(args))
    return result, result.stdout, result.stderr


def _json(*args: str) -> dict:
    result, out, err = _run(*args, "--json")
    assert result.exit_code == 0, err
    return json.loads(out)


class ConstantPredictor:
    name = "constant"

    def predict_tflops(self, problem, part, hw, rows=None):
        return np.full(len(part) if rows is None else len(rows), 7.0)


def test_library_parts_follow_kind_direction_and_rank(libs):
    library = load_library(libs["mixed"])
    forward = library.part(conv_problem(parse_pairs(CONV)))
    bwd = library.part(conv_problem(parse_pairs(CONV + ",direction=bwd_data")))
    gemm = library.part(gemm_problem(parse_pairs(GEMM)))
    assert {c["variant"] for c in forward.configs} == {"forward", "forward_depthwise"}
    assert {c["variant"] for c in bwd.configs} == {"bwd_data"}
    assert {c["kind"] for c in gemm.configs} == {"gemm"}
    assert len(forward) + len(bwd) + len(gemm) == len(library.names)
    with pytest.raises(LibraryError, match="no forward 3-D grouped-conv kernel"):
        library.part(conv_problem(parse_pairs("G=1,N=1,C=8,K=8,Di=4,Hi=4,Wi=4,Z=1,Y=1,X=1")))


def test_ties_are_broken_by_name(libs):
    library = load_library(libs["conv"])
    problem = conv_problem(parse_pairs(CONV))
    part = library.part(problem)
    ranking = rank(problem, part, ConstantPredictor(), hardware("gfx942"))
    names = [part.names[i] for i in ranking.order]
    assert names == sorted(names) and 0 < len(names) < len(part)
    assert all(ranking.applicable[ranking.order])


MANY = ["M=4096,N=4096,K=4096", "M=100,N=7,K=8", "M=16,N=4096,K=4097,k_batch=2", "M=1,N=8,K=8", CONV, DEPTHWISE,
        "G=2,N=3,C=16,K=32,Hi=9,Wi=7,Y=3,X=1,stride_h=2,dilation_w=2,pad_h=1", "G=1,N=1,C=8,K=8,Hi=2,Wi=2,Y=1,X=1",
        "G=4,N=2,C=4,K=4,Hi=30,Wi=30,Y=5,X=5,left_pad_h=2,right_pad_h=0", CONV + ",direction=bwd_data",
        "G=1,N=2,C=64,K=8,Hi=14,Wi=14,Y=3,X=3,stride_h=2,stride_w=2,direction=bwd_data"]


@pytest.mark.parametrize("predictor", [AnalyticPredictor(), ConstantPredictor()], ids=["analytic", "per_problem"])
def test_problems_ranked_together_rank_as_each_alone(libs, predictor):
    """`rank_many` (problems of one part together; predictions too where the predictor has `predict_many`) gives
    every problem the ranking `rank` gives it, entry for entry."""
    library, hw = load_library(libs["mixed"]), hardware("gfx942")
    by_part: dict = {}
    for text in MANY:
        problem = (gemm_problem if text.startswith("M=") else conv_problem)(parse_pairs(text))
        by_part.setdefault(library.part(problem), []).append(problem)
    assert len(by_part) == 3
    rankings = []
    for part, problems in by_part.items():
        rankings += rank_many(problems, part, predictor, hw, LAYERS)
    for many in rankings:
        alone = rank(many.problem, many.part, predictor, hw, LAYERS)
        assert np.array_equal(many.applicable, alone.applicable) and many.layers == alone.layers
        assert np.array_equal(many.tflops, alone.tflops, equal_nan=True) and np.array_equal(many.order, alone.order)
        assert dict(many.refused) == dict(alone.refused)
    assert len(rankings) == len(MANY) and {bool(r.applicable.any()) for r in rankings} == {True, False}


@pytest.fixture(scope="module")
def models(libs, tmp_path_factory):
    """12-tree LightGBM models on synthetic timings of the GEMM library and of the conv library's forward part."""
    pytest.importorskip("lightgbm")
    root, synth, out = tmp_path_factory.mktemp("models"), synth_module(), {}
    for kind, direction in (("gemm", "gemm"), ("conv", "forward")):
        data = root / f"{kind}.csv"
        synth.write(synth.synthesize(libs[kind], direction, 20, 40, 1, 0.02, 0.08), data)
        result = CliRunner().invoke(select, ["train", "--data", str(data), "--library", str(libs[kind]), "-o",
                                             str(root / kind), "--trees", "12", "--folds", "0"])
        assert result.exit_code == 0, result.output
        out[kind] = load_model(root / kind)
    return out


@pytest.mark.parametrize("kind", ["gemm", "conv"])
def test_a_lightgbm_model_ranks_problems_together_as_each_alone(libs, models, kind):
    """The model's `predict_many`: every problem's feature rows (those of its applicable kernels) are the ones
    it has alone, and its ranking is the one `rank` gives it, bit for bit."""
    library, predictor, hw = load_library(libs[kind]), models[kind], hardware("gfx942")
    texts = [t for t in MANY if t.startswith("M=") == (kind == "gemm") and "bwd" not in t]
    problems = [(gemm_problem if kind == "gemm" else conv_problem)(parse_pairs(text)) for text in texts]
    part = library.part(problems[0])
    assert {id(library.part(p)) for p in problems} == {id(part)}
    mask = checked_many(problems, part.table, LAYERS)[0]
    assert mask.any(axis=1).any() and not mask.all()
    features = model_features(predictor.kind)
    alone = np.concatenate([features.matrix(p, part.table, predictor.hw)[mask[i]] for i, p in enumerate(problems)])
    many = features.matrix_many(problems, part.table, predictor.hw, mask)
    assert many.shape == alone.shape and np.array_equal(many, alone, equal_nan=True)
    predicted = predictor.predict_many(problems, part, hw, mask)
    assert np.isnan(predicted[~mask]).all()
    for i, problem in enumerate(problems):
        one = predictor.predict_tflops(problem, part, hw, np.flatnonzero(mask[i]))
        assert predicted[i, mask[i]].view(np.int64).tolist() == one.view(np.int64).tolist()
    rankings = rank_many(problems, part, predictor, hw, LAYERS)
    for ranking, problem in zip(rankings, problems, strict=True):
        one = rank(problem, part, predictor, hw, LAYERS)
        assert ranking.tflops.view(np.int64).tolist() == one.tflops.view(np.int64).tolist()
        assert np.array_equal(ranking.order, one.order) and np.array_equal(ranking.applicable, one.applicable)
    scored = np.concatenate([r.tflops[r.applicable] for r in rankings])
    assert len(np.unique(scored)) > 2  # the model tells kernels apart


def test_ranking_is_deterministic_and_best_first(libs):
    args = ("--library", str(libs["conv"]), "--problem", CONV, "-k", "50")
    first, second = _json(*args), _json(*args)
    assert first == second
    top = first["problems"][0]["top"]
    tflops = [e["predicted_tflops"] for e in top]
    assert tflops == sorted(tflops, reverse=True) and all(e["applicable"] for e in top)
    assert [e["rank"] for e in top] == list(range(1, len(top) + 1))


def test_analytic_model_charges_padding_and_stays_under_peak(libs):
    library = load_library(libs["gemm"])
    hw = hardware("gfx942")
    model = AnalyticPredictor()
    exact = gemm_problem({"M": 4096, "N": 4096, "K": 4096})
    over = gemm_problem({"M": 4096, "N": 4096, "K": 4097})
    part = library.part(exact)
    t_exact, t_over = model.predict_tflops(exact, part, hw), model.predict_tflops(over, part, hw)
    assert (t_exact <= hw.peak_tflops["fp16"]).all() and (t_exact > 0).all()
    assert (t_over < t_exact).all()  # one more K: a whole padded k-step for every tile
    tiles = np.array([c["tile_m"] * c["tile_n"] for c in part.configs])
    skinny = gemm_problem({"M": 16, "N": 4096, "K": 4096})
    best = part.configs[int(np.argmax(model.predict_tflops(skinny, part, hw)))]
    assert best["tile_m"] == min(c["tile_m"] for c in part.configs)  # M = 16: the smallest M tile wastes least
    assert t_exact[np.argmax(tiles)] > t_exact[np.argmin(tiles)]  # large square problem: big tiles win


def test_gemm_view_per_direction():
    fields = "G=2,N=4,C=16,K=32,Hi=10,Wi=10,Y=3,X=3"  # 8 and 16 channels per group
    assert gemm_view(conv_problem(parse_pairs(fields))) == (2, 4 * 8 * 8, 16, 8 * 9)
    assert gemm_view(conv_problem(parse_pairs(fields + ",direction=bwd_data"))) == (2, 4 * 100, 8, 16 * 9)
    assert gemm_view(conv_problem(parse_pairs(fields + ",direction=bwd_weight"))) == (2, 16, 8 * 9, 4 * 64)


def test_json_features_and_text(libs):
    data = _json("--library", str(libs["conv"]), "--problem", CONV, "--features", "-k", "2")
    entry = data["problems"][0]["top"][0]
    names = model_features("grouped_conv").names
    assert list(entry["features"]) == list(names) and entry["features"]["C"] == 64.0
    assert names[:97] == feature_set("grouped_conv").names and entry["features"]["knob_vector_size_a"] > 0
    assert set(entry) == {"rank", "name", "applicable", "predicted_tflops", "predicted_time_us", "features"}
    assert data["predictor"] == {"name": "analytic", "estimated": True}
    result, out, _ = _run("--library", str(libs["conv"]), "--problem", CONV, "-k", "3")
    lines = out.splitlines()
    assert result.exit_code == 0 and lines[0].startswith(CONV) and lines[0].endswith("; analytic model (estimates)")
    assert len(lines) == 5 and data["problems"][0]["top"][0]["name"] in lines[2]


def test_why_not_names_the_condition(libs):
    library = load_library(libs["conv"])
    depthwise = next(n for n, c in zip(library.names, library.configs) if c["variant"] == "forward_depthwise")
    bwd = next(n for n, c in zip(library.names, library.configs) if c["variant"] == "bwd_data")
    data = _json("--library", str(libs["conv"]), "--problem", CONV, "--why-not", depthwise, "--why-not", bwd)
    dw, other = data["problems"][0]["why_not"]
    assert dw["applicable"] is False and dw["reason"].startswith("depthwise.") and "C=64" in dw["reason"]
    assert other["reason"].startswith("not one of the problem's kernels: it is a bwd_data 2-D fp16")
    best = data["problems"][0]["top"][0]["name"]
    ok = _json("--library", str(libs["conv"]), "--problem", CONV, "--why-not", best)["problems"][0]["why_not"][0]
    assert ok["applicable"] is True and ok["rank"] == 1 and ok["reason"] is None
    result, _, err = _run("--library", str(libs["conv"]), "--problem", CONV, "--why-not", "no_such_kernel")
    assert result.exit_code == 2 and "no_such_kernel" in err and len(err.splitlines()) == 1


def test_mixed_library_ranks_each_problem_among_its_kind(libs):
    data = _json("--library", str(libs["mixed"]), "--problem", GEMM, "--problem", DEPTHWISE, "-k", "3")
    gemm, conv = data["problems"]
    assert all(e["name"].startswith("gemm_") for e in gemm["top"])
    assert all("_forward_" in e["name"] for e in conv["top"])
    assert "forward_depthwise" in conv["top"][0]["name"]  # C = K = 1: the depthwise kernels win


@pytest.mark.parametrize("problem, field", [
    ("M=0,N=8,K=8", "M"),
    ("M=8,N=8", "K"),
    ("M=8,N=8,K=8,Q=1", "Q"),
    ("M=8,N=8,K=8,k_batch=x", "k_batch"),
    ("M=8,N=8,K=8,M=9", "M"),
])
def test_bad_problem_exits_2_naming_the_field(libs, problem, field):
    result, out, err = _run("--library", str(libs["gemm"]), "--problem", problem)
    assert result.exit_code == 2 and out == ""
    assert len(err.splitlines()) == 1 and f"{field}:" in err


@pytest.mark.parametrize("lib, problem, line", [
    ("gemm", "M=1048576,N=1048576,K=4096", "A: the A tensor (M x K, all batches) must have at most 2147483647 elements (CK's "
                                           "index_t), not 4294967296"),
    ("gemm", "M=65536,N=65536,K=16", "C: the C tensor (M x N, all batches, as each D tensor) must have at most 2147483647 elements "
                                     "(CK's index_t), not 4294967296"),
    ("gemm", "M=\uff14\uff10\uff19\uff16,N=8,K=8", "M: '\uff14\uff10\uff19\uff16' is not an integer (ASCII digits 0-9, "
                                                     "optionally after '-')"),
    ("gemm", "M=8,N=4_096,K=8", "N: '4_096' is not an integer (ASCII digits 0-9, optionally after '-')"),
    ("gemm", "M=8,N=8,K=+8", "K: '+8' is not an integer (ASCII digits 0-9, optionally after '-')"),
    ("gemm", "M=-4096,N=8,K=8", "M: -4096 is out of range [1, 2147483647]"),
    ("gemm", "M=8,N=8,K=8,k_batch=" + "9" * 5000, "k_batch: 99999999999999999999999999999999999999999999...99999999 "
                                                   "(5000 characters) is out of range [1, 2147483647]"),
    ("conv", "G=1,N=1,C=1048576,K=4096,Hi=1,Wi=1,Y=1,X=1", "weight: the weight tensor (K x C / G x the filter lengths) "
                                                           "must have at most 2147483647 elements (CK's index_t), not "
                                                           "4294967296"),
    ("conv", "G=1,N=1,C=8,K=8,Wi=1,X=1,pad_w=2147483647", "output: the output tensor (N x K x the output lengths, all "
                                                          "groups) must have at most 2147483647 elements (CK's "
                                                          "index_t), not 34359738360"),
    ("conv", "G=1,N=1,C=8,K=8,Hi=2,Wi=2,Y=3,X=3,dilation_w=2", "Hi: the output length along h must be at least 1 (the "
                                                               "dilated filter must fit the padded input), not 0"),
    ("conv", "G=1,N=1,C=8,K=8,Wi=2,X=1,ndim=4", "ndim: 4 is out of range [1, 3]"),
])
def test_problems_ckast_cannot_run_are_refused_in_one_line(libs, lib, problem, line):
    """Sizes and tensors beyond CK's index_t, and integers Python's int() reads but ckast does not."""
    result, out, err = _run("--library", str(libs[lib]), "--problem", problem)
    assert (result.exit_code, out, err) == (2, "", f"--problem: {line}\n")


def test_bad_conv_problem_and_library(libs, tmp_path):
    result, _, err = _run("--library", str(libs["conv"]), "--problem", "G=1,N=1,C=8,K=8,Hi=2,Wi=2,Y=3,X=3")
    assert result.exit_code == 2 and err.startswith("--problem: Hi:") and len(err.splitlines()) == 1
    result, _, err = _run("--library", str(libs["conv"]), "--problem", GEMM)
    assert result.exit_code == 2 and err == f"{libs['conv']}: the library holds no GEMM kernel\n"
    result, _, err = _run("--library", str(tmp_path), "--problem", GEMM)
    assert result.exit_code == 2 and "manifest.json" in err and len(err.splitlines()) == 1
    result, _, err = _run("--library", str(libs["two_dtypes"]), "--problem", GEMM)
    assert result.exit_code == 2 and err.startswith("--datatype:") and "bf16, fp16" in err
    assert _json("--library", str(libs["two_dtypes"]), "--problem", GEMM, "--datatype", "bf16")[
        "problems"][0]["datatype"] == "bf16"


def test_problems_file(libs, tmp_path):
    csv_file = tmp_path / "p.csv"
    csv_file.write_text("M,N,K,k_batch\n4096,4096,4096,\n16,4096,4096,1\n")
    data = _json("--library", str(libs["gemm"]), "--problems", str(csv_file))
    assert [p["fields"]["M"] for p in data["problems"]] == [4096, 16]
    json_file = tmp_path / "p.json"
    json_file.write_text(json.dumps({"problems": [{"M": 64, "N": 64, "K": 64}]}))
    assert len(_json("--library", str(libs["gemm"]), "--problems", str(json_file))["problems"]) == 1
    csv_file.write_text("M,N,K\n4096,4096,-1\n")
    result, _, err = _run("--library", str(libs["gemm"]), "--problems", str(csv_file))
    assert result.exit_code == 2 and err.startswith(f"{csv_file}: row 1: K:")


def test_conv_channels_count_all_groups():
    """CK's spellings count C and K over all groups (as its benchmark tables do); the problem holds them per
    group, as ConvParam and the launchers do; a count that does not split into G groups is refused."""
    problem = conv_problem(parse_pairs("G=4,N=2,C=64,K=32,Hi=8,Wi=8,Y=3,X=3"))
    assert (problem.C, problem.K) == (16, 8)
    with pytest.raises(ProblemError, match="C: 6 channels do not split into G=4 groups"):
        conv_problem(parse_pairs("G=4,N=2,C=6,K=32,Hi=8,Wi=8,Y=3,X=3"))
