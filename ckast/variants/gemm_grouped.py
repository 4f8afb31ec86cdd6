"""GEMM `grouped`: several GEMMs of their own shapes in one launch through `GroupedGemmKernel` (the experts of a
mixture-of-experts layer), as a patch on the shared graph.

The launcher takes a vector of CK's per-group host arguments (`HostArgs = std::vector<GroupArgs>`, `GroupArgs =
GroupedGemmHostArgs<>`: each group's A, B, C pointers, k_batch, M, N, K and strides). `run` builds the group
descriptors (`MakeKargs`, which leaves out groups with M, N or K zero and gives each group its range of a 1-D
grid, tiles x k_batch blocks), checks them (`IsSupportedArgument`: the universal kernel's check per group), copies
them to a device workspace of `GetWorkSpaceSize(group_count)` bytes on the stream and launches the kernel with the
workspace and the group count, over `GridSize(groups)` blocks (persistent: `MaxOccupancyGridSize`, the kernel
loops over the groups' tiles). With split-K, each group's C with k_batch > 1 is zeroed inside the timed region.
A `launch` overload taking plain `GemmHostArgs` runs one group (for CK's dispatcher, whose problem has one shape;
a grouped quant kernel's takes `QuantGemmHostArgs`).

Where the profile fixes hot loop and tail at compile time (ck-2025.11), CK's kernel uses them only in its
non-persistent single-LDS path (persistent and double-LDS kernels choose per group on the device): there `launch`
picks the instantiation from the first group's K loop and refuses groups whose loop differs; where the profile
fixes the memory operation at compile time, the groups share one k_batch. An empty vector launches nothing.

Read at (repo, path, commit):

- ck-2025.11: the amd-aiter 0.1.7.post2.dev18 wheel, `ck_tile/ops/gemm/kernel/grouped_gemm_kernel.hpp`.
- ck-2026.06: ROCm/rocm-libraries `projects/composablekernel/include/ck_tile/ops/gemm/kernel/grouped_gemm_kernel.hpp`
  @ 45ac153a8fe7a034fda7f7abad57c3995f5544bf (the same host API; adds gfx1250 TDM pipelines, which ckast does not
  build).
- CK's dispatcher: `dispatcher/codegen/unified_gemm_codegen.py` (`GemmVariant.GROUPED`, `_launch_function_grouped`:
  `MakeKargs`, a `DeviceMem` workspace filled by `hipMemcpyWithStream`, the persistent or `block_end` grid; a
  stored version whose commit the index does not name, index id 58634062397).
"""

from __future__ import annotations

import functools

import attrs

from ckast import nodes as n
from ckast.lower.graph import Construct, KernelGraph, Scope

from .common import alias, launch, make_kernel, timed_launch
from .gemm import Gemm, ids

GROUP = ids("group")
FIRST = n.Index(ids("args"), n.IntLit(0))


@attrs.frozen
class Grouped(Gemm):
    """The grouped GEMM context: a compile-time tail only where CK's kernel uses it (non-persistent, one LDS).

    The catalog keys of the per-group host arguments and of the kernel are the context's, so a grouped quant
    context (CK's `QuantGroupedGemmKernel` with `QuantGroupedGemmHostArgs`) reuses this patch's launcher and
    names its own (see `kernel_args`)."""

    group_args_key = "GroupedGemmHostArgs"
    kernel_key = "GroupedGemmKernel"
    plain_args_key = "GemmHostArgs"
    """The one-problem host arguments of the `launch` overload that runs one group."""

    @property
    def compile_time_tail(self) -> bool:
        return super().compile_time_tail and not self.c.persistent and not self.c.double_smem_buffer

    def group_args_type(self) -> n.Type:
        """One group's host-argument type: a catalog class template with its defaults, or a catalog type."""
        key = self.group_args_key
        return self.t(key) if key in self.p.templates else self.p.type(key)

    def kernel_args(self, s: Scope) -> dict[str, object]:
        """The kernel template's arguments by parameter name (a quant kernel adds its `QuantType_`)."""
        return dict(TilePartitioner_=s.ref("TilePartitioner"), GemmPipeline_=s.ref("Pipeline"),
                    EpiloguePipeline_=s.ref("Epilogue"))

    def group_descriptors(self, s: Scope) -> list[n.Stmt]:
        """`kargs`: the device descriptors of the non-empty groups, from the kernel's `MakeKargs`."""
        return [n.VarDecl(n.Const(n.Builtin("auto")), "kargs", n.call("K::MakeKargs", ids("args")))]

    def plain_group(self, args: n.Expr) -> dict[str, n.Expr] | None:
        """The constructor arguments, by name, of one group of the one-problem host arguments `args` (None: the
        launcher has no such overload)."""
        member = functools.partial(n.Member, args)
        return dict(a_ptr_=member("a_ptr"), b_ptr_=member("b_ptr"), ds_ptr_=n.BraceInit(None, []),
                    e_ptr_=member("e_ptr"), k_batch_=member("k_batch"), M_=member("M"), N_=member("N"),
                    K_=member("K"), stride_A_=member("stride_A"), stride_B_=member("stride_B"),
                    stride_Ds_=n.BraceInit(None, []), stride_E_=member("stride_E"))


def patch(g: Grouped, graph: KernelGraph) -> None:
    graph.add(alias("GroupArgs", "host_args", lambda s: g.group_args_type()))
    graph.replace(alias("HostArgs", "host_args", lambda s: g.t("vector", T=s.ref("GroupArgs")), "GroupArgs"))
    graph.replace(Construct("Kernel", "kernel", lambda s: g.t(g.kernel_key, **g.kernel_args(s)),
                            uses=("TilePartitioner", "Pipeline", "Epilogue")))
    graph.replace(Construct("run", "launcher", lambda s: run(g, s), uses=("Kernel", "HostArgs", "CDataType")))
    launch_construct = graph.construct("launch")
    graph.replace(Construct("launch", "launcher", lambda s: launch(g, s, group_field(g, FIRST, "K"), checks(g),
                                                                   k_batch=group_field(g, FIRST, "k_batch")),
                            uses=launch_construct.uses, binds=launch_construct.binds, entry_args="HostArgs"))
    if g.plain_group(ids("args")) is not None:
        graph.add(Construct("launch_plain", "launcher", lambda s: launch_plain(g, s),
                            uses=("GroupArgs", "HostArgs", "launch"), symbol="launch", entry_args=g.plain_args_key))


def group_field(g: Grouped, group: n.Expr, name: str) -> n.Expr:
    """`<group>.<name>`: a field of the per-group host arguments, bound by name against the catalog."""
    return n.Member(group, g.p.record(g.group_args_key).field(g.group_args_key, name).name)


def loop_count(g: Grouped, group: n.Expr) -> n.Expr:
    """The K loop count of one group: `GetLoopNum` of its K split into k_batch whole-tile parts."""
    grain = n.BinOp("*", group_field(g, group, "k_batch"), ids("TileK"))
    split = n.BinOp("*", n.BinOp("/", n.BinOp("-", n.BinOp("+", group_field(g, group, "K"), grain), n.IntLit(1)),
                                 grain), ids("TileK"))
    return n.call("TilePartitioner::GetLoopNum", split)


def checks(g: Grouped) -> list[n.Stmt]:
    """What `launch` checks before dispatching: no groups launch nothing; each group's k_batch is 1 without
    split-K, the first group's where the memory operation is a template argument, and its (hot loop, tail) the
    first group's where those are."""
    this = n.Index(ids("args"), GROUP)
    per_group: list[n.Stmt] = []
    if not g.c.split_k:
        per_group.append(n.If(n.BinOp("!=", group_field(g, this, "k_batch"), n.IntLit(1)),
                              [g.throw("built without split-K; k_batch must be 1")]))
    elif g.memop_dispatch:
        per_group.append(n.If(n.BinOp("!=", group_field(g, this, "k_batch"), group_field(g, FIRST, "k_batch")), [
            g.throw("the memory operation is chosen at compile time, so every group takes the first group's k_batch")]))
    head: list[n.Stmt] = [n.If(n.call(n.Member(ids("args"), "empty")), [n.Return(n.IntLit(0))])]
    if g.compile_time_tail:
        first_loop = ids("first_loop")
        hot_loop, tail = "BaseGemmPipeline::BlockHasHotloop", "BaseGemmPipeline::GetBlockLoopTailNum"
        head += [
            n.VarDecl(n.Const(g.index_t), "first_loop", loop_count(g, FIRST)),
            n.VarDecl(n.Const(n.Builtin("bool")), "first_hot_loop", n.call(hot_loop, first_loop)),
            n.VarDecl(n.Const(n.type_of(g.p.enum("TailNumber"))), "first_tail", n.call(tail, first_loop)),
        ]
        loop = ids("loop")
        why = "the K loop's hot loop and tail are chosen at compile time, so every group needs the first group's"
        per_group += [
            n.VarDecl(n.Const(g.index_t), "loop", loop_count(g, this)),
            n.If(n.BinOp("!=", n.call(hot_loop, loop), ids("first_hot_loop")), [g.throw(why)]),
            n.If(n.BinOp("!=", n.call(tail, loop), ids("first_tail")), [g.throw(why)]),
        ]
    if not per_group:
        return head
    size = n.call(n.Member(ids("args"), "size"))
    return [*head, n.For(n.VarDecl(g.p.type("size_t"), "group", n.IntLit(0)), n.BinOp("<", GROUP, size),
                         n.UnOp("++", GROUP), per_group)]


def zero_groups(g: Grouped, s: Scope) -> n.Stmt:
    """For each group that splits K, `hipMemset2DAsync` of exactly its M rows x N columns of the row-major C."""
    this = n.Index(ids("args"), GROUP)
    elem = n.SizeOf(s.ref("CDataType"))
    memset = n.Call(g.fn("hipMemset2DAsync"), [
        group_field(g, this, "e_ptr"),
        n.BinOp("*", group_field(g, this, "stride_E"), elem),
        n.IntLit(0),
        n.BinOp("*", group_field(g, this, "N"), elem),
        group_field(g, this, "M"),
        n.Member(ids("stream"), "stream_id_"),
    ])
    size = n.call(n.Member(ids("args"), "size"))
    return n.For(n.VarDecl(g.p.type("size_t"), "group", n.IntLit(0)), n.BinOp("<", GROUP, size), n.UnOp("++", GROUP),
                 [n.If(n.BinOp(">", group_field(g, this, "k_batch"), n.IntLit(1)),
                       [n.ExprStmt(n.Call(g.fn("hip_check_error"), [memset]))])])


def run(g: Grouped, s: Scope) -> n.FunctionDef:
    """`run(groups, stream)`: the group descriptors, their check, their device copy and one launch over every group."""
    auto, index = n.Builtin("auto"), g.index_t
    workspace = n.call(n.Member(ids("workspace"), "GetDeviceBuffer"))
    copy = n.Call(g.fn("hipMemcpyWithStream"), [
        workspace, n.call(n.Member(ids("kargs"), "data")), ids("workspace_bytes"),
        g.p.enum_value("hipMemcpyKind", "hipMemcpyHostToDevice"), n.Member(ids("stream"), "stream_id_")])
    grid = (n.call("K::MaxOccupancyGridSize", ids("stream")) if g.c.persistent
            else n.call("K::GridSize", ids("args")))
    kernel = make_kernel(g, "K", ids("grids"), ids("blocks"), n.IntLit(0),
                         n.Call(g.fn("cast_pointer_to_constant_address_space"), [workspace]), ids("group_count"))
    zero = None
    if g.c.split_k:
        zero = ("zero_c", "Split-K blocks accumulate into C, so each such group's C starts at zero on every (timed) "
                "launch.", [zero_groups(g, s)])
    dim3 = n.Const(g.p.type("dim3"))
    body: list[n.Stmt] = [
        n.UsingAlias("K", s.ref("Kernel")),
        *g.group_descriptors(s),
        n.If(n.UnOp("!", n.call("K::IsSupportedArgument", ids("kargs"))), [g.throw("arguments not supported")]),
        n.If(n.call(n.Member(ids("kargs"), "empty")), [
            n.Comment("Every group has M, N or K zero: nothing to launch."), n.Return(n.IntLit(0))]),
        n.VarDecl(n.Const(index), "group_count", n.StaticCast(index, n.call(n.Member(ids("kargs"), "size")))),
        n.Comment("The group descriptors the kernel reads, in a device workspace."),
        n.VarDecl(n.Const(g.p.type("size_t")), "workspace_bytes", n.call("K::GetWorkSpaceSize", ids("group_count"))),
        n.VarDecl(g.p.type("DeviceMem"), "workspace", ids("workspace_bytes"), brace=True),
        n.ExprStmt(n.Call(g.fn("hip_check_error"), [copy])),
        n.VarDecl(dim3, "grids", grid),
        n.VarDecl(dim3, "blocks", n.call("K::BlockSize")),
        *timed_launch(g, [kernel], zero),
    ]
    return n.FunctionDef("run", n.Builtin("float"), g.host_params(s.ref("HostArgs")), body, static=True)


def launch_plain(g: Grouped, s: Scope) -> n.FunctionDef:
    """`launch(const <plain_args_key>&, stream)`: one group of the one-problem arguments' shape."""
    fields = g.p.record(g.group_args_key).construct(g.group_args_key, **g.plain_group(ids("args")))
    host_args = s.ref("HostArgs")
    body = [
        n.Comment("One group."),
        n.VarDecl(n.Const(host_args), "groups", n.BraceInit(host_args, [n.BraceInit(s.ref("GroupArgs"), fields)])),
        n.Return(n.Call(s.call_target("launch"), [ids("groups"), ids("stream")])),
    ]
    return n.FunctionDef("launch", n.Builtin("float"), g.host_params(g.p.type(g.plain_args_key)), body, static=True)
