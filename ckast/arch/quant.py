"""Facts of CK's quantized GEMM families that the config language and the arch rules share.

CK's dispatcher spells the families `gemm_aquant` (A scaled per group of K), `gemm_rowcolquant` (one scale
per row of A and per column of B) and `gemm_tensor_quant` (one scale per tensor); ckast's variants take the
same names. Read at ROCm/rocm-libraries ea607ecdb59e970dc748d4848363b800334ba5c6, the commit of CK's byte
goldens (`projects/composablekernel/dispatcher/tests/golden/codegen/manifest.json`, `hpp/*.hpp.golden`):
the variant keys (data types) and default tiles of `dispatcher/python/gemm_{aquant,rowcolquant,
tensor_quant}_utils.py` as the manifest records them.
"""

from __future__ import annotations

AQUANT, ROWCOL_QUANT, TENSOR_QUANT = "aquant", "rowcolquant", "tensor_quant"
QUANT_VARIANTS = (AQUANT, ROWCOL_QUANT, TENSOR_QUANT)
"""Quantized GEMM variants (CK's family names)."""

QUANT_DATATYPES = {
    AQUANT: ("fp8", "bf8", "fp8i4", "bf8i4"),
    ROWCOL_QUANT: ("fp8", "bf8"),
    TENSOR_QUANT: ("fp8", "bf8"),
}
"""CK's variant keys per family: `fp8i4`/`bf8i4` quantize A to packed int4 (B stays fp8/bf8)."""

QUANT_PIPELINES = {AQUANT: ("mem", "compv3"), ROWCOL_QUANT: ("compv3",), TENSOR_QUANT: ("compv3",)}
"""The pipelines CK's generators build per family: AQuant's Mem (plain scales) and CompV3 (preshuffled scales);
row-col and tensor quant run the universal CompV3 pipeline and scale in the epilogue."""
AQUANT_SCHEDULES = {"mem": "interwave", "compv3": "intrawave"}
"""The one schedule each AQuant pipeline implements (its only `PipelineImpl` specialization)."""

DEFAULT_TILE = {"tile": (16, 64, 256), "warp": (1, 4, 1), "warp_tile": (16, 16, 32)}
"""The tile of CK's default quant configs (`default_fp8_config`: 16x64x256, 1x4x1, 16x16x32) ..."""
DEFAULT_WARP_TILE_K = {"gfx950": 128}
"""... whose warp tile K is 128 on gfx950 (CK's `get_k_warp_tile<fp8_t, 16>()`)."""
DEFAULT_AQUANT_GROUP_K = 128
"""CK's default A-scale group: 1 x 1 x 128 (`qg1x1x128`); CK's AQuant pipelines assert groups of 1 x 1 x K."""


def quant_default(kind: str, axis: str, arch: str) -> int:
    """The default `<kind>_<axis>` (kind: tile, warp or warp_tile) of a quant kernel on `arch`."""
    if kind == "warp_tile" and axis == "k":
        return DEFAULT_WARP_TILE_K.get(arch, DEFAULT_TILE["warp_tile"][2])
    return DEFAULT_TILE[kind]["mnk".index(axis)]
