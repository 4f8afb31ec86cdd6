"""Benchmark: how long `ckast generate -j N` takes to stop after SIGINT or SIGTERM (the goal: under a second).

Each run generates the conv `full` fp16 2-D library (2,021 kernels) into a fresh directory, in a process
group of its own, and is signalled at one point: while it waits for another run's lock, while the
workers render (after 100 and after 3,000 staged files), or once the manifest is staged (the user's
files carried over, the swap next). The signal goes to the parent alone or to the whole group (as a
terminal's Ctrl-C). Printed per point and target: the median time from the signal to the exit, the
exit status and the run's last line.

    python tools/bench_interrupt.py [--runs 3] [--jobs 2] [--out-root /tmp/bench-interrupt]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SELECTION = ["--rule-set", "full", "--arch", "gfx942", "--datatype", "fp16", "--ndim", "2", "--ck-api", "ck-2026.06"]
POINTS = ("lock wait", "rendering, 100 files", "rendering, 3000 files", "manifest staged")


def staged(stage: Path, point: str) -> bool:
    try:
        names = os.listdir(stage)
    except FileNotFoundError:
        return False
    if point == "manifest staged":
        return "manifest.json" in names
    return len(names) >= int(point.split(", ")[1].split()[0])


def one(root: Path, point: str, sig: signal.Signals, group: bool, jobs: int) -> tuple[float, int, str]:
    """(seconds from the signal to the exit, exit status, last line) of one signalled run."""
    from ckast.output.lock import DirectoryLock

    out = root / "lib"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    stage = root / ".lib.ckast-stage"
    lock = DirectoryLock(out) if point == "lock wait" else None
    if lock:
        lock.__enter__()
    proc = subprocess.Popen([sys.executable, "-m", "ckast", "generate", *SELECTION, "-j", str(jobs), "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        if lock:
            proc.stderr.readline()  # "ckast: waiting for the ckast run ..."
        else:
            while proc.poll() is None and not staged(stage, point):
                time.sleep(0.002)
        start = time.perf_counter()
        (os.killpg if group else os.kill)(proc.pid, sig)
        stdout, stderr = proc.communicate(timeout=60)
        seconds = time.perf_counter() - start
    finally:
        if lock:
            lock.__exit__()
    return seconds, proc.returncode, (stderr.strip() or stdout.strip()).splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out-root", type=Path, default=None)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-interrupt-", dir=args.out_root))
    os.environ["CKAST_CACHE_DIR"] = str(root / "cache")  # templates cached by a first, complete run
    subprocess.run([sys.executable, "-m", "ckast", "generate", *SELECTION, "-o", str(root / "warm")], check=True,
                   capture_output=True)
    print(f"ckast generate (conv full fp16 2-D, -j {args.jobs}), signal to exit, median of {args.runs}")
    print(f"{'point':24} {'signal':8} {'to':6} {'seconds':>8} {'status':>6}  last line")
    for point in POINTS:
        for sig in (signal.SIGINT, signal.SIGTERM):
            for group in (False, True):
                runs = [one(root, point, sig, group, args.jobs) for _ in range(args.runs)]
                seconds = statistics.median(r[0] for r in runs)
                print(f"{point:24} {sig.name:8} {'group' if group else 'parent':6} {seconds:8.3f} {runs[-1][1]:6}  "
                      f"{runs[-1][2]}")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
