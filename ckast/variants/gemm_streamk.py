"""GEMM `stream_k`: CK Tile's Stream-K GEMM, as a patch on the shared GEMM graph.

Swaps the partitioner (`StreamKTilePartitioner`: the reduction strategy and the traits' persistent
flag, which the kernel asserts equal), the kernel (`StreamKKernel`) and `run`. The launcher takes
plain `GemmHostArgs` like the standard GEMM (k_batch must be 1: Stream-K splits K itself) and builds
CK's `StreamKHostArgs`; the kernel sizes its workspace (`GetWorkSpaceSize`) and the launcher
allocates and attaches it (`SetWorkSpacePointer`). Inside the timed region, before every launch,
the atomic reduction zeroes C (its workgroups add into C) and linear/tree zero the workspace (its
flags), as CK's dispatcher does. Workgroups run loop counts known only on the device, so the
pipeline takes hot loop and tail at run time in every profile (no compile-time tail dispatch).

Profiles (read at): ck-2025.11, the amd-aiter wheel's CK Tile `ops/gemm/kernel/streamk_gemm_kernel.hpp`
and `streamk_gemm_tile_partitioner.hpp`: `ck_tile::reboot::StreamKKernel`, `StreamKTilePartitioner_v2
<BlockGemmShapeType, ReductionStrategyType, Persistent>`, strategies {Atomic, Reduction} (Reduction is
the linear reduction), the strategy also a `StreamKHostArgs` constructor argument, the epilogue's
memory operation a template argument (atomic_add for Atomic). ck-2026.06, ROCm/rocm-libraries
`projects/composablekernel/include/ck_tile/ops/gemm/kernel/streamk_gemm/streamk_gemm_kernel.hpp`
@f0667a6b31fd58e68632f4a1730c5a4b7100a498 and `streamk_gemm_tile_partitioner.hpp`
@2e1bd5c2000ad4b9bdd66a44f75a9a35402922d1: `ck_tile::StreamKKernel`, `StreamKTilePartitioner
<BlockGemmShape, ReductionStrategyType, Persistent>`, {Atomic, Linear, Tree}, the partitioner picks
the memory operation. CK's generator: `dispatcher/codegen/unified_gemm_codegen.py`
@6889ec90c732644bbd08b463563aa3d30af09f7d (`GemmVariant.STREAM_K`, cshuffle only, one kernel per
reduction strategy); its backend `dispatcher/include/ck_tile/dispatcher/backends/
generated_tile_backend_streamk.hpp` @6889ec90 (supports(): whole tiles unless padded).
"""

from __future__ import annotations

import attrs

from ckast import nodes as n
from ckast.lower.graph import Construct, KernelGraph, Scope

from .common import check_and_grid, ids, make_kernel, timed_launch
from .gemm import Gemm, zero_output

REDUCTIONS = {"atomic": "Atomic", "linear": "Linear", "tree": "Tree"}
"""`streamk_reduction` -> CK's `StreamKReductionStrategy` enumerator (ck-2026.06)."""
OLD_REDUCTIONS = {"atomic": "Atomic", "linear": "Reduction"}
"""The same where the profile has no tree reduction: ck-2025.11 spells its linear reduction `Reduction`."""
SHAPE_PARAMS = ("BlockGemmShape", "BlockGemmShapeType")
"""The partitioner's tile-shape parameter: `BlockGemmShape` in ck-2026.06, `BlockGemmShapeType` in ck-2025.11."""


@attrs.frozen
class StreamK(Gemm):
    """The Stream-K GEMM context: run-time hot loop and tail; the partitioner's memory operation."""

    @property
    def compile_time_tail(self) -> bool:
        return False

    @property
    def atomic(self) -> bool:
        return self.c.streamk_reduction == "atomic"

    def memop(self) -> n.Expr | None:
        """Where the epilogue's memory operation is a template argument: atomic_add for the atomic reduction."""
        if self.p.feature("runtime_memory_operation"):
            return None
        return self.p.enum_value("memory_operation_enum", "atomic_add" if self.atomic else "set")

    def reduction(self) -> n.Expr:
        table = REDUCTIONS if self.p.feature("streamk_tree_reduction") else OLD_REDUCTIONS
        return self.p.enum_value("StreamKReductionStrategy", table[self.c.streamk_reduction])


def patch(g: StreamK, graph: KernelGraph) -> None:
    sig = g.p.template("StreamKTilePartitioner")
    shape = next(name for name in SHAPE_PARAMS if sig.has_param(name))
    graph.replace(Construct("TilePartitioner", "partitioner", lambda s: g.t(
        "StreamKTilePartitioner", **{shape: s.ref("TileShape")}, ReductionStrategyType=g.reduction(),
        Persistent=ids("UsePersistentKernel"),
    ), uses=("TileShape",)))
    kernel = graph.construct("Kernel")
    graph.replace(Construct("Kernel", "kernel", lambda s: g.t(
        "StreamKKernel", TilePartitioner_=s.ref("TilePartitioner"), GemmPipeline_=s.ref("Pipeline"),
        EpiloguePipeline_=s.ref("Epilogue"),
    ), uses=kernel.uses))
    graph.replace(Construct("run", "launcher", lambda s: run(g, s), uses=graph.construct("run").uses))


def run(g: StreamK, s: Scope) -> n.FunctionDef:
    """`run(args, stream)`: CK's Stream-K host arguments, the argument check, the workspace, the launch."""
    a = ids("args")
    fields: list[n.Expr] = [n.Member(a, f) for f in ("a_ptr", "b_ptr", "e_ptr", "M", "N", "K", "stride_A",
                                                     "stride_B", "stride_E")]
    if g.p.feature("streamk_host_reduction"):
        fields.append(g.reduction())
    workspace = n.call(n.Member(ids("workspace"), "GetDeviceBuffer"))
    if g.atomic:
        zero = ("zero_c", "Atomic Stream-K workgroups add into C, so C starts at zero on every (timed) launch.",
                [n.ExprStmt(zero_output(g, s))])
    else:
        memset = n.Call(g.fn("hipMemsetAsync"), [workspace, n.IntLit(0), ids("workspace_bytes"),
                                                 n.Member(ids("stream"), "stream_id_")])
        zero = ("zero_workspace", "Stream-K tiles meet in the workspace, so it starts at zero on every (timed) launch.",
                [n.If(n.BinOp(">", ids("workspace_bytes"), n.IntLit(0)),
                      [n.ExprStmt(n.Call(g.fn("hip_check_error"), [memset]))])])
    grid = n.call("K::GridSize", n.Member(ids("kargs"), "tile_partitioner"))
    body: list[n.Stmt] = [
        n.VarDecl(n.Const(n.Builtin("auto")), "streamk_args", n.BraceInit(g.p.type("StreamKHostArgs"), fields)),
        *check_and_grid(g, s.ref("Kernel"), ids("streamk_args"), grid, mutable=True),
        n.VarDecl(n.Const(g.p.type("size_t")), "workspace_bytes", n.call("K::GetWorkSpaceSize", ids("kargs"))),
        n.VarDecl(g.p.type("DeviceMem"), "workspace", ids("workspace_bytes"), brace=True),
        n.ExprStmt(n.call("K::SetWorkSpacePointer", ids("kargs"), workspace)),
        *timed_launch(g, [make_kernel(g, "K", ids("grids"), ids("blocks"), n.IntLit(0), ids("kargs"))], zero),
    ]
    return n.FunctionDef("run", n.Builtin("float"), g.host_params(s.ref("HostArgs")), body, static=True)
