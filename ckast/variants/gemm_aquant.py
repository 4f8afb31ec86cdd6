"""GEMM `aquant`: A scaled per group of `aquant_group_k` elements along K (CK's AQuantGrouped), a patch on the
shared graph through `gemm_quant_common`.

Data types as CK's `unified_gemm_aquant_codegen.py` emits them (its goldens at ROCm/rocm-libraries
ea607ecdb59e970dc748d4848363b800334ba5c6, `dispatcher/tests/golden/codegen/hpp/gemm_aquant_*.hpp.golden`):
fp8 and bf8 with float scales; `fp8i4`/`bf8i4` with a packed-int4 A, an fp8/bf8 B and fp8/bf8 scales. The
scales are row-major (`AQLayout`), B's scale layout is a column-major placeholder (no B scales). The
group is `QuantGroupShape<sequence<1, 1, aquant_group_k>>`; preshuffled scales (`preshuffle_aquant`) run
`AQuantGemmPipelineAgBgCrCompV3` (intrawave), plain ones `AQuantGemmPipelineAgBgCrMem` (interwave), each
over the universal base pipeline of the same name for the launcher's tail dispatch. The pipeline
problem's compute type is A's, as CK passes it.
"""

from __future__ import annotations

from ckast import nodes as n
from ckast.arch import PIPELINES
from ckast.lower.cxx import data_type
from ckast.lower.graph import KernelGraph

from . import gemm_quant_common as q
from .common import alias, ids
from .gemm import SCHEDULERS

QUANT_TYPE = "AQuantGrouped"
PIPELINE_CLASSES = {"mem": "AQuantGemmPipelineAgBgCrMem", "compv3": "AQuantGemmPipelineAgBgCrCompV3"}


def scale_type(g: q.QuantGemm) -> n.Type:
    """float scales for fp8/bf8; fp8/bf8 scales (B's type) for a packed-int4 A, as CK's variants table says."""
    return g.operand_type("B") if g.compute_dtype != g.c.datatype else data_type(g.p, "fp32")


def patch(g: q.QuantGemm, graph: KernelGraph) -> None:
    c, p = g.c, g.p
    graph.replace(q.quant_constants(g, c.preshuffle_aquant))
    q.quant_data_types(g, graph, scale_type(g), aq_layout="r", bq_layout="c")
    seq = p.template("sequence")
    graph.add(alias("QuantGroupSize", "tile_shape", lambda s: g.t(
        "QuantGroupShape", GroupSizes=n.type_of(seq(Is=[n.IntLit(1), n.IntLit(1), n.IntLit(c.aquant_group_k)])))))
    q.quant_traits(g, graph, QUANT_TYPE)
    q.base_pipeline(g, graph, PIPELINES[c.pipeline].base)
    operands = ("ADataType", "QDataType", "BDataType", "AccDataType", "TileShape", "Traits", "QuantGroupSize")
    graph.replace(alias("Problem", "universal_problem", lambda s: g.t(
        "GemmAQuantPipelineProblem", ADataType_=s.ref("ADataType"), AQDataType_=s.ref("QDataType"),
        BDataType_=s.ref("BDataType"), CDataType_=s.ref("AccDataType"), BlockGemmShape_=s.ref("TileShape"),
        Traits_=s.ref("Traits"), QuantGroupSize_=s.ref("QuantGroupSize"), TransposeC_=ids("TransposeC"),
        ComputeDataType_=s.ref("ADataType"), Scheduler_=p.enum_value("GemmPipelineScheduler", SCHEDULERS[c.scheduler]),
        HasHotLoop_=ids("HasHotLoop"), TailNum_=ids("TailNum"),
    ), *operands, params=g.tail_params()))
    q.pipeline(g, graph, PIPELINE_CLASSES[c.pipeline])
    q.epilogue(g, graph)
    q.quant_kernel(g, graph, QUANT_TYPE)
