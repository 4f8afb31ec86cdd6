"""Depthwise forward conv: CK's forward kernel driven by its direct depthwise pipeline.

No implicit GEMM: each thread of one wave computes a sub-tile of a spatial output tile for one
(group, image) from an input window staged in LDS. The graph is its own (depthwise traits ->
pipeline -> conv traits carrying them -> null epilogue -> kernel) and shares the conv tensor
types, host arguments and launcher functions (`run`, `launch`, `is_supported`,
`get_instance_string`) with the implicit-GEMM graph. CK's kernel reads only the output-side
types of its epilogue on this path, so `NullEpilogue` declares just those.
"""

from __future__ import annotations

import attrs

from ckast import nodes as n
from ckast.arch import DEPTHWISE_BLOCK_SIZE, DEPTHWISE_DILATION
from ckast.lower.cxx import c_str, constexpr
from ckast.lower.graph import Construct, KernelGraph, Scope

from .common import alias, ids
from .conv import Conv, add_launcher, host_args, tensor_types

KNOBS = (("TileH", "tile_h"), ("TileW", "tile_w"), ("Filter", "filt"), ("StrideH", "str_h"), ("StrideW", "str_w"),
         ("PadH", "pad_h"), ("PadW", "pad_w"), ("NBatch", "nbatch"), ("SubTileH", "sub_h"), ("SubTileW", "sub_w"),
         ("InVectorSize", "in_vec"), ("OutVectorSize", "out_vec"))
"""Launcher constant -> depthwise knob."""
BLOCK_PER_CU = 2
"""CK's default occupancy hint (CK_TILE_MIN_BLOCK_PER_CU), which CK's own depthwise launch relies on."""


@attrs.frozen
class Depthwise(Conv):
    """The depthwise kernel context: one wave per block, no GEMM loop and no split-K."""

    @property
    def block_size(self) -> int:
        return DEPTHWISE_BLOCK_SIZE

    @property
    def block_per_cu(self) -> int:
        return BLOCK_PER_CU

    @property
    def compile_time_tail(self) -> bool:
        return False

    @property
    def accumulates(self) -> bool:
        return False


def constants(g: Depthwise) -> list[n.Decl]:
    i = g.index_t
    return [
        constexpr(c_str(), "kName", n.StrLit(g.name)),
        constexpr(i, "NDimSpatial", g.c.ndim_spatial),
        constexpr(i, "BlockSize", g.block_size),
        constexpr(n.Builtin("int"), "kBlockPerCu", g.block_per_cu),
        *(constexpr(i, name, getattr(g.c, knob)) for name, knob in KNOBS),
        constexpr(i, "Dilation", DEPTHWISE_DILATION),
    ]


def null_epilogue(g: Depthwise, s: Scope) -> n.Struct:
    """The output-side types CK's forward kernel reads from its epilogue type."""
    none = n.type_of(g.p.template("tuple")(T=()))
    return n.Struct("NullEpilogue", [
        n.UsingAlias("DsLayout", none),
        n.UsingAlias("DsDataType", none),
        n.UsingAlias("ODataType", s.ref("OutDataType")),
        n.UsingAlias("CDElementwise", g.p.type("PassThrough")),
    ])


def graph(g: Depthwise) -> KernelGraph:
    p, void = g.p, n.Builtin("void")
    out = KernelGraph()
    out.add(Construct("Config", "config", lambda s: constants(g)))
    for construct in tensor_types(g):
        out.add(construct)
    out.add(host_args(g))
    types = ("InDataType", "WeiDataType", "AccDataType", "OutDataType")
    out.add(alias("DwTraits", "traits", lambda s: g.t(
        "DepthwiseConvFwdTraits", InDataType_=s.ref("InDataType"), WeiDataType_=s.ref("WeiDataType"),
        AccDataType_=s.ref("AccDataType"), OutDataType_=s.ref("OutDataType"), BlockSize_=ids("BlockSize"),
        TileH_=ids("TileH"), TileW_=ids("TileW"), FilterH_=ids("Filter"), FilterW_=ids("Filter"),
        StrideH_=ids("StrideH"), StrideW_=ids("StrideW"), DilationH_=ids("Dilation"), DilationW_=ids("Dilation"),
        PadH_=ids("PadH"), PadW_=ids("PadW"), NBatch_=ids("NBatch"), SubTileH_=ids("SubTileH"),
        SubTileW_=ids("SubTileW"), InVectorSize_=ids("InVectorSize"), OutVectorSize_=ids("OutVectorSize"),
    ), *types))
    out.add(alias("Pipeline", "pipeline", lambda s: g.t("DepthwiseConvFwdPipeline", Traits_=s.ref("DwTraits")), "DwTraits"))
    out.add(alias("ConvTraits", "traits", lambda s: g.t(
        "GroupedConvTraits", NDimSpatial_=ids("NDimSpatial"),
        ConvSpecialization_=p.enum_value("ConvolutionSpecialization", "Default"),
        InLayout_=void, WeiLayout_=void, DsLayout_=n.type_of(p.template("tuple")(T=())), OutLayout_=void,
        VectorSizeA_=ids("InVectorSize"), VectorSizeB_=ids("InVectorSize"), VectorSizeC_=ids("OutVectorSize"),
        DepthwiseTraitsType_=s.ref("DwTraits"),
    ), "DwTraits"))
    out.add(Construct("NullEpilogue", "epilogue", lambda s: null_epilogue(g, s), uses=("OutDataType",)))
    out.add(alias("Kernel", "kernel", lambda s: g.t(
        g.d.kernel, GroupedConvTraitsType_=s.ref("ConvTraits"), TilePartitioner_=void, Pipeline_=s.ref("Pipeline"),
        EpiloguePipeline_=s.ref("NullEpilogue"),
    ), "ConvTraits", "Pipeline", "NullEpilogue"))
    add_launcher(g, out)
    return out
