"""Benchmark: `ckast select --problems FILE` over many problems, as a user runs it (a fresh process).

Writes a CSV of random problems per `--rows` count and runs `ckast select` on it (text, and with `--json`),
reading its output as it comes: prints per run the rows per second of wall and CPU time, the peak RSS of the
process, when the first ranking came out and how much was printed. Selection streams: the peak RSS stays flat
as the rows grow and the first ranking comes out long before the last.

`--kind gemm` (default): GEMM problems, and a library of 6 GEMM kernels (fp16 rcr, gfx942, tiles 256x256,
128x128, 64x64, pipelines compv3 and mem); `--kind conv`: 2-D forward conv problems (`synth_timings`'
shapes), and the `full` rule set's 2-D forward fp16 conv kernels for gfx942 (655). The library is generated
into a temporary directory; `--library DIR` names another. Ranking is by the analytic model, or with
`--trees N` by a LightGBM model of N trees trained (`ckast select train`) on synthetic timings of the
library (`synth_timings`, 40 problems: a model of a real model's size, not of real predictions).

    python tools/bench_select_stream.py                          # 100,000 and 1,000,000 problems
    python tools/bench_select_stream.py --rows 20000 --rows 100000 --library lib/
    python tools/bench_select_stream.py --kind conv --rows 5000 --trees 400
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
CONV_COLUMNS = ("direction", "G", "N", "C", "K", "Hi", "Wi", "Y", "X", "stride_h", "stride_w", "pad_h", "pad_w")


def gemm_library(work: Path) -> Path:
    """Six padded fp16 rcr GEMM kernels for gfx942, generated into `work/lib`."""
    configs = [{"kind": "gemm", "datatype": "fp16", "layout": "rcr", "arch": "gfx942", "ck_api": "ck-2026.06",
                "tile_m": m, "tile_n": m, "tile_k": 64, "pipeline": pipeline, "pad_m": True, "pad_n": True,
                "pad_k": True} for m in (256, 128, 64) for pipeline in ("compv3", "mem")]
    (work / "kernels.json").write_text(json.dumps({"kernels": configs}))
    subprocess.run([sys.executable, "-m", "ckast", "generate", "--config", str(work / "kernels.json"), "-o",
                    str(work / "lib")], check=True, capture_output=True, env=ENV)
    return work / "lib"


def conv_library(work: Path) -> Path:
    """The `full` rule set's 2-D forward fp16 conv kernels for gfx942, generated into `work/lib`."""
    subprocess.run([sys.executable, "-m", "ckast", "generate", "--rule-set", "full", "--arch", "gfx942", "--datatype",
                    "fp16", "--ndim", "2", "--variant", "forward", "--ck-api", "ck-2026.06", "-o", str(work / "lib")],
                   check=True, capture_output=True, env=ENV)
    return work / "lib"


def trained_model(work: Path, library: Path, kind: str, trees: int) -> Path:
    """A LightGBM model of `trees` trees trained on synthetic timings of 40 problems of `library`."""
    direction = "gemm" if kind == "gemm" else "forward"
    subprocess.run([sys.executable, str(ROOT / "tools" / "synth_timings.py"), "--library", str(library), "--direction",
                    direction, "--problems", "40", "--per-problem", "60", "-o", str(work / "timings.csv")],
                   check=True, capture_output=True, env=ENV)
    subprocess.run([sys.executable, "-m", "ckast", "select", "train", "--data", str(work / "timings.csv"), "--library",
                    str(library), "-o", str(work / "model"), "--trees", str(trees), "--folds", "0", "-j", "1"],
                   check=True, capture_output=True, env=ENV)
    return work / "model"


def problems_file(path: Path, rows: int, seed: int) -> Path:
    """`rows` GEMM problems: M and K from powers of two, N a multiple of 8."""
    rng = random.Random(seed)
    with path.open("w") as f:
        f.write("M,N,K\n")
        for _ in range(rows):
            f.write(f"{rng.choice((128, 256, 512, 1024, 2048, 4096, 8192))},{8 * rng.randint(1, 1024)},"
                    f"{rng.choice((64, 128, 256, 512, 1024, 4096))}\n")
    return path


def conv_problems_file(path: Path, rows: int, seed: int) -> Path:
    """`rows` 2-D forward conv problems, `synth_timings`' shapes (1x1 to 7x7 filters, strided, grouped,
    depthwise) that ckast serves (its tensors within index_t)."""
    sys.path.insert(0, str(ROOT))
    from synth_timings import conv_shapes

    from ckast.select.problem import ProblemError
    from ckast.select.serving.problem_read import conv_problem

    def served(fields: dict) -> bool:
        try:
            conv_problem(fields)
        except ProblemError:
            return False
        return True

    shapes = filter(served, conv_shapes(random.Random(seed), "forward", 2))
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CONV_COLUMNS)
        writer.writeheader()
        writer.writerows(next(shapes) for _ in range(rows))
    return path


def run(library: Path, problems: Path, *flags: str) -> dict[str, float]:
    """Wall and CPU seconds, peak RSS (MiB), seconds to the first line out and MiB printed of one `select`."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "ckast", "select", "--library", str(library), "--problems",
                                str(problems), *flags], stdout=subprocess.PIPE, env=ENV)
    first = None
    printed = 0
    while chunk := process.stdout.read1(1 << 16):
        first = time.perf_counter() - start if first is None else first
        printed += len(chunk)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"ckast select exited {process.returncode}")
    return {"wall": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime,
            "rss": usage.ru_maxrss / 1024, "first": first or 0.0, "printed": printed / (1 << 20)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=("gemm", "conv"), default="gemm", help="The problems and default library.")
    parser.add_argument("--library", type=Path, default=None)
    parser.add_argument("--trees", type=int, default=None,
                        help="Rank with a LightGBM model of this many trees trained on synthetic timings.")
    parser.add_argument("--rows", type=int, action="append", help="Problems per run (repeatable).")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        library = args.library or (gemm_library if args.kind == "gemm" else conv_library)(work)
        model = () if args.trees is None else ("--model", str(trained_model(work, library, args.kind, args.trees)))
        print(f"library {library}; {f'{args.trees}-tree LightGBM model' if model else 'analytic model'}; load "
              f"average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for rows in args.rows or (100_000, 1_000_000):
            write = problems_file if args.kind == "gemm" else conv_problems_file
            problems = write(work / f"problems_{rows}.csv", rows, args.seed)
            for flags in ((), ("--json",)):
                r = run(library, problems, *model, *flags)
                print(f"{rows:>9,} problems {' '.join(flags) or 'text':>6}: {rows / r['wall']:>8,.0f} rows/s wall "
                      f"({r['wall']:.1f} s), {rows / r['cpu']:>8,.0f} rows/s CPU ({r['cpu']:.1f} s), peak RSS "
                      f"{r['rss']:.0f} MiB, first output after {r['first']:.2f} s, {r['printed']:.0f} MiB out",
                      flush=True)


if __name__ == "__main__":
    main()
