"""CK's 97 grouped-conv features (`GroupedConvFeatureEngine`), with CK's names, order and formulas.

Source: CK's `dispatcher/heuristics/feature_engine_grouped_conv.py` (its `extract_batch`, the path
`predict.py`'s `rank_kernels` takes), the feature list of
`models/grouped_conv_forward_2d3d_suffix_bf16_gfx950/feature_spec.json`, and the kernel columns
CK's `convert_csv_to_parquet.py` parses from kernel names. Each formula keeps CK's order of
operations (float64), so values match CK's bit for bit. CK has no C++ for these features.

What CK's columns mean, and how they come from ckast's problem and config:
- C and K are CK's total channel counts (its `GroupedConvProblem` checks C % G == 0 and uses C / G
  per group); ckast's `ConvProblem` holds them per group, so C = G x C and K = G x K here. The
  "GEMM N" feature is CK's total K, as CK computes it.
- pad_{d,h,w}: CK has one symmetric pad per axis (Ho = (Hi + 2 pad - ...) // stride + 1); this
  table reads the problem's left pad (the two agree for every problem CK can describe).
- is_3d is CK's test Di > 1 or Z > 1 or pad_d > 0, not the problem's rank; a 1-D problem reads as
  Hi = Y = 1 (see `featureset.problem_columns`).
- block_size, gemm_m_per_block, gemm_n_per_block: CK parses them from the tile token of its kernel
  names, `{tile_m}x{tile_n}x{tile_k}`, in that order; so they are the config's tile_m, tile_n and
  tile_k (CK's labels, not their meaning).
- wave_mode is the scheduler, has_dsb double_smem_buffer, has_si split_image. CK's name parser
  only matches names ending in `[_intrawave|_interwave][_dsb][_si]`: kernels with group merging or
  two-stage (`_gm<n>`, `_2stage`), or a pipeline outside its list (wavelet), get no kernel columns
  in CK's data; here they get their config's values.
- pipeline codes: `feature_engine.PIPELINE_MAP` (see `ck_gemm`); other pipelines (comp_async,
  basic_v2, basic_async_v1, compv1, compv2, wavelet): 0, as CK's fillna(0). is_basic is CK's
  `startswith("basic_v")`: basic_v1 and basic_v2 (not CK's aliases compv1/compv2).
- bytes per element: of the kernel's datatype (CK: the row's dtype, default bf16 = 2).
- lds_usage_ratio: capacity 32768 for compv4 (batch: pipeline == "compv4"; scalar `extract`:
  startswith, the same for every ckast pipeline), else the hardware's LDS.
"""

from __future__ import annotations

from ckast.arch import PIPELINES

from ckast.select.expr import Col, Expr, Hw, all_of, any_of, ceil, log2, maximum, minimum, trunc, where

from .ck_gemm import COMPV4_LDS_BYTES, HW_FEATURES, PIPELINE_CODES
from .featureset import Feature, FeatureSet, categorical, kernel, problem

BASIC_PIPELINES = tuple(p for p in PIPELINES if p.startswith("basic_v"))
"""CK's is_basic test, `pipeline.startswith("basic_v")`, over ckast's pipeline names."""


def _tile_efficiency(size: Expr, tile: Expr) -> Expr:
    """CK's conv tile_eff: the remainder is taken where the tile is positive (else 0)."""
    rem = where(tile > 0, size % tile, 0)
    return where(rem > 0, rem / tile, 1.0)


def _features() -> tuple[Feature, ...]:
    G, N = problem("G"), problem("N")
    C, K = G * problem("C"), G * problem("K")
    Di, Hi, Wi = problem("Di"), problem("Hi"), problem("Wi")
    Z, Y, X = problem("Z"), problem("Y"), problem("X")
    stride = {a: problem(f"stride_{a}") for a in "dhw"}
    pad = {a: problem(f"left_pad_{a}") for a in "dhw"}
    dilation = {a: problem(f"dilation_{a}") for a in "dhw"}

    is_3d = any_of(Di > 1, Z > 1, pad["d"] > 0)
    Ho = (Hi + 2 * pad["h"] - ((Y - 1) * dilation["h"] + 1)) // stride["h"] + 1
    Wo = (Wi + 2 * pad["w"] - ((X - 1) * dilation["w"] + 1)) // stride["w"] + 1
    Do = where(is_3d, (Di + 2 * pad["d"] - ((Z - 1) * dilation["d"] + 1)) // stride["d"] + 1, 1.0)
    spatial = where(is_3d, Di * Hi * Wi, Hi * Wi)
    filter_volume = where(is_3d, Z * Y * X, Y * X)
    output = where(is_3d, Do * Ho * Wo, Ho * Wo)
    bpe = kernel("dtype_bytes")
    per_group_in = C / maximum(G, 1)
    per_group_out = K / maximum(G, 1)
    flops = N * K * output * (C / maximum(G, 1)) * filter_volume * 2
    moved = N * C * spatial * bpe + K * (C / maximum(G, 1)) * filter_volume * bpe + N * K * output * bpe

    block, gemm_m_tile, gemm_n_tile = kernel("tile_m"), kernel("tile_n"), kernel("tile_k")
    lds_estimate = (gemm_m_tile * block + gemm_n_tile * block) * bpe
    lds_capacity = where(Col("pipeline").eq("compv4"), COMPV4_LDS_BYTES, Hw("lds_bytes"))
    gemm_m, gemm_n, gemm_k = N * output, K, trunc(per_group_in * filter_volume)
    sizes = {"m": gemm_m, "n": gemm_n, "k": gemm_k}
    tiles = {"m": gemm_m_tile, "n": gemm_n_tile, "k": block}
    num_tiles = {d: ceil(sizes[d] / maximum(tiles[d], 1)) for d in "mnk"}
    efficiency = {d: _tile_efficiency(sizes[d], tiles[d]) for d in "mnk"}

    problem_features = [
        ("N", N), ("C", C), ("K", K), ("G", G), ("Hi", Hi), ("Wi", Wi), ("Y", Y), ("X", X),
        ("stride_h", stride["h"]), ("stride_w", stride["w"]), ("pad_h", pad["h"]), ("pad_w", pad["w"]),
        ("Ho", Ho), ("Wo", Wo),
        *((f"log2_{name}", log2(maximum(e, 1))) for name, e in
          (("N", N), ("C", C), ("K", K), ("G", G), ("Hi", Hi), ("Wi", Wi))),
        ("log2_spatial", log2(maximum(spatial, 1))),
        ("log2_filter", log2(maximum(filter_volume, 1))),
        ("log2_output", log2(maximum(output, 1))),
        ("arithmetic_intensity", flops / maximum(moved, 1)),
        ("filter_area", filter_volume),
        ("is_1x1_conv", where(is_3d, all_of(Y.eq(1), X.eq(1), Z.eq(1)), all_of(Y.eq(1), X.eq(1)))),
        ("is_3x3_conv", where(is_3d, all_of(Y.eq(3), X.eq(3), Z.eq(3)), all_of(Y.eq(3), X.eq(3)))),
        ("channels_per_group", per_group_in),
        ("aspect_ratio_hw", Hi / maximum(Wi, 1)),
        ("aspect_ratio_filter", Y / maximum(X, 1)),
        ("is_3d", is_3d), ("Di", Di), ("Z", Z), ("Do", Do), ("stride_d", stride["d"]), ("pad_d", pad["d"]),
        ("dilation_h", dilation["h"]), ("dilation_w", dilation["w"]),
        ("log2_channels_per_group", log2(maximum(per_group_in, 1))),
        ("log2_output_channels_per_group", log2(maximum(per_group_out, 1))),
        ("is_depthwise", all_of(G.eq(C), G.eq(K))),
        ("group_density", G / maximum(C, 1)),
        ("is_small_group", any_of(per_group_in < 16, per_group_out < 16)),
        ("channels_product_per_group", per_group_in * per_group_out),
        ("batch_group_product", N * G),
        ("is_small_batch_grouped", all_of(N < 8, G > 1)),
    ]
    features = [Feature(name, e) for name, e in problem_features]
    features += [Feature("block_size", block), Feature("gemm_m_per_block", gemm_m_tile),
                 Feature("gemm_n_per_block", gemm_n_tile), categorical("pipeline", "pipeline", PIPELINE_CODES)]
    features += [Feature(name, e) for name, e in (
        ("num_warps", block / 4.0),
        ("tile_volume", gemm_m_tile * gemm_n_tile * block),
        ("tile_mn", gemm_m_tile * gemm_n_tile),
        ("lds_usage_estimate", lds_estimate),
        ("lds_usage_ratio", lds_estimate / maximum(lds_capacity, 1)),
        ("block_tile_ratio_m", gemm_m_tile / maximum(block, 1)),
        ("block_tile_ratio_n", gemm_n_tile / maximum(block, 1)),
        ("block_efficiency", minimum(gemm_m_tile, gemm_n_tile) / maximum(maximum(gemm_m_tile, gemm_n_tile), 1)),
        ("is_compv3", Col("pipeline").eq("compv3")),
        ("is_compv4", Col("pipeline").eq("compv4")),
        ("is_compv5", Col("pipeline").eq("compv5")),
        ("is_intrawave", Col("scheduler").eq("intrawave")),
        ("has_dsb", kernel("double_smem_buffer")),
        ("has_si", kernel("split_image")),
        ("is_basic", Col("pipeline").isin(BASIC_PIPELINES)),
        ("is_compv6", Col("pipeline").eq("compv6")),
        ("is_mem", Col("pipeline").eq("mem")),
        ("gemm_m_output", gemm_m), ("gemm_n_output", gemm_n), ("gemm_k_output", gemm_k),
        *((f"num_tiles_{d}", num_tiles[d]) for d in "mnk"),
        ("total_output_tiles", num_tiles["m"] * num_tiles["n"]),
        *((f"tile_eff_{d}", efficiency[d]) for d in "mnk"),
        ("overall_tile_efficiency", efficiency["m"] * efficiency["n"] * efficiency["k"]),
        ("cu_utilization", num_tiles["m"] * num_tiles["n"] / maximum(Hw("num_cus"), 1)),
        *((f"ratio_gemm_{d}_to_tile_{d}", sizes[d] / maximum(tiles[d], 1)) for d in "mnk"),
        *((f"problem_smaller_than_tile_{d}", sizes[d] < tiles[d]) for d in "mnk"),
        *HW_FEATURES,
    )]
    return tuple(features)


CONV_FEATURES = FeatureSet("grouped_conv", _features())
