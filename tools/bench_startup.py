"""Benchmark: ckast's start-up, each command against a bare interpreter (`python -c pass`) in the same run.

The commands and the bare interpreter run alternately (A B A B ...), each in a fresh process, so a drift of the
machine's speed moves both; for each it prints the median and min-max of wall and CPU (user + system, from
`os.wait4`) and of the pairs' differences (command minus interpreter):

- `ckast --version`;
- `ckast emit` of one kernel (the first of examples/gemm_standard.json) into a new directory, the cache as an
  earlier run of the same command left it (warm: the kernel's template, the attrs methods, the parsed TOML);
- the same with an empty cache directory (cold: everything computed, recorded and written);
- the same command line again, its directory up to date (answered from the run's record before the command
  line is imported).

The commands run as `python -m ckast` of this checkout (sys.executable, PYTHONPATH set to the repository), with
its bytecode compiled first (`python -m compileall`): without it each run compiles every module it imports.
On a shared machine the figures are noisy: read the medians of the differences, and give --runs.

    python tools/bench_startup.py
    python tools/bench_startup.py --runs 31
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of `argv`; its output is discarded, a failure stops the benchmark."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{err.decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime


def spread(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def paired(name: str, command: Callable[[], tuple[float, float]], bare: Callable[[], tuple[float, float]],
           runs: int) -> None:
    command(), bare()  # a warm-up pair: file caches, the cache directory's first fill
    a, b = [], []
    for _ in range(runs):
        a.append(command())
        b.append(bare())
    print(f"\n{name}  ({runs} pairs; seconds: median (min-max))")
    for label, i in (("wall", 0), ("cpu", 1)):
        print(f"  {label:4}  command {spread([x[i] for x in a])}   python -c pass {spread([y[i] for y in b])}   "
              f"difference {spread([x[i] - y[i] for x, y in zip(a, b)])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="pairs per command (default 21)")
    args = parser.parse_args()

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "ckast")], check=True)
    work = Path(tempfile.mkdtemp(prefix="ckast-bench-startup-"))
    try:
        config = work / "one_kernel.json"
        kernels = json.loads((ROOT / "examples" / "gemm_standard.json").read_text())["kernels"]
        config.write_text(json.dumps({"kernels": kernels[:1]}))
        env = {**os.environ, "PYTHONPATH": str(ROOT), "CKAST_CACHE_DIR": str(work / "cache")}
        ckast = [sys.executable, "-m", "ckast"]
        outputs = iter(range(10**6))

        def bare() -> tuple[float, float]:
            return timed([sys.executable, "-c", "pass"], env)

        def emit(cold: bool) -> tuple[float, float]:
            if cold:
                shutil.rmtree(work / "cache", ignore_errors=True)
            return timed([*ckast, "emit", "--config", str(config), "-o", str(work / f"out{next(outputs)}")], env)

        paired("ckast --version", lambda: timed([*ckast, "--version"], env), bare, args.runs)
        paired("ckast emit, one kernel, warm cache", lambda: emit(False), bare, args.runs)
        paired("ckast emit, one kernel, empty cache", lambda: emit(True), bare, args.runs)
        rerun = [*ckast, "emit", "--config", str(config), "-o", str(work / "again")]
        paired("ckast emit, the same command again (up to date)", lambda: timed(rerun, env), bare, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
