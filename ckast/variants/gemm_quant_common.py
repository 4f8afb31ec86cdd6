"""What CK's quantized GEMM families share, as patches on the shared GEMM graph.

A quantized GEMM scales A and/or B by scale tensors (`QDataType`, laid out as `AQLayout`/`BQLayout`)
that reach the kernel through `QuantGemmHostArgs` (the plain problem plus `aq_ptr`/`bq_ptr`, the K-group
counts `QK_A`/`QK_B` and strides `stride_AQ`/`stride_BQ`; the output is `c_ptr`). Every family swaps the
host arguments, the traits (`TileGemmQuantTraits`, carrying the `QuantType`), the base problem
(`GemmPipelineProblemBase`) and the kernel (`QuantGemmKernel<..., QuantType>`); its own module swaps the
data types, partitioner, problems and pipelines. The quantized pipeline problems take the hot loop and
tail as template arguments in every profile, so the launcher always dispatches on them at compile time,
as CK's generated headers do (`BaseGemmPipeline::TailHandler`). The kernel refuses k_batch != 1 in
ck-2025.11; CK's quant generators build no split-K instance either (rule split_k.unsupported).

Profiles: ck-2025.11's `TileGemmQuantTraits` has one `PreshuffleQuant_` switch where ck-2026.06 has
`APreshuffleQuant_` and `BPreshuffleQuant_` (bound by parameter name). Read in the amd-aiter
0.1.7.post2.dev18 wheel (`ck_tile/ops/gemm_quant`) and at ROCm/rocm-libraries
`projects/composablekernel/include/ck_tile/ops/gemm_quant` (tile_gemm_quant_traits.hpp @925db993,
gemm_quant_pipeline_problem.hpp @09ca95c8, kernel/gemm_quant_kernel.hpp @05fca22d); what CK emits from
its goldens at ea607ecdb59e970dc748d4848363b800334ba5c6 (`dispatcher/tests/golden/codegen/hpp`).
"""

from __future__ import annotations

import attrs

from ckast import nodes as n
from ckast.arch import DTYPES
from ckast.lower.cxx import constexpr, data_type
from ckast.lower.graph import Construct, KernelGraph

from .common import alias, ids
from .gemm import LAYOUTS, Gemm, constants, epilogue_problem

COMPUTE_TYPES = ("AComputeDataType", "BComputeDataType")
"""The pipeline problem's compute types the epilogue takes (profiles with split compute types)."""
PK_INT4 = "pk_int4_t"
"""The catalog type of a packed-int4 operand (data types `fp8i4`/`bf8i4`)."""


@attrs.frozen
class QuantGemm(Gemm):
    """A quantized GEMM: compile-time hot loop and tail in every profile (the quant problems take them)."""

    @property
    def compile_time_tail(self) -> bool:
        return True

    @property
    def compute_dtype(self) -> str:
        """The config data type the warp GEMM computes in (fp8/bf8 for a packed-int4 A)."""
        return DTYPES[self.c.datatype].compute or self.c.datatype

    def operand_type(self, matrix: str) -> n.Type:
        """A's or B's element type: packed int4 for a packed-int4 operand, else the compute type."""
        packed = DTYPES[self.c.datatype].compute is not None
        if packed and matrix == "A":
            return self.p.type(PK_INT4)
        return data_type(self.p, self.compute_dtype)


def quant_constants(g: QuantGemm, a_preshuffle_quant: bool) -> Construct:
    """The shared config constants plus the scale and B preshuffle switches the quant traits read."""
    b = n.Builtin("bool")
    extra = [constexpr(b, "APreshuffleQuant", a_preshuffle_quant), constexpr(b, "BPreshuffleQuant", False),
             constexpr(b, "PreshuffleB", False)]
    return Construct("Config", "config", lambda s: [*constants(g), *extra])


def quant_data_types(g: QuantGemm, graph: KernelGraph, q_type: n.Type, aq_layout: str, bq_layout: str) -> None:
    """A/B element types (packed int4 where the data type says so), the scale type and the scale layouts."""
    graph.replace(alias("ADataType", "data_type", lambda s: g.operand_type("A")))
    graph.replace(alias("BDataType", "data_type", lambda s: g.operand_type("B")))
    graph.add(alias("QDataType", "data_type", lambda s: q_type))
    graph.add(alias("AQLayout", "layout", lambda s: g.p.type(LAYOUTS[aq_layout])))
    graph.add(alias("BQLayout", "layout", lambda s: g.p.type(LAYOUTS[bq_layout])))


def quant_traits(g: QuantGemm, graph: KernelGraph, quant_type: str) -> None:
    """`TileGemmQuantTraits` with the family's `QuantType`, and the base problem over it."""
    sig = g.p.template("TileGemmQuantTraits")
    preshuffle = ({"APreshuffleQuant_": ids("APreshuffleQuant"), "BPreshuffleQuant_": ids("BPreshuffleQuant")}
                  if sig.has_param("APreshuffleQuant_") else {"PreshuffleQuant_": ids("APreshuffleQuant")})
    graph.replace(alias("Traits", "traits", lambda s: g.t(
        "TileGemmQuantTraits", kPadM_=ids("kPadM"), kPadN_=ids("kPadN"), kPadK_=ids("kPadK"), **preshuffle,
        PreshuffleB_=ids("PreshuffleB"), ALayout_=s.ref("ALayout"), BLayout_=s.ref("BLayout"),
        CLayout_=s.ref("CLayout"),
        QuantType_=g.p.enum_value("QuantType", quant_type), AQLayout_=s.ref("AQLayout"), BQLayout_=s.ref("BQLayout"),
        TransposeC_=ids("TransposeC"), DoubleSmemBuffer_=ids("DoubleSmemBuffer"),
    ), "ALayout", "BLayout", "CLayout", "AQLayout", "BQLayout"))
    graph.replace(alias("BaseProblem", "pipeline_problem", lambda s: g.t(
        "GemmPipelineProblemBase", AsDataType_=s.ref("ADataType"), BsDataType_=s.ref("BDataType"),
        EDataType_=s.ref("AccDataType"), BlockGemmShape_=s.ref("TileShape"), Traits_=s.ref("Traits"),
    ), "ADataType", "BDataType", "AccDataType", "TileShape", "Traits"))


def quant_kernel(g: QuantGemm, graph: KernelGraph, quant_type: str) -> None:
    """`QuantGemmHostArgs` in, `QuantGemmKernel<partitioner, pipeline, epilogue, QuantType>` out."""
    graph.replace(alias("HostArgs", "host_args", lambda s: g.p.type("QuantGemmHostArgs")))
    kernel = graph.construct("Kernel")
    graph.replace(Construct("Kernel", "kernel", lambda s: g.t(
        "QuantGemmKernel", TilePartitioner_=s.ref("TilePartitioner"), GemmPipeline_=s.ref("Pipeline"),
        EpiloguePipeline_=s.ref("Epilogue"), QuantType_=g.p.enum_value("QuantType", quant_type),
    ), uses=kernel.uses))


def base_pipeline(g: QuantGemm, graph: KernelGraph, key: str) -> None:
    """The base pipeline whose statics the launcher's tail dispatch calls."""
    graph.replace(alias("BaseGemmPipeline", "base_pipeline", lambda s: g.t(key, Problem=s.ref("BaseProblem")),
                        "BaseProblem"))


def pipeline(g: QuantGemm, graph: KernelGraph, key: str) -> None:
    graph.replace(alias("Pipeline", "pipeline", lambda s: g.t(key, Problem=s.ref("Problem")), "Problem"))


def epilogue(g: QuantGemm, graph: KernelGraph) -> None:
    """The epilogue takes the pipeline problem's A and B compute types, as CK's generators pass them
    (`Problem<HasHotLoop, TailNum>::AComputeDataType`; an alias declaration needs no `typename`). A profile
    with one compute type (ck-2025.11) takes the operand types, B's for a packed-int4 A."""
    old = graph.construct("EpilogueProblem")
    if g.p.feature("split_compute_type"):
        for name in COMPUTE_TYPES:
            graph.add(alias(name, "data_type", lambda s, name=name: n.TypeName(n.Name((
                s.graph.template_id("Problem", {}), name))), "Problem"))
        uses = (*old.uses, *COMPUTE_TYPES)
        graph.replace(Construct("EpilogueProblem", "epilogue_problem", lambda s: epilogue_problem(
            g, s, compute=(s.ref(COMPUTE_TYPES[0]), s.ref(COMPUTE_TYPES[1]))), uses=uses, params=old.params))
    elif DTYPES[g.c.datatype].compute is not None:
        graph.replace(Construct("EpilogueProblem", "epilogue_problem", lambda s: epilogue_problem(
            g, s, compute=(s.ref("BDataType"), s.ref("BDataType"))), uses=old.uses, params=old.params))
