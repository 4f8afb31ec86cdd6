"""Libraries for a workload: the within (set cover) and budget (facility location) choices keep an applicable
kernel for every problem the selection serves, meet their bound, are deterministic; weights; `ckast list --for`
and `ckast generate --for` with their errors (one line, exit 2); CK's MI355X measurements cross-validated."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ckast.cli.library import generate, list_
from ckast.cli.select import select
from ckast.cli.bench import bench
from ckast.cli.diff import diff
from ckast.config import as_dict
from ckast.lower.identity import kernel_name
from ckast.select.serving.applicability import LAYERS
from ckast.select.ranking.evaluate import group_runs
from ckast.select.tables.kernel_table import read_kernel_table
from ckast.select.ranking.rank import load_predictor
from ckast.select.tables.timings import read_timings
from ckast.select.ranking.train import group_folds
from ckast.select.reports.workload import (Scores, Workload, WorkloadError, choose, library_of, measured, predicted,
                                   read_workload)
from ckast.workflow.libraries import build_library

from .select_helpers import ROOT

REAL = ROOT / "examples" / "ck-real"
CONV_CONFIG = REAL / "grouped_conv_fwd_bf16_gfx950.json"
CONV_TABLE = REAL / "grouped_conv_fwd_bf16_gfx950_train.csv"
CONV_KERNELS = REAL / "grouped_conv_fwd_bf16_gfx950_kernels.csv"
SHAPE = ("N", "C", "K", "G", "Hi", "Wi", "Y", "X", "stride_h", "stride_w", "pad_h", "pad_w")


def _scores(eff: np.ndarray, names=None) -> Scores:
    eff = np.asarray(eff, dtype=np.float64)
    served = eff.max(axis=1) > 0
    names = tuple(names or (f"k{i:02d}" for i in range(eff.shape[1])))
    return Scores(names, eff, served, tuple(None if s else "none" for s in served))


def _random(seed: int, problems: int = 40, kernels: int = 25) -> np.ndarray:
    """Efficiencies of a random workload: each problem some kernels not applicable, its best at 1, one problem
    served by a single poor kernel only, one by none."""
    rng = np.random.default_rng(seed)
    eff = rng.uniform(0.3, 1.0, (problems, kernels)) * (rng.uniform(size=(problems, kernels)) < 0.8)
    eff[0] = 0.0
    eff[0, 7] = 0.2
    eff[1] = 0.0
    eff[eff.sum(axis=1) == 0, 3] = 0.5
    eff[1] = 0.0
    best = eff.max(axis=1, keepdims=True)
    return np.divide(eff, best, out=np.zeros_like(eff), where=best > 0)


@pytest.mark.parametrize("seed", range(4))
def test_within_covers_every_served_problem_within_p(seed):
    scores = _scores(_random(seed))
    for percent in (0.0, 5.0, 20.0):
        choice = choose(scores, np.ones(40), within=percent)
        eff = choice.efficiency
        assert np.isnan(eff[1]) and np.isfinite(eff[scores.served]).all()
        assert (eff[scores.served] >= 1 - percent / 100 - 1e-9).all()
        assert len(set(choice.kept)) == len(choice.kept) < 25


@pytest.mark.parametrize("seed", range(4))
def test_budget_respects_n_covers_and_beats_every_single_kernel(seed):
    raw = _random(seed)
    scores = _scores(raw)
    singles = raw[scores.served].mean(axis=0)
    for budget in (4, 6, 10):
        choice = choose(scores, np.ones(40), budget=budget)
        kept_eff = raw[:, list(choice.kept)]
        assert len(choice.kept) <= budget and choice.over_budget == 0
        assert (kept_eff[scores.served] > 0).any(axis=1).all()  # problem 0's only kernel is kept
        assert 7 in choice.kept
        assert choice.summary()["mean"] >= singles.max() - 1e-12
    assert choose(scores, np.ones(40), budget=8).summary()["mean"] > choose(scores, np.ones(40), budget=4).summary()[
        "mean"]


def test_budget_keeps_more_only_to_cover():
    eff = np.eye(3)  # each problem served by its own kernel only
    choice = choose(_scores(eff), np.ones(3), budget=1)
    assert sorted(choice.kept) == [0, 1, 2] and choice.over_budget == 2
    assert choice.summary() == {"problems": 3, "mean": 1.0, "p10": 1.0, "min": 1.0, "weighted_mean": 1.0}


def test_budget_starts_from_a_cover_when_the_greedy_n_leave_a_problem_unserved():
    eff = np.zeros((11, 3))
    eff[:10, 0] = [1.0] * 5 + [0.5] * 5
    eff[5:10, 2] = 1.0
    eff[10, 1] = 1.0  # problem 10 only kernel 1 serves, at a small weight: the greedy 2 would be kernels 0 and 2
    weights = np.array([1.0] * 10 + [0.01])
    assert choose(_scores(eff), weights, budget=3).kept == (0, 2, 1)
    choice = choose(_scores(eff), weights, budget=2)
    assert choice.kept == (0, 1) and choice.over_budget == 0 and choice.summary()["min"] == 0.5


def test_choice_is_deterministic_and_ties_go_by_name():
    raw = _random(9)
    perm = np.random.default_rng(1).permutation(25)
    names = [f"k{i:02d}" for i in range(25)]
    for kwargs in ({"within": 3.0}, {"budget": 5}):
        a = choose(_scores(raw, names), np.ones(40), **kwargs)
        b = choose(_scores(raw[:, perm], [names[i] for i in perm]), np.ones(40), **kwargs)
        assert [names[i] for i in a.kept] == [names[perm[i]] for i in b.kept]
    tied = np.ones((2, 3))
    assert choose(_scores(tied, ["b", "a", "c"]), np.ones(2), budget=2).kept == (1,)  # "a"; a second gains nothing
    assert choose(_scores(tied, ["b", "a", "c"]), np.ones(2), within=0).kept == (1,)


def test_weights_decide_the_budget(tmp_path):
    eff = np.array([[1.0, 0.5], [0.5, 1.0]])
    assert choose(_scores(eff), np.array([1.0, 3.0]), budget=1).kept == (1,)
    assert choose(_scores(eff), np.array([3.0, 1.0]), budget=1).kept == (0,)
    path = tmp_path / "w.csv"
    path.write_text("M,N,K,weight\n4096,4096,4096,2.5\n128,4096,4096,\n")
    workload = read_workload(path, ("gemm",))
    assert workload.weights.tolist() == [2.5, 1.0] and workload.problems[1].M == 128
    (tmp_path / "w.json").write_text(json.dumps({"problems": [{"M": 64, "N": 64, "K": 64, "weight": 0}]}))
    with pytest.raises(WorkloadError, match=r"w.json: row 1: weight: 0 is not a positive number$"):
        read_workload(tmp_path / "w.json", ("gemm",))


@pytest.fixture(scope="module")
def conv():
    kernels = build_library(configs=[CONV_CONFIG]).kernels()
    return library_of([kernel_name(k.config) for k in kernels], [as_dict(k.config) for k in kernels], "ck-real")


@pytest.fixture(scope="module")
def shapes(tmp_path_factory) -> Path:
    """The 185 shapes of CK's MI355X table as a workload file."""
    import csv

    with CONV_TABLE.open(newline="") as f:
        rows = list(dict.fromkeys(tuple(r[c] for c in SHAPE) for r in csv.DictReader(f)))
    path = tmp_path_factory.mktemp("workload") / "shapes.csv"
    path.write_text("\n".join(",".join(r) for r in (SHAPE, *rows)) + "\n")
    return path


def _run(command, *args):
    result = CliRunner().invoke(command, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def test_list_for_prints_the_choice(shapes):
    code, out, err = _run(list_, "--config", CONV_CONFIG, "--for", shapes, "--budget", "6", "--timings", CONV_TABLE,
                          "--kernels", CONV_KERNELS)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (f"workload {shapes}: 185 problems, 185 served by the selection; scorer: measured TFLOPS of "
                        f"{CONV_TABLE}")
    assert lines[1] == "kept 6 of 13 kernels, budget 6 (greedy facility location, weighted mean efficiency)"
    assert lines[2].startswith("efficiency of the kept kernels against the whole selection's best, over 185 problems: "
                               "mean 99.")
    assert all(line.startswith("  grouped_conv_bf16_nhwgc_forward_gfx950_") for line in lines[3:9])
    assert lines[9] == "served least well:" and len(lines) == 16
    lowest = [float(line.split("%")[0]) for line in lines[10:15]]
    assert lowest == sorted(lowest) and lowest[-1] < 100 and all(" by grouped_conv_" in line for line in lines[10:15])
    assert lines[15].startswith("estimated build: kept ") and "6 kernels by another arch's or variant's figures" in lines[15]


def test_list_for_json_holds_every_problem_and_agrees_with_the_text(shapes):
    args = ("--config", CONV_CONFIG, "--for", shapes, "--budget", "6", "--timings", CONV_TABLE, "--kernels", CONV_KERNELS)
    code, out, err = _run(list_, *args, "--json")
    assert code == 0, err
    doc = json.loads(out)
    _, text, _ = _run(list_, *args)
    assert [f"  {name}" for name in doc["kept"]] == text.splitlines()[3:9]
    assert (doc["mode"], doc["value"], doc["kernels"], len(doc["problems"])) == ("budget", 6.0, 13, 185)
    effs = [p["efficiency"] for p in doc["problems"]]
    assert min(effs) == doc["efficiency"]["min"] and np.mean(effs) == pytest.approx(doc["efficiency"]["mean"])
    assert all(p["kernel"] in doc["kept"] and p["not_served"] is None for p in doc["problems"])
    assert doc["build"]["kept"]["borrowed"] == 6 and doc["build"]["whole"]["borrowed"] == 13
    assert doc["build"]["kept"]["cpu_hours"] == pytest.approx(doc["build"]["whole"]["cpu_hours"] * 6 / 13)


@pytest.mark.parametrize(("args", "message"), [
    (("--budget", "3", "--within", "2"), "--for: give --within P or --budget N, not both"),
    ((), "--for: give --within P or --budget N"),
    (("--within", "100"), "--within: 100 is not a percentage from 0 up to 100"),
    (("--budget", "0"), "--budget: 0 is not a positive number of kernels"),
    (("--budget", "2", "--model", "m", "--timings", "t.csv"), "--for: give --model or --timings, not both"),
])
def test_bad_requests_are_one_line_exit_2(shapes, args, message):
    code, out, err = _run(list_, "--config", CONV_CONFIG, "--for", shapes, *args)
    assert (code, out, err) == (2, "", message + "\n")


def test_options_without_for_and_unserved_workloads_are_refused(tmp_path):
    code, _, err = _run(list_, "--config", CONV_CONFIG, "--within", "2")
    assert (code, err) == (2, "--within: chooses kernels for a workload; give --for WORKLOAD\n")
    path = tmp_path / "gemm.csv"
    path.write_text("M,N,K\n64,64,64\n")
    code, _, err = _run(list_, "--config", CONV_CONFIG, "--for", path, "--budget", "2")
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("no problem of the workload is served by any kernel of the selection (1 problem; the "
                          "first: the selection: the library holds no GEMM kernel)")
    path.write_text("N,C,K,G,Hi,Wi,Y,X,weight\n1,64,64,1,8,8,3,3,heavy\n")
    code, _, err = _run(list_, "--config", CONV_CONFIG, "--for", path, "--budget", "2")
    assert (code, err) == (2, f"{path}: row 1: weight: 'heavy' is not a positive number\n")


def test_unserved_problems_are_listed_counted_last_and_exit_3(tmp_path):
    path = tmp_path / "w.csv"  # a forward 2-D problem, and a backward-data one the forward kernels cannot serve
    path.write_text("N,C,K,G,Hi,Wi,Y,X,direction\n1,64,64,1,16,16,3,3,forward\n1,64,64,1,16,16,3,3,bwd_data\n")
    code, out, err = _run(list_, "--config", CONV_CONFIG, "--for", path, "--within", "5")
    assert (code, err) == (3, "")
    assert out.splitlines()[0].endswith("2 problems, 1 served by the selection; scorer: analytic model (estimates)")
    assert out.splitlines()[-2:] == [f"not served: {path}: row 2 (G=1,N=1,C=64,K=64,Hi=16,Wi=16,Y=3,X=3,"
                                     "direction=bwd_data): the selection: the library holds no bwd_data 2-D "
                                     "grouped-conv kernel", "1 of 2 problems not served by any kernel"]
    assert _run(list_, "--config", CONV_CONFIG, "--for", path, "--within", "5", "--allow-unserved") == (0, out, "")
    code, out, err = _run(list_, "--config", CONV_CONFIG, "--for", path, "--within", "5", "--json")
    assert (code, err) == (3, "1 of 2 problems not served by any kernel\n") and json.loads(out)["problems"]


def test_generate_for_with_unserved_problems_writes_the_library_and_exits_3(tmp_path):
    path, out = tmp_path / "w.csv", tmp_path / "lib"
    path.write_text("N,C,K,G,Hi,Wi,Y,X,direction\n1,64,64,1,16,16,3,3,forward\n1,64,64,1,16,16,3,3,bwd_data\n")
    for _ in range(2):  # written, then up to date: the same status and last line
        code, stdout, err = _run(generate, "--config", CONV_CONFIG, "--for", path, "--within", "5", "-o", out,
                                 "-j", "1")
        assert (code, err) == (3, "") and stdout.splitlines()[-1] == "1 of 2 problems not served by any kernel"
        assert len(json.loads((out / "manifest.json").read_text())["kernels"]) == 1
    code, stdout, err = _run(generate, "--config", CONV_CONFIG, "--for", path, "--within", "5", "-o", out, "-j", "1",
                             "--allow-unserved")
    assert (code, err) == (0, "") and stdout.splitlines()[-1] == "1 of 2 problems not served by any kernel"


def test_rows_choose_their_datatype_and_a_mistyped_one_is_refused(tmp_path):
    path, out = tmp_path / "w.csv", tmp_path / "lib"
    path.write_text("N,C,K,G,Hi,Wi,Y,X,datatype\n1,64,64,1,16,16,3,3,bf16\n1,64,64,1,16,16,3,3,fp16\n")
    code, stdout, err = _run(list_, "--config", CONV_CONFIG, "--for", path, "--within", "5")
    assert code == 3 and (f"not served: {path}: row 2 (G=1,N=1,C=64,K=64,Hi=16,Wi=16,Y=3,X=3,datatype=fp16): "
                          "datatype: 'fp16' is not among the forward 2-D grouped-conv kernels' datatypes (bf16)"
                          in stdout), err
    for field, row, message in (("datatype", "bf61,", "'bf61' is not one of fp16, bf16, fp32"),
                                ("layout", "bf16,rcr", "a convolution's layout follows its rank; only a GEMM problem "
                                                       "names one")):
        path.write_text(f"N,C,K,G,Hi,Wi,Y,X,datatype,layout\n1,64,64,1,16,16,3,3,bf16,\n1,64,64,1,16,16,3,3,{row}\n")
        for command, more in ((list_, ()), (generate, ("-o", out))):
            result = _run(command, "--config", CONV_CONFIG, "--for", path, "--within", "5", *more)
            assert result == (2, "", f"{path}: row 2: {field}: {message}\n")
        assert not out.exists()


def test_weights_whose_sum_overflows_are_refused(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("N,C,K,G,Hi,Wi,Y,X,weight\n1,64,64,1,16,16,3,3,1e308\n2,64,64,1,16,16,3,3,1e308\n")
    code, out, err = _run(list_, "--config", CONV_CONFIG, "--for", path, "--budget", "1")
    assert (code, out) == (2, "") and err == (f"{path}: row 2: weight: the weights up to this row sum beyond the "
                                              "largest number (1.8e+308); scale them down\n")
    path.write_text("N,C,K,G,Hi,Wi,Y,X,weight\n1,64,64,1,16,16,3,3,1e308\n2,64,64,1,16,16,3,3,7e307\n")
    code, out, err = _run(list_, "--config", CONV_CONFIG, "--for", path, "--budget", "1")
    assert code == 0 and "weighted mean 100.0%" in out, err


def test_within_takes_a_percent_sign(shapes):
    args = ("--config", CONV_CONFIG, "--for", shapes)
    assert _run(list_, *args, "--within", "2%") == _run(list_, *args, "--within", "2")
    code, _, err = _run(list_, *args, "--within", "2%%")
    assert code == 2 and "'2%%' is not a percentage (a number, optionally followed by %)" in err


def test_a_workload_too_large_to_hold_is_refused_as_it_is_read(tmp_path, monkeypatch):
    import ckast.bench.plan as plan
    import ckast.select.reports.workload as workload

    path, generated = tmp_path / "w.csv", tmp_path / "lib"
    path.write_text("N,C,K,G,Hi,Wi,Y,X\n" + "1,64,64,1,16,16,3,3\n" * 3 + "2,64,64,1,16,16,3,3\n")
    monkeypatch.setattr(workload, "PAIRS_MAX", 25)  # one distinct problem among 13 kernels
    code, out, err = _run(list_, "--config", CONV_CONFIG, "--for", path, "--budget", "1")
    assert (code, out) == (2, "") and err == (f"{path}: row 4: more than 1 distinct problem, the most a choice among "
                                              "13 kernels holds (25 (problem, kernel) pairs); split the workload or "
                                              "narrow the selection\n")
    monkeypatch.setattr(workload, "PAIRS_MAX", 26)  # the three rows of one problem are one
    assert _run(list_, "--config", CONV_CONFIG, "--for", path, "--budget", "1", "--allow-unserved")[0] == 0
    monkeypatch.setattr(workload, "PROBLEMS_MAX", 3)
    assert _run(list_, "--config", CONV_CONFIG, "--for", path, "--budget", "1") == (
        2, "", f"{path}: more than 3 problems, the most a workload holds; merge repeated problems (a weight says how "
               "often one occurs) or split it\n")
    monkeypatch.setattr(plan, "PROBLEMS_MAX", 3)  # a benchmark driver holds as many rows as a workload
    assert _run(generate, "--config", CONV_CONFIG, "-o", generated, "-j", "1")[0] == 0
    assert _run(bench, "emit", "--library", generated, "--problems", path, "-o", tmp_path / "bench") == (
        2, "", f"--problems: {path}: more than 3 problems, the most a benchmark driver holds; split the file\n")


def test_rows_of_one_problem_are_chosen_for_once_and_reported_each(tmp_path):
    """A problem's rows weigh together and count as many in a cover: the choice is that of each row on its own."""
    once, twice = tmp_path / "once.csv", tmp_path / "twice.csv"
    rows = ["1,64,64,1,16,16,3,3,1", "8,256,64,1,56,56,1,1,3", "2,64,512,1,7,7,3,3,0.5", "1,64,64,1,16,16,3,3,2"]
    head = "N,C,K,G,Hi,Wi,Y,X,weight\n"
    once.write_text(head + "\n".join(rows) + "\n")
    twice.write_text(head + "\n".join(rows[:3]).replace(",1\n8,", ",3\n8,") + "\n")  # row 1 weighs 1 + 2
    args = ("--config", CONV_CONFIG, "--budget", "2", "--json")
    one, two = (json.loads(_run(list_, *args, "--for", p)[1]) for p in (once, twice))
    assert one["kept"] == two["kept"] and len(one["problems"]) == 4
    assert one["problems"][3]["kernel"] == one["problems"][0]["kernel"] and one["problems"][3]["weight"] == 2
    assert one["efficiency"]["weighted_mean"] == pytest.approx(two["efficiency"]["weighted_mean"])
    names = ("b", "a")  # a tie goes to kernel 1; a cover counts problem 0's two rows, so kernel 0 comes first
    merged = _scores(np.array([[1.0, 0.0], [0.0, 1.0]]), names)
    assert choose(_scores(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), names), np.ones(3), within=5).kept == (0, 1)
    assert choose(merged, np.ones(2), within=5, counts=np.array([2, 1])).kept == (0, 1)
    assert choose(merged, np.ones(2), within=5).kept == (1, 0)


def test_gains_and_counts_summed_in_steps_are_the_sums(monkeypatch):
    import ckast.select.reports.workload as workload

    eff = _random(3, problems=50)
    w, current = np.linspace(0.5, 2, 50), eff[:, 2]
    whole = (w[:, None] * np.maximum(eff - current[:, None], 0.0)).sum(axis=0)
    monkeypatch.setattr(workload, "_ROWS", 7)
    assert workload._gains(eff, w, current) == pytest.approx(whole, rel=1e-12)
    rows = eff[:, 0] < 0.5
    m = np.arange(50) % 3 + 1
    assert workload._counts(eff > 0.6, rows, m).tolist() == (m[rows] @ (eff[rows] > 0.6)).tolist()
    scores = _scores(eff)
    assert choose(scores, w, within=5).kept == choose(_scores(eff), w, within=5).kept


def test_generate_for_writes_the_pruned_library_and_records_the_workload(shapes, tmp_path):
    out = tmp_path / "lib"
    code, stdout, err = _run(generate, "--config", CONV_CONFIG, "--for", shapes, "--budget", "3", "-o", out, "-j", "1")
    assert code == 0, err
    assert stdout.splitlines()[-1].startswith("3 kernels (13 proposed, 0 refused, 0 merged) -> ")
    manifest = json.loads((out / "manifest.json").read_text())
    kept = sorted(line.strip() for line in stdout.splitlines()[3:6])
    assert sorted(k["name"] for k in manifest["kernels"]) == kept
    assert manifest["run"]["workload"]["budget"] == 3 and manifest["run"]["workload"]["file"]["file"] == "shapes.csv"
    first = stdout.splitlines()
    code, stdout, _ = _run(generate, "--config", CONV_CONFIG, "--for", shapes, "--budget", "3", "-o", out, "-j", "1")
    assert code == 0 and stdout.strip().endswith("(up to date)")
    assert stdout.splitlines()[:-1] == first[:-1]  # the choice, printed again from the tree's stamp
    one = tmp_path / "shapes.csv"  # same name, other bytes: the tree is out of date
    one.write_text("\n".join(shapes.read_text().splitlines()[:2]) + "\n")
    code, stdout, err = _run(generate, "--config", CONV_CONFIG, "--for", one, "--budget", "3", "-o", out, "-j", "1")
    assert code == 0, err
    assert "(up to date)" not in stdout and len(json.loads((out / "manifest.json").read_text())["kernels"]) == 1

    wider = tmp_path / "wider"
    code, _, err = _run(generate, "--config", CONV_CONFIG, "--for", shapes, "--within", "5", "-o", wider, "-j", "1")
    assert code == 0, err
    code, stdout, err = _run(diff, out, wider)
    assert code == 1, err  # the trees differ
    digest = hashlib.sha256(one.read_bytes()).hexdigest()[:12]
    assert stdout.splitlines()[0] == f"old: {out} (1 kernel; for shapes.csv (sha256 {digest}), budget 3, analytic model)"
    assert stdout.splitlines()[1].startswith(f"new: {wider} (") and ", within 5%, analytic model)" in stdout


def test_ck_measurements_cross_validated(conv):
    """GroupKFold by problem over CK's MI355X table: at most 6 of the 13 kernels chosen on the training folds'
    measured TFLOPS; on held-out problems, the best kept kernel (oracle within the kept set) and the analytic
    model's pick among the kept, each against the best of all 13."""
    runs = read_timings([CONV_TABLE], conv, kernels=read_kernel_table(CONV_KERNELS, conv), layers=LAYERS).runs
    grouped = group_runs(runs)
    problems = sorted(grouped, key=repr)
    folds = group_folds(np.arange(len(problems)), 5)
    analytic = predicted(load_predictor(None), LAYERS)
    oracle, picked = np.zeros(len(problems)), np.zeros(len(problems))

    def workload(indices):
        return Workload(tuple(map(str, indices)), tuple(problems[i] for i in indices), np.ones(len(indices)),
                        ((None, None),) * len(indices))

    for fold in range(5):
        train, test = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
        choice = choose(Scores.of(conv, workload(train), measured(runs)), np.ones(len(train)), budget=6)
        kept = np.array(choice.kept)
        assert len(kept) <= 6
        held = Scores.of(conv, workload(test), measured(runs))
        oracle[test] = held.efficiency[:, kept].max(axis=1)
        tflops, _ = analytic(conv, workload(test))
        order = np.argsort(np.argsort(np.array(conv.names, dtype=object)))[kept]
        for row, i in enumerate(test):
            pick = kept[np.lexsort((order, -tflops[row, kept]))[0]]
            picked[i] = held.efficiency[row, pick]
    p10 = lambda e: np.sort(e)[len(e) // 10]  # as `select eval`
    print(f"oracle within kept: mean {oracle.mean():.4f} P10 {p10(oracle):.4f}; "
          f"select's pick: mean {picked.mean():.4f} P10 {p10(picked):.4f}")
    assert oracle.mean() >= 0.98 and p10(oracle) >= 0.94 and picked.mean() >= 0.96



def test_a_workload_is_a_problems_file_for_select_and_the_bench_driver(tmp_path):
    lib, path = tmp_path / "lib", tmp_path / "w.csv"
    path.write_text("N,C,K,G,Hi,Wi,Y,X,weight\n1,64,64,1,16,16,3,3,0.25\n2,64,64,1,16,16,3,3,\n")
    assert _run(generate, "--config", CONV_CONFIG, "-o", lib, "-j", "1")[0] == 0
    code, out, err = _run(select, "--library", lib, "--problems", path, "-k", "1")
    assert code == 0 and out.count("row ") == 2, err
    code, out, err = _run(bench, "emit", "--library", lib, "--problems", path, "-o", tmp_path / "bench")
    assert code == 0 and out.startswith("13 kernels in 1 chunk, 2 problems, 1 timing table -> "), err
    path.write_text("N,C,K,G,Hi,Wi,Y,X,weight\n1,64,64,1,16,16,3,3,0\n")
    assert _run(select, "--library", lib, "--problems", path)[::2] == (2, f"{path}: row 1: weight: '0' is not a "
                                                                          f"positive number\n")


LLM_WORKLOADS = (ROOT / "examples" / "workloads" / "llm_gemm.csv", ROOT / "tests" / "data" / "check_llm_gemm.csv")


def _padded_gemm(tmp_path: Path, arch: str) -> Path:
    """rcr fp16 and bf16 kernels of tiles from 16 to 256 rows, padded in M, N and K (as a padded rule set holds)."""
    tiles = ((16, 64, 64, 1, 4, 16), (32, 64, 64, 1, 2, 16), (64, 64, 64, 2, 2, 16), (128, 128, 64, 2, 2, 32),
             (256, 128, 64, 2, 2, 32), (256, 256, 64, 2, 2, 32))
    configs = [{"kind": "gemm", "datatype": dt, "layout": "rcr", "arch": arch, "ck_api": "ck-2026.06",
                "tile_m": m, "tile_n": n, "tile_k": k, "warp_m": wm, "warp_n": wn, "warp_k": 1,
                "warp_tile_m": wt, "warp_tile_n": wt, "warp_tile_k": 16 if wt == 32 else 32, "pipeline": "compv3",
                "scheduler": "intrawave", "pad_m": True, "pad_n": True, "pad_k": True}
               for dt in ("fp16", "bf16") for m, n, k, wm, wn, wt in tiles]
    path = tmp_path / f"padded_{arch}.json"
    path.write_text(json.dumps(configs))
    return path


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("workload", LLM_WORKLOADS, ids=lambda p: p.name)
def test_the_llm_workloads_are_served_whole_by_padded_kernels(tmp_path, arch, workload):
    """Every row of the dense-LLM workloads (decode's M = 1 included) is served by M-padded kernels, decode by a
    16- or 32-row tile; the choice keeps few kernels."""
    code, out, err = _run(list_, "--config", _padded_gemm(tmp_path, arch), "--for", workload, "--within", "2",
                          "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert all(p["not_served"] is None for p in doc["problems"]) and len(doc["kept"]) <= 12
    decode = [p["kernel"] for p in doc["problems"] if int(p["shape"].split(",")[0].removeprefix("M=")) <= 16]
    assert decode and all("_16x64x64_" in k or "_32x64x64_" in k for k in decode)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("workload", LLM_WORKLOADS, ids=lambda p: p.name)
def test_gemm_full_serves_the_llm_workloads_with_few_kernels(arch, workload):
    """`gemm-full` serves every GEMM of the dense-LLM workloads (both datatypes, decode included) within 2% of
    each one's best with at most 48 kernels per arch."""
    from ckast.library.rulesets import rule_set_names

    if "gemm-full" not in rule_set_names():
        pytest.skip("no gemm-full rule set in this checkout")
    code, out, err = _run(list_, "--rule-set", "gemm-full", "--arch", arch, "--for", workload, "--within", "2",
                          "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert all(p["not_served"] is None for p in doc["problems"]) and len(doc["kept"]) <= 48


@pytest.mark.parametrize("seed", range(4))
def test_cover_breaks_ties_by_gain_among_the_kernels_of_the_most_problems(seed):
    """The cover's pick is the greedy one over every kernel: most problems, then the larger gain, then the name
    (the gains computed for the kernels of the most problems only), on efficiencies with many ties."""
    from ckast.select.reports.workload import _cover, _gains, _name_order

    rng = np.random.default_rng(seed)
    eff = rng.choice([0.0, 0.5, 0.97, 0.99, 1.0], size=(40, 30))
    eff[np.arange(40), rng.integers(0, 30, 40)] = 1.0
    w, m, order = rng.random(40) + 0.5, rng.integers(1, 4, 40), _name_order([f"k{i:02}" for i in rng.permutation(30)])
    good, kept = eff >= 0.98, []
    current, uncovered = np.zeros(40), np.ones(40, dtype=bool)
    while uncovered.any():  # the reference: every kernel's count and gain at each step
        counts = m[uncovered] @ good[uncovered]
        pick = int(np.lexsort((order, -_gains(eff, w, current), -counts))[0])
        kept.append(pick)
        uncovered &= ~good[:, pick]
        current = np.maximum(current, eff[:, pick])
    assert _cover(good, eff, w, m, order, []) == kept


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize(("workload", "selection", "most"), [
    ("fp8_blockscale_gemm.csv", ("--rule-set", "gemm-quant"), 2),
    ("fp8_moe_gemm.csv", ("--rule-set", "gemm-quant"), 2),
    ("moe_gemm.csv", ("--rule-set", "gemm-full", "--variant", "grouped", "--datatype", "bf16"), 4),
    ("moe_routed_gemm.csv", ("--rule-set", "gemm-full", "--variant", "grouped", "--datatype", "bf16"), 4)])
def test_the_quant_and_moe_workloads_are_served_whole_by_the_shipped_rule_sets(arch, workload, selection, most):
    """Every fp8 block-scale GEMM (DeepSeek-V3's and Qwen3-32B-FP8's: 1 x 128 activation, 128 x 128 weight scales;
    DeepSeek-V3's and Qwen3-235B-A22B-FP8's routed experts as grouped GEMMs) is served by gemm-quant's abquant
    kernels (grouped ones for the experts), every bf16 grouped expert GEMM (Mixtral-8x7B, Qwen3-30B-A3B, decode to
    prefill; evenly routed, or each expert its own token count) by gemm-full's grouped kernels, within 2% of each
    one's best, with few kernels."""
    path = ROOT / "examples" / "workloads" / workload
    code, out, err = _run(list_, *selection, "--arch", arch, "--ck-api", "ck-2026.06", "--for", path, "--within", "2",
                          "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["problems"]) == len(path.read_text().splitlines()) - 1
    assert all(p["not_served"] is None for p in doc["problems"]) and 1 <= len(doc["kept"]) <= most


@pytest.mark.parametrize(("workload", "selection", "kernel"), [
    ("fp8_blockscale_gemm.csv", ("--rule-set", "gemm-quant"), "_abquant_"),
    ("fp8_moe_gemm.csv", ("--rule-set", "gemm-quant"), "_abquant_"),
    ("moe_gemm.csv", ("--rule-set", "gemm-full", "--variant", "grouped", "--datatype", "bf16"), "_grouped_"),
    ("moe_routed_gemm.csv", ("--rule-set", "gemm-full", "--variant", "grouped", "--datatype", "bf16"), "_grouped_")])
def test_generate_for_the_quant_and_moe_workloads_writes_kernels_serving_every_problem(tmp_path, workload, selection,
                                                                                        kernel):
    path = ROOT / "examples" / "workloads" / workload
    code, out, err = _run(generate, *selection, "--arch", "gfx950", "--ck-api", "ck-2026.06", "--for", path,
                          "--within", "2", "-o", tmp_path / "lib")
    assert code == 0, err
    code, out, err = _run(select, "--library", tmp_path / "lib", "--problems", path, "--json")
    assert code == 0, err
    ranked = json.loads(out)["problems"]
    assert len(ranked) == len(path.read_text().splitlines()) - 1
    assert all(p["top"] and kernel in p["top"][0]["name"] for p in ranked)


def test_the_quant_and_moe_workloads_are_the_tools_output():
    """Each block-scale and mixture-of-experts workload file is what tools/quant_moe_workloads.py writes."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("quant_moe_workloads", ROOT / "tools" / "quant_moe_workloads.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    tables = tool.tables()
    assert set(tables) == {"fp8_blockscale_gemm.csv", "fp8_moe_gemm.csv", "moe_gemm.csv", "moe_routed_gemm.csv"}
    for name, rows in tables.items():
        assert (ROOT / "examples" / "workloads" / name).read_text(encoding="utf-8") == tool.text_of(rows), name
    kv_a = [r for r in tables["fp8_blockscale_gemm.csv"] if r["N"] == 576]  # DeepSeek-V3's partial weight block
    assert len(kv_a) == len(tool.TOKENS) and all(r["K"] == 7168 for r in kv_a)
