"""GEMM `rowcolquant` and `tensor_quant`: scales per row of A and column of B (CK's RowColQuant) or one scale
per tensor (TensorQuant), applied in the epilogue; patches on the shared graph through `gemm_quant_common`.

Both run CK's universal CompV3 pipeline on `GemmRowColTensorQuantPipelineProblem` (C slot and scale type the
accumulator, float), with `GemmTile1DPartitioner` and, for the launcher's tail dispatch, the weight-preshuffle
base pipeline `BaseWeightPreshufflePipelineAGmemBGmemCRegV2`, as CK's generators emit them
(`unified_gemm_rowcolquant_codegen.py`, `unified_gemm_tensor_quant_codegen.py`; their goldens at
ROCm/rocm-libraries ea607ecdb59e970dc748d4848363b800334ba5c6, `dispatcher/tests/golden/codegen/hpp/
gemm_{rowcolquant,tensor_quant}_*.hpp.golden`). Row-col quant: compute type A's, scales laid out row-major
(A) and column-major (B). Tensor quant: both scale layouts column-major, and the compute type `void`
("from A and B") where the profile's problem base derives it (feature mixed_prec_compute_type; ck-2025.11
passes the compute type through, so there it is A's). CK's tensor-quant generator pads K (`pad_k`, set by
ckast's reader of CK's configs). The launcher spells the group shape the problem fixes
(`QuantGroupSize = QuantGroupShape<sequence<1, 1, 1>>`, CK's tensor-quant placeholder): the problem's header
uses `QuantGroupShape` without including its header, which naming it includes first.
"""

from __future__ import annotations

from ckast import nodes as n
from ckast.arch import PIPELINES
from ckast.arch.quant import TENSOR_QUANT
from ckast.lower.graph import KernelGraph

from . import gemm_quant_common as q
from .common import alias, ids
from .gemm import SCHEDULERS

QUANT_TYPES = {"rowcolquant": "RowColQuant", TENSOR_QUANT: "TensorQuant"}
BASE_PIPELINE = "BaseWeightPreshufflePipelineAGmemBGmemCRegV2"


def patch(g: q.QuantGemm, graph: KernelGraph) -> None:
    c, p = g.c, g.p
    tensor = c.variant == TENSOR_QUANT
    quant_type = QUANT_TYPES[c.variant]
    graph.replace(q.quant_constants(g, False))
    q.quant_data_types(g, graph, n.Builtin("float"), aq_layout="c" if tensor else "r", bq_layout="c")
    seq = p.template("sequence")
    graph.add(alias("QuantGroupSize", "tile_shape", lambda s: g.t(
        "QuantGroupShape", GroupSizes=n.type_of(seq(Is=[n.IntLit(1), n.IntLit(1), n.IntLit(1)])))))
    graph.replace(alias("TilePartitioner", "partitioner", lambda s: g.t(
        "GemmTile1DPartitioner", BlockGemmShape_=s.ref("TileShape")), "TileShape"))
    q.quant_traits(g, graph, quant_type)
    q.base_pipeline(g, graph, BASE_PIPELINE)
    derived = tensor and p.feature("mixed_prec_compute_type")
    operands = ("ADataType", "BDataType", "AccDataType", "TileShape", "Traits")
    graph.replace(alias("Problem", "universal_problem", lambda s: g.t(
        "GemmRowColTensorQuantPipelineProblem", ADataType_=s.ref("ADataType"), BDataType_=s.ref("BDataType"),
        CDataType_=s.ref("AccDataType"), AccDataType_=s.ref("AccDataType"), BlockGemmShape_=s.ref("TileShape"),
        Traits_=s.ref("Traits"), TransposeC_=ids("TransposeC"),
        ComputeDataType_=n.Builtin("void") if derived else s.ref("ADataType"),
        Scheduler_=p.enum_value("GemmPipelineScheduler", SCHEDULERS[c.scheduler]),
        HasHotLoop_=ids("HasHotLoop"), TailNum_=ids("TailNum"),
    ), *operands, params=g.tail_params()))
    q.pipeline(g, graph, PIPELINES[c.pipeline].cls)
    q.epilogue(g, graph)
    q.quant_kernel(g, graph, quant_type)
