"""The rules CK's quantized GEMM families add (variants aquant, rowcolquant, tensor_quant).

From CK Tile's `ops/gemm_quant` (both profiles; read in the amd-aiter 0.1.7.post2.dev18 wheel and at
ROCm/rocm-libraries 925db9931b00fd9c47a717f1ff67b50cc90a6969 / 05fca22dddabd764da1caf054b0ffcc19c6f7162):
the AQuant pipelines implement one schedule each and assert 1 x 1 x K groups; the pipeline problem asserts
that the block tile is whole groups; the scale-tensor loads assume row-major A. And from CK's generators at
ea607ecdb59e970dc748d4848363b800334ba5c6 (`dispatcher/codegen/unified_gemm_{aquant,rowcolquant,
tensor_quant}_codegen.py` as its goldens show them): preshuffled A scales run the CompV3 pipeline, plain ones
the Mem pipeline; row-col and tensor quant run CompV3 with the CShuffle epilogue.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .quant import AQUANT, AQUANT_SCHEDULES, QUANT_PIPELINES, QUANT_VARIANTS
from .rules import ArchSpec, Finding, catalog, rule

QUANT_LAYOUTS = ("rcr",)
"""The layouts ckast builds quant kernels in: CK's goldens use rcr only, and the scale loads of CK's quant
pipeline problem assert a row-major A (its `VectorSizeAQ`)."""


@rule("quant.family_pipeline", "the pipeline is one CK builds for the quantized GEMM family", variants=QUANT_VARIANTS,
      reads=("variant", "pipeline"))
def _pipeline(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    allowed = QUANT_PIPELINES[c.variant]
    if c.pipeline not in allowed:
        yield "pipeline", f"{c.pipeline}: CK's {c.variant} GEMM runs {' or '.join(allowed)}"


@rule("quant.rcr", "quantized GEMM kernels read A row-major and B column-major (CK's rcr)", variants=QUANT_VARIANTS,
      reads=("layout",))
def _layout(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.layout not in QUANT_LAYOUTS:
        yield "layout", (f"{c.layout}: CK's quantized GEMM is built for {', '.join(QUANT_LAYOUTS)} (its scale loads "
                         "assert a row-major A)")


@rule("quant.epilogue", "quantized GEMM kernels apply their scales through the CShuffle epilogue",
      variants=QUANT_VARIANTS, reads=("epilogue",))
def _epilogue(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.epilogue != "cshuffle":
        yield "epilogue", f"{c.epilogue}: CK's quantized GEMM generators emit the CShuffle epilogue only"


@rule("aquant.schedule", "each AQuant pipeline implements one schedule (Mem: interwave, CompV3: intrawave)",
      variants=(AQUANT,), needs=("quant.family_pipeline",), reads=("pipeline", "scheduler"))
def _aquant_schedule(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    want = AQUANT_SCHEDULES[c.pipeline]
    if c.scheduler != want:
        yield "scheduler", f"{c.scheduler}: CK's AQuant {c.pipeline} pipeline implements the {want} schedule only"


@rule("aquant.preshuffle_pipeline", "preshuffled A scales run the CompV3 pipeline (CK's generator pairs them)",
      variants=(AQUANT,), needs=("quant.family_pipeline",), reads=("pipeline", "preshuffle_aquant"))
def _aquant_preshuffle(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.preshuffle_aquant and c.pipeline != "compv3":
        yield "pipeline", f"{c.pipeline}: CK builds AQuant with preshuffled scales on the compv3 pipeline"


@rule("aquant.group_divides", "the block tile holds whole A-scale groups (CK's quant pipeline problem asserts it)",
      variants=(AQUANT,), needs=("tile.positive",), reads=("tile_k", "aquant_group_k"))
def _group_tile(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.tile_k % c.aquant_group_k:
        yield "aquant_group_k", f"{c.aquant_group_k} does not divide tile_k = {c.tile_k}"


@rule("profile.aquant_mem", "the CK API profile's AQuant block GEMM has the Mem pipeline's interwave schedule",
      variants=(AQUANT,), reads=("ck_api", "pipeline"))
def _profile_aquant_mem(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.pipeline == "mem" and not catalog.load_profile(c.ck_api).feature("aquant_interwave"):
        yield "pipeline", (f"mem: CK API profile {c.ck_api}'s AQuant block GEMM implements the intrawave schedule "
                           "only, which the Mem pipeline does not run; use compv3 (intrawave), or a newer profile "
                           "(ck_api)")


@rule("profile.aquant_int4", "the CK API profile's AQuant pipeline takes a packed-int4 A (fp8i4, bf8i4)",
      variants=(AQUANT,), reads=("ck_api", "datatype"))
def _profile_aquant_int4(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.datatype.endswith("i4") and not catalog.load_profile(c.ck_api).feature("aquant_packed_int4"):
        yield "datatype", (f"{c.datatype}: CK API profile {c.ck_api}'s AQuant pipeline takes an fp8 or bf8 A only; "
                           "use fp8 or bf8, or a newer profile (ck_api)")


@rule("quant.persistent", "CK's quantized GEMM kernel maps one block to one tile (no persistent path)",
      variants=QUANT_VARIANTS, reads=("persistent",))
def _persistent(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.persistent:
        yield "persistent", "true: CK's QuantGemmKernel has no persistent kernel"
