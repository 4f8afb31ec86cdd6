"""Two-stage `bwd_weight`: the GEMM writes dWei into an fp32 workspace, then an element-wise kernel
converts it to the weight type; both run in one timed launch. A patch on the shared conv graph:
the epilogue problem's output type becomes the workspace type, the convert kernel is added, and
`run` is replaced.

The workspace holds G*K rows by C*filter-pixels columns (the GEMM's M x N); it is zeroed before
each launch when k_batch > 1 (split-K accumulates into it). Every extent the convert kernel sees is
an `index_t`, so its deduced `Dims` types agree.
"""

from __future__ import annotations

from ckast import nodes as n
from ckast.lower.cxx import constexpr
from ckast.lower.graph import Construct, KernelGraph, Scope

from .common import check_and_grid, ids, make_kernel, timed_launch
from .conv import Conv, epilogue_problem, pixels

CONVERT_BLOCK_TILE, CONVERT_BLOCK_WARPS, CONVERT_WARP_TILE = 2048, 8, 64
"""CK's two-stage example: 2048 elements per block over 8 warps of 64."""


def patch(g: Conv, graph: KernelGraph) -> None:
    p = g.p
    seq = p.template("sequence")
    graph.add(Construct("ConvertConfig", "config", lambda s: [
        constexpr(g.index_t, "ConvertBlockTile", CONVERT_BLOCK_TILE),
        constexpr(g.index_t, "ConvertBlockWarps", CONVERT_BLOCK_WARPS),
        constexpr(g.index_t, "ConvertWarpTile", CONVERT_WARP_TILE),
    ]))
    graph.add(Construct("WorkspaceDataType", "data_type", lambda s: n.Builtin("float")))
    base = graph.construct("EpilogueProblem")
    graph.replace(Construct("EpilogueProblem", "epilogue_problem",
                            lambda s: epilogue_problem(g, s, output="WorkspaceDataType"),
                            uses=(*base.uses, "WorkspaceDataType"), params=base.params))
    graph.add(Construct("ConvertShape", "tile_shape", lambda s: g.t(
        "ElementWiseShape", BlockWarps=n.type_of(seq(Is=[ids("ConvertBlockWarps")])),
        BlockTile=n.type_of(seq(Is=[ids("ConvertBlockTile")])), WarpTile=n.type_of(seq(Is=[ids("ConvertWarpTile")])),
        ComputeDataType=s.ref("WorkspaceDataType"),
    ), uses=("ConvertConfig", "WorkspaceDataType")))
    graph.add(Construct("ConvertProblem", "pipeline_problem", lambda s: g.t(
        "ElementWisePipelineProblem", XDataType_=s.ref("WorkspaceDataType"), ComputeDataType_=s.ref("WorkspaceDataType"),
        YDataType_=s.ref("CDataType"), BlockShape_=s.ref("ConvertShape"), ElementWiseOperation_=p.type("UnaryConvert"),
    ), uses=("WorkspaceDataType", "CDataType", "ConvertShape")))
    graph.add(Construct("ConvertKernel", "kernel", lambda s: g.t(
        "ElementWiseKernel", Problem_=s.ref("ConvertProblem"), Policy_=p.type("ElementWiseDefaultPolicy"),
    ), uses=("ConvertProblem",)))
    graph.replace(Construct("run", "launcher", lambda s: run(g, s),
                            uses=("Kernel", "ConvertKernel", "HostArgs", "WorkspaceDataType", "CDataType")))


def run(g: Conv, s: Scope) -> n.FunctionDef:
    """`run(args, stream)`: GEMM into the fp32 workspace, then convert it into dWei, in one timed launch."""
    p, index = g.p, g.index_t
    args = ids("args")
    workspace = ids("workspace")
    buffer = n.call(n.Member(workspace, "GetDeviceBuffer"))
    gemm_m = n.StaticCast(index, n.BinOp("*", n.Member(args, "G_"), n.Member(args, "K_")))
    gemm_n = n.BinOp("*", n.StaticCast(index, n.Member(args, "C_")), ids("filter_pixels"))
    bytes_ = n.BinOp("*", n.BinOp("*", ids("gemm_m"), ids("gemm_n")), n.SizeOf(s.ref("WorkspaceDataType")))
    const = n.Const
    shape = n.call(g.fn("make_tuple"), ids("gemm_m"), ids("gemm_n"))
    strides = n.call(g.fn("make_tuple"), ids("gemm_n"), n.StaticCast(index, n.IntLit(1)))
    convert = make_kernel(
        g, "C", ids("convert_grid"), n.call("C::BlockSize"), n.IntLit(0), ids("convert_shape"), ids("strides"),
        ids("strides"), n.call(g.fn("make_tuple"), n.StaticCast(n.Ptr(s.ref("WorkspaceDataType")), buffer)),
        n.StaticCast(n.Ptr(s.ref("CDataType")), n.Member(args, "wei_ptr")),
    )
    memset = n.Call(g.fn("hipMemsetAsync"), [buffer, n.IntLit(0), bytes_, n.Member(ids("stream"), "stream_id_")])
    zero = ("zero_workspace", "Split-K blocks accumulate into the workspace, so it starts at zero on every (timed) launch.",
            [n.If(n.BinOp(">", n.Member(ids("kargs"), "k_batch"), n.IntLit(1)),
                  [n.ExprStmt(n.Call(g.fn("hip_check_error"), [memset]))])])
    body: list[n.Stmt] = [
        n.Comment("The GEMM's M x N: G*K rows by C*filter-pixel columns, accumulated in fp32."),
        pixels(g, "filter_spatial_lengths_", "filter_pixels"),
        n.VarDecl(const(index), "gemm_m", gemm_m),
        n.VarDecl(const(index), "gemm_n", gemm_n),
        n.VarDecl(p.type("DeviceMem"), "workspace", bytes_, brace=True),
        n.VarDecl(s.ref("HostArgs"), "workspace_args", args),
        n.ExprStmt(n.BinOp("=", n.Member(ids("workspace_args"), "wei_ptr"), buffer)),
        *check_and_grid(g, s.ref("Kernel"), ids("workspace_args"), n.call("K::GridSize", ids("kargs"))),
        n.UsingAlias("C", s.ref("ConvertKernel")),
        n.VarDecl(const(n.Builtin("auto")), "convert_shape", shape),
        n.VarDecl(const(n.Builtin("auto")), "strides", strides),
        n.If(n.UnOp("!", n.call("C::IsSupportedArgument", ids("convert_shape"))), [g.throw("convert kernel: shape not supported")]),
        n.VarDecl(const(index), "convert_grid", n.BinOp("/", n.BinOp("-", n.BinOp(
            "+", n.BinOp("*", ids("gemm_m"), ids("gemm_n")), ids("ConvertBlockTile")), n.IntLit(1)), ids("ConvertBlockTile"))),
        *timed_launch(g, [make_kernel(g, "K", ids("grids"), ids("blocks"), n.IntLit(0), ids("kargs")), convert], zero),
    ]
    return n.FunctionDef("run", n.Builtin("float"), g.host_params(s.ref("HostArgs")), body, static=True)
