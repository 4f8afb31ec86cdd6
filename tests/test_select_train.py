"""Timing tables (CSV, Parquet, JSON, CK's benchmark JSON; bad rows named by file, row and column, or
skipped), GroupKFold, and the train -> eval round trip on synthetic data (tools/synth_timings.py)."""

from __future__ import annotations

import csv
import json
import math
import os
import pty
import re
import sys
import threading
import time

import numpy as np
import pytest
from click.testing import CliRunner

from ckast.cli.select import select
from ckast.select.features import feature_set
from ckast.select.serving.library import load_library
from ckast.select.tables.timings import TimingError, read_timings
from ckast.select.ranking.evaluate import group_runs
from ckast.select.reports.progress import Progress
from ckast.select.ranking.train import fit_all, group_folds

from .select_helpers import ROOT, conv_entries, gemm_entries, synth_module, write_library

lgb = pytest.importorskip("lightgbm")


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    root = tmp_path_factory.mktemp("libs")
    return {"conv": write_library(root / "conv", conv_entries("forward")),
            "gemm": write_library(root / "gemm", gemm_entries(root))}


@pytest.fixture(scope="module")
def tables(libs, tmp_path_factory):
    """Synthetic forward-conv tables: 40 training shapes, 20 held-out shapes (another seed)."""
    root = tmp_path_factory.mktemp("tables")
    synth = synth_module()
    train = synth.synthesize(libs["conv"], "forward", 40, 80, 1, 0.02, 0.08)
    held = synth.synthesize(libs["conv"], "forward", 20, 80, 2, 0.02, 0.08)
    exact = synth.synthesize(libs["conv"], "forward", 10, 80, 3, 0.0, 0.0)
    paths = {"train": root / "train.csv", "held": root / "held.parquet", "exact": root / "exact.json"}
    synth.write(train, paths["train"])
    synth.write(held, paths["held"])
    synth.write(exact, paths["exact"])
    return paths


def _invoke(*args):
    result = CliRunner().invoke(select, list(args))
    return result.exit_code, result.stdout, result.stderr


def _csv(path, rows):
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_group_folds_keep_groups_whole_and_balanced():
    group = np.repeat(np.arange(23), np.arange(1, 24))
    fold = group_folds(group, 5)
    assert all(len(set(fold[group == g])) == 1 for g in range(23))
    sizes = np.bincount(fold)
    assert len(sizes) == 5 and sizes.max() - sizes.min() <= 23


def test_table_formats_read_the_same(libs, tmp_path):
    library = load_library(libs["gemm"])
    name = library.names[0]
    rows = [{"kernel": name, "M": 256, "N": 256, "K": 512, "tflops": 12.5},
            {"kernel_name": name, "m": 512, "n": 256, "k": 512, "split_k": 1, "latency_ms": 0.01, "arch": "gfx942"}]
    by_csv = read_timings([_csv(tmp_path / "t.csv", rows)], library)
    (tmp_path / "t.json").write_text(json.dumps(rows))
    by_json = read_timings([tmp_path / "t.json"], library)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({k: [r.get(k) for r in rows] for k in dict.fromkeys(k for r in rows for k in r)}),
                   tmp_path / "t.parquet")
    by_parquet = read_timings([tmp_path / "t.parquet"], library)
    for timings in (by_csv, by_json, by_parquet):
        assert [(r.problem.M, r.kernel) for r in timings.runs] == [(256, 0), (512, 0)]
        assert timings.runs[0].tflops == 12.5
        assert timings.runs[1].tflops == pytest.approx(2 * 512 * 256 * 512 / 0.01e-3 / 1e12)


def test_ck_benchmark_json_matches_kernels_by_knobs(libs, tmp_path):
    library = load_library(libs["gemm"])
    config = library.configs[3]
    ck_config = {"name": "gemm_universal_fp16_rcr_something_ck_calls_it", "dtype": "fp16", "layout": "rcr",
                 **{k: config[k] for k in ("pipeline", "epilogue", "scheduler", "pad_m", "pad_n", "pad_k",
                                           "persistent", "tile_m", "tile_n", "tile_k", "warp_m", "warp_n", "warp_k",
                                           "warp_tile_m", "warp_tile_n", "warp_tile_k")}}
    data = {"metadata": {"dtype": "fp16", "layout": "rcr"}, "results": [{"kernel_config": ck_config, "benchmarks": [
        {"m": 128, "n": 128, "k": 128, "avg_time_ms": 0.002, "tflops": 2.1, "is_valid": True},
        {"m": 1, "n": 128, "k": 128, "avg_time_ms": 0, "tflops": 0, "is_valid": False, "error": "unsupported"}]}]}
    (tmp_path / "bench.json").write_text(json.dumps(data))
    timings = read_timings([tmp_path / "bench.json"], library)
    assert [(r.kernel, r.tflops) for r in timings.runs] == [(3, 2.1)] and timings.failed == 1


BAD_ROWS = [
    ({"M": 8, "N": 8, "K": 8, "tflops": 1}, "row 2: kernel: missing"),
    ({"kernel": "gemm_nope", "M": 8, "N": 8, "K": 8, "tflops": 1}, "row 2: kernel: 'gemm_nope' is not a kernel"),
    ({"kernel": 0, "M": 8, "N": 8, "K": 8, "time_ms": -1}, "row 2: time_ms: '-1' is not a positive number"),
    ({"kernel": 0, "M": 8, "N": 8, "K": 8, "tflops": 0}, "row 2: tflops: '0' is not a positive number"),
    ({"kernel": 0, "M": 8, "N": 8, "tflops": 1}, "row 2: K: missing"),
    ({"kernel": 0, "M": 8, "N": 8, "K": 8}, "row 2: tflops: missing"),
    ({"kernel": 0, "M": 8, "N": 8, "K": 8, "tflops": 1, "arch": "gfx950"}, "row 2: arch: gfx950 is not the kernel's"),
]


@pytest.mark.parametrize("row, message", BAD_ROWS)
def test_bad_row_names_file_row_and_column(libs, tmp_path, row, message):
    library = load_library(libs["gemm"])
    good = {"kernel": library.names[0], "M": 8, "N": 8, "K": 8, "tflops": 1}
    if row.get("kernel") == 0:
        row = {**row, "kernel": library.names[0]}
    path = _csv(tmp_path / "t.csv", [good, row])
    code, out, err = _invoke("train", "--data", str(path), "--library", str(libs["gemm"]), "-o", str(tmp_path / "m"))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"{path}: {message}"), err
    assert not (tmp_path / "m").exists()


def test_skip_bad_counts_and_lists(libs, tmp_path):
    library = load_library(libs["gemm"])
    rows = [{"kernel": library.names[i % 3], "M": 64 * (1 + i // 3), "N": 64, "K": 64, "tflops": 1 + i} for i in
            range(30)] + [{"kernel": "gemm_nope", "M": 8, "N": 8, "K": 8, "tflops": 1}]
    path = _csv(tmp_path / "t.csv", rows)
    timings = read_timings([path], library, skip_bad=True)
    assert len(timings.runs) == 30 and timings.bad == (f"{path}: row 31: kernel: 'gemm_nope' is not a kernel of "
                                                       f"the library {libs['gemm']}",)
    code, out, err = _invoke("train", "--data", str(path), "--library", str(libs["gemm"]), "-o", str(tmp_path / "m"),
                             "--skip-bad", "--trees", "5", "--folds", "2")
    assert code == 0, err
    assert err.startswith("skipped: ") and "1 bad row skipped" in out
    with pytest.raises(TimingError):
        read_timings([path], library)


def test_train_eval_round_trip_on_synthetic_data(libs, tables, tmp_path):
    model = tmp_path / "model"
    code, out, err = _invoke("train", "--data", str(tables["train"]), "--library", str(libs["conv"]), "-o", str(model),
                             "--trees", "60", "--folds", "3", "-j", "1", "--predictor", "lightgbm")
    assert code == 0, err
    assert "(grouped_conv forward, fp16, gfx942)" in out and "3-fold GroupKFold" in out
    assert "model: lightgbm, as --predictor asks" in out
    spec = json.loads((model / "feature_spec.json").read_text())
    assert spec["log_targets"] == ["tflops"] and spec["direction"] == "forward" and spec["feature_names"][:97] == list(feature_set("grouped_conv").names)
    assert spec["hardware"]["num_cus"] == 304 and spec["hardware"]["lds_capacity"] == 65536
    cv = json.loads((model / "cv_metrics.json").read_text())
    assert cv["folds"] == 3 and cv["problems"] == 40 and 0 < cv["efficiency"]["mean"] <= 1
    assert not cv["analytic_constants"]["refitted"] and "analytic constants" not in out  # synthetic: never fitted on

    code, out, err = _invoke("eval", "--data", str(tables["held"]), "--library", str(libs["conv"]), "--model",
                             str(model), "--json")
    assert code == 0, err
    report = json.loads(out)
    overall = report["all"]["all"]
    assert overall["problems"] == 20 and overall["min"] <= overall["p10"] <= overall["mean"] <= 1
    runs = group_runs(read_timings([tables["held"]], load_library(libs["conv"])).runs)
    blind = np.mean([np.mean(list(k.values())) / max(k.values()) for k in runs.values()])
    assert overall["mean"] > blind + 0.1  # far better than a kernel picked blindly
    assert set(report["variant"]) == {"forward"} and sum(s["problems"] for s in report["shape"].values()) == 20

    code, out, _ = _invoke("eval", "--data", str(tables["held"]), "--library", str(libs["conv"]), "--model", str(model))
    assert code == 0 and out.splitlines()[1].split() == ["group", "problems", "mean", "P10", "P50", "min", "top-1", "top-5"]


def test_training_is_deterministic_whatever_the_jobs(libs, tables, tmp_path):
    outs = []
    for jobs in ("1", "4"):  # 4: the final model and the 3 folds at once
        code, out, err = _invoke("train", "--data", str(tables["train"]), "--library", str(libs["conv"]), "-o",
                                 str(tmp_path / jobs), "--trees", "20", "--folds", "3", "-j", jobs, "--predictor",
                                 "lightgbm")
        assert code == 0 and err == "", err  # no progress line when stderr is not a terminal
        outs.append(out.splitlines()[:-1])  # the last line names the directory and the time
    assert outs[0] == outs[1] and "3-fold GroupKFold" in outs[0][1]
    for name in ("model_tflops.lgbm", "feature_spec.json", "cv_metrics.json"):
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "4" / name).read_bytes(), name


def test_fits_at_a_time_times_threads_stay_within_jobs(libs, tables, tmp_path, monkeypatch):
    real, lock, threads, running, most = lgb.train, threading.Lock(), [], [0], [0]
    together = threading.Barrier(2, timeout=10)  # the first two fits must run at once, or this fails

    def counted(params, *args, **kwargs):
        with lock:
            threads.append(params["num_threads"])
            number = len(threads)
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            if number <= 2:
                together.wait()
            return real(params, *args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(lgb, "train", counted)
    code, _, err = _invoke("train", "--data", str(tables["train"]), "--library", str(libs["conv"]), "-o",
                           str(tmp_path / "m"), "--trees", "5", "--folds", "4", "-j", "2")
    assert code == 0, err
    families = json.loads((tmp_path / "m" / "cv_metrics.json").read_text())["families"]
    assert families  # per learning predictor (lightgbm, residual): the final model, the 4 folds, a fit per family
    assert len(threads) == 2 * (5 + len(families))
    assert set(threads) == {1} and most[0] == 2  # 2 fits at a time x 1 thread


def test_a_failing_fit_stops_the_others():
    stopped = []

    def endless(callbacks):
        try:
            for _ in range(10_000):  # 10 s unless stopped
                for callback in callbacks:
                    callback(None)
                time.sleep(0.001)
        except BaseException:
            stopped.append(True)
            raise

    def failing(callbacks):
        raise ValueError("no such fit")

    with pytest.raises(ValueError, match="no such fit"):
        fit_all([endless, failing], 2)
    assert stopped == [True]


def test_progress_line_names_the_fits_running():
    shown, now = [], [0.0]
    progress = Progress(10, shown.append, interval=1.0, clock=lambda: now[0])
    fits = ("lightgbm final model", "lightgbm fold 1 of 2", "lightgbm N <= 4")
    for fit in fits:  # every fit is named before any starts
        progress.tree(fit, 0)
    for at, fit, done in ((0.0, 0, 1), (0.5, 1, 3), (1.2, 2, 2), (1.3, 0, 10), (1.4, 1, 4)):
        now[0] = at
        progress.tree(fits[fit], done)
    progress.close()
    assert shown == ["lightgbm final model: 1 of 30 trees, 0 s",  # (0.5 s: within the interval, not shown)
                     "lightgbm final model, lightgbm fold 1 of 2, lightgbm N <= 4: 6 of 30 trees, 1 s",
                     "lightgbm fold 1 of 2, lightgbm N <= 4: 15 of 30 trees, 1 s",  # a fit ended: shown at once
                     ""]


def _drain(screen) -> bytes:
    """All a pseudo-terminal holds: the kernel moves written bytes to its master side asynchronously, so one
    read may return part of them; read until nothing more comes for 0.5 s."""
    import select as select_

    data = b""
    while select_.select([screen], [], [], 0.5)[0]:
        chunk = screen.read(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_progress_is_shown_on_a_terminal(libs, tables, tmp_path, monkeypatch, capsys):
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as terminal, os.fdopen(master, "rb", buffering=0) as screen:
        monkeypatch.setattr(sys, "stderr", terminal)
        select.main(["train", "--data", str(tables["train"]), "--library", str(libs["conv"]), "-o",
                     str(tmp_path / "m"), "--trees", "10", "--folds", "2", "-j", "2", "--predictor", "lightgbm"],
                    standalone_mode=False)
        terminal.flush()
        shown = _drain(screen).decode()
    assert "10 trees, " in capsys.readouterr().out
    fits = 2 * (3 + len(json.loads((tmp_path / "m" / "cv_metrics.json").read_text())["families"]))
    assert shown.startswith("\r") and f"{10 * fits} of {10 * fits} trees, " in shown, shown
    assert shown.endswith("\r\x1b[K"), shown


def test_analytic_model_is_the_oracle_of_noiseless_synthetic_data(libs, tables):
    code, out, err = _invoke("eval", "--data", str(tables["exact"]), "--library", str(libs["conv"]), "--json")
    assert code == 0, err
    overall = json.loads(out)["all"]["all"]
    assert overall["mean"] == overall["min"] == 1.0 and overall["top1"] == 1.0


def test_mixed_directions_are_refused(libs, tables, tmp_path):
    library = load_library(libs["conv"])
    rows = [{"kernel": library.names[0], "G": 1, "N": 1, "C": 16, "K": 16, "Hi": 8, "Wi": 8, "Y": 1, "X": 1,
             "tflops": 1.0, "direction": "bwd_data"}]
    path = _csv(tmp_path / "t.csv", rows)
    code, _, err = _invoke("train", "--data", str(path), "--library", str(libs["conv"]), "-o", str(tmp_path / "m"))
    assert code == 2 and err.startswith(f"{path}: row 1: direction: bwd_data is not the kernel's direction (forward)")


# hostile measurements, numbers and cells: refused in one line naming the file, the row and the column


@pytest.mark.parametrize(("column", "value", "message"), [
    ("latency_ms", "1e-320", "latency_ms: '1e-320' is not a physical measurement (a subnormal number"),
    ("tflops", "4e-310", "tflops: '4e-310' is not a physical measurement (a subnormal number"),
    ("latency_ms", "0", "latency_ms: '0' is not a positive number"),
    ("latency_ms", "1e999", "latency_ms: '1e999' is not a positive number"),
    ("latency_ms", "inf", "latency_ms: 'inf' is not a positive number"),
    ("tflops", "nan", "tflops: 'nan' is not a positive number"),
    ("latency_ms", "1e-300", "latency_ms: '1e-300' gives inf TFLOPS for 1.07374e+10 FLOPs, not a physical"),
])
def test_non_physical_measurements_are_refused(libs, tmp_path, column, value, message):
    """A latency of 1e-320 ms made infinite TFLOPS, which `select train` trained on and wrote into
    cv_metrics.json as `Infinity`."""
    library = load_library(libs["gemm"])
    rows = [{"kernel": library.names[i % 3], "M": 1024, "N": 1024, "K": 1024 * (1 + i), column: "1"} for i in range(6)]
    rows[4][column] = value
    path = _csv(tmp_path / "t.csv", rows)
    code, out, err = _invoke("train", "--data", str(path), "--library", str(libs["gemm"]), "-o", str(tmp_path / "m"),
                             "--trees", "2", "--folds", "2")
    assert (code, out, len(err.splitlines())) == (2, "", 1), err
    assert err.startswith(f"{path}: row 5: {message}"), err
    assert not (tmp_path / "m").exists()


def test_every_json_ckast_writes_is_strict():
    """`Infinity` and `NaN`, which json.dumps writes by default, are no JSON: ckast's encoder refuses them."""
    from ckast.data_files import keep_json
    from ckast.json_out import dumps

    for value in (math.inf, -math.inf, math.nan):
        with pytest.raises(ValueError):
            dumps({"rmse": [value]})
    assert dumps({"rmse": 1.5}) == '{"rmse": 1.5}'
    source = "\n".join(p.read_text() for p in (ROOT / "ckast").rglob("*.py") if p.name != "json_out.py")
    assert "allow_nan" not in source and not re.search(r"json\.dump\(", source)
    writers = re.findall(r"(?:click\.echo|yield|keep_bytes|lines\.append|_FILE:)[^\n]*json\.dumps", source)
    assert writers == []
    keep_json(ROOT / "never-written.json", {"x": math.nan})  # a cache entry that is not JSON is not kept
    assert not (ROOT / "never-written.json").exists()


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_is_valid_means_the_same_in_every_format(libs, tmp_path, fmt):
    """JSON and Parquet `is_valid: 0` was a valid run while CSV `0` was a failed one."""
    library = load_library(libs["gemm"])
    flags = [0, 1, "false", "True", "no", "YES", False, True, None]
    rows = [{"kernel": library.names[0], "M": 64 * (i + 1), "N": 64, "K": 64, "tflops": 1.0 + i, "is_valid": flag}
            for i, flag in enumerate(flags)]
    path = tmp_path / f"t.{fmt}"
    if fmt == "parquet":  # a column holds one type: each flag in a table of its own
        paths = []
        for i, row in enumerate(rows):
            paths.append(tmp_path / f"t{i}.parquet")
            synth_module().write([row], paths[-1])
    else:
        synth_module().write(rows, path)
        paths = [path]
    timings = read_timings(paths, library)
    assert [r.tflops for r in timings.runs] == [2.0, 4.0, 6.0, 8.0, 9.0] and timings.failed == 4
    synth_module().write([{**rows[0], "is_valid": "maybe"}], tmp_path / "bad.csv")
    with pytest.raises(TimingError, match=r"bad\.csv: row 1: is_valid: 'maybe' is not true or false"):
        read_timings([tmp_path / "bad.csv"], library)


@pytest.mark.parametrize("text", ["1_0", "\u0661\u0662", "\u00b9\u00b2", "0x10", "1,5", "\uff11"])
def test_measurements_are_ascii_numbers(libs, tmp_path, text):
    """Python's float() reads `1_0` and Arabic-Indic digits (and full-width ones); ckast reads ASCII digits."""
    library = load_library(libs["gemm"])
    path = _csv(tmp_path / "t.csv", [{"kernel": library.names[0], "M": 64, "N": 64, "K": 64, "tflops": text}])
    with pytest.raises(TimingError) as info:
        read_timings([path], library)
    assert str(info.value) == f"{path}: row 1: tflops: {text!r} is not a positive number"


@pytest.mark.parametrize("fmt", ["json", "parquet"])
@pytest.mark.parametrize("name", [["gemm_a"], {"name": "gemm_a"}, 7])
def test_a_kernel_name_that_is_not_a_string_is_one_line(libs, tmp_path, fmt, name):
    """A list or an object as a kernel name raised TypeError (unhashable) from the name lookup."""
    library = load_library(libs["gemm"])
    path = tmp_path / f"t.{fmt}"
    synth_module().write([{"kernel": name, "M": 64, "N": 64, "K": 64, "tflops": 1.0}], path)
    code, out, err = _invoke("train", "--data", str(path), "--library", str(libs["gemm"]), "-o", str(tmp_path / "m"))
    assert (code, out) == (2, "") and err.startswith(f"{path}: row 1: kernel: ") and len(err.splitlines()) == 1
    assert err.rstrip().endswith("is not a kernel's name (a string)")
    results = {"results": [{"kernel_config": {"name": name}, "benchmarks": [{"m": 64, "n": 64, "k": 64, "tflops": 1}]}]}
    (tmp_path / "ck.json").write_text(json.dumps(results))
    with pytest.raises(TimingError, match=r"results\[0\]\.benchmarks\[0\]: kernel: .* is not a kernel's name"):
        read_timings([tmp_path / "ck.json"], library)


def test_trees_are_bounded_by_what_the_model_reader_reads(libs, tmp_path):
    """`--trees 100001` wrote a model that `select` refused: both bounds are `model_limits.MAX_TREES`."""
    from ckast.select.models import forest
    from ckast.select.models import limits as model_limits
    from ckast.select.ranking.train import TrainError, train

    assert forest.MAX_TREES is model_limits.MAX_TREES
    code, out, err = _invoke("train", "--data", str(tmp_path / "t.csv"), "--library", str(libs["gemm"]), "-o",
                             str(tmp_path / "m"), "--trees", str(model_limits.MAX_TREES + 1))
    assert code == 2 and out == ""
    assert f"'--trees': {model_limits.MAX_TREES + 1} is not in the range 1<=x<=100000" in err
    assert not (tmp_path / "m").exists()
    with pytest.raises(TrainError, match=f"trees: {model_limits.MAX_TREES + 1} is not within 1..100,000"):
        train(None, model_limits.MAX_TREES + 1, 0, 0, 1)


def test_train_writes_no_model_the_reader_refuses(libs, tables, tmp_path, monkeypatch):
    """Within the bound of trees a model may still be larger than a model file ckast reads: refused, not written."""
    from ckast.select.models import forest

    monkeypatch.setattr(forest, "MODEL_LIMIT", 20_000)
    code, out, err = _invoke("train", "--data", str(tables["train"]), "--library", str(libs["conv"]), "-o",
                             str(tmp_path / "m"), "--trees", "30", "--folds", "0")
    assert (code, out, len(err.splitlines())) == (2, "", 1), err
    assert "the trained model is not one ckast reads (" in err and "more than the 20,000 a model file" in err
    assert err.rstrip().endswith("train fewer trees (--trees)") and not (tmp_path / "m").exists()
