"""Timing tables (CSV, Parquet, JSON, CK's benchmark JSON; bad rows named by file, row and column, or
skipped), GroupKFold, and the train -> eval round trip on synthetic data (tools/synth_timings.py)."""

from __future__ import annotations

import csv
import json
import os
import pty
import sys
import threading
import time

import numpy as np
import pytest
from click.testing import CliRunner

from ckast.cli.select import select
from ckast.select.features import feature_set
from ckast.select.library import load_library
from ckast.select.timings import TimingError, read_timings
from ckast.select.evaluate import group_runs
from ckast.select.progress import Progress
from ckast.select.train import fit_all, group_folds

from .select_helpers import conv_entries, gemm_entries, synth_module, write_library

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
                             "--trees", "60", "--folds", "3", "-j", "1")
    assert code == 0, err
    assert "(grouped_conv forward, fp16, gfx942)" in out and "3-fold GroupKFold" in out
    spec = json.loads((model / "feature_spec.json").read_text())
    assert spec["log_targets"] == ["tflops"] and spec["direction"] == "forward" and spec["feature_names"][:97] == list(feature_set("grouped_conv").names)
    assert spec["hardware"]["num_cus"] == 304 and spec["hardware"]["lds_capacity"] == 65536
    cv = json.loads((model / "cv_metrics.json").read_text())
    assert cv["folds"] == 3 and cv["problems"] == 40 and 0 < cv["efficiency"]["mean"] <= 1

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
                                 str(tmp_path / jobs), "--trees", "20", "--folds", "3", "-j", jobs)
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
    assert len(threads) == 5 and set(threads) == {1} and most[0] == 2  # 2 fits at a time x 1 thread = -j 2


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
    progress = Progress(2, 10, shown.append, interval=1.0, clock=lambda: now[0])
    for at, fit, done in ((0.0, 0, 1), (0.5, 1, 3), (1.2, 2, 2), (1.3, 0, 10), (1.4, 1, 4)):
        now[0] = at
        progress.tree(fit, done)
    progress.close()
    assert shown == ["final model: 1 of 30 trees, 0 s",  # (0.5 s: within the interval, not shown)
                     "final model, fold 1 of 2, fold 2 of 2: 6 of 30 trees, 1 s",
                     "fold 1 of 2, fold 2 of 2: 15 of 30 trees, 1 s",  # a fit ended: shown at once
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
                     str(tmp_path / "m"), "--trees", "10", "--folds", "2", "-j", "2"], standalone_mode=False)
        terminal.flush()
        shown = _drain(screen).decode()
    assert "10 trees, " in capsys.readouterr().out
    assert shown.startswith("\r") and "30 of 30 trees, " in shown and shown.endswith("\r\x1b[K"), shown


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
