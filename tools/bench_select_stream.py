"""Benchmark: `ckast select --problems FILE` over many problems, as a user runs it (a fresh process).

Writes a CSV of random GEMM problems per `--rows` count and runs `ckast select` on it (text, and with
`--json`), reading its output as it comes: prints per run the rows per second of wall and CPU time, the
peak RSS of the process, when the first ranking came out and how much was printed. Selection streams: the
peak RSS stays flat as the rows grow and the first ranking comes out long before the last.

The library defaults to 6 GEMM kernels (fp16 rcr, gfx942, tiles 256x256, 128x128, 64x64, pipelines compv3
and mem) generated into a temporary directory; `--library DIR` names another.

    python tools/bench_select_stream.py                          # 100,000 and 1,000,000 problems
    python tools/bench_select_stream.py --rows 20000 --rows 100000 --library lib/
"""

from __future__ import annotations

import argparse
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


def gemm_library(work: Path) -> Path:
    """Six padded fp16 rcr GEMM kernels for gfx942, generated into `work/lib`."""
    configs = [{"kind": "gemm", "datatype": "fp16", "layout": "rcr", "arch": "gfx942", "ck_api": "ck-2026.06",
                "tile_m": m, "tile_n": m, "tile_k": 64, "pipeline": pipeline, "pad_m": True, "pad_n": True,
                "pad_k": True} for m in (256, 128, 64) for pipeline in ("compv3", "mem")]
    (work / "kernels.json").write_text(json.dumps({"kernels": configs}))
    subprocess.run([sys.executable, "-m", "ckast", "generate", "--config", str(work / "kernels.json"), "-o",
                    str(work / "lib")], check=True, capture_output=True, env=ENV)
    return work / "lib"


def problems_file(path: Path, rows: int, seed: int) -> Path:
    """`rows` GEMM problems: M and K from powers of two, N a multiple of 8."""
    rng = random.Random(seed)
    with path.open("w") as f:
        f.write("M,N,K\n")
        for _ in range(rows):
            f.write(f"{rng.choice((128, 256, 512, 1024, 2048, 4096, 8192))},{8 * rng.randint(1, 1024)},"
                    f"{rng.choice((64, 128, 256, 512, 1024, 4096))}\n")
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
    parser.add_argument("--library", type=Path, default=None)
    parser.add_argument("--rows", type=int, action="append", help="Problems per run (repeatable).")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        library = args.library or gemm_library(work)
        print(f"library {library}; load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for rows in args.rows or (100_000, 1_000_000):
            problems = problems_file(work / f"problems_{rows}.csv", rows, args.seed)
            for flags in ((), ("--json",)):
                r = run(library, problems, *flags)
                print(f"{rows:>9,} problems {' '.join(flags) or 'text':>6}: {rows / r['wall']:>8,.0f} rows/s wall "
                      f"({r['wall']:.1f} s), {rows / r['cpu']:>8,.0f} rows/s CPU ({r['cpu']:.1f} s), peak RSS "
                      f"{r['rss']:.0f} MiB, first output after {r['first']:.2f} s, {r['printed']:.0f} MiB out",
                      flush=True)


if __name__ == "__main__":
    main()
