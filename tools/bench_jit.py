"""Benchmark: in-process JIT (cppyy) of emitted headers against the host model of CK Tile.

Prints the interpreter start and model warm-up (prelude and one model per API profile), the warm
JIT time of every golden kernel header (each a new unit), and the total. Goals: at most 20 ms per
header warm, every golden in at most 10 s.
"""

from __future__ import annotations

import importlib
import statistics
import time
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def main() -> None:
    t0 = time.perf_counter()
    importlib.import_module("cppyy")  # starting the interpreter is part of the cost

    from ckast.catalog import profile_names
    from ckast.hostmodel.jit import session
    from ckast.testing import jit_header, profile_of

    t1 = time.perf_counter()
    s = session()
    s.start()
    t2 = time.perf_counter()
    for name in profile_names():
        s.load(name)
    t3 = time.perf_counter()
    headers = sorted(GOLDEN.glob("*/*_ck-*.hpp"))
    times = {}
    for path in headers:
        start = time.perf_counter()
        jit_header(path, profile_of(path))
        times[path] = (time.perf_counter() - start) * 1e3
    t4 = time.perf_counter()
    print(f"interpreter (import cppyy): {(t1 - t0) * 1e3:.0f} ms")
    print(f"model warm-up: prelude {(t2 - t1) * 1e3:.0f} ms, {len(profile_names())} profile models "
          f"{(t3 - t2) * 1e3:.0f} ms")
    for path, ms in times.items():
        print(f"  {ms:6.1f} ms  {path.relative_to(GOLDEN)}")
    values = list(times.values())
    print(f"per header (warm): mean {statistics.mean(values):.1f} ms, median {statistics.median(values):.1f} ms, "
          f"max {max(values):.1f} ms")
    print(f"all {len(headers)} goldens: {(t4 - t3) * 1e3:.0f} ms (with warm-up: {(t4 - t0):.2f} s)")


if __name__ == "__main__":
    main()
