"""Stream-K `bwd_weight`: a patch on the shared conv graph that swaps the partitioner and `run`.

CK's stream-K partitioner spreads the GEMM's K iterations over a fixed number of workgroups;
tiles split between workgroups meet in a workspace (partial sums and flags) that the kernel sizes
(`GetWorkSpaceSize`) and the launcher allocates and hands over (`SetWorkSpacePointer`). The
workspace is zeroed inside the timed region, so every timed repetition starts clean. The final
tile is always written with `set`, so dWei itself is never zeroed.
"""

from __future__ import annotations

from ckast import nodes as n
from ckast.lower.graph import Construct, KernelGraph, Scope

from .common import check_and_grid, ids, make_kernel, timed_launch
from .conv import Conv

REDUCTIONS = {"tree": "Tree", "linear": "Linear"}
"""`streamk_reduction` -> CK's `StreamKReductionStrategy` enumerator."""


def patch(g: Conv, graph: KernelGraph) -> None:
    c = g.c
    graph.replace(Construct("TilePartitioner", "partitioner", lambda s: g.t(
        "StreamKTilePartitioner", BlockGemmShape=s.ref("TileShape"),
        ReductionStrategyType=g.p.enum_value("StreamKReductionStrategy", REDUCTIONS[c.streamk_reduction]),
        Persistent=n.BoolLit(bool(c.streamk_persistent)),
    ), uses=("TileShape",)))
    graph.replace(Construct("run", "launcher", lambda s: run(g, s), uses=("Kernel", "HostArgs")))


def run(g: Conv, s: Scope) -> n.FunctionDef:
    """`run(args, stream)`: check the arguments, allocate and attach the workspace, launch."""
    workspace = n.call(n.Member(ids("workspace"), "GetDeviceBuffer"))
    memset = n.Call(g.fn("hipMemsetAsync"), [workspace, n.IntLit(0), ids("workspace_bytes"),
                                             n.Member(ids("stream"), "stream_id_")])
    zero = ("zero_workspace", "Stream-K tiles meet in the workspace, so it starts at zero on every (timed) launch.",
            [n.If(n.BinOp(">", ids("workspace_bytes"), n.IntLit(0)), [n.ExprStmt(n.Call(g.fn("hip_check_error"), [memset]))])])
    body: list[n.Stmt] = [
        *check_and_grid(g, s.ref("Kernel"), ids("args"), n.call("K::GridSize", ids("kargs")), mutable=True),
        n.VarDecl(n.Const(g.p.type("size_t")), "workspace_bytes", n.call("K::GetWorkSpaceSize", ids("kargs"))),
        n.VarDecl(g.p.type("DeviceMem"), "workspace", ids("workspace_bytes"), brace=True),
        n.ExprStmt(n.call("K::SetWorkSpacePointer", ids("kargs"), workspace)),
        *timed_launch(g, [make_kernel(g, "K", ids("grids"), ids("blocks"), n.IntLit(0), ids("kargs"))], zero),
    ]
    return n.FunctionDef("run", n.Builtin("float"), g.host_params(s.ref("HostArgs")), body, static=True)
