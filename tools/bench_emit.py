"""Benchmark: config validation + AST build + printing for many GEMM kernels (no file I/O).

Prints per-kernel microseconds; compare with CK's generator (about 17-20 us per GEMM kernel to
render, per shared/reference/ck_dispatcher_anatomy.md section 9).
"""

from __future__ import annotations

import itertools
import time

from ckast.catalog import load_profile
from ckast.config import load_data
from ckast.nodes import to_source
from ckast.variants.gemm import gemm_header


def main() -> None:
    configs = [
        {"kind": "gemm", "tile_m": m, "tile_n": n_, "tile_k": k, "pipeline": p, "epilogue": e, "ck_api": api}
        for m, n_, k, p, e, api in itertools.product(
            (64, 128, 256), (64, 128, 256), (32, 64), ("mem", "compv3", "compv4"), ("cshuffle", "default"),
            ("ck-2025.11", "ck-2026.06"),
        )
    ]
    t0 = time.perf_counter()
    loaded = load_data(configs)
    t1 = time.perf_counter()
    for name in ("ck-2025.11", "ck-2026.06"):
        load_profile(name)
    t2 = time.perf_counter()
    total = 0
    for item in loaded:
        total += len(to_source(gemm_header(item.config, load_profile(item.config.ck_api))))
    t3 = time.perf_counter()
    n = len(loaded)
    print(f"kernels: {n}")
    print(f"validate: {(t1 - t0) / n * 1e6:.0f} us/kernel")
    print(f"load catalogs: {(t2 - t1) * 1e3:.0f} ms")
    print(f"build+print: {(t3 - t2) / n * 1e6:.0f} us/kernel ({total / n / 1024:.1f} KiB/kernel)")


if __name__ == "__main__":
    main()
