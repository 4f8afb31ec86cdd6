"""GEMM kernel instances: the shared IR graph (variant `standard`) and the launcher functions.

One `Launcher` struct per kernel holds the config constants and the type chain, each construct
declared once: data types -> tile shape -> partitioner -> traits -> pipeline problem -> base
pipeline -> universal problem -> pipeline -> epilogue problem -> epilogue -> kernel -> run/launch.
`gemm_preshuffle` and `gemm_multi_d` patch this graph.

Where the profile binds hot loop, tail number and memory operation at compile time (`ck-2025.11`,
drift D4/D5), those become dispatch parameters of the problem and epilogue and flow up to the
kernel and `run`; `launch` binds them: the tail handler picks the (hot loop, tail) instantiation
from `num_loop`, and `k_batch` picks `set` (1) or `atomic_add` (split-K). With split-K, C is zeroed
before each launch (inside the timed region, so repeated timing runs stay correct).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ckast import nodes as n
from ckast.arch import DTYPES, ArchSpec, arch_spec
from ckast.arch.rules import waves_per_block
from ckast.catalog import Profile
from ckast.lower.cxx import c_str, constexpr, data_type
from ckast.lower.graph import Construct, KernelGraph, Scope
from ckast.lower.identity import kernel_name

LAYOUTS = {"r": "RowMajor", "c": "ColumnMajor"}
PIPELINES = {
    "mem": "AgBgCrMem", "compv3": "AgBgCrCompV3", "compv4": "AgBgCrCompV4", "compv5": "AgBgCrCompV5",
}
SCHEDULERS = {"intrawave": "Intrawave", "interwave": "Interwave", "default": "Default"}
BLOCK_PER_CU = 1
TILE_GROUP_NUM, TILE_M01 = 8, 4


@attrs.frozen
class Gemm:
    """What every GEMM construct reads: the config, its profile and arch, and derived facts."""

    c: object  # KernelConfig
    p: Profile
    name: str
    arch: ArchSpec

    @classmethod
    def of(cls, config, profile: Profile) -> Gemm:
        return cls(config, profile, kernel_name(config), arch_spec(config.arch))

    @property
    def block_size(self) -> int:
        """Threads per block: waves x the arch's warp size (64 on CDNA, 32 on WMMA archs)."""
        return waves_per_block(self.c) * self.arch.warp_size

    @property
    def index_t(self) -> n.Type:
        return self.p.type("index_t")

    @property
    def compile_time_tail(self) -> bool:
        return not self.p.feature("runtime_hot_loop")

    @property
    def memop_dispatch(self) -> bool:
        """Whether `set`/`atomic_add` is a compile-time choice made per launch (split-K on D5 profiles)."""
        return self.c.split_k and not self.p.feature("runtime_memory_operation")

    def tail_params(self) -> tuple[n.Param, ...]:
        if not self.compile_time_tail:
            return ()
        return (n.Param("HasHotLoop", "bool"), n.Param("TailNum", "enum", enum=self.p.enum("TailNumber")))

    def memop_params(self) -> tuple[n.Param, ...]:
        if not self.memop_dispatch:
            return ()
        return (n.Param("MemOp", "enum", enum=self.p.enum("memory_operation_enum")),)

    def t(self, key: str, **args: object) -> n.Type:
        """A catalog template bound by parameter name, as a type."""
        return n.type_of(self.p.template(key)(**args))


ids = n.ident


def _alias(name: str, role: str, build: Callable[[Scope], n.Type], *uses: str, params=()) -> Construct:
    return Construct(name, role, build, uses=uses, params=params)


# --- the shared graph ----------------------------------------------------------------------------

def constants(g: Gemm) -> list[n.Decl]:
    """Config constants every construct refers to by name."""
    c, i, b = g.c, g.index_t, n.Builtin("bool")
    return [
        constexpr(c_str(), "kName", n.StrLit(g.name)),
        *(constexpr(i, f"{prefix}{d.upper()}", getattr(c, f"{knob}_{d}"))
          for prefix, knob in (("Tile", "tile"), ("Warp", "warp"), ("WarpTile", "warp_tile")) for d in "mnk"),
        constexpr(i, "BlockSize", g.block_size),
        constexpr(n.Builtin("int"), "kBlockPerCu", BLOCK_PER_CU),
        constexpr(i, "NumWaveGroups", c.num_wave_groups),
        constexpr(b, "kPadM", c.pad_m),
        constexpr(b, "kPadN", c.pad_n),
        constexpr(b, "kPadK", c.pad_k),
        constexpr(b, "DoubleSmemBuffer", c.double_smem_buffer),
        constexpr(b, "UsePersistentKernel", c.persistent),
        constexpr(b, "Preshuffle", c.variant == "preshuffle"),
        constexpr(b, "TransposeC", False),
    ]


def data_types(g: Gemm) -> list[Construct]:
    c, p = g.c, g.p
    spec = DTYPES[c.datatype]
    out = [
        _alias("ADataType", "data_type", lambda s: data_type(p, c.datatype)),
        _alias("BDataType", "data_type", lambda s: data_type(p, c.datatype)),
        _alias("AccDataType", "data_type", lambda s: data_type(p, spec.acc)),
        _alias("CDataType", "data_type", lambda s: data_type(p, spec.output)),
    ]
    for matrix, letter in zip("ABC", c.layout):
        out.append(_alias(f"{matrix}Layout", "layout", lambda s, letter=letter: p.type(LAYOUTS[letter])))
    return out


def shared_graph(g: Gemm) -> KernelGraph:
    """The graph of a `standard` GEMM; variants patch it."""
    p, c = g.p, g.c
    graph = KernelGraph()
    graph.add(Construct("Config", "config", lambda s: constants(g)))
    for construct in data_types(g):
        graph.add(construct)
    graph.add(_alias("HostArgs", "host_args", lambda s: p.type("GemmHostArgs")))
    seq = p.template("sequence")
    graph.add(_alias("TileShape", "tile_shape", lambda s: g.t(
        "TileGemmShape",
        BlockTile_=n.type_of(seq(Is=[ids("TileM"), ids("TileN"), ids("TileK")])),
        BlockWarps_=n.type_of(seq(Is=[ids("WarpM"), ids("WarpN"), ids("WarpK")])),
        WarpTile_=n.type_of(seq(Is=[ids("WarpTileM"), ids("WarpTileN"), ids("WarpTileK")])),
    )))
    graph.add(_alias("TilePartitioner", "partitioner", lambda s: g.t(
        "GemmSpatiallyLocalTilePartitioner", BlockGemmShapeType=s.ref("TileShape"), GroupNum=TILE_GROUP_NUM, M01=TILE_M01,
    ), "TileShape"))
    graph.add(_alias("Traits", "traits", lambda s: g.t(
        "TileGemmUniversalTraits",
        kPadM_=ids("kPadM"), kPadN_=ids("kPadN"), kPadK_=ids("kPadK"), DoubleSmemBuffer_=ids("DoubleSmemBuffer"),
        AsLayout_=s.ref("ALayout"), BsLayout_=s.ref("BLayout"), CLayout_=s.ref("CLayout"),
        TransposeC_=ids("TransposeC"), UsePersistentKernel_=ids("UsePersistentKernel"),
        NumWaveGroups_=ids("NumWaveGroups"), Preshuffle_=ids("Preshuffle"),
    ), "ALayout", "BLayout", "CLayout"))
    operands = ("ADataType", "BDataType", "AccDataType", "TileShape", "Traits")

    def operand_args(s: Scope) -> dict[str, n.Type]:
        return dict(AsDataType_=s.ref("ADataType"), BsDataType_=s.ref("BDataType"), EDataType_=s.ref("AccDataType"),
                    BlockGemmShape_=s.ref("TileShape"), Traits_=s.ref("Traits"))

    graph.add(_alias("BaseProblem", "pipeline_problem", lambda s: g.t("GemmPipelineProblem", **operand_args(s)), *operands))
    graph.add(_alias("BaseGemmPipeline", "base_pipeline", lambda s: g.t(
        f"BaseGemmPipeline{PIPELINES[c.pipeline]}", Problem=s.ref("BaseProblem")), "BaseProblem"))

    def problem(s: Scope) -> n.Type:
        args = dict(operand_args(s), Scheduler_=p.enum_value("GemmPipelineScheduler", SCHEDULERS[c.scheduler]))
        if g.compile_time_tail:
            args.update(HasHotLoop_=ids("HasHotLoop"), TailNum_=ids("TailNum"))
        return g.t("UniversalGemmPipelineProblem", **args)

    graph.add(_alias("Problem", "universal_problem", problem, *operands, params=g.tail_params()))
    graph.add(_alias("Pipeline", "pipeline", lambda s: g.t(
        f"GemmPipeline{PIPELINES[c.pipeline]}", Problem=s.ref("Problem")), "Problem"))
    graph.add(_alias("EpilogueProblem", "epilogue_problem", lambda s: epilogue_problem(g, s),
                     "ADataType", "BDataType", "AccDataType", "CDataType", "CLayout", params=g.memop_params()))
    epilogue = "CShuffleEpilogue" if c.epilogue == "cshuffle" else "DefaultGemm2DEpilogue"
    graph.add(_alias("Epilogue", "epilogue", lambda s: g.t(epilogue, Problem_=s.ref("EpilogueProblem")), "EpilogueProblem"))
    graph.add(_alias("Kernel", "kernel", lambda s: g.t(
        "GemmKernel", TilePartitioner_=s.ref("TilePartitioner"), GemmPipeline_=s.ref("Pipeline"),
        EpiloguePipeline_=s.ref("Epilogue"),
    ), "TilePartitioner", "Pipeline", "Epilogue"))
    graph.add(Construct("run", "launcher", lambda s: run(g, s), uses=("Kernel", "HostArgs", "CDataType")))
    graph.add(Construct("launch", "launcher", lambda s: launch(g, s), uses=("HostArgs", "TilePartitioner", "BaseGemmPipeline", "run"),
                        binds=("HasHotLoop", "TailNum", "MemOp"), entry_args="HostArgs"))
    return graph


def epilogue_problem(g: Gemm, s: Scope, ds: tuple[n.Type, n.Type] | None = None, op: n.Type | None = None) -> n.Type:
    """The epilogue problem; multi-D passes its Ds types/layouts and element-wise op."""
    p, c = g.p, g.c
    empty = n.type_of(p.template("tuple")(T=()))
    ds_types, ds_layouts = ds or (empty, empty)
    memop = ids("MemOp") if g.memop_dispatch else None
    if memop is None and not p.feature("runtime_memory_operation"):
        memop = p.enum_value("memory_operation_enum", "set")
    common = dict(
        AsDataType_=s.ref("ADataType"), BsDataType_=s.ref("BDataType"), DsDataType_=ds_types,
        AccDataType_=s.ref("AccDataType"), ODataType_=s.ref("CDataType"), DsLayout_=ds_layouts,
        CDElementwise_=op or p.type("PassThrough"), kM_=ids("TileM"), kN_=ids("TileN"),
    )
    if memop is not None:
        common["MemoryOperation_"] = memop
    xdl = dict(MPerXdl_=ids("WarpTileM"), NPerXdl_=ids("WarpTileN"), KPerXdl_=ids("WarpTileK"))
    if c.epilogue == "cshuffle":
        return g.t("CShuffleEpilogueProblem", **common, ELayout_=s.ref("CLayout"), MWave_=ids("WarpM"),
                   NWave_=ids("WarpN"), isCTransposed_=ids("TransposeC"), kNumWaveGroups_=ids("NumWaveGroups"), **xdl)
    return g.t("DefaultGemm2DEpilogueProblem", **common, CLayout_=s.ref("CLayout"), kPadM_=ids("kPadM"),
               kPadN_=ids("kPadN"), isCTransposed_=ids("TransposeC"), **{f"k{k}": v for k, v in xdl.items()})


# --- launcher functions --------------------------------------------------------------------------

def host_params(g: Gemm, args: n.Type) -> list[n.FuncParam]:
    return [n.FuncParam(n.LRef(n.Const(args)), "args"),
            n.FuncParam(n.LRef(n.Const(g.p.type("stream_config"))), "stream")]


def _fn(g: Gemm, name: str) -> n.Expr:
    return n.Id(n.Name((g.p.symbol(name),)))


def _throw(g: Gemm, message: str) -> n.Throw:
    return n.Throw(n.Call(n.Id(n.Name((g.p.symbol("runtime_error"),))), [n.StrLit(f"{g.name}: {message}")]))


def zero_output(g: Gemm, s: Scope) -> n.Expr:
    """`hipMemset2DAsync` of exactly the M rows x N columns of the row-major C (every GEMM layout has one)."""
    args = ids("args")
    elem = n.SizeOf(s.ref("CDataType"))
    memset = n.Call(_fn(g, "hipMemset2DAsync"), [
        n.Member(args, "e_ptr"),
        n.BinOp("*", n.Member(args, "stride_E"), elem),
        n.IntLit(0),
        n.BinOp("*", n.Member(args, "N"), elem),
        n.Member(args, "M"),
        n.Member(ids("stream"), "stream_id_"),
    ])
    return n.Call(_fn(g, "hip_check_error"), [memset])


def run(g: Gemm, s: Scope) -> n.FunctionDef:
    """`run(args, stream)`: check the arguments and launch one kernel instantiation."""
    p = g.p
    grid = (
        n.call("K::MaxOccupancyGridSize", ids("stream"))
        if g.c.persistent
        else n.call("K::GridSize", n.Member(ids("args"), "M"), n.Member(ids("args"), "N"), n.Member(ids("args"), "k_batch"))
    )
    make_kernel = n.Id(n.Name((p.template("make_kernel")(MinBlockPerCu=ids("kBlockPerCu")),)))
    kernel = n.Call(make_kernel, [n.BraceInit(n.type_of("K")), ids("grids"), ids("blocks"), n.IntLit(0), ids("kargs")])
    body: list[n.Stmt] = [
        n.UsingAlias("K", s.ref("Kernel")),
        n.VarDecl(n.Const(n.Builtin("auto")), "kargs", n.call("K::MakeKernelArgs", ids("args"))),
        n.If(n.UnOp("!", n.call("K::IsSupportedArgument", ids("kargs"))), [_throw(g, "arguments not supported")]),
        n.VarDecl(n.Const(p.type("dim3")), "grids", grid),
        n.VarDecl(n.Const(p.type("dim3")), "blocks", n.call("K::BlockSize")),
    ]
    if g.c.split_k:
        zero = n.Lambda(["&"], [], [n.If(n.BinOp(">", n.Member(ids("args"), "k_batch"), n.IntLit(1)),
                                         [n.ExprStmt(zero_output(g, s))])])
        body += [
            n.Comment("Split-K blocks accumulate into C, so C starts at zero on every (timed) launch."),
            n.VarDecl(n.Const(n.Builtin("auto")), "zero_c", zero),
            n.Return(n.Call(_fn(g, "launch_kernel_time_mask"), [ids("stream"), ids("zero_c"), kernel])),
        ]
    else:
        body.append(n.Return(n.Call(_fn(g, "launch_kernel"), [ids("stream"), kernel])))
    return n.FunctionDef("run", n.Builtin("float"), host_params(g, s.ref("HostArgs")), body, static=True)


def launch(g: Gemm, s: Scope) -> n.FunctionDef:
    """`launch(args, stream)`: bind the compile-time dispatch parameters and call `run`."""
    p = g.p
    k_batch = n.Member(ids("args"), "k_batch")
    body: list[n.Stmt] = []
    if not g.c.split_k:
        body.append(n.If(n.BinOp("!=", k_batch, n.IntLit(1)), [_throw(g, "built without split-K; k_batch must be 1")]))
    params = host_params(g, s.ref("HostArgs"))
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
            n.Comment("k_batch > 1 splits K across blocks that accumulate into C atomically."),
            n.If(n.BinOp("==", k_batch, n.IntLit(1)), [run_with("set", tail)], [run_with("atomic_add", tail)]),
        ]

    body.append(n.VarDecl(n.Builtin("float"), "ave_time", n.IntLit(0), brace=True))
    if not g.compile_time_tail:
        return n.FunctionDef("launch", n.Builtin("float"), params, [*body, *dispatch(False), n.Return(ids("ave_time"))], static=True)
    index = g.index_t
    k_grain = n.BinOp("*", k_batch, ids("TileK"))
    body += [
        n.VarDecl(n.Const(index), "k_grain", k_grain),
        n.VarDecl(n.Const(index), "k_split", n.BinOp("*", n.BinOp("/", n.BinOp("-", n.BinOp(
            "+", n.Member(ids("args"), "K"), ids("k_grain")), n.IntLit(1)), ids("k_grain")), ids("TileK"))),
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
