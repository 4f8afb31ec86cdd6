"""Grouped convolution as implicit GEMM: the shared graph of `forward`, `bwd_data` and `bwd_weight`.

A direction is data (`DIRECTIONS`): which tensor plays GEMM A, B and C, the host-argument type,
the kernel template, where GEMM K comes from, and when the output must be zeroed. The graph is
GEMM's chain with the conv traits in front: conv traits -> GEMM layouts -> tile shape ->
partitioner -> traits -> (base problem -> base pipeline) -> problem -> pipeline -> epilogue
problem -> epilogue -> kernel -> run / launch / is_supported / get_instance_string, each construct
declared once. `conv_two_stage` and `conv_streamk` patch it.
"""

from __future__ import annotations

import attrs

from ckast import nodes as n
from ckast.arch import PIPELINES
from ckast.arch.rules import DEPTHWISE
from ckast.lower.cxx import c_str, constexpr, data_type
from ckast.lower.graph import Construct, KernelGraph, Scope

from .common import KernelContext, alias as _alias, check_and_grid, ids, launch, launch_uses, make_kernel, timed_launch
from .gemm import SCHEDULERS, tile_shape

CONV_LAYOUTS = {1: ("NWGC", "GKXC", "NWGK"), 2: ("NHWGC", "GKYXC", "NHWGK"), 3: ("NDHWGC", "GKZYXC", "NDHWGK")}
"""(input, weight, output) tensor layouts per spatial rank."""
SPECIALIZATIONS = {
    "default": "Default", "filter1x1_pad0": "Filter1x1Pad0", "filter1x1_stride1_pad0": "Filter1x1Stride1Pad0",
    "filter3x3": "Filter3x3",
}
TENSORS = {"In": "Input", "Wei": "Weight", "Out": "Output"}
"""Tensor role -> the `ConvParam::Get<Role>Byte<T>()` member that sizes it."""


@attrs.frozen
class Direction:
    """What differs between the three implicit-GEMM directions."""

    variant: str
    short: str  # CK's file and registry spelling: fwd, bwd_data, bwd_weight
    kernel: str  # catalog template key
    host_args: str  # catalog key (a type, or an alias template with defaults)
    gemm: str  # suffix of the conv traits' GEMM layouts: AsLayout<gemm>, ...
    a: str  # tensor roles of GEMM A, B and C: In, Wei or Out
    b: str
    c: str
    k_channels: str  # GEMM K = this ConvParam field x the product of `k_spatial`
    k_spatial: str
    op: str  # dispatcher GroupedConvOp enumerator
    zero: str  # when the output is zeroed before the kernel: never, always, split_k


DIRECTIONS = {
    "forward": Direction("forward", "fwd", "GroupedConvolutionForwardKernel", "GroupedConvFwdHostArgs", "Fwd",
                         "In", "Wei", "Out", "C_", "filter_spatial_lengths_", "Forward", "never"),
    # dIn is accumulated from several sub-GEMMs (one per filter phase); pixels no phase reaches stay zero.
    "bwd_data": Direction("bwd_data", "bwd_data", "GroupedConvolutionBackwardDataKernel", "GroupedConvBwdDataHostArgs",
                          "BwdData", "Out", "Wei", "In", "K_", "filter_spatial_lengths_", "BackwardData", "always"),
    "bwd_weight": Direction("bwd_weight", "bwd_weight", "GroupedConvolutionBackwardWeightKernel",
                            "GroupedConvBwdWeightHostArgs", "BwdWeight", "Out", "In", "Wei", "N_",
                            "output_spatial_lengths_", "BackwardWeight", "split_k"),
}


def direction(variant: str) -> Direction:
    """The direction of a conv variant (depthwise kernels run CK's forward kernel)."""
    return DIRECTIONS["forward" if variant == DEPTHWISE else variant]


def block_per_cu(config) -> int:
    """Occupancy hint: one block per CU with a double LDS buffer (it halves occupancy anyway), else two.

    Pipelines that always or never double-buffer have `double_smem_buffer` forced accordingly
    (rule pipeline.lds_buffering), so this matches CK's generator (`deduce_block_per_cu`).
    """
    return 1 if config.double_smem_buffer else 2


@attrs.frozen
class Conv(KernelContext):
    """The grouped-conv kernel context."""

    @property
    def d(self) -> Direction:
        return direction(self.c.variant)

    @property
    def accumulates(self) -> bool:
        """bwd_weight splits GEMM K (N x output pixels) across k_batch blocks that add into dWei."""
        return self.c.variant == "bwd_weight"

    @property
    def block_per_cu(self) -> int:
        return block_per_cu(self.c)

    @property
    def host_kernel(self) -> str:
        """The construct whose host-side members (argument checks, instance string) launchers call."""
        return "HostKernel" if self.compile_time_tail or self.memop_dispatch else "Kernel"

    def fixed(self, s: Scope, name: str) -> n.Expr:
        """`ConvTraits::FixedGemmParams::<name>`: what CK fixes for every implicit-GEMM conv."""
        return n.Id(s.member("ConvTraits", "FixedGemmParams", name))


def constants(g: Conv) -> list[n.Decl]:
    c, i, b = g.c, g.index_t, n.Builtin("bool")
    out = [
        constexpr(c_str(), "kName", n.StrLit(g.name)),
        constexpr(i, "NDimSpatial", c.ndim_spatial),
        *(constexpr(i, f"{prefix}{d.upper()}", getattr(c, f"{knob}_{d}"))
          for prefix, knob in (("Tile", "tile"), ("Warp", "warp"), ("WarpTile", "warp_tile")) for d in "mnk"),
        *(constexpr(i, f"VectorSize{x.upper()}", getattr(c, f"vector_size_{x}")) for x in "abc"),
        constexpr(i, "BlockSize", g.block_size),
        constexpr(n.Builtin("int"), "kBlockPerCu", g.block_per_cu),
        constexpr(i, "NumWaveGroups", c.num_wave_groups),
        constexpr(i, "NumGroupsToMerge", c.num_groups_to_merge),
        constexpr(b, "EnableSplitImage", c.split_image),
        constexpr(b, "DoubleSmemBuffer", c.double_smem_buffer),
    ]
    if g.p.feature("explicit_gemm"):
        out.append(constexpr(b, "ExplicitGemm", c.explicit_gemm))
    return out


def tensor_types(g: Conv) -> list[Construct]:
    """`In/Wei/OutDataType` (the config's datatype) and the fp32 `AccDataType`."""
    p, c = g.p, g.c
    out = [_alias(f"{role}DataType", "data_type", lambda s: data_type(p, c.datatype)) for role in ("In", "Wei", "Out")]
    out.append(_alias("AccDataType", "data_type", lambda s: data_type(p, "fp32")))
    return out


def host_args(g: Conv) -> Construct:
    """`HostArgs`: the direction's host-argument type (forward's is an alias template with defaults)."""
    key = g.d.host_args
    return _alias("HostArgs", "host_args", lambda s: g.t(key) if key in g.p.templates else g.p.type(key))


def data_types(g: Conv) -> list[Construct]:
    """The tensor types, the GEMM operand types of the direction and the conv tensor layouts."""
    p, c, d = g.p, g.c, g.d
    out = tensor_types(g)
    for operand, role in (("A", d.a), ("B", d.b), ("C", d.c)):
        out.append(_alias(f"{operand}DataType", "data_type", lambda s, r=role: s.ref(f"{r}DataType"), f"{role}DataType"))
    for role, layout in zip(("In", "Wei", "Out"), CONV_LAYOUTS[c.ndim_spatial]):
        out.append(_alias(f"{role}Layout", "layout", lambda s, x=layout: p.type(x)))
    return out


def conv_traits(g: Conv, s: Scope) -> n.Type:
    c = g.c
    args = dict(
        NDimSpatial_=ids("NDimSpatial"),
        ConvSpecialization_=g.p.enum_value("ConvolutionSpecialization", SPECIALIZATIONS[c.specialization]),
        InLayout_=s.ref("InLayout"), WeiLayout_=s.ref("WeiLayout"), DsLayout_=n.type_of(g.p.template("tuple")(T=())),
        OutLayout_=s.ref("OutLayout"), VectorSizeA_=ids("VectorSizeA"), VectorSizeB_=ids("VectorSizeB"),
        VectorSizeC_=ids("VectorSizeC"), NumGroupsToMerge_=ids("NumGroupsToMerge"), EnableSplitImage_=ids("EnableSplitImage"),
    )
    if g.p.feature("explicit_gemm"):
        args["ExplicitGemm_"] = ids("ExplicitGemm")
    return g.t("GroupedConvTraits", **args)


def pipeline(g: Conv, s: Scope) -> n.Type:
    """The GEMM pipeline, with CK's conv LDS policy when configured (and extra load waves for wavelet)."""
    spec = PIPELINES[g.c.pipeline]
    args: dict[str, object] = dict(Problem=s.ref("Problem"))
    if g.c.lds_policy == "conv":
        args["Policy"] = g.p.type("GroupedConvUniversalPipelineAgBgCrPolicy")
    if spec.load_waves is not None:
        args["NumLoadWaves_"] = spec.load_waves
    return g.t(spec.cls, **args)


def epilogue_problem(g: Conv, s: Scope, output: str = "CDataType") -> n.Type:
    """The CShuffle epilogue problem writing `output` (two-stage swaps in its fp32 workspace type)."""
    sig = g.p.template("CShuffleEpilogueProblem")
    args: dict[str, object] = dict(
        AsDataType_=s.ref("ADataType"), BsDataType_=s.ref("BDataType"), DsDataType_=n.type_of(g.p.template("tuple")(T=())),
        AccDataType_=s.ref("AccDataType"), ODataType_=s.ref(output), DsLayout_=n.TypeName(s.member("ConvTraits", "ImplicitGemmDsLayout")),
        ELayout_=n.TypeName(s.member("ConvTraits", "FixedGemmParams", "ELayout")), CDElementwise_=g.p.type("PassThrough"),
        kM_=ids("TileM"), kN_=ids("TileN"), MWave_=ids("WarpM"), NWave_=ids("WarpN"), MPerXdl_=ids("WarpTileM"),
        NPerXdl_=ids("WarpTileN"), KPerXdl_=ids("WarpTileK"), isCTransposed_=g.fixed(s, "TransposeC"),
        kNumWaveGroups_=ids("NumWaveGroups"), FixedVectorSize_=g.fixed(s, "FixedVectorSize"), VectorSizeC_=ids("VectorSizeC"),
    )
    memop = g.memop()
    if memop is not None:
        args["MemoryOperation_"] = memop
    if sig.has_param("DoubleSmemBuffer_"):
        args["DoubleSmemBuffer_"] = ids("DoubleSmemBuffer")
    return n.type_of(sig(**args))


def shared_graph(g: Conv) -> KernelGraph:
    """The graph of an implicit-GEMM conv kernel in direction `g.d`; two-stage and stream-K patch it."""
    p, c, d = g.p, g.c, g.d
    graph = KernelGraph()
    graph.add(Construct("Config", "config", lambda s: constants(g)))
    for construct in data_types(g):
        graph.add(construct)
    graph.add(host_args(g))
    graph.add(_alias("ConvTraits", "traits", lambda s: conv_traits(g, s), "InLayout", "WeiLayout", "OutLayout"))
    for operand, prefix in (("A", "As"), ("B", "Bs"), ("C", "C")):
        graph.add(_alias(f"{operand}Layout", "layout",
                         lambda s, x=f"{prefix}Layout{d.gemm}": n.TypeName(s.member("ConvTraits", x)), "ConvTraits"))
    graph.add(tile_shape(g))
    graph.add(_alias("TilePartitioner", "partitioner", lambda s: g.t(
        "GemmSpatiallyLocalTilePartitioner", BlockGemmShapeType=s.ref("TileShape"),
        GroupNum=g.fixed(s, "TilePartitionerGroupNum"), M01=g.fixed(s, "TilePartitionerM01"),
    ), "TileShape", "ConvTraits"))
    layouts = ("ALayout", "BLayout", "CLayout")

    def pads(s: Scope) -> dict[str, n.Expr]:
        return {f"kPad{x}_": g.fixed(s, f"kPad{x}") for x in "MNK"}

    def layout_args(s: Scope) -> dict[str, n.Type]:
        return dict(AsLayout_=s.ref("ALayout"), BsLayout_=s.ref("BLayout"), CLayout_=s.ref("CLayout"))

    graph.add(_alias("Traits", "traits", lambda s: g.t(
        "TileGemmUniversalTraits", **pads(s), DoubleSmemBuffer_=ids("DoubleSmemBuffer"), **layout_args(s),
        TransposeC_=g.fixed(s, "TransposeC"), UseStructuredSparsity_=g.fixed(s, "UseStructuredSparsity"),
        UsePersistentKernel_=g.fixed(s, "Persistent"), NumWaveGroups_=ids("NumWaveGroups"),
    ), "ConvTraits", *layouts))
    operands = ("ADataType", "BDataType", "AccDataType", "TileShape", "ConvTraits")

    def problem_args(s: Scope, traits: str) -> dict[str, object]:
        return dict(
            AsDataType_=s.ref("ADataType"), BsDataType_=s.ref("BDataType"), EDataType_=s.ref("AccDataType"),
            BlockGemmShape_=s.ref("TileShape"), Traits_=s.ref(traits), FixedVectorSize_=g.fixed(s, "FixedVectorSize"),
            VectorSizeA_=n.Id(s.member("ConvTraits", "VectorSizeA")), VectorSizeB_=n.Id(s.member("ConvTraits", "VectorSizeB")),
        )

    if g.compile_time_tail:  # the base pipeline only serves the launcher's loop-count dispatch
        graph.add(_alias("GemmTraits", "traits", lambda s: g.t(
            "TileGemmTraits", **pads(s), **layout_args(s), NumWaveGroups_=ids("NumWaveGroups")), "ConvTraits", *layouts))
        graph.add(_alias("BaseProblem", "pipeline_problem", lambda s: g.t("GemmPipelineProblem", **problem_args(s, "GemmTraits")),
                         *operands, "GemmTraits"))
        graph.add(_alias("BaseGemmPipeline", "base_pipeline", lambda s: g.t(
            PIPELINES[c.pipeline].base, Problem=s.ref("BaseProblem")), "BaseProblem"))

    def problem(s: Scope) -> n.Type:
        args = dict(problem_args(s, "Traits"), Scheduler_=p.enum_value("GemmPipelineScheduler", SCHEDULERS[c.scheduler]))
        if g.compile_time_tail:
            args.update(HasHotLoop_=ids("HasHotLoop"), TailNum_=ids("TailNum"))
        return g.t("UniversalGemmPipelineProblem", **args)

    graph.add(_alias("Problem", "universal_problem", problem, *operands, "Traits", params=g.tail_params()))
    graph.add(_alias("Pipeline", "pipeline", lambda s: pipeline(g, s), "Problem"))
    graph.add(_alias("EpilogueProblem", "epilogue_problem", lambda s: epilogue_problem(g, s),
                     "ADataType", "BDataType", "AccDataType", "CDataType", "ConvTraits", params=g.memop_params()))
    graph.add(_alias("Epilogue", "epilogue", lambda s: g.t("CShuffleEpilogue", Problem_=s.ref("EpilogueProblem")),
                     "EpilogueProblem"))
    kernel_sig = p.template(d.kernel)
    pipeline_param = "Pipeline_" if kernel_sig.has_param("Pipeline_") else "GemmPipeline_"
    graph.add(_alias("Kernel", "kernel", lambda s: g.t(
        d.kernel, GroupedConvTraitsType_=s.ref("ConvTraits"), TilePartitioner_=s.ref("TilePartitioner"),
        **{pipeline_param: s.ref("Pipeline")}, EpiloguePipeline_=s.ref("Epilogue"),
    ), "ConvTraits", "TilePartitioner", "Pipeline", "Epilogue"))
    add_launcher(g, graph)
    return graph


def add_launcher(g: Conv, graph: KernelGraph) -> None:
    """The launcher functions over `Kernel`: run, launch, is_supported, get_instance_string."""
    if g.host_kernel != "Kernel":
        graph.add(Construct("HostKernel", "kernel", lambda s: host_kernel(g, s), uses=("Kernel",),
                            binds=("HasHotLoop", "TailNum", "MemOp")))
    graph.add(Construct("run", "launcher", lambda s: run(g, s), uses=("Kernel", "HostArgs", g.d.c + "DataType")))
    graph.add(Construct("launch", "launcher", lambda s: launch(g, s, ids("gemm_k"), gemm_k(g)),
                        uses=launch_uses(g), binds=("HasHotLoop", "TailNum", "MemOp"), entry_args="HostArgs"))
    graph.add(Construct("is_supported", "launcher", lambda s: is_supported(g, s), uses=("HostArgs", g.host_kernel)))
    graph.add(Construct("get_instance_string", "launcher", lambda s: instance_string(g, s), uses=(g.host_kernel,)))


# --- launcher functions --------------------------------------------------------------------------

def host_kernel(g: Conv, s: Scope) -> n.Type:
    """One instantiation stands for all: the hot-loop, tail and memory-operation parameters only shape
    the device code, never the host-side argument checks or the instance string."""
    bound: dict[str, n.Expr] = {}
    if g.compile_time_tail:
        bound.update(HasHotLoop=n.BoolLit(True), TailNum=g.p.enum_value("TailNumber", "Full"))
    if g.memop_dispatch:
        bound["MemOp"] = g.p.enum_value("memory_operation_enum", "set")
    return s.ref("Kernel", **bound)


def pixels(g: Conv, field: str, name: str) -> n.VarDecl:
    """`const index_t name = product of the ConvParam length vector field;`."""
    lengths = n.Member(ids("args"), field)
    multiplies = n.type_of(g.p.template("multiplies")(T=g.index_t))
    product = n.Call(g.fn("accumulate"), [n.call(n.Member(lengths, "begin")), n.call(n.Member(lengths, "end")),
                                          n.StaticCast(g.index_t, n.IntLit(1)), n.BraceInit(multiplies)])
    return n.VarDecl(n.Const(g.index_t), name, product)


def gemm_k(g: Conv) -> list[n.Stmt]:
    """`gemm_k`: channels (C, K) or batch (N) times the filter or output pixels, per direction."""
    if not g.compile_time_tail:
        return []
    channels = n.StaticCast(g.index_t, n.Member(ids("args"), g.d.k_channels))
    return [pixels(g, g.d.k_spatial, "k_pixels"),
            n.VarDecl(n.Const(g.index_t), "gemm_k", n.BinOp("*", channels, ids("k_pixels")))]


def zero_output(g: Conv, s: Scope, pointer: n.Expr, role: str) -> n.Expr:
    """`hipMemsetAsync` of the whole output tensor (its size from ConvParam)."""
    size = n.call(n.Member(ids("args"), f"Get{TENSORS[role]}Byte", targs=[s.ref(f"{role}DataType")]))
    memset = n.Call(g.fn("hipMemsetAsync"), [pointer, n.IntLit(0), size, n.Member(ids("stream"), "stream_id_")])
    return n.Call(g.fn("hip_check_error"), [memset])


def run(g: Conv, s: Scope) -> n.FunctionDef:
    """`run(args, stream)`: check the arguments, zero the output where the direction accumulates, launch."""
    d = g.d
    kernel = make_kernel(g, "K", ids("grids"), ids("blocks"), n.IntLit(0), ids("kargs"))
    zero = None
    if d.zero != "never":
        stmts: list[n.Stmt] = [n.ExprStmt(zero_output(g, s, n.Member(ids("kargs"), f"{d.c.lower()}_ptr"), d.c))]
        if d.zero == "split_k":
            stmts = [n.If(n.BinOp(">", n.Member(ids("kargs"), "k_batch"), n.IntLit(1)), stmts)]
            why = "Split-K blocks accumulate into the output, so it starts at zero on every (timed) launch."
        else:
            why = "The output starts at zero on every (timed) launch: sub-GEMMs leave pixels no filter phase reaches."
        zero = ("zero_output", why, stmts)
    body = [*check_and_grid(g, s.ref("Kernel"), ids("args"), n.call("K::GridSize", ids("kargs"))),
            *timed_launch(g, [kernel], zero)]
    return n.FunctionDef("run", n.Builtin("float"), g.host_params(s.ref("HostArgs")), body, static=True)


def is_supported(g: Conv, s: Scope) -> n.FunctionDef:
    """`is_supported(conv_param, k_batch)`: the kernel's own argument check, without launching."""
    param = n.FuncParam(n.LRef(n.Const(g.p.type("ConvParam"))), "conv_param")
    k_batch = n.FuncParam(n.Builtin("int"), "k_batch")
    null = n.NullPtr()
    args = n.BraceInit(None, [ids("conv_param"), null, null, n.BraceInit(None), null, ids("k_batch")])
    kernel = s.ref(g.host_kernel)
    body = [
        n.VarDecl(n.Const(s.ref("HostArgs")), "args", args),
        n.UsingAlias("K", kernel),
        n.Return(n.call("K::IsSupportedArgument", n.call("K::MakeKernelArgs", ids("args")))),
    ]
    return n.FunctionDef("is_supported", n.Builtin("bool"), [param, k_batch], body, static=True)


def instance_string(g: Conv, s: Scope) -> n.IfDef:
    """`get_instance_string()` for CK's experimental builder (only when CK_EXPERIMENTAL_BUILDER is defined)."""
    fn = n.FunctionDef("get_instance_string", g.p.type("string"), [], [
        n.Return(n.call(n.Member(n.BraceInit(s.ref(g.host_kernel)), "GetInstanceString"))),
    ], static=True)
    return n.IfDef("CK_EXPERIMENTAL_BUILDER", [fn])
