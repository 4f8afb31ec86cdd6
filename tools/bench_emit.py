"""Benchmark: config validation (knobs + arch rules), graph build, lowering and printing of every
file of many GEMM kernels (no file I/O).

Prints per-kernel microseconds; compare with CK's generator (about 17-20 us per GEMM kernel to
render, per shared/reference/ck_dispatcher_anatomy.md section 9).
"""

from __future__ import annotations

import itertools
import time

from ckast.catalog import load_profile
from ckast.config import ConfigError, load_data
from ckast.emit import render, run_files


def configs() -> list[dict]:
    return [
        {"kind": "gemm", "variant": v, "tile_m": m, "tile_n": n_, "tile_k": k, "pipeline": p, "epilogue": e,
         "ck_api": api}
        for v, m, n_, k, p, e, api in itertools.product(
            ("standard", "multi_d"), (64, 128, 256), (64, 128, 256), (32, 64), ("mem", "compv3", "compv4"),
            ("cshuffle", "default"), ("ck-2025.11", "ck-2026.06"),
        )
    ]


def main() -> None:
    candidates = configs()
    t0 = time.perf_counter()
    loaded = []
    for c in candidates:
        try:
            loaded += load_data(c)
        except ConfigError:
            pass
    t1 = time.perf_counter()
    for name in ("ck-2025.11", "ck-2026.06"):
        load_profile(name)
    t2 = time.perf_counter()
    kernels = render(loaded)
    registration = run_files(kernels)
    t3 = time.perf_counter()
    n = len(kernels)
    size = sum(len(src) for k in kernels for _, src in k.files) + sum(len(src) for _, src in registration)
    print(f"candidates: {len(candidates)}, valid kernels: {n}")
    print(f"validate: {(t1 - t0) / len(candidates) * 1e6:.0f} us/config")
    print(f"load catalogs: {(t2 - t1) * 1e3:.0f} ms")
    print(f"build+print (header, wrapper, .cpp; registration): {(t3 - t2) / n * 1e6:.0f} us/kernel "
          f"({size / n / 1024:.1f} KiB/kernel)")


if __name__ == "__main__":
    main()
