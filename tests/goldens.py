"""Every golden file and what produces it (one table, so an orphan golden is caught)."""

from __future__ import annotations

from ckast.catalog import profile_names

from .conftest import GOLDEN

GEMM = {"kind": "gemm", "datatype": "fp16", "layout": "rcr"}
GEMM_CASES: dict[str, dict] = {
    "standard": dict(GEMM, variant="standard"),
    "standard_persistent": dict(GEMM, variant="standard", layout="rrr", pipeline="mem", epilogue="default",
                                pad_m=True, pad_n=True, pad_k=True, persistent=True, datatype="bf16"),
    "standard_no_split_k": dict(GEMM, variant="standard", split_k=False, pipeline="compv4", datatype="fp8"),
    "preshuffle": dict(GEMM, variant="preshuffle"),
    "multi_d": dict(GEMM, variant="multi_d"),
    "multi_d_2d": dict(GEMM, variant="multi_d", num_d_tensors=2, elementwise_op="MultiDMultiply", d_layout="r",
                       persistent=True),
    "batched": dict(GEMM, variant="batched"),
    "streamk": dict(GEMM, variant="stream_k", streamk_reduction="linear", persistent=True),
    "grouped": dict(GEMM, variant="grouped"),
    "grouped_persistent": dict(GEMM, variant="grouped", persistent=True, datatype="bf16", layout="rrr"),
}
QUANT = {"kind": "gemm", "layout": "rcr"}
QUANT_CASES: dict[str, tuple[dict, tuple[str, ...]]] = {
    "bquant": (dict(QUANT, variant="bquant", datatype="fp8"), ("ck-2025.11", "ck-2026.06")),
    "bquant_fp8i4_preshuffleb": (dict(QUANT, variant="bquant", datatype="fp8i4", pipeline="preshuffleb", tile_m=128,
                                      tile_n=128, tile_k=128, warp_tile_k=64, preshuffle_bquant=True),
                                 ("ck-2025.11", "ck-2026.06")),
    "bquant_mx_bf16fp4": (dict(QUANT, variant="bquant", datatype="mx_bf16fp4", arch="gfx950", tile_m=128, tile_n=128,
                               tile_k=128, warp_tile_k=32, bquant_group_k=32), ("ck-2026.06",)),
    "abquant": (dict(QUANT, variant="abquant", datatype="fp4", bquant_group_n=128), ("ck-2026.06",)),
    "abquant_eightwaves": (dict(QUANT, variant="abquant", datatype="fp8", arch="gfx950", pipeline="eightwaves",
                                tile_m=192, tile_n=256, warp_m=4, warp_n=2, k_block_per_cu=1), ("ck-2026.06",)),
    "aquant": (dict(QUANT, variant="aquant", datatype="fp8"), ("ck-2026.06",)),
    "aquant_bf8i4_preshufflequant": (dict(QUANT, variant="aquant", datatype="bf8i4", preshuffle_aquant=True,
                                          warp_tile_k=64), ("ck-2026.06",)),
    "aquant_compv3": (dict(QUANT, variant="aquant", datatype="fp8", pipeline="compv3"), ("ck-2025.11", "ck-2026.06")),
    "rowcolquant": (dict(QUANT, variant="rowcolquant", datatype="fp8"), ("ck-2025.11", "ck-2026.06")),
    "tensor_quant": (dict(QUANT, variant="tensor_quant", datatype="bf8"), ("ck-2025.11", "ck-2026.06")),
}
"""Golden quant headers (CK's goldens' families): bquant plain, int4 weights with preshuffled B and B scales,
the MX microscale mix; abquant fp4 with 1x128x128 B groups, and gfx950's eight-wave preshuffled-B path; aquant
plain on Mem and on CompV3 and with preshuffled scales and a packed-int4 A (ck-2025.11 has neither Mem AQuant nor a
packed-int4 A), row-col and tensor quant in both profiles (CK's factories' tiles, gfx942)."""
"""Golden kernel headers: every variant, plus persistent, no-split-K and a multi-D with two D tensors; Stream-K
with the reduction both profiles have through a workspace (linear), persistent; grouped, also persistent (its
kernel then picks hot loop and tail per group on the device)."""

GROUPED_QUANT_CASES: dict[str, tuple[dict, tuple[str, ...]]] = {
    "bquant_grouped": (dict(QUANT, variant="bquant", datatype="fp8", grouped=True), ("ck-2025.11", "ck-2026.06")),
    "tensor_quant_grouped_persistent": (dict(QUANT, variant="tensor_quant", datatype="bf8", grouped=True,
                                             persistent=True), ("ck-2025.11", "ck-2026.06")),
    "aquant_grouped_persistent": (dict(QUANT, variant="aquant", datatype="fp8", pipeline="compv3", grouped=True,
                                       persistent=True), ("ck-2026.06",)),
}
"""Golden grouped quant headers (CK Tile's QuantGroupedGemmKernel): bquant at each profile's default (ck-2025.11
persistent, its only kernel; ck-2026.06 not, the launcher then takes the first group's tail), tensor quant
persistent in both, and AQuant, which only ck-2026.06's kernel runs."""

GEMM_HEADERS = {(case, profile): GOLDEN / "gemm" / f"{case}_{profile}.hpp"
                for case in GEMM_CASES for profile in profile_names()}
QUANT_HEADERS = {(case, profile): GOLDEN / "gemm" / f"{case}_{profile}.hpp"
                 for case, (_, profiles) in QUANT_CASES.items() for profile in profiles}
GROUPED_QUANT_HEADERS = {(case, profile): GOLDEN / "gemm" / f"{case}_{profile}.hpp"
                         for case, (_, profiles) in GROUPED_QUANT_CASES.items() for profile in profiles}
GEMM_RUN = {
    "wrapper": GOLDEN / "gemm" / "run" / "dispatcher_wrapper_multi_d.hpp",
    "unit": GOLDEN / "gemm" / "run" / "unit_standard.cpp",
    "registration": GOLDEN / "gemm" / "run" / "register_all_kernels.hpp",
}
"""Goldens of the per-kernel and per-run files around the headers (profile ck-2025.11)."""

CONV = {"kind": "grouped_conv"}
SMALL_TILE = dict(tile_m=16, tile_n=64, tile_k=64, warp_m=1, warp_n=4, warp_k=1, warp_tile_m=16, warp_tile_n=16,
                  warp_tile_k=32)
"""CK's example bwd-weight tile (its A/B LDS transposes build with 4- and 8-wide loads)."""
BOTH, NEW = ("ck-2025.11", "ck-2026.06"), ("ck-2026.06",)
CONV_CASES: dict[str, tuple[dict, tuple[str, ...]]] = {
    "forward": (dict(CONV, variant="forward", pipeline="compv3"), BOTH),
    "forward_features": (dict(CONV, variant="forward", datatype="bf16", ndim_spatial=3, pipeline="mem",
                              scheduler="interwave", specialization="filter1x1_stride1_pad0", split_image=True,
                              num_groups_to_merge=2), BOTH),
    "forward_1d_fp32_compv4": (dict(CONV, variant="forward", datatype="fp32", ndim_spatial=1, pipeline="compv4",
                                    tile_k=32, warp_tile_m=16, warp_tile_n=16, warp_tile_k=16), BOTH),
    "forward_explicit_gemm": (dict(CONV, variant="forward", explicit_gemm=True,
                                   specialization="filter1x1_stride1_pad0", pipeline="compv3"), NEW),
    "forward_wavelet": (dict(CONV, variant="forward", pipeline="wavelet"), NEW),
    "bwd_data": (dict(CONV, variant="bwd_data", pipeline="compv3"), BOTH),
    "bwd_weight": (dict(CONV, variant="bwd_weight", pipeline="compv3", **SMALL_TILE), BOTH),
    "bwd_weight_two_stage": (dict(CONV, variant="bwd_weight", pipeline="compv3", two_stage=True, vector_size_c=4,
                                  **SMALL_TILE), BOTH),
    "bwd_weight_streamk": (dict(CONV, variant="bwd_weight", pipeline="compv3", streamk_enabled=True, **SMALL_TILE), NEW),
    "bwd_weight_streamk_linear_persistent": (dict(CONV, variant="bwd_weight", pipeline="mem", streamk_enabled=True,
                                                  streamk_reduction="linear", streamk_persistent=True, **SMALL_TILE), NEW),
    "forward_depthwise": (dict(CONV, variant="forward_depthwise", nbatch=8, sub_h=2, sub_w=2, in_vec=2, out_vec=2), NEW),
    "forward_depthwise_bf16_stride2": (dict(CONV, variant="forward_depthwise", datatype="bf16", tile_h=32, tile_w=32,
                                            str_h=2, str_w=2, sub_h=2, sub_w=8, in_vec=8, out_vec=8), NEW),
}
"""Golden conv headers: every direction, two-stage, stream-K and depthwise, the conv features, and the
ck-2026.06-only paths."""

CONV_HEADERS = {(case, profile): GOLDEN / "conv" / f"{case}_{profile}.hpp"
                for case, (_, profiles) in CONV_CASES.items() for profile in profiles}
CONV_RUN_DIR = GOLDEN / "conv" / "run"
CONV_RUN_FILES = (
    "dispatcher_wrappers/dispatcher_wrapper_forward.hpp",
    "dispatcher_wrappers/register_all_grouped_conv_kernels.hpp",
    "dispatcher_wrappers/register_all_grouped_conv_kernels.cpp",
    "dispatcher_wrappers/register_grouped_conv_bwd_weight_chunk_0.cpp",
    "dispatcher_wrappers/register_grouped_conv_bwd_weight_chunk_1.cpp",
    "include_all_grouped_conv_fwd_kernels.hpp",
)
"""Goldens of a run's conv wrapper and registration files (chunk size 1 so chunking shows)."""
CONV_RUN = {name: CONV_RUN_DIR / name for name in CONV_RUN_FILES}

ALL = {*GEMM_HEADERS.values(), *QUANT_HEADERS.values(), *GROUPED_QUANT_HEADERS.values(), *GEMM_RUN.values(),
       *CONV_HEADERS.values(), *CONV_RUN.values()}
