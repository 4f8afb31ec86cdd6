"""Applicability: whether a kernel accepts a problem, by the checks it meets on its way to running it.

Each condition is data: a name, a reason, a kernel-side guard (`when`) and a requirement, both
`expr` trees over the problem's fields and the kernel table's columns (so the same trees can be
printed as C++), and the layer it belongs to. A kernel accepts a problem when every condition of the
layers applied whose guard holds for it is met. Two layers, as CK runs a kernel (`LAYERS`):

- `dispatcher`: what CK's dispatcher checks before it runs a kernel (its backend's `supports()`), the
  rule set the kernel's API profile names in its `[dispatcher]` table (`DISPATCHER_RULES`). What a
  dispatcher user gets is both layers; a launcher called directly checks the kernel layer only.
- `kernel`: the problem the kernel computes (GEMM or a conv direction; a GEMM's variant, batch, groups, D
  tensors and scale groups, `SERVES`) and the kernel's own checks, below.

The kernel's checks are CK Tile's `IsSupportedArgument` of the kernel the launcher instantiates (the
universal GEMM kernel, its multi-D and batched wrappers and the Stream-K kernel; the grouped-conv forward,
backward-data and backward-weight kernels and the depthwise path), the launcher's own k_batch guard, and the
dispatcher wrapper's spatial-rank check, per API profile: `ck-2025.11` is the amd-aiter wheel's CK,
profiles with the `strict_argument_checks` feature the newer kernels (D11). Conditions that only read
the kernel's config and that config validation already enforces (explicit GEMM needs the
filter1x1_stride1_pad0 specialization, stream-K's arch, multi-D's D layout, the depthwise LDS and
sub-tile limits) are not repeated. A kernel is assumed to run on the device of its `arch`.

`applicable(problem, table)` answers for every kernel of a `KernelTable` at once; `why_not(problem,
config)` names the first condition that refuses one kernel, with the values it read. A grouped problem of
per-group shapes is checked group by group (`evaluated`: each non-empty group as a problem of its own shape, as
CK's grouped kernel checks each group's arguments): a kernel accepts it when it accepts every group, and
`why_not` names the first group that fails.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ckast.arch import (
    ARCH_NAMES,
    DEPTHWISE_BLOCK_SIZE,
    DEPTHWISE_DILATION,
    DTYPES,
    arch_spec,
)
from ckast.arch.rules import DEPTHWISE, QUANT_VARIANTS
from ckast.catalog import CatalogError, load_profile, profile_names
from ckast.config.knobs import GEMM, GEMM_LAYOUTS, VARIANTS

from ckast.select.expr import (
    TRUE,
    Col,
    Const,
    Expr,
    Field,
    Named,
    Over,
    ProblemsScope,
    Scope,
    ceil_div,
    gcd,
    leaves,
    lookup,
    minimum,
    problem_values,
    problems_values,
    text,
    where,
)
from ckast.select.features import KernelTable
from ckast.select.problem import (BATCHED, COMPUTES, GROUPED, QUANT_GROUPS, STREAM_K, GemmProblem, Problem, per_shape,
                                  problem_variants, quant_groups)
from ckast.variants.gemm_quant import TYPES as QUANT_TYPES

ASYNC_PIPELINES = ("comp_async", "basic_async_v1")
"""Conv pipelines whose CK class sets `Async`: the newer conv kernels accept them on gfx950 only."""
ASYNC_DEVICE = "gfx950"
COMPV6_MIN_LOOPS = 4
"""CK's CompV6 prefetches 3 K tiles; its bwd-weight kernel needs one loop more."""
MAX_16BIT_K_BATCH = 128
"""The newer bwd-weight kernel's split-K bound for outputs narrower than fp32 (atomic-add accuracy)."""
MAX_BWD_DATA_GEMMS = 128
"""CK's MaxGroupedGemmGroupsNum: the backward-data kernel runs one GEMM per filter phase."""


KERNEL, DISPATCHER = "kernel", "dispatcher"
LAYERS = (KERNEL, DISPATCHER)
"""Every layer: what a dispatcher user gets (the default of `ckast select`)."""
KERNEL_ONLY = (KERNEL,)
"""What a launcher called directly accepts (`--kernel-only`)."""


@attrs.frozen
class Condition:
    """`require` must hold wherever `when` does (`holds`: the tree of that), in layer `layer`."""

    name: str
    reason: str
    require: Expr
    when: Expr = TRUE
    layer: str = KERNEL
    holds: Expr = attrs.field(init=False)

    @holds.default
    def _holds(self) -> Expr:
        return self.require if self.when == TRUE else ~self.when | self.require


# --- kernel columns and what follows from them -----------------------------------------------------

kind, variant, datatype, layout, arch, pipeline = map(Col, ("kind", "variant", "datatype", "layout", "arch",
                                                          "pipeline"))
tile_m, tile_n, tile_k = (Col(f"tile_{d}") for d in "mnk")
warp_m, warp_n, warp_k = (Col(f"warp_{d}") for d in "mnk")
warp_tile_m, warp_tile_n, warp_tile_k = (Col(f"warp_tile_{d}") for d in "mnk")


def _feature(name: str) -> Expr:
    """Whether the kernel's API profile has catalog feature `name`."""
    return lookup(name, {p: load_profile(p).feature(name) for p in profile_names()}, Col("ck_api"), False)


STRICT = _feature("strict_argument_checks")
RUNTIME_MEMOP = _feature("runtime_memory_operation")

direction = Named("kernel_direction", where(kind.eq("gemm"), "gemm", where(variant.eq(DEPTHWISE), "forward", variant)))
"""The problems a kernel serves: GEMM, or one conv direction (depthwise kernels are forward kernels)."""
element_bytes = lookup("element_bytes", {d: s.size for d, s in DTYPES.items()}, datatype, 1)
output_bytes = lookup("output_bytes", {d: DTYPES[s.output].size for d, s in DTYPES.items()}, datatype, 1)
output_16bit = lookup("output_16bit", {d: s.output in ("fp16", "bf16") for d, s in DTYPES.items()}, datatype, False)
"""16-bit outputs cannot be split-K accumulated with odd store vectors (CK's atomic add takes pairs)."""
warp_size = lookup("warp_size", {a: arch_spec(a).warp_size for a in ARCH_NAMES}, arch)

# --- GEMM ------------------------------------------------------------------------------------------

M, N, K, k_batch, batch = Field("M"), Field("N"), Field("K"), Field("k_batch"), Field("batch")
multi_d = variant.eq("multi_d")


def _computes() -> Expr:
    """The GEMM a kernel computes: its variant's, Stream-K and batched kernels the standard one (`problem.COMPUTES`)."""
    out: Expr = variant
    for kernel_variant, problem_variant in COMPUTES.items():
        out = where(variant.eq(kernel_variant), problem_variant, out)
    return Named("kernel_gemm", out)


computes = _computes()
GEMM_VARIANT = Condition("gemm.variant", "a kernel runs the GEMM of its variant: standard (C = A x B; also the "
                         "stream_k, batched and grouped kernels), preshuffle (B pre-shuffled), multi_d (with D "
                         "tensors) or a quantized family's (bquant, abquant, ...)",
                         computes.eq(Field("variant")))
GEMM_BATCH = Condition("gemm.batch", "a problem of batch > 1 runs on a batched kernel (CK's BatchedGemmKernel, "
                       "batch_count GEMMs in one launch); the others run one GEMM", batch.eq(1), variant.ne(BATCHED))
grouped_kernel = Named("grouped_kernel", variant.eq(GROUPED) | (variant.isin(QUANT_VARIANTS) & Col("grouped")))
"""Grouped kernels: the grouped variant's and the quant families' with the `grouped` knob."""
GEMM_GROUPS = Condition("gemm.groups", "a problem of groups > 1 runs on a grouped kernel (CK's GroupedGemmKernel, "
                        "or a quant family's QuantGroupedGemmKernel: group_count GEMMs in one launch)",
                        Field("groups").eq(1), ~grouped_kernel)
GEMM_D_TENSORS = Condition("gemm.d_tensors", "a multi-D kernel takes the problem's D tensors: their count, layout "
                           "and element-wise op", Col("num_d_tensors").eq(Field("num_d_tensors"))
                           & Col("d_layout").eq(Field("d_layout")) & Col("elementwise_op").eq(Field("elementwise_op")),
                           multi_d)


def _row(position: int) -> Expr:
    """Whether GEMM operand `position` of the kernel's layout (A, B, C) is row-major."""
    return lookup(f"{'abc'[position]}_row", {lay: lay[position] == "r" for lay in GEMM_LAYOUTS}, layout, False)


a_row, b_row, c_row = _row(0), _row(1), _row(2)
block_size = Named("block_size", warp_m * warp_n * warp_k * warp_size)


def _load_vector(name: str, mn_per_block: Expr, contiguous: Expr) -> Named:
    """CK's global load vector (UniversalGemmBasePolicy::GetGlobalVectorLoadSize): 16 or 8 bytes
    when both the tile's contiguous length and each thread's share of the tile divide into them, else
    one element."""
    per_thread = mn_per_block * tile_k // block_size
    v16, v8 = Const(16) // element_bytes, Const(8) // element_bytes

    def fits(v: Expr) -> Expr:
        return (contiguous % v).eq(0) & (per_thread % v).eq(0)

    return Named(name, where(fits(v16), v16, where(fits(v8), v8, 1)))


vector_a = _load_vector("vector_a", tile_m, where(a_row, tile_k, tile_m))
vector_b = _load_vector("vector_b", tile_n, where(b_row, tile_n, tile_k))
cshuffle = Col("epilogue").eq("cshuffle")
_n_store, _m_store = minimum(warp_tile_n * warp_n, Const(16) // output_bytes), minimum(warp_tile_m * warp_m,
                                                                                        Const(16) // output_bytes)
vector_c = Named("vector_c", where(cshuffle, where(c_row, _n_store, _m_store), 1))
"""CShuffle stores min(one wave row of warp tiles, 16 bytes); the default epilogue one element."""

GEMM_CONDITIONS = (
    Condition("stream_k.k_batch", "Stream-K splits K over the CUs itself: k_batch = 1 (CK's StreamKHostArgs fixes it)",
              k_batch.eq(1), variant.eq(STREAM_K)),
    Condition("gemm.split_k", "a kernel built without split-K takes k_batch = 1 (its launcher refuses more)",
              k_batch.eq(1), ~Col("split_k") & variant.ne(STREAM_K)),
    Condition("gemm.k_batch_warp_tiles", "at most one K split per warp tile of K", k_batch <= ceil_div(K, warp_tile_k),
              STRICT),
    Condition("gemm.pad_k", "without K padding, K is whole k_batch x tile_k blocks", (K % (tile_k * k_batch)).eq(0),
              ~Col("pad_k") & (a_row | ~b_row)),
    Condition("gemm.pad_m", "without M padding, M is whole tiles (where M is a contiguous dimension)",
              (M % tile_m).eq(0), ~Col("pad_m") & (~a_row | ~c_row)),
    Condition("gemm.pad_n", "without N padding, N is whole tiles (where N is a contiguous dimension)",
              (N % tile_n).eq(0), ~Col("pad_n") & (b_row | c_row)),
    Condition("gemm.vector_a", "A's contiguous dimension (K row-major, M column-major) is whole load vectors",
              (where(a_row, K, M) % vector_a).eq(0)),
    Condition("gemm.vector_b", "B's contiguous dimension (N row-major, K column-major) is whole load vectors",
              (where(b_row, N, K) % vector_b).eq(0)),
    Condition("gemm.vector_c", "C's contiguous dimension is whole store vectors",
              (where(c_row, N, M) % vector_c).eq(0)),
)
"""CK's Stream-K kernel checks the universal kernel's conditions with k_batch 1 (its `StreamKHostArgs` fix it):
`StreamKKernel::IsSupportedArgument` of ck-2025.11 (the amd-aiter wheel's `ops/gemm/kernel/
streamk_gemm_kernel.hpp`, its `reboot` kernel; the older kernel there also refuses the linear reduction) and of
ck-2026.06 (ROCm/rocm-libraries `projects/composablekernel/include/ck_tile/ops/gemm/kernel/streamk_gemm/
streamk_gemm_kernel.hpp` @f0667a6b31fd58e68632f4a1730c5a4b7100a498). The batched kernel (`BatchedGemmKernel`)
checks the universal kernel's conditions, batch_count >= 1 and batch strides of at least a whole tensor, which
the caller sets and a problem does not hold. CK's checks of the multi-D kernel's k_batch and of split-K with odd 16-bit
stores never decide alone:
validation keeps `split_k` off for multi-D, preshuffle and 16-bit default-epilogue kernels (the
launcher's guard, `gemm.split_k`, refuses k_batch > 1 for them) and CShuffle stores 16-bit outputs in
vectors of 8. The D tensors have C's layout and type (validation), so C's conditions cover theirs."""

# --- quantized GEMM ---------------------------------------------------------------------------------


def _having(group: str) -> Expr:
    """Whether the kernel's variant has scale group knob `group` (`problem.quant_groups`)."""
    return variant.isin(tuple(v for v in problem_variants(VARIANTS[GEMM]) if group in quant_groups(v)))


QUANT_SCALE_GROUPS = tuple(Condition(
    f"quant.{group}", f"a quantized kernel is built for its scale groups: the problem's {group} is the kernel's",
    Col(group).eq(Named(f"problem_{group}", Field(group))), _having(group)) for group in QUANT_GROUPS)
"""The problem's scale groups are the kernel's (after `gemm.variant`, so the problem has the kernel's groups)."""
SCALE_BYTES = {d: 4 if types[3] == "float" else 1 for d, types in QUANT_TYPES.items()}
"""Bytes of a scale per datatype: float for fp8/bf8/fp4 data, fp8/bf8 for packed int4, e8m0 for the microscale
mixes (the variants' type table, CK's variant keys)."""
scale_bytes = lookup("scale_bytes", SCALE_BYTES, datatype, 4)


def _scale_vector(name: str, rows: Expr, cols: Expr) -> Named:
    """CK's `GetABQGlobalVectorLoadSize` of a scale tile of rows x cols (cols contiguous): the first of 32, 16, 8
    and 4 bytes of scales (in elements; a scale is at most 4 bytes) dividing both cols and each thread's share of
    the tile
    (the block's threads over its N waves, which hold the same scales), else one."""
    per_thread = rows * cols // (block_size // warp_n)
    out: Expr = Const(1)
    for width in (4, 8, 16, 32):
        v = Const(width) // scale_bytes
        out = where((cols % v).eq(0) & (per_thread % v).eq(0), v, out)
    return Named(name, out)


bq_group_n, bq_group_k, aq_group_k = Col("bquant_group_n"), Col("bquant_group_k"), Col("aquant_group_k")
vector_bq = _scale_vector("vector_bq", tile_n // bq_group_n, tile_k // bq_group_k)
vector_aq = _scale_vector("vector_aq", tile_m, tile_k // aq_group_k)
QUANT_CONDITIONS = (
    Condition("quant.b_group_k", "K is whole B scale groups along K", (K % bq_group_k).eq(0),
              _having("bquant_group_k")),
    Condition("quant.a_group_k", "K is whole A scale groups along K", (K % aq_group_k).eq(0),
              _having("aquant_group_k")),
    Condition("quant.vector_bq", "B's scale groups along K (K / bquant_group_k) are whole scale load vectors",
              ((K // bq_group_k) % vector_bq).eq(0), _having("bquant_group_k")),
    Condition("quant.vector_aq", "A's scale groups along K (K / aquant_group_k) are whole scale load vectors",
              ((K // aq_group_k) % vector_aq).eq(0), variant.eq("aquant")),
)
"""CK's quantized GEMM kernel (`QuantGemmKernel::IsSupportedArgument`: k_batch 1, which `gemm.split_k` checks
as the families are built without split-K; QK_B, B's scale groups along K, in whole vectors of the BQ load for
B-scaled kernels, QK_A in whole AQ vectors for AQuant; then the universal kernel's checks, `GEMM_CONDITIONS`):
read in the amd-aiter wheel's `ck_tile/ops/gemm_quant/kernel/gemm_quant_kernel.hpp` and
`pipeline/gemm_group_quant_utils.hpp` (ck-2025.11; ABQuant, 2026 only, is checked as BQuant's B scales), and
ROCm/rocm-libraries `projects/composablekernel/include/ck_tile/ops/gemm_quant/kernel/gemm_quant_kernel.hpp`
@05fca22dddabd764da1caf054b0ffcc19c6f7162 (its scale views: QK_A and QK_B groups of K, B's groups of N). A
problem's K is whole scale groups (the host's QK_A = K / aquant_group_k, QK_B = K / bquant_group_k); its N need
not be: both kernels' B-scale views hold ceil(N / bquant_group_n) groups along N (the last one partial, as
DeepSeek-V3's 576-wide kv_a projection ships its 128 x 128 scales), and an N tile past them is padded. That newer
kernel also splits K (B- and AB-scaled, scales not preshuffled) and takes a row-major C's M in whole tiles
unless padded or of eight waves; neither is modelled here: ckast builds the families without split-K
(`gemm.split_k`), and which API profile's kernel checks M so is not pinned (`gemm-quant` holds M-padded
kernels either way)."""

# --- grouped convolution ---------------------------------------------------------------------------

G, C, KC = Field("G"), Field("C"), Field("K")
forward, bwd_data, bwd_weight = variant.eq("forward"), variant.eq("bwd_data"), variant.eq("bwd_weight")
implicit_gemm = forward | bwd_data | bwd_weight
depthwise = variant.eq(DEPTHWISE)
vector_size_a, vector_size_b, vector_size_c = (Col(f"vector_size_{x}") for x in "abc")
merge = Col("num_groups_to_merge")
merging_forward = forward & STRICT & (merge > 1)
"""The newer forward kernel reads merged groups' channels along G instead of C and K."""
specialization = Col("specialization")
conv_output_16bit = output_16bit & ~Col("two_stage")
"""Two-stage bwd_weight accumulates into an fp32 workspace."""


def _every(field: str, value: int) -> Expr:
    return Over("all", Field(field).eq(value))


unpadded = _every("left_pad", 0) & _every("right_pad", 0)
bwd_weight_gemm_k = Named("gemm_k", Field("N") * Over("prod", Field("output")))
"""Backward-weight GEMM K: images x output volume."""
bwd_data_gemms = Named("gemm_count", Over("prod", minimum(Field("stride") // gcd(Field("stride"), Field("dilation")),
                                                          Field("filter"))))
"""Backward-data GEMMs: one per filter phase of each axis (stride / gcd(stride, dilation), at most the filter)."""
tiles_per_block = Named("tiles_per_block", Const(DEPTHWISE_BLOCK_SIZE) // (
    ceil_div(Col("tile_h"), Col("sub_h")) * ceil_div(Col("tile_w"), Col("sub_w"))))


def _hw(field: str, h: Expr | int, w: Expr | int) -> Expr:
    """A 2-D problem's (h, w) of spatial field `field` equals (h, w)."""
    return Field(field, -2).eq(h) & Field(field, -1).eq(w)


CONV_CONDITIONS = (
    Condition("conv.ndim", "the kernel's spatial rank is the problem's", Col("ndim_spatial").eq(Field("ndim"))),
    Condition("conv.async_device", f"async pipelines run on {ASYNC_DEVICE} only", arch.eq(ASYNC_DEVICE),
              STRICT & implicit_gemm & pipeline.isin(ASYNC_PIPELINES)),
    Condition("conv.split_k", "the forward kernel (and the wheel's backward-data kernel) never splits K",
              k_batch.eq(1), forward | (bwd_data & ~RUNTIME_MEMOP)),
    Condition("conv.streamk_k_batch", "stream-K divides K itself: k_batch = 1", k_batch.eq(1), Col("streamk_enabled")),
    Condition("conv.compv6_loops", f"CompV6 needs {COMPV6_MIN_LOOPS} K loops per split",
              ceil_div(bwd_weight_gemm_k, k_batch * tile_k) >= COMPV6_MIN_LOOPS,
              STRICT & bwd_weight & pipeline.eq("compv6")),
    Condition("conv.k_batch_16bit", f"split-K of 16-bit outputs is at most {MAX_16BIT_K_BATCH} ways",
              k_batch <= MAX_16BIT_K_BATCH, STRICT & bwd_weight & conv_output_16bit),
    Condition("conv.split_k_vector_c", "split-K adds 16-bit outputs atomically in pairs: an odd vector_size_c "
              "takes k_batch = 1", k_batch.eq(1),
              (bwd_data | bwd_weight) & (vector_size_c % 2).eq(1) & conv_output_16bit),
    Condition("conv.k_batch_warp_tiles", "at most one K split per warp tile of GEMM K",
              k_batch <= ceil_div(bwd_weight_gemm_k, warp_tile_k), STRICT & bwd_weight & ~Col("streamk_enabled")),
    Condition("conv.gemm_count", f"the backward-data kernel runs at most {MAX_BWD_DATA_GEMMS} GEMMs",
              bwd_data_gemms <= MAX_BWD_DATA_GEMMS, bwd_data),
    Condition("conv.filter1x1_stride1_pad0", "a 1x1 filter, stride 1, no padding",
              _every("filter", 1) & _every("stride", 1) & unpadded,
              implicit_gemm & specialization.eq("filter1x1_stride1_pad0")),
    Condition("conv.filter1x1_pad0", "a 1x1 filter, no padding", _every("filter", 1) & unpadded,
              implicit_gemm & specialization.eq("filter1x1_pad0")),
    Condition("conv.filter3x3", "a 3x3 filter over one channel per group", C.eq(1) & _every("filter", 3),
              implicit_gemm & specialization.eq("filter3x3")),
    Condition("conv.vector_a", "GEMM A's channels (C forward, K backward) are whole vectors",
              (where(forward, C, KC) % vector_size_a).eq(0), implicit_gemm & ~merging_forward),
    Condition("conv.vector_b", "C is whole vectors of GEMM B", (C % vector_size_b).eq(0), implicit_gemm),
    Condition("conv.vector_c", "GEMM C's channels (K forward, C backward) are whole vectors (a forward kernel merging "
              "groups may store along G)", (where(forward, KC, C) % vector_size_c).eq(0)
              | (merging_forward & (G % merge).eq(0) & (G % vector_size_c).eq(0)), implicit_gemm),
    Condition("conv.merged_groups", "groups merge in whole sets (and, forward, over one channel per group)",
              (G % merge).eq(0) & (~forward | C.eq(1)), (merge > 1) & (bwd_weight | merging_forward)),
    Condition("depthwise.channels", "one input and one output channel per group", C.eq(1) & KC.eq(1), depthwise),
    Condition("depthwise.filter", "the kernel's square filter", _hw("filter", Col("filt"), Col("filt")), depthwise),
    Condition("depthwise.stride", "the kernel's strides", _hw("stride", Col("str_h"), Col("str_w")), depthwise),
    Condition("depthwise.dilation", f"dilation {DEPTHWISE_DILATION}",
              _hw("dilation", DEPTHWISE_DILATION, DEPTHWISE_DILATION), depthwise),
    Condition("depthwise.left_pad", "the kernel's left pads (right pads are clamped)",
              _hw("left_pad", Col("pad_h"), Col("pad_w")), depthwise),
    Condition("depthwise.nbatch", "whole groups of nbatch images", (Field("N") % Col("nbatch")).eq(0), depthwise),
    Condition("depthwise.output_tile", "a block holding several tiles covers the whole output with one",
              (Field("output", -2) <= Col("tile_h")) & (Field("output", -1) <= Col("tile_w")),
              depthwise & tiles_per_block.ne(1)),
)

KIND = Condition("kernel.direction", "a kernel serves GEMM problems or one conv direction",
                 direction.eq(Field("direction")))
SERVES: Mapping[str, tuple[Condition, ...]] = {"gemm": (KIND, GEMM_VARIANT, GEMM_BATCH, GEMM_GROUPS, GEMM_D_TENSORS,
                                                        *QUANT_SCALE_GROUPS),
                                               "grouped_conv": (KIND,)}
"""The problem a kernel computes: a library without a kernel meeting these for a problem cannot serve it."""

# --- CK's dispatcher -------------------------------------------------------------------------------


def _dispatcher_rules(kind: str) -> Expr:
    """The name of the rule set CK's dispatcher of each kernel's API profile checks (catalog)."""
    return lookup(f"{kind}_dispatcher_rules", {p: load_profile(p).dispatcher_supports(kind).rules
                                               for p in profile_names()}, Col("ck_api"), "")


registered = Named("dispatcher_registered", ~variant.isin(QUANT_VARIANTS))
"""Whether CK's dispatcher registers the kernel: not a quantized one (`variants.has_wrapper`: its KernelKey has no
scales), which its caller launches directly, through its kernel's checks only."""


def _whole_tiles(size: Field, tile: Col, pad: str) -> Condition:
    return Condition(f"dispatcher.{pad}", f"without {pad}, CK's dispatcher takes {size.name} in whole tiles only "
                     "(whatever the layout and k_batch)", (size % tile).eq(0),
                     _dispatcher_rules("gemm").eq("whole_tiles") & registered & ~Col(pad), DISPATCHER)


DISPATCHER_RULES: Mapping[str, Mapping[str, tuple[Condition, ...]]] = {
    "whole_tiles": {"gemm": (_whole_tiles(M, tile_m, "pad_m"), _whole_tiles(N, tile_n, "pad_n"),
                             _whole_tiles(K, tile_k, "pad_k"))},
    "kernel": {},
}
"""The conditions of each rule set of CK's dispatcher (catalog `[dispatcher]`), per op kind. `whole_tiles`
(GEMM's GeneratedKernelInstance::supports): a kernel padding M, N and K takes any size (each condition's
guard is then false), otherwise every dimension it does not pad must be whole tiles. `kernel`: the
dispatcher asks the kernel's own IsSupportedArgument (conv's is_supported_fn), which adds no condition.
Stream-K and batched kernels register as GEMM instances of the same backend (their launchers take plain
GemmHostArgs), so `whole_tiles` is theirs too; it is also the padding check of CK's own Stream-K backend
(`dispatcher/include/ck_tile/dispatcher/backends/generated_tile_backend_streamk.hpp`, ROCm/rocm-libraries
6889ec90c732644bbd08b463563aa3d30af09f7d), which besides takes only problems that ask for Stream-K
(`Problem::streamk`) with its reduction strategy: a choice of CK's caller that a ckast problem does not make."""


def _dispatcher(kind: str) -> tuple[Condition, ...]:
    """The dispatcher conditions of `kind` (CatalogError when a profile names a rule set not held here)."""
    for profile in profile_names():
        rules = load_profile(profile).dispatcher_supports(kind).rules
        if rules not in DISPATCHER_RULES:
            raise CatalogError(f"CK API profile {profile}: dispatcher.{kind}.rules: {rules!r} is not one of "
                               f"{', '.join(DISPATCHER_RULES)}")
    return tuple(c for rules in DISPATCHER_RULES.values() for c in rules.get(kind, ()))


CONDITIONS: Mapping[str, tuple[Condition, ...]] = {
    "gemm": (*SERVES["gemm"], *_dispatcher("gemm"), *QUANT_CONDITIONS, *GEMM_CONDITIONS),
    "grouped_conv": (*SERVES["grouped_conv"], *_dispatcher("grouped_conv"), *CONV_CONDITIONS),
}
"""Every condition a problem of each kind is checked against, in CK's order: what the kernel computes, the
dispatcher's check, then the kernel's own."""


def conditions(kind: str, layers: Sequence[str] = LAYERS) -> tuple[Condition, ...]:
    """The conditions of `layers` for problems of `kind`, in CK's order."""
    return tuple(c for c in CONDITIONS[kind] if c.layer in layers)


def describe_layers(layers: Sequence[str]) -> str:
    """How output names the layers applied."""
    return "kernel and dispatcher checks" if DISPATCHER in layers else "kernel checks only"


def problem_fields(problem: Problem) -> dict[str, Any]:
    """The fields conditions read: GEMM M, N, K, batch, k_batch, variant and D fields; conv G, N, C, K, k_batch,
    ndim and the spatial tuples (input, filter, stride, dilation, left_pad, right_pad, output); both
    `direction`."""
    if isinstance(problem, GemmProblem):
        fields = {"direction": "gemm", **attrs.asdict(problem)}
        del fields["group_shapes"]
    else:
        fields = {**attrs.asdict(problem, recurse=False), "ndim": problem.ndim, "output": problem.output}
    return problem_values(fields)


def evaluated(problem: Problem) -> tuple[tuple[int | None, Problem], ...]:
    """The problems the conditions are evaluated for: each non-empty group of a problem of per-group shapes (its
    index, the group alone: `GemmProblem.group_problems`), or the problem itself (index None)."""
    return problem.group_problems() or ((None, problem),)


def _table(kernels: KernelTable | Sequence[Mapping[str, Any]]) -> KernelTable:
    return kernels if isinstance(kernels, KernelTable) else KernelTable.of(kernels)


def checked(problem: Problem, kernels: KernelTable | Sequence[Mapping[str, Any]], layers: Sequence[str] = LAYERS,
            among: Sequence[Condition] | None = None) -> tuple[np.ndarray, dict[str, int]]:
    """(whether each kernel accepts `problem`, the kernels refused per condition that refuses them first) under
    the conditions of `layers` (or the conditions `among`)."""
    table = _table(kernels)
    ok = np.ones(len(table), dtype=bool)
    refused: dict[str, int] = {}
    for _, one in evaluated(problem):  # a kernel refused by a group is counted once, by its first condition
        scope = Scope(table, problem_fields(one))
        for condition in conditions(problem.kind, layers) if among is None else among:
            holds = np.asarray(scope.value(condition.holds), dtype=bool)
            if count := int(np.count_nonzero(ok & ~holds)):
                refused[condition.name] = refused.get(condition.name, 0) + count
            ok &= holds
    return ok, refused


def checked_many(problems: Sequence[Problem], table: KernelTable,
                 layers: Sequence[str] = LAYERS) -> tuple[np.ndarray, list[dict[str, int]]]:
    """`checked` for problems of one kind (and conv rank) at once: whether each kernel accepts each problem
    (problems x kernels), and per problem the kernels refused per condition that refuses them first. Problems of
    per-group shapes are checked one by one (`checked`)."""
    if any(p.group_shapes for p in problems):
        each = per_shape(problems, lambda ids: list(zip(*checked_many([problems[i] for i in ids], table, layers))),
                         lambda i: checked(problems[i], table, layers))
        return np.array([ok for ok, _ in each], dtype=bool).reshape(len(problems), len(table)), [c for _, c in each]
    scope = ProblemsScope(table, problems_values([problem_fields(p) for p in problems]))
    ok = np.ones((len(problems), len(table)), dtype=bool)
    counts = []
    for condition in conditions(problems[0].kind, layers):
        holds = np.asarray(scope.value(condition.holds), dtype=bool)
        counts.append((condition.name, np.count_nonzero(ok & ~holds, axis=1)))
        ok &= holds
    refusing = [(name, count) for name, count in counts if count.any()]
    return ok, [{name: int(count[i]) for name, count in refusing if count[i]} for i in range(len(problems))]


def applicable(problem: Problem, kernels: KernelTable | Sequence[Mapping[str, Any]],
               layers: Sequence[str] = LAYERS) -> np.ndarray:
    """One bool per kernel of the table (or of a list of configs): whether it accepts `problem` under the
    conditions of `layers` (default: every layer, what a dispatcher user gets)."""
    return checked(problem, kernels, layers)[0]


def serves(problem: Problem, kernels: KernelTable | Sequence[Mapping[str, Any]]) -> np.ndarray:
    """One bool per kernel: whether it computes `problem`'s op (`SERVES`), whatever its sizes."""
    return checked(problem, kernels, among=SERVES[problem.kind])[0]


def why_not(problem: Problem, config: Mapping[str, Any], layers: Sequence[str] = LAYERS) -> str | None:
    """The first condition of `layers` that refuses `config` for `problem` (its name, layer, reason,
    requirement and the values it read), or None when the kernel accepts the problem."""
    for index, one in evaluated(problem):
        scope = Scope(KernelTable.of([config]), problem_fields(one))
        group = "" if index is None else f"group {index} (M={one.M}, N={one.N}, K={one.K}): "
        for condition in conditions(problem.kind, layers):
            if _first(scope.value(condition.when)) and not _first(scope.value(condition.require)):
                values = ", ".join(f"{text(leaf)}={_shown(scope.value(leaf), leaf)}"
                                   for leaf in leaves(condition.require))
                return (f"{group}{condition.name} ({condition.layer} layer): {condition.reason}; "
                        f"{text(condition.require)} is false ({values})")
    return None


def _first(value: Any) -> bool:
    return bool(np.asarray(value).reshape(-1)[0]) if np.ndim(value) else bool(value)


def _shown(value: Any, leaf: Expr) -> Any:
    """A leaf's value for one kernel: a spatial field as a tuple, a column's single entry."""
    if isinstance(leaf, Field) and np.ndim(value):
        return tuple(int(v) for v in value)
    value = np.asarray(value)
    item = value.reshape(-1)[0].item() if value.ndim else value.item()
    return item

