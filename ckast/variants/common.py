"""What GEMM and grouped-conv launchers share: the kernel context and the `launch` dispatch.

Where the profile binds hot loop, tail number and memory operation at compile time (`ck-2025.11`,
drift D4/D5), those become dispatch parameters of the pipeline problem and epilogue problem and
flow up to the kernel and `run`; `launch` binds them: the tail handler picks the (hot loop, tail)
instantiation from the K loop count, and `k_batch` picks `set` (1) or `atomic_add` (split-K).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ckast import nodes as n
from ckast.arch import ArchSpec, arch_spec
from ckast.arch.rules import waves_per_block
from ckast.catalog import Profile
from ckast.lower.graph import Construct, Scope
from ckast.lower.identity import kernel_name

ids = n.ident


def block_size(config) -> int:
    """Threads per block: waves x the arch's warp size (64 on CDNA, 32 on WMMA archs)."""
    return waves_per_block(config) * arch_spec(config.arch).warp_size


@attrs.frozen
class KernelContext:
    """What every construct of one kernel reads: the config, its profile and arch, and derived facts."""

    c: object  # KernelConfig
    p: Profile
    name: str
    arch: ArchSpec

    @classmethod
    def of(cls, config, profile: Profile):
        return cls(config, profile, kernel_name(config), arch_spec(config.arch))

    @property
    def block_size(self) -> int:
        return block_size(self.c)

    @property
    def index_t(self) -> n.Type:
        return self.p.type("index_t")

    @property
    def compile_time_tail(self) -> bool:
        return not self.p.feature("runtime_hot_loop")

    @property
    def accumulates(self) -> bool:
        """Whether k_batch > 1 makes blocks accumulate into the output (split-K through atomics)."""
        raise NotImplementedError

    @property
    def memop_dispatch(self) -> bool:
        """Whether `set`/`atomic_add` is a compile-time choice made per launch (split-K on D5 profiles)."""
        return self.accumulates and not self.p.feature("runtime_memory_operation")

    def tail_params(self) -> tuple[n.Param, ...]:
        if not self.compile_time_tail:
            return ()
        return (n.Param("HasHotLoop", "bool"), n.Param("TailNum", "enum", enum=self.p.enum("TailNumber")))

    def memop_params(self) -> tuple[n.Param, ...]:
        if not self.memop_dispatch:
            return ()
        return (n.Param("MemOp", "enum", enum=self.p.enum("memory_operation_enum")),)

    def memop(self) -> n.Expr | None:
        """The epilogue's memory-operation argument: the dispatch parameter, `set`, or none (run-time choice)."""
        if self.memop_dispatch:
            return ids("MemOp")
        if self.p.feature("runtime_memory_operation"):
            return None
        return self.p.enum_value("memory_operation_enum", "set")

    def t(self, key: str, **args: object) -> n.Type:
        """A catalog template bound by parameter name, as a type."""
        return n.type_of(self.p.template(key)(**args))

    def fn(self, key: str) -> n.Expr:
        """A catalog function by key."""
        return n.Id(n.Name((self.p.symbol(key),)))

    def throw(self, message: str) -> n.Throw:
        return n.Throw(n.Call(self.fn("runtime_error"), [n.StrLit(f"{self.name}: {message}")]))

    def host_params(self, args: n.Type) -> list[n.FuncParam]:
        return [n.FuncParam(n.LRef(n.Const(args)), "args"),
                n.FuncParam(n.LRef(n.Const(self.p.type("stream_config"))), "stream")]


def alias(name: str, role: str, build: Callable[[Scope], n.Type], *uses: str, params=()) -> Construct:
    """A type-alias construct `name` built by `build`, using `uses`."""
    return Construct(name, role, build, uses=uses, params=params)


def check_and_grid(g: KernelContext, kernel: n.Type, args: n.Expr, grid: n.Expr, mutable: bool = False) -> list[n.Stmt]:
    """`K`, `kargs` (const unless `mutable`), the argument check (throws), `grids` and `blocks` of one launch."""
    dim3 = n.Const(g.p.type("dim3"))
    auto = n.Builtin("auto")
    return [
        n.UsingAlias("K", kernel),
        n.VarDecl(auto if mutable else n.Const(auto), "kargs", n.call("K::MakeKernelArgs", args)),
        n.If(n.UnOp("!", n.call("K::IsSupportedArgument", ids("kargs"))), [g.throw("arguments not supported")]),
        n.VarDecl(dim3, "grids", grid),
        n.VarDecl(dim3, "blocks", n.call("K::BlockSize")),
    ]


def make_kernel(g: KernelContext, kernel: str, *args: n.Expr) -> n.Expr:
    """`ck_tile::make_kernel<kBlockPerCu>(kernel{}, args...)`."""
    fn = n.Id(n.Name((g.p.template("make_kernel")(MinBlockPerCu=ids("kBlockPerCu")),)))
    return n.Call(fn, [n.BraceInit(n.type_of(kernel)), *args])


def timed_launch(g: KernelContext, kernels: list[n.Expr], zero: tuple[str, str, list[n.Stmt]] | None) -> list[n.Stmt]:
    """Return the time of `kernels`; with `zero` = (lambda name, why, statements), those run first
    inside the timed region (so repeated timing runs start from zero too)."""
    if zero is None:
        return [n.Return(n.Call(g.fn("launch_kernel"), [ids("stream"), *kernels]))]
    name, why, stmts = zero
    return [
        n.Comment(why),
        n.VarDecl(n.Const(n.Builtin("auto")), name, n.Lambda(["&"], [], stmts)),
        n.Return(n.Call(g.fn("launch_kernel_time_mask"), [ids("stream"), ids(name), *kernels])),
    ]


def launch(g: KernelContext, s: Scope, gemm_k: n.Expr, prelude: list[n.Stmt] = (),
           k_batch: n.Expr | None = None) -> n.FunctionDef:
    """`launch(args, stream)`: bind the compile-time dispatch parameters and call `run`.

    `gemm_k` is the GEMM K of the problem (the loop count follows from it and `k_batch`, by default
    `args.k_batch`); `prelude` runs first (argument checks, derived sizes).
    """
    p = g.p
    k_batch = k_batch if k_batch is not None else n.Member(ids("args"), "k_batch")
    body: list[n.Stmt] = list(prelude)
    params = g.host_params(s.ref("HostArgs"))
    if not g.compile_time_tail and not g.memop_dispatch:
        body.append(n.Return(n.Call(s.call_target("run"), [ids("args"), ids("stream")])))
        return n.FunctionDef("launch", n.Builtin("float"), params, body, static=True)

    def run_with(memop: str | None, tail: bool) -> n.Stmt:
        bound: dict[str, n.Expr] = {}
        if tail:
            bound.update(HasHotLoop=n.Member(ids("has_hot_loop_"), "value"), TailNum=n.Member(ids("tail_number_"), "value"))
        if memop is not None:
            bound["MemOp"] = p.enum_value("memory_operation_enum", memop)
        return n.ExprStmt(n.BinOp("=", ids("ave_time"), n.Call(s.call_target("run", **bound), [ids("args"), ids("stream")])))

    def dispatch(tail: bool) -> list[n.Stmt]:
        if not g.memop_dispatch:
            return [run_with(None, tail)]
        return [
            n.Comment("k_batch > 1 splits K across blocks that accumulate into the output atomically."),
            n.If(n.BinOp("==", k_batch, n.IntLit(1)), [run_with("set", tail)], [run_with("atomic_add", tail)]),
        ]

    body.append(n.VarDecl(n.Builtin("float"), "ave_time", n.IntLit(0), brace=True))
    if not g.compile_time_tail:
        return n.FunctionDef("launch", n.Builtin("float"), params, [*body, *dispatch(False), n.Return(ids("ave_time"))], static=True)
    index = g.index_t
    k_grain = n.BinOp("*", k_batch, ids("TileK"))
    body += [
        n.VarDecl(n.Const(index), "k_grain", k_grain),
        n.VarDecl(n.Const(index), "k_split", n.BinOp("*", n.BinOp("/", n.BinOp(
            "-", n.BinOp("+", gemm_k, ids("k_grain")), n.IntLit(1)), ids("k_grain")), ids("TileK"))),
        n.VarDecl(n.Const(index), "num_loop", n.call("TilePartitioner::GetLoopNum", ids("k_split"))),
        n.VarDecl(n.Const(n.Builtin("bool")), "has_hot_loop", n.call("BaseGemmPipeline::BlockHasHotloop", ids("num_loop"))),
        n.VarDecl(n.Const(n.type_of(p.enum("TailNumber"))), "tail_num",
                  n.call("BaseGemmPipeline::GetBlockLoopTailNum", ids("num_loop"))),
    ]
    auto = n.Const(n.Builtin("auto"))
    lam = n.Lambda(["&"], [n.FuncParam(auto, "has_hot_loop_"), n.FuncParam(auto, "tail_number_")], dispatch(True))
    body += [
        n.VarDecl(auto, "dispatch", lam),
        n.ExprStmt(n.call("BaseGemmPipeline::TailHandler", ids("dispatch"), ids("has_hot_loop"), ids("tail_num"))),
        n.Return(ids("ave_time")),
    ]
    return n.FunctionDef("launch", n.Builtin("float"), params, body, static=True)


def launch_uses(g: KernelContext) -> tuple[str, ...]:
    """What `launch` references: the loop-count helpers only when it dispatches on the tail at compile time."""
    if g.compile_time_tail:
        return ("HostArgs", "TilePartitioner", "BaseGemmPipeline", "run")
    return ("HostArgs", "run")
