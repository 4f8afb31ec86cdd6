"""GEMM kernel instances: the shared IR graph (variant `standard`) and the launcher functions.

One `Launcher` struct per kernel holds the config constants and the type chain, each construct
declared once: data types -> tile shape -> partitioner -> traits -> pipeline problem -> base
pipeline -> universal problem -> pipeline -> epilogue problem -> epilogue -> kernel -> run/launch.
`gemm_preshuffle` and `gemm_multi_d` patch this graph. The compile-time dispatch (`launch`) is
shared with grouped conv (`common`). With split-K, C is zeroed before each launch (inside the
timed region, so repeated timing runs stay correct).
"""

from __future__ import annotations


import attrs

from ckast import nodes as n
from ckast.arch import DTYPES, PIPELINES
from ckast.lower.cxx import c_str, constexpr, data_type
from ckast.lower.graph import Construct, KernelGraph, Scope

from .common import KernelContext, alias as _alias, check_and_grid, ids, launch, launch_uses, make_kernel, timed_launch

LAYOUTS = {"r": "RowMajor", "c": "ColumnMajor"}
SCHEDULERS = {"intrawave": "Intrawave", "interwave": "Interwave", "default": "Default"}
BLOCK_PER_CU = 1
TILE_GROUP_NUM, TILE_M01 = 8, 4


@attrs.frozen
class Gemm(KernelContext):
    """The GEMM kernel context."""

    @property
    def accumulates(self) -> bool:
        return bool(self.c.split_k)


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


def tile_shape(g: KernelContext) -> Construct:
    """`TileShape`: block tile, waves and warp tile from the config constants."""
    seq = g.p.template("sequence")
    return _alias("TileShape", "tile_shape", lambda s: g.t(
        "TileGemmShape",
        BlockTile_=n.type_of(seq(Is=[ids("TileM"), ids("TileN"), ids("TileK")])),
        BlockWarps_=n.type_of(seq(Is=[ids("WarpM"), ids("WarpN"), ids("WarpK")])),
        WarpTile_=n.type_of(seq(Is=[ids("WarpTileM"), ids("WarpTileN"), ids("WarpTileK")])),
    ))


def shared_graph(g: Gemm) -> KernelGraph:
    """The graph of a `standard` GEMM; variants patch it."""
    p, c = g.p, g.c
    graph = KernelGraph()
    graph.add(Construct("Config", "config", lambda s: constants(g)))
    for construct in data_types(g):
        graph.add(construct)
    graph.add(_alias("HostArgs", "host_args", lambda s: p.type("GemmHostArgs")))
    graph.add(tile_shape(g))
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

    if g.compile_time_tail:  # the base pipeline only serves the launcher's loop-count dispatch
        graph.add(_alias("BaseProblem", "pipeline_problem", lambda s: g.t("GemmPipelineProblem", **operand_args(s)), *operands))
        graph.add(_alias("BaseGemmPipeline", "base_pipeline", lambda s: g.t(
            PIPELINES[c.pipeline].base, Problem=s.ref("BaseProblem")), "BaseProblem"))

    def problem(s: Scope) -> n.Type:
        args = dict(operand_args(s), Scheduler_=p.enum_value("GemmPipelineScheduler", SCHEDULERS[c.scheduler]))
        if g.compile_time_tail:
            args.update(HasHotLoop_=ids("HasHotLoop"), TailNum_=ids("TailNum"))
        return g.t("UniversalGemmPipelineProblem", **args)

    graph.add(_alias("Problem", "universal_problem", problem, *operands, params=g.tail_params()))
    graph.add(_alias("Pipeline", "pipeline", lambda s: g.t(
        PIPELINES[c.pipeline].cls, Problem=s.ref("Problem")), "Problem"))
    graph.add(_alias("EpilogueProblem", "epilogue_problem", lambda s: epilogue_problem(g, s),
                     "ADataType", "BDataType", "AccDataType", "CDataType", "CLayout", params=g.memop_params()))
    epilogue = "CShuffleEpilogue" if c.epilogue == "cshuffle" else "DefaultGemm2DEpilogue"
    graph.add(_alias("Epilogue", "epilogue", lambda s: g.t(epilogue, Problem_=s.ref("EpilogueProblem")), "EpilogueProblem"))
    graph.add(_alias("Kernel", "kernel", lambda s: g.t(
        "GemmKernel", TilePartitioner_=s.ref("TilePartitioner"), GemmPipeline_=s.ref("Pipeline"),
        EpiloguePipeline_=s.ref("Epilogue"),
    ), "TilePartitioner", "Pipeline", "Epilogue"))
    graph.add(Construct("run", "launcher", lambda s: run(g, s), uses=("Kernel", "HostArgs", "CDataType")))
    graph.add(Construct("launch", "launcher", lambda s: launch(g, s, n.Member(ids("args"), "K"), k_batch_guard(g)),
                        uses=launch_uses(g), binds=("HasHotLoop", "TailNum", "MemOp"), entry_args="HostArgs"))
    return graph


def epilogue_problem(g: Gemm, s: Scope, ds: tuple[n.Type, n.Type] | None = None, op: n.Type | None = None,
                     compute: tuple[n.Type, n.Type] | None = None) -> n.Type:
    """The epilogue problem; multi-D passes its Ds types/layouts and element-wise op, the quant families
    their A and B compute types."""
    p, c = g.p, g.c
    empty = n.type_of(p.template("tuple")(T=()))
    ds_types, ds_layouts = ds or (empty, empty)
    memop = g.memop()
    common = dict(
        AsDataType_=compute[0] if compute else s.ref("ADataType"),
        BsDataType_=compute[1] if compute else s.ref("BDataType"), DsDataType_=ds_types,
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

def zero_output(g: Gemm, s: Scope) -> n.Expr:
    """`hipMemset2DAsync` of exactly the M rows x N columns of the row-major C (every GEMM layout has one)."""
    args = ids("args")
    elem = n.SizeOf(s.ref("CDataType"))
    memset = n.Call(g.fn("hipMemset2DAsync"), [
        n.Member(args, "e_ptr"),
        n.BinOp("*", n.Member(args, "stride_E"), elem),
        n.IntLit(0),
        n.BinOp("*", n.Member(args, "N"), elem),
        n.Member(args, "M"),
        n.Member(ids("stream"), "stream_id_"),
    ])
    return n.Call(g.fn("hip_check_error"), [memset])


def run(g: Gemm, s: Scope) -> n.FunctionDef:
    """`run(args, stream)`: check the arguments and launch one kernel instantiation."""
    grid = (
        n.call("K::MaxOccupancyGridSize", ids("stream"))
        if g.c.persistent
        else n.call("K::GridSize", n.Member(ids("args"), "M"), n.Member(ids("args"), "N"), n.Member(ids("args"), "k_batch"))
    )
    kernel = make_kernel(g, "K", ids("grids"), ids("blocks"), n.IntLit(0), ids("kargs"))
    zero = None
    if g.c.split_k:
        zero = ("zero_c", "Split-K blocks accumulate into C, so C starts at zero on every (timed) launch.",
                [n.If(n.BinOp(">", n.Member(ids("args"), "k_batch"), n.IntLit(1)), [n.ExprStmt(zero_output(g, s))])])
    body = [*check_and_grid(g, s.ref("Kernel"), ids("args"), grid), *timed_launch(g, [kernel], zero)]
    return n.FunctionDef("run", n.Builtin("float"), g.host_params(s.ref("HostArgs")), body, static=True)


def k_batch_guard(g: Gemm) -> list[n.Stmt]:
    """Without split-K there is no accumulating instantiation, so k_batch must be 1."""
    if g.c.split_k:
        return []
    return [n.If(n.BinOp("!=", n.Member(ids("args"), "k_batch"), n.IntLit(1)),
                 [g.throw("built without split-K; k_batch must be 1")])]
