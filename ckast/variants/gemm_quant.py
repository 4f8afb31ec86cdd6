"""CK Tile's quantized GEMM families as one patch on the shared GEMM graph: `bquant`, `abquant` (block
scales), `aquant` (A scaled per group of K), `rowcolquant` (a scale per row of A and column of B) and
`tensor_quant` (one scale per tensor).

B (bquant), A and B (abquant) or A (aquant) carry float / fp8 / e8m0 scales, one per quant group (B
groups `bquant_group_n` x `bquant_group_k`, A groups 1 x `aquant_group_k`); row-col and tensor quant
scale in the epilogue. The patch swaps the data types (the scale type `QDataType`, the compute type),
the host arguments (`QuantGemmHostArgs`: scale pointers and strides beside A, B and C), the partitioner
(CK's 1-D partitioner, except abquant and aquant), the traits (`TileGemmQuantTraits`: quant type, scale
layouts, preshuffled B and scales), the family's pipeline problem and pipeline, and the kernel
(`QuantGemmKernel`). The quant problems take hot loop and tail as template arguments in every profile, so
the launcher dispatches them at compile time (as the ck-2025.11 universal GEMM does), except a persistent
`grouped` kernel (`gemm_grouped_quant`: this patch, then the grouped launcher's). Rules quant.*, aquant.* and
profile.* check the families.

Read at: CK's generators `dispatcher/codegen/unified_gemm_{bquant,abquant,aquant,rowcolquant,tensor_quant}
_codegen.py` and `unified_grouped_gemm_{bquant,abquant,aquant}_codegen.py` (the grouped ones' form: the knobs
bq_layout, b_cast_policy, tile_partitioner, permute_n; read @de523871 and @8e9c75d7) and the byte goldens
they froze, `dispatcher/tests/golden/codegen/{manifest.json,hpp/*.golden}`
at ea607ecdb59e970dc748d4848363b800334ba5c6; CK Tile `include/ck_tile/ops/gemm_quant` of rocm-libraries
(tile_gemm_quant_traits.hpp @925db993, gemm_quant_pipeline_problem.hpp @09ca95c8, kernel/gemm_quant_kernel.hpp
@05fca22d) for ck-2026.06 and of the amd-aiter wheel for ck-2025.11 (no ABQuant: rule profile.abquant; no Mem
AQuant or packed-int4 A: rules profile.aquant_mem, profile.aquant_int4).
"""

from __future__ import annotations

import attrs

from ckast import nodes as n
from ckast.arch.rules import AQUANT, BLOCK_SCALE_VARIANTS, TENSOR_QUANT
from ckast.arch.specs import QUANT_BASE_PIPELINES, QUANT_PIPELINES
from ckast.lower.cxx import c_str, constexpr
from ckast.lower.graph import Construct, KernelGraph, Scope

from .common import alias, ids
from .gemm import LAYOUTS, SCHEDULERS, Gemm, epilogue_problem

QUANT_TYPES = {"bquant": "BQuantGrouped", "abquant": "ABQuantGrouped", AQUANT: "AQuantGrouped",
               "rowcolquant": "RowColQuant", TENSOR_QUANT: "TensorQuant"}
"""Variant -> CK's `QuantType` enumerator."""
BLOCKSCALE = ("fp8", "bf8")
"""abquant's fp8/bf8 block scale, which computes in A's type (CK's IS_FP8BLOCKSCALE)."""
TYPES: dict[str, tuple[str, str, str, str]] = {
    "fp8": ("fp8_t", "fp8_t", "half_t", "float"),
    "bf8": ("bf8_t", "bf8_t", "half_t", "float"),
    "fp8i4": ("fp8_t", "pk_int4_t", "half_t", "fp8_t"),
    "bf8i4": ("bf8_t", "pk_int4_t", "half_t", "bf8_t"),
    "mx_bf16bf16": ("bf16_t", "bf16_t", "bf16_t", "e8m0_t"),
    "mx_bf16bf8": ("bf16_t", "bf8_t", "bf16_t", "e8m0_t"),
    "mx_bf16fp4": ("bf16_t", "pk_fp4_t", "bf16_t", "e8m0_t"),
    "fp4": ("pk_fp4_t", "pk_fp4_t", "half_t", "float"),
}
"""CK's variant key (ckast's `datatype`) -> catalog types of A, B, C and the scales (CK's BQUANT_VARIANTS /
ABQUANT_VARIANTS tables; its aquant, row-col and tensor tables agree but for AQUANT_INT4)."""
AQUANT_INT4 = {"fp8i4": ("pk_int4_t", "fp8_t", "half_t", "fp8_t"), "bf8i4": ("pk_int4_t", "bf8_t", "half_t", "bf8_t")}
"""aquant's int4 keys quantize A (packed int4, computing in B's fp8/bf8), the other way round from bquant's."""
CAST_POLICIES = {"before_lds_write": "BeforeLDSWrite", "after_lds_read": "AfterLDSRead"}
"""The `b_cast_policy` knob -> CK's CastPolicy enumerator."""


def types_of(variant: str, datatype: str) -> tuple[str, str, str, str]:
    """Catalog keys of A, B, C and the scales of a quant family's variant key."""
    return AQUANT_INT4[datatype] if variant == AQUANT and datatype in AQUANT_INT4 else TYPES[datatype]


def same_ab_types(variant: str, datatype: str) -> bool:
    """Whether A and B have one type (CK's bquant generator then casts B before the LDS write)."""
    a, b, _, _ = types_of(variant, datatype)
    return a == b


@attrs.frozen
class Quant(Gemm):
    """The quantized GEMM context: the quant problems always take hot loop and tail at compile time."""

    @property
    def compile_time_tail(self) -> bool:
        return True

    @property
    def ab(self) -> bool:
        return self.c.variant == "abquant"

    @property
    def types(self) -> tuple[str, str, str, str]:
        """Catalog keys of A, B, C and the scales."""
        return types_of(self.c.variant, self.c.datatype)

    @property
    def void_compute(self) -> bool:
        """Whether the problem's compute type is void ("from A and B"): abquant's non-block-scale types, and
        tensor quant where the profile's problem base derives it; else A's type."""
        if self.ab:
            return self.c.datatype not in BLOCKSCALE
        return self.c.variant == TENSOR_QUANT and self.p.feature("mixed_prec_compute_type")

    @property
    def permute_n(self) -> bool:
        """CK's quant generators permute the warp tiles along N (the `permute_n` knob, CK's TiledMMAPermuteN:
        bquant's preshuffled B, the grouped abquant generator's compv3, the grouped aquant generator's always) when each wave repeats its warp tile an
        even number of times along N and B scales group K only; the kernel then stores through the PermuteN
        epilogue (ck-2026.06; ck-2025.11 has none, its kernels store through CShuffle and take B shuffled
        without the N permutation)."""
        c = self.c
        repeat = c.tile_n // (c.warp_n * c.warp_tile_n)
        permuted = bool(c.permute_n) and repeat % 2 == 0 and c.bquant_group_n in (None, 1)  # aquant: no B groups
        return permuted and "PermuteNEpilogue" in self.p.templates

    def ctype(self, key: str) -> n.Type:
        """A catalog type by key (`float` is the builtin)."""
        return n.Builtin("float") if key == "float" else self.p.type(key)


def constants(g: Quant) -> list[n.Decl]:
    """The config constants (the shared GEMM's, with CK's block-per-CU, transposed C and preshuffle flags)."""
    c, i, b = g.c, g.index_t, n.Builtin("bool")
    return [
        constexpr(c_str(), "kName", n.StrLit(g.name)),
        *(constexpr(i, f"{prefix}{d.upper()}", getattr(c, f"{knob}_{d}"))
          for prefix, knob in (("Tile", "tile"), ("Warp", "warp"), ("WarpTile", "warp_tile")) for d in "mnk"),
        constexpr(i, "BlockSize", g.block_size),
        constexpr(n.Builtin("int"), "kBlockPerCu", c.k_block_per_cu),
        constexpr(i, "NumWaveGroups", c.num_wave_groups),
        constexpr(b, "kPadM", c.pad_m),
        constexpr(b, "kPadN", c.pad_n),
        constexpr(b, "kPadK", c.pad_k),
        constexpr(b, "DoubleSmemBuffer", c.double_smem_buffer),
        constexpr(b, "APreshuffleQuant", bool(c.preshuffle_aquant)),
        constexpr(b, "BPreshuffleQuant", bool(c.preshuffle_bquant)),
        constexpr(b, "PreshuffleB", bool(c.preshuffle_b)),
        constexpr(b, "TransposeC", bool(c.transpose_c)),
        *([constexpr(b, "UsePersistentKernel", c.persistent)] if c.grouped else []),
    ]


def group_shape(g: Quant, m: int, n_: int, k: int) -> n.Type:
    seq = g.p.template("sequence")
    return g.t("QuantGroupShape", GroupSizes=n.type_of(seq(Is=[n.IntLit(m), n.IntLit(n_), n.IntLit(k)])))


def patch(g: Quant, graph: KernelGraph) -> None:
    """Swap the shared GEMM's types, traits, problems, pipeline, epilogue and kernel for the family's."""
    p, c = g.p, g.c
    a, b, out, q = g.types
    graph.replace(Construct("Config", "config", lambda s: constants(g)))
    for name, key in (("ADataType", a), ("BDataType", b), ("CDataType", out)):
        graph.replace(alias(name, "data_type", lambda s, key=key: g.ctype(key)))
    graph.add(alias("QDataType", "data_type", lambda s: g.ctype(q)))
    if g.void_compute:
        graph.add(alias("ComputeDataType", "data_type", lambda s: n.Builtin("void")))
    else:
        graph.add(alias("ComputeDataType", "data_type", lambda s: s.ref("ADataType"), "ADataType"))
    graph.add(alias("AQLayout", "layout", lambda s: p.type(LAYOUTS["c" if c.variant == TENSOR_QUANT else "r"])))
    graph.add(alias("BQLayout", "layout", lambda s: p.type(LAYOUTS[c.bq_layout or "c"])))
    graph.replace(alias("HostArgs", "host_args", lambda s: p.type("QuantGemmHostArgs")))
    if c.tile_partitioner != "spatially_local":  # CK's 1-D partitioner (bquant, row-col, tensor: always)
        graph.replace(alias("TilePartitioner", "partitioner", lambda s: g.t(
            "GemmTile1DPartitioner", BlockGemmShape_=s.ref("TileShape")), "TileShape"))
    groups = []
    if c.bquant_group_k is not None:
        groups.append("BQuantGroupSize")
        graph.add(alias("BQuantGroupSize", "tile_shape", lambda s: group_shape(
            g, 1, c.bquant_group_n, c.bquant_group_k)))
    if c.aquant_group_k is not None:
        groups.append("AQuantGroupSize")
        graph.add(alias("AQuantGroupSize", "tile_shape", lambda s: group_shape(g, 1, 1, c.aquant_group_k)))
    if not groups:  # row-col, tensor: CK's placeholder group, named so that its header is included before the
        # problem's, which uses QuantGroupShape without including it (ck-2025.11)
        graph.add(alias("QuantGroupSize", "tile_shape", lambda s: group_shape(g, 1, 1, 1)))
    graph.replace(alias("Traits", "traits", lambda s: traits(g, s), "ALayout", "BLayout", "CLayout", "AQLayout",
                        "BQLayout"))
    operands = ("ADataType", "BDataType", "AccDataType", "TileShape", "Traits")
    if g.compile_time_tail:  # the launcher's loop-count dispatch (a persistent grouped kernel has none)
        graph.replace(alias("BaseProblem", "pipeline_problem", lambda s: g.t(
            "GemmPipelineProblemBase", AsDataType_=s.ref("ADataType"), BsDataType_=s.ref("BDataType"),
            EDataType_=s.ref("AccDataType"), BlockGemmShape_=s.ref("TileShape"), Traits_=s.ref("Traits")), *operands))
    graph.replace(alias("Problem", "universal_problem", lambda s: problem(g, s),
                        *operands, "QDataType", "ComputeDataType", *groups, params=g.tail_params()))
    cls = QUANT_PIPELINES[c.variant][c.pipeline]
    graph.replace(alias("Pipeline", "pipeline", lambda s: g.t(cls, Problem=s.ref("Problem")), "Problem"))
    if c.variant in QUANT_BASE_PIPELINES and g.compile_time_tail:
        graph.replace(alias("BaseGemmPipeline", "base_pipeline", lambda s: g.t(
            QUANT_BASE_PIPELINES[c.variant], Problem=s.ref("BaseProblem")), "BaseProblem"))
    if p.feature("split_compute_type"):  # the epilogue takes the problem's A/B compute types, as CK's generators
        computes = ("AComputeDataType", "BComputeDataType")
        for name in computes:
            graph.add(alias(name, "data_type", lambda s, name=name: problem_member(s, name), "Problem"))
    else:  # one compute type, the problem's ComputeDataType_
        computes = ("ComputeDataType", "ComputeDataType")
    uses = (*dict.fromkeys(computes), "AccDataType", "CDataType", "CLayout")
    if g.permute_n:
        graph.replace(alias("EpilogueProblem", "epilogue_problem", lambda s: permute_n_problem(g, s, computes), *uses))
        graph.replace(alias("Epilogue", "epilogue", lambda s: g.t(
            "PermuteNEpilogue", Problem_=s.ref("EpilogueProblem")), "EpilogueProblem"))
    else:
        graph.replace(alias("EpilogueProblem", "epilogue_problem", lambda s: epilogue_problem(
            g, s, compute=(s.ref(computes[0]), s.ref(computes[1]))), *uses, params=g.memop_params()))
    graph.replace(alias("Kernel", "kernel", lambda s: g.t(
        "QuantGemmKernel", TilePartitioner_=s.ref("TilePartitioner"), GemmPipeline_=s.ref("Pipeline"),
        EpiloguePipeline_=s.ref("Epilogue"), QuantType_=p.enum_value("QuantType", QUANT_TYPES[c.variant]),
    ), "TilePartitioner", "Pipeline", "Epilogue"))


def permute_n_problem(g: Quant, s: Scope, computes: tuple[str, str]) -> n.Type:
    """`PermuteNEpilogueProblem`: the CShuffle problem's leading arguments (no D tensors, pass-through)."""
    empty = n.type_of(g.p.template("tuple")(T=()))
    return g.t(
        "PermuteNEpilogueProblem", AsDataType_=s.ref(computes[0]), BsDataType_=s.ref(computes[1]), DsDataType_=empty,
        AccDataType_=s.ref("AccDataType"), ODataType_=s.ref("CDataType"), DsLayout_=empty, ELayout_=s.ref("CLayout"),
        CDElementwise_=g.p.type("PassThrough"), kM_=ids("TileM"), kN_=ids("TileN"), MWave_=ids("WarpM"),
        NWave_=ids("WarpN"), MPerXdl_=ids("WarpTileM"), NPerXdl_=ids("WarpTileN"), KPerXdl_=ids("WarpTileK"),
        isCTransposed_=ids("TransposeC"),
    )


def problem_member(s: Scope, member: str) -> n.Type:
    """`Problem<HasHotLoop, TailNum>::member` (an alias declaration: C++20 needs no `typename` there)."""
    return n.TypeName(n.Name((s.graph.template_id("Problem", {}), member)))


def traits(g: Quant, s: Scope) -> n.Type:
    """`TileGemmQuantTraits`: ck-2026.06 flags A and B scale preshuffle apart, ck-2025.11 has one flag (the
    B scales' in the block-scale families, else A's)."""
    sig = g.p.template("TileGemmQuantTraits")
    if sig.has_param("BPreshuffleQuant_"):
        flags = dict(APreshuffleQuant_=ids("APreshuffleQuant"), BPreshuffleQuant_=ids("BPreshuffleQuant"))
    else:
        scaled = "BPreshuffleQuant" if g.c.variant in BLOCK_SCALE_VARIANTS else "APreshuffleQuant"
        flags = dict(PreshuffleQuant_=ids(scaled))
    return g.t(
        "TileGemmQuantTraits", kPadM_=ids("kPadM"), kPadN_=ids("kPadN"), kPadK_=ids("kPadK"), **flags,
        PreshuffleB_=ids("PreshuffleB"), ALayout_=s.ref("ALayout"), BLayout_=s.ref("BLayout"),
        CLayout_=s.ref("CLayout"), QuantType_=g.p.enum_value("QuantType", QUANT_TYPES[g.c.variant]),
        AQLayout_=s.ref("AQLayout"), BQLayout_=s.ref("BQLayout"), TransposeC_=ids("TransposeC"),
        DoubleSmemBuffer_=ids("DoubleSmemBuffer"),
        **({"UsePersistentKernel_": ids("UsePersistentKernel")} if g.c.grouped else {}),
    )


def problem(g: Quant, s: Scope) -> n.Type:
    """The family's pipeline problem: C's slot takes the accumulator type, as CK's generators pass it."""
    c, p = g.c, g.p
    sched = p.enum_value("GemmPipelineScheduler", SCHEDULERS[c.scheduler])
    tail = dict(Scheduler_=sched)
    if g.compile_time_tail:  # a persistent grouped kernel picks them per group on the device
        tail.update(HasHotLoop_=ids("HasHotLoop"), TailNum_=ids("TailNum"))
    if c.variant == AQUANT:
        return g.t("GemmAQuantPipelineProblem", ADataType_=s.ref("ADataType"), AQDataType_=s.ref("QDataType"),
                   BDataType_=s.ref("BDataType"), CDataType_=s.ref("AccDataType"), BlockGemmShape_=s.ref("TileShape"),
                   Traits_=s.ref("Traits"), QuantGroupSize_=s.ref("AQuantGroupSize"), TransposeC_=ids("TransposeC"),
                   ComputeDataType_=s.ref("ComputeDataType"), **tail)
    if c.bquant_group_k is None:  # row-col, tensor: C's slot and the accumulator both take the accumulator type
        return g.t("GemmRowColTensorQuantPipelineProblem", ADataType_=s.ref("ADataType"), BDataType_=s.ref("BDataType"),
                   CDataType_=s.ref("AccDataType"), AccDataType_=s.ref("AccDataType"),
                   BlockGemmShape_=s.ref("TileShape"), Traits_=s.ref("Traits"), TransposeC_=ids("TransposeC"),
                   ComputeDataType_=s.ref("ComputeDataType"), **tail)
    if g.ab:
        return g.t("GemmABQuantPipelineProblem", ADataType_=s.ref("ADataType"), AQDataType_=s.ref("QDataType"),
                   BDataType_=s.ref("BDataType"), BQDataType_=s.ref("QDataType"), CDataType_=s.ref("AccDataType"),
                   BlockGemmShape_=s.ref("TileShape"), Traits_=s.ref("Traits"),
                   AQuantGroupSize_=s.ref("AQuantGroupSize"), BQuantGroupSize_=s.ref("BQuantGroupSize"),
                   TransposeC_=ids("TransposeC"), ComputeDataType_=s.ref("ComputeDataType"), **tail)
    sig = p.template("GemmBQuantPipelineProblem")
    group = "BQuantGroupSize_" if sig.has_param("BQuantGroupSize_") else "QuantGroupSize_"
    if sig.has_param("BCastPolicy_"):
        tail["BCastPolicy_"] = p.enum_value("CastPolicy", CAST_POLICIES[c.b_cast_policy])
    return g.t("GemmBQuantPipelineProblem", ADataType_=s.ref("ADataType"), BDataType_=s.ref("BDataType"),
               BQDataType_=s.ref("QDataType"), CDataType_=s.ref("AccDataType"), BlockGemmShape_=s.ref("TileShape"),
               Traits_=s.ref("Traits"), **{group: s.ref("BQuantGroupSize")},
               ComputeDataType_=s.ref("ComputeDataType"), **tail)

