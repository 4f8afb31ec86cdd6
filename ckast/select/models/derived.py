"""ckast's derived tiling features (`ckast_*`): the quantities a kernel's speed hinges on that CK's
feature set leaves trees to approximate: the GEMM the kernel runs (per direction), the padding its
tiles waste per dimension, blocks per CU, waves over the CUs and their quantization, the share of
the matrix cores the critical path keeps busy, the work and L2 feed on one CU's critical path, the
tensors' bytes, split-K's share of the traffic, and the depthwise kernels' own spatial tiling.

They are declared as data (`expr` trees, so the C++ selector is generated from them like CK's) and
describe the hardware's work, not the analytic model's prediction: no efficiency factor, rate,
memory floor or time appears in them. Conventions (those of `ckast.select.models.analytic`, the one source of the
modelling constants): a conv problem is G GEMMs of the direction's view (forward (N x output, K,
C x filter), bwd_data (N x input, C, K x filter), bwd_weight (K, C x filter, N x output)), per group,
with the direction read from the kernel's `variant`; merged groups widen N; a two-buffer pipeline
(or `double_smem_buffer`) holds its A and B tiles twice in LDS; at most `MAX_WARPS_RESIDENT` warps of
one CU's blocks are resident; depthwise kernels run one wave per block, `DEPTHWISE_SLOTS_PER_CU` per
CU. GEMM problems are one GEMM split `k_batch` ways (conv problems' k_batch is not a feature column,
so conv reads as k_batch 1). A stream-K kernel balances its tiles: no wave quantization.
"""

from __future__ import annotations

from .analytic import (
    DEPTHWISE_SLOTS_PER_CU,
    DOUBLE_LDS_PIPELINES,
    MAX_WARPS_RESIDENT,
    conv_output,
    conv_volumes,
    view,
)

from ckast.select.expr import FALSE, Col, Expr, Hw, ceil, floor, maximum, minimum, where

from ckast.select.features.featureset import Feature, kernel, problem


def _padded(size: Expr, tile: Expr) -> Expr:
    """`size` rounded up to whole tiles."""
    return ceil(size / tile) * tile


def _quantized(count: Expr, slots: Expr) -> Expr:
    """The share of `slots`-wide waves that `count` blocks fill: count / (waves x slots)."""
    return count / (ceil(count / slots) * slots)


def _conv_view() -> tuple[Expr, Expr, Expr, Expr, Expr, Expr, Expr]:
    """(groups, M, N, K, Ho, Wo, output volume) of a conv problem: the per-group GEMM of the kernel's
    direction (`analytic.view` of each direction, picked by the kernel's `variant`)."""
    views = {d: view("grouped_conv", d) for d in ("forward", "bwd_data", "bwd_weight")}
    bwd_data, bwd_weight = Col("variant").eq("bwd_data"), Col("variant").eq("bwd_weight")

    def pick(field: str) -> Expr:
        return where(bwd_data, getattr(views["bwd_data"], field),
                     where(bwd_weight, getattr(views["bwd_weight"], field), getattr(views["forward"], field)))

    return problem("G"), pick("m"), pick("n"), pick("k"), conv_output("h"), conv_output("w"), conv_volumes()[2]


def _depthwise(groups: Expr, ho: Expr, wo: Expr) -> tuple[Expr, list[Feature]]:
    """(the depthwise kernels' critical-path FLOPs per CU, their spatial tiling features: 1.0 for other
    kernels)."""
    dw = Col("variant").eq("forward_depthwise")
    th, tw = kernel("tile_h"), kernel("tile_w")
    blocks = problem("N") * groups * ceil(ho / th) * ceil(wo / tw)
    slots = Hw("num_cus") * DEPTHWISE_SLOTS_PER_CU
    critical = ceil(blocks / slots) * DEPTHWISE_SLOTS_PER_CU * th * tw * problem("Y") * problem("X") * 2
    return critical, [
        Feature("ckast_dw_tile_eff", where(dw, ho * wo / (_padded(ho, th) * _padded(wo, tw)), 1.0)),
        Feature("ckast_dw_blocks_per_slot", where(dw, blocks / slots, 1.0)),
        Feature("ckast_dw_wave_eff", where(dw, _quantized(blocks, slots), 1.0)),
    ]


def derived_features(kind: str) -> tuple[Feature, ...]:
    """The `ckast_*` features of problems of `kind` ("gemm" or "grouped_conv")."""
    if kind == "gemm":
        groups, m, n, k = 1.0, problem("M"), problem("N"), problem("K")
        k_batch, merge = problem("k_batch"), 1.0
    else:
        groups, m, n, k, ho, wo, output = _conv_view()
        k_batch, merge = 1.0, kernel("num_groups_to_merge")
    tm, tn, tk = kernel("tile_m"), kernel("tile_n"), kernel("tile_k")
    warps = kernel("warp_m") * kernel("warp_n") * kernel("warp_k")
    buffers = where((kernel("double_smem_buffer") > 0) | Col("pipeline").isin(DOUBLE_LDS_PIPELINES), 2.0, 1.0)
    lds_block = (tm + tn) * tk * kernel("dtype_bytes") * buffers
    blocks_per_cu = minimum(maximum(floor(Hw("lds_bytes") / lds_block), 1.0),
                            maximum(floor(MAX_WARPS_RESIDENT / warps), 1.0))
    k_split = ceil(k / k_batch)
    pad = {"m": m / _padded(m, tm), "n": n * merge / _padded(n * merge, tn), "k": k_split / _padded(k_split, tk)}
    tiles = ceil(groups / merge) * ceil(m / tm) * ceil(n * merge / tn) * k_batch
    slots = Hw("num_cus") * blocks_per_cu
    waves = ceil(tiles / slots)
    streamk = kernel("streamk_enabled") > 0 if kind == "grouped_conv" else FALSE
    wave_eff = where(streamk, 1.0, _quantized(tiles, slots))
    steps = ceil(k_split / tk)
    # each resident block gets its share of the CU's SIMDs; the critical path is waves x k-steps of it
    simd_share = minimum(Hw("simds_per_cu"), warps * blocks_per_cu) / (blocks_per_cu * Hw("simds_per_cu"))
    rounds = where(streamk, tiles / slots, waves)
    critical = rounds * steps * tm * tn * tk / simd_share
    bpe = kernel("dtype_bytes")
    features = [
        Feature("ckast_gemm_m", m), Feature("ckast_gemm_n", n), Feature("ckast_gemm_k", k),
        *(Feature(f"ckast_pad_eff_{d}", pad[d]) for d in "mnk"),
        Feature("ckast_pad_eff", pad["m"] * pad["n"] * pad["k"]),
        Feature("ckast_blocks_per_cu", blocks_per_cu),
        Feature("ckast_tiles", tiles),
        Feature("ckast_waves", waves),
        Feature("ckast_wave_eff", wave_eff),
        Feature("ckast_k_steps", steps),
        Feature("ckast_simd_share", simd_share),
        Feature("ckast_mfma_utilization", groups * m * n * k / (critical * Hw("num_cus"))),
        Feature("ckast_feed_bytes_per_cu", rounds * blocks_per_cu * steps * (tm + tn) * tk * bpe),
    ]
    if kind == "gemm":  # split-K's fp32 partial outputs (and their zeroing) as a share of the bytes moved
        partials = where(k_batch > 1, 4.0 * (k_batch + 1) * m * n, 0.0)
        moved = (m * k + k * n + m * n) * bpe
        features += [Feature("ckast_tensor_bytes", moved), Feature("ckast_critical_flops", 2 * critical),
                     Feature("ckast_split_k_share", partials / (moved + partials))]
    else:
        dw_critical, dw_features = _depthwise(groups, ho, wo)
        p = {name: problem(name) for name in ("G", "N", "C", "K")}
        elements = p["G"] * (p["N"] * p["C"] * problem("Di") * problem("Hi") * problem("Wi")
                             + p["K"] * p["C"] * problem("Z") * problem("Y") * problem("X")
                             + p["N"] * p["K"] * output)
        features += [Feature("ckast_tensor_bytes", elements * bpe),
                     Feature("ckast_critical_flops",
                             where(Col("variant").eq("forward_depthwise"), dw_critical, 2 * critical)),
                     *dw_features]
    return tuple(features)
