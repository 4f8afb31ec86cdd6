"""GEMM `batched`: `batch_count` independent GEMMs of one shape through `BatchedGemmKernel`, as a patch on
the shared graph.

Swaps the host-argument type (`BatchedGemmHostArgs`: the plain GEMM arguments plus `batch_stride_A`,
`batch_stride_B`, `batch_stride_E`, in elements, and `batch_count`), the kernel and `run`, whose grid is
`GridSize(M, N, k_batch, batch_count)`: tiles on x, batches on y, K splits on z. With split-K, C is zeroed
batch by batch (exactly each batch's M rows x N columns) inside the timed region. A `launch` overload taking
plain `GemmHostArgs` runs one batch with packed batch strides (for CK's dispatcher, whose problem has no batch).

CK's batched kernel is the same in both profiles, except that its persistent path is missing (it maps
`blockIdx.x` to one tile, so rule batched.persistent refuses persistent kernels); its IsSupportedArgument
adds to the universal kernel's: batch_count >= 1, batch_stride_A >= M*K, batch_stride_B >= K*N,
batch_stride_E >= M*N. Read at (repo, path, commit):

- ck-2025.11: the amd-aiter 0.1.7.post2.dev18 wheel, `ck_tile/ops/gemm/kernel/batched_gemm_kernel.hpp`.
- ck-2026.06: ROCm/rocm-libraries `projects/composablekernel/include/ck_tile/ops/gemm/kernel/batched_gemm_kernel.hpp`
  @ 6d2b7e2526ebe32567f3967c47a365a727f4e644 (the same API; only formatting and the license header differ).
- CK's dispatcher: ROCm/rocm-libraries `projects/composablekernel/dispatcher/python/batched_gemm_utils.py` and
  `dispatcher/bindings/ctypes/batched_gemm_ctypes_lib.cpp` @ fd28005531d0a0e3fe3526521503c43edea562da
  (`variant="batched"`, a `_batched` name suffix, `SelectedKernel::launch(BatchedGemmHostArgs{...})` past the
  registry); `dispatcher/codegen/unified_gemm_codegen.py` (`GemmVariant.BATCHED`, `_launch_function_batched`;
  a stored version whose commit the index does not name, index id 58634062397).
"""

from __future__ import annotations

from ckast import nodes as n
from ckast.lower.graph import Construct, KernelGraph, Scope

from .common import check_and_grid, make_kernel, timed_launch
from .gemm import Gemm, ids


def patch(g: Gemm, graph: KernelGraph) -> None:
    graph.replace(Construct("HostArgs", "host_args", lambda s: g.p.type("BatchedGemmHostArgs")))
    graph.replace(Construct("Kernel", "kernel", lambda s: g.t(
        "BatchedGemmKernel", TilePartitioner_=s.ref("TilePartitioner"), GemmPipeline_=s.ref("Pipeline"),
        EpiloguePipeline_=s.ref("Epilogue"),
    ), uses=("TilePartitioner", "Pipeline", "Epilogue")))
    graph.replace(Construct("run", "launcher", lambda s: run(g, s), uses=("Kernel", "HostArgs", "CDataType")))
    graph.add(Construct("launch_plain", "launcher", lambda s: launch_plain(g, s), uses=("HostArgs", "launch"),
                        symbol="launch", entry_args="GemmHostArgs"))


def batch_field(g: Gemm, name: str) -> n.Expr:
    """`args.<name>`: a field of `BatchedGemmHostArgs`, bound by name against the catalog."""
    return n.Member(ids("args"), g.p.record("BatchedGemmHostArgs").field("BatchedGemmHostArgs", name).name)


def zero_batches(g: Gemm, s: Scope) -> n.Stmt:
    """For each batch, `hipMemset2DAsync` of exactly its M rows x N columns of the row-major C."""
    args, batch = ids("args"), ids("batch")
    elem = n.SizeOf(s.ref("CDataType"))
    start = n.BinOp("+", n.StaticCast(n.Ptr(n.Builtin("char")), n.Member(args, "e_ptr")),
                    n.BinOp("*", n.BinOp("*", elem, batch_field(g, "batch_stride_E")), batch))
    memset = n.Call(g.fn("hipMemset2DAsync"), [
        start,
        n.BinOp("*", n.Member(args, "stride_E"), elem),
        n.IntLit(0),
        n.BinOp("*", n.Member(args, "N"), elem),
        n.Member(args, "M"),
        n.Member(ids("stream"), "stream_id_"),
    ])
    return n.For(n.VarDecl(g.index_t, "batch", n.IntLit(0)), n.BinOp("<", batch, batch_field(g, "batch_count")),
                 n.UnOp("++", batch), [n.ExprStmt(n.Call(g.fn("hip_check_error"), [memset]))])


def run(g: Gemm, s: Scope) -> n.FunctionDef:
    """`run(args, stream)`: check the arguments and launch one instantiation over every batch."""
    a = ids("args")
    grid = n.call("K::GridSize", n.Member(a, "M"), n.Member(a, "N"), n.Member(a, "k_batch"),
                  batch_field(g, "batch_count"))
    kernel = make_kernel(g, "K", ids("grids"), ids("blocks"), n.IntLit(0), ids("kargs"))
    zero = None
    if g.c.split_k:
        zero = ("zero_c", "Split-K blocks accumulate into C, so each batch's C starts at zero on every (timed) launch.",
                [n.If(n.BinOp(">", n.Member(a, "k_batch"), n.IntLit(1)), [zero_batches(g, s)])])
    body = [*check_and_grid(g, s.ref("Kernel"), a, grid), *timed_launch(g, [kernel], zero)]
    return n.FunctionDef("run", n.Builtin("float"), g.host_params(s.ref("HostArgs")), body, static=True)


def launch_plain(g: Gemm, s: Scope) -> n.FunctionDef:
    """`launch(const GemmHostArgs&, stream)`: one batch, with the packed batch strides CK's check accepts."""
    a = ids("args")
    m, n_, k = (n.Member(a, d) for d in "MNK")
    fields = g.p.record("BatchedGemmHostArgs").construct(
        "BatchedGemmHostArgs", a_ptr_=n.Member(a, "a_ptr"), b_ptr_=n.Member(a, "b_ptr"), c_ptr_=n.Member(a, "e_ptr"),
        k_batch_=n.Member(a, "k_batch"), M_=m, N_=n_, K_=k, stride_A_=n.Member(a, "stride_A"),
        stride_B_=n.Member(a, "stride_B"), stride_C_=n.Member(a, "stride_E"), batch_stride_A_=n.BinOp("*", m, k),
        batch_stride_B_=n.BinOp("*", k, n_), batch_stride_C_=n.BinOp("*", m, n_), batch_count_=n.IntLit(1))
    body = [
        n.Comment("One batch: packed batch strides (M*K, K*N, M*N) and batch_count 1."),
        n.VarDecl(n.Const(s.ref("HostArgs")), "batched_args", n.BraceInit(s.ref("HostArgs"), fields)),
        n.Return(n.Call(s.call_target("launch"), [ids("batched_args"), ids("stream")])),
    ]
    return n.FunctionDef("launch", n.Builtin("float"), g.host_params(g.p.type("GemmHostArgs")), body, static=True)
