"""Benchmark: the LightGBM forest as emitted C++ (`ckast.select.cxx.lower_forest`) against LightGBM's C API.

On the conv `full` fp16 2-D library's forward part, with a 2,000-tree model trained by `ckast select train` on
synthetic timings (tools/synth_timings.py; `--predictor lightgbm` a model of log1p TFLOPS alone, by default one on the
analytic model, `residual`; `--leaves N` trains the same data in-process with N leaves per tree):
1. Emit: the forest lowered for the part's kernels (kernel and hardware features known) and printed; the
   harness TU that includes it compiled with clang++-19 -O2 (wall time and peak RSS from /usr/bin/time -v).
   `--all-kernels` lowers over every kernel of the library (the size goal's ~2,000 kernels; the forward model
   then also ranks the other directions' kernels: a size and speed check, not a meaningful ranking).
2. Rank `--problems` random forward problems (each problem's rows from `FeatureSet.matrix`, all kernels of
   the part) in one process (tools/lightgbm_capi/harness.cpp): (a) LightGBM's C API once per kernel as CK's
   ml_heuristic.hpp does, (b) one batch call for all rows, (c) the emitted predictor; per-problem median
   latency, ratios, and whether predictions are bit-identical and rankings identical.

    python tools/bench_selector.py                                   # generates the library and model
    python tools/bench_selector.py --library lib/ --model model_2000/ --problems 50
"""

from __future__ import annotations

import argparse
import gzip
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import synth_timings
from bench_select import ckast, conv_library

HARNESS = ROOT / "tools" / "lightgbm_capi" / "harness.cpp"
CXX = "clang++-19"


def train_model(library: Path, work: Path, trees: int, leaves: int, rows: int, predictor: str) -> Path:
    """A forward model directory of `predictor` trained on synthetic timings (`ckast select train`, or in-process for
    another leaf count)."""
    table = work / "train.csv"
    synth_timings.write(synth_timings.synthesize(library, "forward", max(1, rows // 230), 10_000, 11, 0.02, 0.08),
                        table)
    out = work / f"model_{trees}x{leaves}_{predictor}"
    if leaves == 0:
        ckast("select", "train", "--data", str(table), "--library", str(library), "-o", str(out), "--folds", "0",
              "--trees", str(trees), "-j", "2", "--predictor", predictor)
        return out
    from ckast.arch.hardware import hardware
    from ckast.select.ranking import train as train_module
    from ckast.select.serving.library import load_library
    from ckast.select.tables.timings import read_timings

    data = train_module.dataset(list(read_timings([table], load_library(library)).runs), load_library(library),
                                hardware)
    saved = train_module.DEFAULT_PARAMS
    train_module.DEFAULT_PARAMS = {**saved, "num_leaves": leaves, "max_depth": -1}
    try:
        booster, spec, cv = train_module.train(data, trees, 0, 0, 2, predictor=predictor)
    finally:
        train_module.DEFAULT_PARAMS = saved
    train_module.write_model(out, booster, spec, cv)
    return out


def problems(count: int, seed: int):
    from ckast.select.serving.problem_read import conv_problem, parse_pairs

    shapes, out, seen = synth_timings.conv_shapes(random.Random(seed), "forward", 2), [], set()
    while len(out) < count:
        fields = {k: v for k, v in next(shapes).items() if k != "direction"}
        key = tuple(sorted(fields.items()))
        if key not in seen and fields["N"] * fields["C"] * fields["Hi"] * fields["Wi"] < 2**31:
            seen.add(key)
            out.append(conv_problem(parse_pairs(",".join(f"{k}={v}" for k, v in fields.items()))))
    return out


def timed_compile(args: list[str]) -> tuple[float, float]:
    """(wall s, peak RSS GiB) of a compiler run, from /usr/bin/time -v."""
    run = subprocess.run(["/usr/bin/time", "-v", *args], check=False, capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"compile failed:\n{run.stderr[-3000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", run.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)
    seconds = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    return seconds, int(rss.group(1)) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", type=Path, help="the fp16 2-D conv library (default: generate it)")
    ap.add_argument("--model", type=Path, help="a forward model directory (default: train one)")
    ap.add_argument("--trees", type=int, default=2000)
    ap.add_argument("--leaves", type=int, default=0, help="leaves per tree of the trained model (0: select train's)")
    ap.add_argument("--predictor", choices=("residual", "lightgbm"), default="residual", help="the trained model")
    ap.add_argument("--rows", type=int, default=50_000, help="synthetic training rows")
    ap.add_argument("--problems", type=int, default=30, help="problems ranked (latency is their median)")
    ap.add_argument("--all-kernels", action="store_true", help="lower over every kernel of the library")
    ap.add_argument("--batch-parameter", default="num_threads=1", help="LightGBM parameter of the batch call (b)")
    ap.add_argument("--work", type=Path, default=None, help="directory for the outputs (default: tmp)")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="ckast-bench-selector-", dir="/dev/shm"))
    work.mkdir(parents=True, exist_ok=True)
    library = conv_library(args.library, work)
    model_dir = args.model or train_model(library, work, args.trees, args.leaves, args.rows, args.predictor)

    import lightgbm

    from ckast import nodes as n
    from ckast.select.cxx.lower_forest import kernel_keys, lower_forest
    from ckast.select.features.table import KernelTable
    from ckast.select.serving.library import load_library
    from ckast.select.models.lightgbm_model import load_model
    from ckast.select.models.inputs import model_features

    predictor = load_model(model_dir)
    forest = predictor.forest
    plain = work / "model.txt"  # LightGBM's C API reads no gzip
    raw = predictor.file.read_bytes()
    plain.write_bytes(gzip.decompress(raw) if predictor.file.suffix == ".gz" else raw)
    booster = lightgbm.Booster(model_file=str(plain))
    features = model_features(predictor.kind)
    columns = predictor.columns
    known = np.array(["problem" not in features.features[c].expr.sources for c in columns])
    lib = load_library(library)
    chosen = problems(args.problems, 5)
    part = lib.part(chosen[0])
    table = KernelTable.of(lib.configs) if args.all_kernels else part.table
    values = features.matrix(chosen[0], table, predictor.hw)[:, columns]

    start = time.perf_counter()
    keys = kernel_keys([features.features[c] for c in columns], table)
    lowered = lower_forest(forest, values, np.broadcast_to(known, values.shape), prefix="forest",
                           log_targets="tflops" in predictor.spec.get("log_targets", ()), kernel_keys=keys)
    lowered_s = time.perf_counter() - start
    source = n.to_source(n.File(lowered.decls, includes=lowered.headers))
    emit_s = time.perf_counter() - start
    header = work / "forest.hpp"
    header.write_text(source)
    p = lowered.program
    print(f"model: {len(forest.trees)} trees, up to {max(t.num_leaves for t in forest.trees)} leaves, "
          f"{sum(t.num_leaves - 1 for t in forest.trees)} splits; {int(known.sum())} of {len(columns)} features known")
    print(f"lowered over {len(table)} kernels: {p.internal} residual nodes, {len(p.leaf)} leaves, "
          f"{len(p.walk_root)} walks ({len(p.walk_root) / p.trees:.0f} per tree); lower {lowered_s:.1f} s, print {emit_s - lowered_s:.1f} s, "
          f"{len(source) / 2**20:.1f} MiB")

    from ckast.select.cxx.problem_struct import problem_struct
    from ckast.select.cxx.selector import write_selector
    from ckast.arch.hardware import hardware
    from ckast.select.ranking.rank import rank

    start = time.perf_counter()
    write_selector(library, [model_dir], work / "selector")
    print(f"selector of the library (`ckast select emit`, every part; this model for the forward one): "
          f"{time.perf_counter() - start:.1f} s")
    selector_s, selector_gib = timed_compile([CXX, "-std=c++17", "-O2", "-c", str(work / "selector" / "ckast_selector.cpp"),
                                              "-o", str(work / "selector.o")])
    print(f"compile (clang++-19 -O2) of the selector TU: {selector_s:.1f} s, peak RSS {selector_gib:.2f} GiB  "
          f"goal <= 60 s, <= 2 GiB")
    libdir = Path(lightgbm.__file__).parent / "lib"
    binary = work / "harness"
    compile_s, compile_gib = timed_compile([
        CXX, "-std=c++17", "-O2", f"-DFOREST_HEADER=\"{header}\"", "-DSELECTOR", f"-I{work / 'selector'}",
        str(HARNESS), str(work / "selector.o"), "-o", str(binary), f"-L{libdir}", "-l_lightgbm",
        f"-Wl,-rpath,{libdir}"])
    print(f"compile (clang++-19 -O2, harness + forest): {compile_s:.1f} s, peak RSS {compile_gib:.2f} GiB  "
          f"goal <= 60 s, <= 2 GiB")

    rows = np.stack([features.matrix(q, table, predictor.hw)[:, columns] for q in chosen])
    data = work / "rows.bin"
    with open(data, "wb") as f:
        f.write(np.array(rows.shape, dtype=np.int32).tobytes())
        f.write(np.ascontiguousarray(rows).tobytes())
    struct = problem_struct("grouped_conv")
    problems_bin = work / "problems.bin"
    problems_bin.write_bytes(np.array([struct.values(q) for q in chosen], dtype=np.int64).tobytes())
    out = work / "out"
    subprocess.run([str(binary), str(plain), str(data), str(out), args.batch_parameter, str(problems_bin)],
                   check=True)
    both = np.fromfile(f"{out}.times") * 1e3
    times, cpu = both[:len(both) // 2].reshape(-1, 3), both[len(both) // 2:].reshape(-1, 3)
    a, b, c = (np.fromfile(f"{out}.{w}") for w in "abc")
    ranks = [np.fromfile(f"{out}.rank_{w}", dtype=np.int32) for w in "abc"]
    python = predictor.transform(booster.predict(rows.reshape(-1, rows.shape[2])))  # predict_tflops'
    med = [statistics.median(times[:, i]) for i in range(3)]
    print(f"rank one problem ({len(table)} kernels, median of {len(chosen)} problems): (a) C API per kernel "
          f"{med[0]:.2f} ms, (b) one batch call ({args.batch_parameter or 'default threads'}) {med[1]:.2f} ms, "
          f"(c) emitted forest {med[2]:.3f} ms (max {times[:, 2].max():.3f} ms)")
    print(f"ratios: (a)/(c) {med[0] / med[2]:.1f}x (goal >= 10x), (b)/(c) {med[1] / med[2]:.1f}x (goal > 1x)")
    cmed = [statistics.median(cpu[:, i]) for i in range(3)]
    print(f"process CPU time (all threads), medians: (a) {cmed[0]:.2f} ms, (b) {cmed[1]:.2f} ms, (c) {cmed[2]:.3f} ms; "
          f"ratios (a)/(c) {cmed[0] / cmed[2]:.1f}x, (b)/(c) {cmed[1] / cmed[2]:.1f}x")
    d_both = np.fromfile(f"{out}.d_times") * 1e3
    d_wall, d_cpu = d_both[:len(chosen)], d_both[len(chosen):]
    d = np.fromfile(f"{out}.d", dtype=np.int32).reshape(-1, 2)
    expected = []
    for q in chosen:
        ranking = rank(q, part, predictor, hardware(part.arch))
        expected.append((len(ranking.order), int(part.name_order[ranking.order[0]]) if len(ranking.order) else -1))
    dmed, dcpu = statistics.median(d_wall), statistics.median(d_cpu)
    print(f"(d) the emitted selector's rank(problem) (features, applicability, forest; {statistics.median(d[:, 0]):.0f} "
          f"kernels apply, median): {dmed:.3f} ms wall, {dcpu:.3f} ms CPU; (a)/(d) {med[0] / dmed:.1f}x, "
          f"(b)/(d) {med[1] / dmed:.1f}x; counts and top-1 equal to ckast select's: "
          f"{[tuple(r) for r in d.tolist()] == expected}")
    same = [np.array_equal(c.view(np.uint64), x.view(np.uint64)) for x in (a, b, python)]
    ulps = int(np.abs(c.view(np.int64) - python.view(np.int64)).max())
    print(f"predictions bit-identical: to (a) {same[0]}, to (b) {same[1]}, to Python's predict_tflops {same[2]} "
          f"(max {ulps} ulp: numpy's expm1 against the C library's); "
          f"rankings identical: {np.array_equal(ranks[2], ranks[0]) and np.array_equal(ranks[2], ranks[1])}")


if __name__ == "__main__":
    main()
