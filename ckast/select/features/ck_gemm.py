"""CK's 72 GEMM features (`GemmUniversalFeatureEngine`), with CK's names, order and formulas.

Source: CK's `dispatcher/heuristics/feature_engine.py` (its `extract_batch`, the path `predict.py`'s
`rank_kernels` takes), the feature list of `models/gemm_universal_fp16_gfx950/feature_spec.json`,
and `extract_features` of `dispatcher/include/ck_tile/dispatcher/ml_heuristic.hpp`. Each formula
keeps CK's order of operations (float64, left to right), so values match CK's bit for bit.

Where CK's sources differ, and what this table does:
- pipeline codes: Python's `PIPELINE_MAP` (compv3 0, compv4 1, compv5 2, mem 3, preshufflev2 4,
  basic_v1 5, compv6 6); ml_heuristic.hpp encodes compv6 as 5 and has no basic_v1. ckast's GEMM
  pipelines (mem, compv3-5, preshufflev2) have the same code in both. Unknown values: 0 (both).
- layout codes: rcr 0, rrr 1, crr 2, ccr 3 (Python's `LAYOUT_MAP`). The C++ gives the same codes
  (A column-major and B row-major -> 2) although its comments call 2 "CCR" and 3 "CRR".
- split_k: the problem's k_batch (Python); the C++ clamps k_batch to >= 1, which a `GemmProblem`
  already is.
- bytes per element: of the kernel's datatype (CK reads the problem's dtype, default fp8 = 1 in
  Python, fp16 = 2 in the C++; a ckast kernel always has its datatype).
- lds_usage_ratio: capacity 32768 for compv4 (Python: pipeline name starts with "compv4"; C++:
  pipeline == CompV4), else the hardware's LDS.
- Python's scalar `extract` computes M*N*K and M*K+K*N+M*N in exact integers; `extract_batch` and
  the C++ in float64. This table follows the float64 path (they differ only beyond 2^53).
"""

from __future__ import annotations

from ckast.select.expr import Col, Expr, Hw, any_of, ceil, log2, maximum, where

from .featureset import Feature, FeatureSet, categorical, kernel, problem

LAYOUT_CODES = {"rcr": 0, "rrr": 1, "crr": 2, "ccr": 3}
PIPELINE_CODES = {"compv3": 0, "compv4": 1, "compv5": 2, "mem": 3, "preshufflev2": 4, "basic_v1": 5, "compv6": 6}
SCHEDULER_CODES = {"intrawave": 0, "interwave": 1}
EPILOGUE_CODES = {"default": 0, "cshuffle": 1}
COMPV4_LDS_BYTES = 32768
"""CK's LDS capacity for compv4 in its lds_usage_ratio (the double-buffered pipeline gets half of 64 KiB)."""

HW_FEATURES = (
    ("hw_num_cus", Hw("num_cus")),
    ("hw_simds_per_cu", Hw("simds_per_cu")),
    ("hw_total_simds", Hw("num_cus") * Hw("simds_per_cu")),
    ("hw_shader_engines", Hw("shader_engines")),
    ("hw_max_clock_mhz", Hw("max_clock_mhz")),
    ("hw_max_waves_per_cu", Hw("max_waves_per_cu")),
    ("hw_wavefront_size", Hw("wavefront_size")),
    ("hw_lds_capacity", Hw("lds_bytes")),
    ("hw_l1_cache_kb", Hw("l1_cache_kb")),
    ("hw_l2_cache_kb", Hw("l2_cache_kb")),
    ("hw_l3_cache_kb", Hw("l3_cache_kb")),
    ("hw_num_xcd", Hw("num_xcd")),
)
"""The 12 hardware features both of CK's engines end with."""


def _tile_efficiency(dim: Expr, tile: Expr) -> Expr:
    """CK's tile_eff: the filled fraction of the last tile, 1 when the tile divides the dimension."""
    rem = dim % maximum(tile, 1)
    return where(rem > 0, rem / tile, 1.0)


def _features() -> tuple[Feature, ...]:
    M, N, K = problem("M"), problem("N"), problem("K")
    bpe = kernel("dtype_bytes")
    tm, tn, tk = kernel("tile_m"), kernel("tile_n"), kernel("tile_k")
    wm, wn, wk = kernel("warp_m"), kernel("warp_n"), kernel("warp_k")
    pads = {d: kernel(f"pad_{d}") for d in "mnk"}
    padded = {d: pads[d].ne(0) for d in "mnk"}
    dims, tiles = {"m": M, "n": N, "k": K}, {"m": tm, "n": tn, "k": tk}

    mem = (M * K + K * N + M * N) * bpe
    lds_estimate = (tm * tk + tn * tk) * bpe
    lds_capacity = where(Col("pipeline").eq("compv4"), COMPV4_LDS_BYTES, Hw("lds_bytes"))
    num_tiles = {d: ceil(dims[d] / maximum(tiles[d], 1)) for d in "mnk"}
    efficiency = {d: _tile_efficiency(dims[d], tiles[d]) for d in "mnk"}
    smaller = {d: dims[d] < tiles[d] for d in "mnk"}
    needs = {d: (dims[d] % maximum(tiles[d], 1)).ne(0) for d in "mnk"}
    missing = {d: needs[d] & ~padded[d] for d in "mnk"}

    numeric = [
        ("M", M), ("N", N), ("K", K), ("split_k", problem("k_batch")),
        ("log2_M", log2(maximum(M, 1))), ("log2_N", log2(maximum(N, 1))), ("log2_K", log2(maximum(K, 1))),
        ("log2_MNK", log2(maximum(M * N * K, 1))),
        ("arithmetic_intensity", 2.0 * M * N * K / maximum(mem, 1)),
        ("aspect_ratio_mn", M / maximum(N, 1)), ("aspect_ratio_mk", M / maximum(K, 1)),
        ("aspect_ratio_nk", N / maximum(K, 1)),
    ]
    features = [Feature(name, e) for name, e in numeric]
    features.append(categorical("layout", "layout", LAYOUT_CODES))
    features += [Feature(name, kernel(name)) for name in (
        "tile_m", "tile_n", "tile_k", "warp_m", "warp_n", "warp_k", "warp_tile_m", "warp_tile_n", "warp_tile_k")]
    features += [
        categorical("pipeline", "pipeline", PIPELINE_CODES),
        categorical("scheduler", "scheduler", SCHEDULER_CODES),
        categorical("epilogue", "epilogue", EPILOGUE_CODES),
    ]
    features += [Feature(name, kernel(name)) for name in ("pad_m", "pad_n", "pad_k", "persistent")]
    features += [Feature(name, e) for name, e in (
        ("num_warps", wm * wn * wk),
        ("tile_volume", tm * tn * tk),
        ("tile_mn", tm * tn),
        ("lds_usage_estimate", lds_estimate),
        ("lds_usage_ratio", lds_estimate / maximum(lds_capacity, 1)),
        *((f"num_tiles_{d}", num_tiles[d]) for d in "mnk"),
        ("total_output_tiles", num_tiles["m"] * num_tiles["n"]),
        *((f"tile_eff_{d}", efficiency[d]) for d in "mnk"),
        ("overall_tile_efficiency", efficiency["m"] * efficiency["n"] * efficiency["k"]),
        ("cu_utilization", num_tiles["m"] * num_tiles["n"] / maximum(Hw("num_cus"), 1)),
        *((f"ratio_{D}_to_tile_{d}", dims[d] / maximum(tiles[d], 1)) for d, D in zip("mnk", "MNK")),
        *((f"problem_smaller_than_tile_{d}", smaller[d]) for d in "mnk"),
        ("any_dim_too_small", any_of(smaller["m"], smaller["n"], smaller["k"])),
        *((f"needs_padding_{d}", needs[d]) for d in "mnk"),
        *((f"has_padding_when_needed_{d}", needs[d] & padded[d]) for d in "mnk"),
        *((f"missing_required_padding_{d}", missing[d]) for d in "mnk"),
        ("missing_any_required_padding", any_of(missing["m"], missing["n"], missing["k"])),
        *HW_FEATURES,
    )]
    return tuple(features)


GEMM_FEATURES = FeatureSet("gemm", _features())
