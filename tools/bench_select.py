"""Benchmark: kernel selection (`ckast select`) on CK's 2,021-kernel conv library, against issue 21's goals.

1. Ranking one problem over the library with the analytic model (forward, bwd_data, bwd_weight shapes) and
   with a forward LightGBM model of `--trees` trees (forward shapes): median wall time per problem, the
   library's part tables already built (`first` is the first problem's cost, tables included).
2. 1,000 problems batched: `ckast select --problems FILE --json` as a user runs it (a fresh process,
   library loading and start-up included), analytic model.
3. Training on `--rows` synthetic rows (`ckast select train --folds 0`, then with 5-fold CV), with the
   default `-j` (the cores this process may run on); the load average is printed with the figures.
4. Selection quality on held-out synthetic shapes (another seed) for the trained model and for the
   analytic model: mean, P10 and min efficiency against the oracle, top-1 and top-5.

Every table is drawn from the analytic model with noise (tools/synth_timings.py): the quality figures are
**synthetic**, a check of the machinery, not of real kernels (no AMD GPU here).

`--model DIR` (a forward model `select train` wrote, with `--library`) times item 1's ranking with that model
only: nothing is generated or trained.

    python tools/bench_select.py                      # generates the library into /dev/shm
    python tools/bench_select.py --library lib/ --trees 2000 --rows 50000
    python tools/bench_select.py --library lib/ --model model_2000/
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import synth_timings  # noqa: E402

PROBLEMS = (
    "G=1,N=32,C=64,K=64,Hi=56,Wi=56,Y=3,X=3,pad_h=1,pad_w=1",
    "G=1,N=128,C=256,K=256,Hi=28,Wi=28,Y=1,X=1",
    "G=32,N=16,C=256,K=256,Hi=28,Wi=28,Y=3,X=3,pad_h=1,pad_w=1",
    "G=64,N=8,C=64,K=64,Hi=56,Wi=56,Y=3,X=3,pad_h=1,pad_w=1",
    "G=1,N=8,C=512,K=512,Hi=14,Wi=14,Y=3,X=3,pad_h=1,pad_w=1,direction=bwd_data",
    "G=1,N=64,C=128,K=128,Hi=28,Wi=28,Y=3,X=3,pad_h=1,pad_w=1,direction=bwd_weight",
    "G=1,N=32,C=64,K=256,Hi=56,Wi=56,Y=1,X=1,direction=bwd_weight",
)
GOALS = {"rank_analytic_ms": 5, "rank_model_ms": 50, "batch_s": 2, "train_s": 60, "mean": 0.97, "p10": 0.90}


def ckast(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ckast", *args], check=True, capture_output=True, text=True, **kw)


def conv_library(library: Path | None, work: Path) -> Path:
    """`library`, or the conv `full` fp16 2-D library (ck-2026.06) generated into `work/lib`."""
    if library is None:
        library = work / "lib"
        ckast("generate", "--rule-set", "full", "--arch", "gfx942", "--datatype", "fp16", "--ndim", "2",
              "--ck-api", "ck-2026.06", "-o", str(library))
    return library


def timed(*args: str) -> tuple[float, float, str]:
    """(wall s, CPU s of the process and its threads, stdout) of one `ckast` run: on a shared machine the
    CPU time is the steadier figure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = ckast(*args).stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, out


def rank_times(library_dir: Path, model_dir: Path | None, repeats: int, texts=PROBLEMS) -> tuple[float, float, float]:
    """(first, median, max of the rest) ms per problem ranking one of `texts`."""
    from ckast.arch.hardware import hardware
    from ckast.select.serving.library import load_library
    from ckast.select.serving.problem_read import conv_problem, parse_pairs
    from ckast.select.ranking.rank import load_predictor, rank

    library = load_library(library_dir)
    predictor = load_predictor(model_dir)
    problems = [conv_problem(parse_pairs(p)) for p in texts]
    start = time.perf_counter()
    part = library.part(problems[0])
    rank(problems[0], part, predictor, hardware(part.arch))
    first = (time.perf_counter() - start) * 1e3
    for problem in problems[1:]:  # every part's tables built before the timed runs
        part = library.part(problem)
        rank(problem, part, predictor, hardware(part.arch))
    times = []
    for _ in range(repeats):
        for problem in problems:
            part = library.part(problem)
            start = time.perf_counter()
            rank(problem, part, predictor, hardware(part.arch))
            times.append((time.perf_counter() - start) * 1e3)
    return first, statistics.median(times), max(times)


def model_ranking(library: Path, model: Path, repeats: int) -> None:
    """Print item 1's ranking figure for `model` alone, `repeats` times over the forward shapes."""
    from ckast.select.ranking.rank import load_predictor

    trees = load_predictor(model).trees
    load = os.getloadavg()[0]
    first, median, most = rank_times(library, model, repeats, [p for p in PROBLEMS if "direction" not in p])
    print(f"rank one problem, {trees}-tree model: median {median:.2f} ms, max {most:.2f} ms (first {first:.0f} ms)  "
          f"goal <= {GOALS['rank_model_ms']} ms; {len(os.sched_getaffinity(0))} cores, load average {load:.2f} "
          f"before, {os.getloadavg()[0]:.2f} after")


def batch_file(path: Path, count: int) -> None:
    """`count` distinct valid forward problems as a CSV (a drawn shape whose tensors pass index_t is redrawn)."""
    import random

    from ckast.select.problem import ProblemError
    from ckast.select.serving.problem_read import conv_problem

    rng = random.Random(7)
    shapes = synth_timings.conv_shapes(rng, "forward", 2)
    rows, seen = [], set()
    while len(rows) < count:
        fields = next(shapes)
        key = tuple(sorted(fields.items()))
        try:
            conv_problem({**fields, "direction": "forward"})
        except ProblemError:
            continue
        if key not in seen:
            seen.add(key)
            rows.append(fields)
    synth_timings.write(rows, path)


def quality(library_dir: Path, data: Path, model_dir: Path | None) -> dict:
    args = ["select", "eval", "--data", str(data), "--library", str(library_dir), "--json"]
    return json.loads(ckast(*args, *(["--model", str(model_dir)] if model_dir else [])).stdout)["all"]["all"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", type=Path, help="the fp16 2-D conv library (default: generate it)")
    ap.add_argument("--trees", type=int, default=2000, help="trees of the model the ranking is timed with")
    ap.add_argument("--rows", type=int, default=50_000, help="synthetic training rows")
    ap.add_argument("--held-out", type=int, default=100, help="held-out synthetic shapes")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--work", type=Path, default=None, help="directory for the tables and models (default: tmp)")
    ap.add_argument("--model", type=Path, help="time only the ranking with this trained forward model (with --library)")
    args = ap.parse_args()
    if args.model is not None:
        if args.library is None:
            ap.error("--model times the ranking on an existing library: give --library")
        model_ranking(args.library, args.model, args.repeats)
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="ckast-bench-select-", dir="/dev/shm"))
    work.mkdir(parents=True, exist_ok=True)
    library = conv_library(args.library, work)
    kernels = len(json.loads((library / "manifest.json").read_text())["kernels"])
    print(f"library: {library} ({kernels} kernels)")

    problems = max(1, round(args.rows / 230))  # ~230 applicable forward kernels measured per shape
    rows = synth_timings.synthesize(library, "forward", problems, 10_000, 11, 0.02, 0.08)
    while len(rows) < args.rows:
        problems += max(1, (args.rows - len(rows)) // 200)
        rows = synth_timings.synthesize(library, "forward", problems, 10_000, 11, 0.02, 0.08)
    rows = rows[:args.rows] if len(rows) > args.rows else rows
    train_csv = work / "train.csv"
    synth_timings.write(rows, train_csv)
    held = work / "heldout.csv"
    synth_timings.write(synth_timings.synthesize(library, "forward", args.held_out, 10_000, 12, 0.02, 0.08), held)
    print(f"synthetic tables: {len(rows)} training rows ({problems} shapes), {args.held_out} held-out shapes")

    model = work / "model"
    train = ("select", "train", "--data", str(train_csv), "--library", str(library))
    load = os.getloadavg()[0]
    train_s, train_cpu, _ = timed(*train, "-o", str(model), "--folds", "0")
    cv_s, cv_cpu, cv_out = timed(*train, "-o", str(work / "cv"))
    big = work / f"model_{args.trees}"
    big_s, big_cpu, _ = timed(*train, "-o", str(big), "--folds", "0", "--trees", str(args.trees))
    big_cv_s, big_cv_cpu, _ = timed(*train, "-o", str(work / f"cv_{args.trees}"), "--trees", str(args.trees))
    load = (load, os.getloadavg()[0])

    first_a, rank_a, max_a = rank_times(library, None, args.repeats)
    forward = [p for p in PROBLEMS if "direction" not in p]  # the model is a forward model
    first_m, rank_m, max_m = rank_times(library, big, max(1, args.repeats // 4), forward)
    batch = work / "batch.csv"
    batch_file(batch, 1000)
    batch_s, batch_cpu, _ = timed("select", "--library", str(library), "--problems", str(batch), "--json", "-k", "5")

    trees = json.loads((model / "cv_metrics.json").read_text())["trees"]
    print(f"rank one problem, analytic model: median {rank_a:.2f} ms, max {max_a:.2f} ms (first {first_a:.0f} ms)  "
          f"goal <= {GOALS['rank_analytic_ms']} ms")
    print(f"rank one problem, {args.trees}-tree model: median {rank_m:.2f} ms, max {max_m:.2f} ms "
          f"(first {first_m:.0f} ms)  goal <= {GOALS['rank_model_ms']} ms")
    print(f"1,000 problems, one `ckast select` run: {batch_s:.2f} s (CPU {batch_cpu:.2f} s)  goal <= {GOALS['batch_s']} s")
    print(f"train {len(rows)} rows: {trees} trees {train_s:.1f} s (CPU {train_cpu:.1f} s); with 5-fold CV "
          f"{cv_s:.1f} s (CPU {cv_cpu:.1f} s); {args.trees} trees {big_s:.1f} s (CPU {big_cpu:.1f} s), with 5-fold "
          f"CV {big_cv_s:.1f} s (CPU {big_cv_cpu:.1f} s)  goal <= {GOALS['train_s']} s; "
          f"{len(os.sched_getaffinity(0))} cores, load average {load[0]:.2f} before, {load[1]:.2f} after")
    print("cross-validation (synthetic): " + " ".join(line.strip() for line in cv_out.splitlines()[2:4]))
    for name, q in ((f"LightGBM {trees} trees", quality(library, held, model)),
                    (f"LightGBM {args.trees} trees", quality(library, held, big)), ("analytic", quality(library, held, None))):
        print(f"held-out synthetic shapes, {name}: mean {q['mean']:.1%} P10 {q['p10']:.1%} min {q['min']:.1%} "
              f"top-1 {q['top1']:.1%} top-5 {q['top5']:.1%} ({q['problems']} shapes)  goal mean >= 97%, P10 >= 90%")


if __name__ == "__main__":
    main()
