"""Validation rules: what a kernel config must satisfy on its arch, each with a stable id.

Every rule has an id (stable: tests, scripts and users refer to it), a one-line reason, the kinds
and variants it covers, the config fields its check reads, and a check that yields (field, detail)
for each violation. Rules read their facts from the packaged arch data only, so a check is a pure
function of the fields it reads: its findings are memoized by their values. `check_config` applies
every rule that covers a config; the config loader calls it for every kernel, so there is one filter
on every path.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import attrs

from ckast import catalog

from .specs import (
    BACKWARD_EXCLUDED_PIPELINES,
    DEPTHWISE_BLOCK_SIZE,
    DTYPES,
    MIN_TILE,
    PIPELINES,
    PRESHUFFLE_PIPELINES,
    QUANT_ARCHS,
    QUANT_EIGHT_WAVES,
    QUANT_MX_ARCHS,
    QUANT_SCHEDULES,
    QUANT_WARP_TILE_K,
    QUANT_WARP_TILE_MN,
    STREAMK_CONV_ARCHS,
    STREAMK_GEMM_ARCHS,
    STREAMK_GEMM_PIPELINES,
    UNSUPPORTED_TRAITS,
    ArchSpec,
    arch_spec,
    dtype_key,
)

Finding = tuple[str, str]
"""(config field, what is wrong)."""
Check = Callable[[Any, ArchSpec], Iterator[Finding]]

STREAM_K = "stream_k"
"""The Stream-K GEMM variant (CK's dispatcher `GemmVariant.STREAM_K`)."""
AQUANT, ROWCOL_QUANT, TENSOR_QUANT = "aquant", "rowcolquant", "tensor_quant"
BLOCK_SCALE_VARIANTS = ("bquant", "abquant")
"""Quant families with B scale groups and preshuffled B: B scales; A and B scales."""
QUANT_VARIANTS = (*BLOCK_SCALE_VARIANTS, AQUANT, ROWCOL_QUANT, TENSOR_QUANT)
"""Quantized GEMM families as CK's dispatcher spells them (its `gemm_<family>` generators)."""
GEMM_VARIANTS = ("standard", "preshuffle", "multi_d", "batched", STREAM_K, "grouped", *QUANT_VARIANTS)
CONV_VARIANTS = ("forward", "bwd_data", "bwd_weight")
"""Implicit-GEMM conv variants (depthwise has no GEMM tile)."""
DEPTHWISE = "forward_depthwise"
"""The direct depthwise forward conv variant."""
TILED = GEMM_VARIANTS + CONV_VARIANTS
BOTH = ("gemm", "grouped_conv")
GEMM_VARIANTS_WITHOUT_SPLIT_K = ("preshuffle", "multi_d", STREAM_K, *QUANT_VARIANTS)
"""CK refuses k_batch > 1 for multi-D (IsSupportedArgument) and does not support it for the weight
preshuffle pipeline (its flattened B view has no K split); Stream-K splits K itself (its host
arguments fix k_batch = 1); CK's quant generators build k_batch 1 kernels (ck-2025.11's quant kernel refuses
any other)."""
UNQUANTIZED = tuple(v for v in GEMM_VARIANTS + CONV_VARIANTS if v not in QUANT_VARIANTS)
"""Tiled variants whose warp tile comes from the arch's (A, B) tables; the quant families have their own rule."""
UNARY_ELEMENTWISE_OPS = ("Relu", "Gelu", "FastGelu")
"""CK element-wise ops with the unary signature op(y, x): the multi-D epilogue calls its op as
op(e, c, d0[, d1]), so they cannot fuse D tensors (CK's generator says so; its preselected multi-D
sets name them anyway)."""
SPLIT_K_DEFAULT_EPILOGUE_OUTPUTS = ("fp32", "int32")
"""The default 2-D epilogue stores one element at a time; CK's atomic add of 16-bit types needs
vectors of 2 or more, so split-K through that epilogue only works for 32-bit outputs."""


def split_k_default(kind: str, variant: str, epilogue: str, datatype: str) -> bool:
    """Split-K is on by default wherever CK's kernel and epilogue support it."""
    if kind != "gemm" or variant in GEMM_VARIANTS_WITHOUT_SPLIT_K:
        return False
    return epilogue != "default" or DTYPES[datatype].output in SPLIT_K_DEFAULT_EPILOGUE_OUTPUTS


@attrs.frozen
class Rule:
    id: str
    reason: str
    check: Check
    kinds: tuple[str, ...]
    variants: tuple[str, ...] | None = None
    needs: tuple[str, ...] = ()
    """Rules that must hold first (their failure makes this check meaningless, e.g. a zero divisor)."""
    reads: tuple[str, ...] = ()
    """Every config field the check reads ("arch" too when it uses the arch facts it is given)."""
    waivable: bool = False
    """Whether a user may have a kernel it refuses emitted anyway (`ckast emit --waive ID`, `ckast.arch.waivers`):
    rules refusing kernels CK's generators emit although CK Tile cannot run them as configured."""
    _key: Callable[[Any], Any] = attrs.field(init=False, eq=False, repr=False)
    _findings: dict[Any, tuple[Finding, ...]] = attrs.field(init=False, eq=False, repr=False, factory=dict)

    @_key.default
    def _key_of_reads(self) -> Callable[[Any], Any]:
        return operator.attrgetter(*self.reads)

    def covers(self, config: Any) -> bool:
        return config.kind in self.kinds and (self.variants is None or config.variant in self.variants)

    def findings(self, config: Any, arch: ArchSpec) -> tuple[Finding, ...]:
        """The check's findings, memoized by the values of `reads` (in a resolved config each knob has
        one value type, so equal keys are equal inputs)."""
        key = self._key(config)
        found = self._findings.get(key)
        if found is None:
            found = self._findings[key] = tuple(self.check(config, arch))
        return found


@attrs.frozen
class Violation:
    rule: Rule
    field: str
    detail: str


RULES: list[Rule] = []


def rule(id: str, reason: str, *, reads: tuple[str, ...], kinds: tuple[str, ...] = ("gemm",),
         variants: tuple[str, ...] | None = None, needs: tuple[str, ...] = (),
         waivable: bool = False) -> Callable[[Check], Check]:
    """Register a check as a rule (registration order is reporting order)."""

    def register(check: Check) -> Check:
        assert all(r.id != id for r in RULES), f"duplicate rule id {id}"
        assert reads, f"rule {id} must name the fields it reads"
        RULES.append(Rule(id, reason, check, kinds, variants, needs, reads, waivable))
        return check

    return register


@attrs.frozen
class Outcome:
    """What one rule said about one config: "pass", "fail", "skipped" (a rule it needs failed) or
    "n/a" (it does not cover the config's kind and variant)."""

    rule: Rule
    status: str
    findings: tuple[Finding, ...] = ()


@attrs.frozen
class _Scope:
    """The rules covering one (kind, variant), in rule order, and `check_config`'s memo for it: the
    violations by the values of every field those rules read."""

    rules: tuple[Rule, ...]
    key: Callable[[Any], Any]
    violations: dict[Any, tuple[Violation, ...]] = attrs.field(factory=dict, eq=False, repr=False)


@functools.cache
def _scope(kind: str, variant: str) -> _Scope:
    where = SimpleNamespace(kind=kind, variant=variant)
    rules = tuple(r for r in RULES if r.covers(where))
    reads = dict.fromkeys(f for r in rules for f in r.reads)
    return _Scope(rules, operator.attrgetter("kind", *reads))  # "kind": a key even where no rule applies


def _judge(config: Any, rules: tuple[Rule, ...]) -> list[tuple[Rule, tuple[Finding, ...] | None]]:
    """The rules of `rules` that `config` fails, with their findings, or that are skipped (None: a rule
    they need failed), in rule order; the others pass."""
    arch = arch_spec(config.arch)
    failed: set[str] = set()
    judged: list[tuple[Rule, tuple[Finding, ...] | None]] = []
    for r in rules:
        if failed and not failed.isdisjoint(r.needs):
            judged.append((r, None))
        elif found := r.findings(config, arch):
            failed.add(r.id)
            judged.append((r, found))
    return judged


def evaluate(config: Any) -> list[Outcome]:
    """Every rule's outcome for `config` (whose knobs are already valid), in rule order."""
    covering = _scope(config.kind, config.variant).rules
    judged = {r.id: found for r, found in _judge(config, covering)}
    covered = {r.id for r in covering}
    out: list[Outcome] = []
    for r in RULES:
        if r.id not in covered:
            out.append(Outcome(r, "n/a"))
        elif r.id not in judged:
            out.append(Outcome(r, "pass"))
        elif judged[r.id] is None:
            out.append(Outcome(r, "skipped"))
        else:
            out.append(Outcome(r, "fail", judged[r.id]))
    return out


def check_config(config: Any) -> list[Violation]:
    """Every violation of every rule covering `config` (whose knobs are already valid)."""
    scope = _scope(config.kind, config.variant)
    key = scope.key(config)
    violations = scope.violations.get(key)
    if violations is None:
        violations = scope.violations[key] = tuple(
            Violation(r, field, detail) for r, found in _judge(config, scope.rules) for field, detail in found or ())
    return list(violations)


# --- helpers -------------------------------------------------------------------------------------

DIMS = "mnk"
TILE = ("tile_m", "tile_n", "tile_k")
WAVES = ("warp_m", "warp_n", "warp_k")
WARP_TILE = ("warp_tile_m", "warp_tile_n", "warp_tile_k")
GEOMETRY = (*TILE, *WAVES, *WARP_TILE)
VECTORS = ("vector_size_a", "vector_size_b", "vector_size_c")
TRANSPOSED = {"bwd_data": ("b",), "bwd_weight": ("a", "b")}
"""Operands whose GEMM layout makes CK's default policy transpose them from registers into LDS
(A column-major, B row-major): bwd_data's B, bwd_weight's A and B."""


def _triple(config: Any, prefix: str) -> tuple[int, int, int]:
    return (getattr(config, f"{prefix}_m"), getattr(config, f"{prefix}_n"), getattr(config, f"{prefix}_k"))


def _x(triple: tuple[int, ...]) -> str:
    return "x".join(map(str, triple))


def _list(triples) -> str:
    return ", ".join(_x(t) for t in triples)


def waves_per_block(config: Any) -> int:
    return config.warp_m * config.warp_n * config.warp_k


# --- integer range ---------------------------------------------------------------------------------

INDEX_MAX = 2**31 - 1
"""The largest value of CK's `index_t` (int32), the type of every integer knob in the emitted C++."""
INT_KNOBS = (*GEOMETRY, "num_wave_groups", *VECTORS, "num_groups_to_merge", "tile_h", "tile_w", "filt", "str_h",
             "str_w", "pad_h", "pad_w", "nbatch", "sub_h", "sub_w", "in_vec", "out_vec", "bquant_group_n",
             "bquant_group_k", "aquant_group_k", "k_block_per_cu")
"""The integer knobs whose values no choice list bounds (None where a knob does not apply)."""


@rule("int.index_t", f"integer knobs fit CK's index_t (at most {INDEX_MAX})", kinds=BOTH, reads=INT_KNOBS)
def _index_t(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    for name in INT_KNOBS:
        value = getattr(c, name)
        if value is not None and abs(value) > INDEX_MAX:
            yield name, f"{value} does not fit CK's index_t (32-bit int)"


# --- GEMM tile geometry ----------------------------------------------------------------------------

_TILE = ("tile", "warp", "warp_tile")


@rule("tile.positive", "block tile, waves and warp tile are positive in every dimension",
      kinds=BOTH, variants=TILED, reads=GEOMETRY)
def _positive(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    for prefix in _TILE:
        for d in DIMS:
            value = getattr(c, f"{prefix}_{d}")
            if value < 1:
                yield f"{prefix}_{d}", f"{value} must be at least 1"


@rule("tile.minimum", "the block tile is at least the operator's smallest tile", needs=("tile.positive",),
      kinds=BOTH, variants=TILED, reads=("variant", *TILE))
def _minimum(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    least = MIN_TILE[c.variant]
    tile = _triple(c, "tile")
    if any(t < m for t, m in zip(tile, least)):
        yield "tile_m", f"block tile {_x(tile)} is below the {c.variant} minimum {_x(least)}"


@rule("tile.divisible", "each block-tile dim is a multiple of waves x warp tile in that dim", needs=("tile.positive",),
      kinds=BOTH, variants=TILED, reads=GEOMETRY)
def _divisible(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    for d in DIMS:
        tile, waves, warp_tile = (getattr(c, f"{p}_{d}") for p in _TILE)
        if tile % (waves * warp_tile):
            yield f"tile_{d}", f"{tile} is not a multiple of warp_{d} x warp_tile_{d} = {waves} x {warp_tile}"


@rule("waves.supported", "the (warp_m, warp_n, warp_k) wave layout is one the arch supports", needs=("tile.positive",),
      kinds=BOTH, variants=TILED, reads=(*WAVES, "pipeline", "arch"))
def _waves(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    waves = _triple(c, "warp")
    if c.pipeline == "eightwaves" and waves in QUANT_EIGHT_WAVES:  # the eight-wave ABQuant pipeline's own layouts
        return
    if waves not in arch.waves:
        yield "warp_m", f"waves {_x(waves)} are not supported on {arch.name}; supported: {_list(arch.waves)}"


@rule("waves.groups", "num_wave_groups divides the block's waves, and is 1 where CK transposes an operand through LDS "
      "(its wave-group tile distributions do not transpose)", needs=("tile.positive",), kinds=BOTH, variants=TILED,
      reads=("variant", "layout", *WAVES, "num_wave_groups"))
def _wave_groups(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    waves = waves_per_block(c)
    transposes = c.variant in TRANSPOSED or c.variant in GEMM_VARIANTS and c.layout[:2] != "rc"
    if waves % c.num_wave_groups:
        yield "num_wave_groups", f"{c.num_wave_groups} does not divide the {waves} waves of a block"
    elif c.num_wave_groups > 1 and transposes:
        yield "num_wave_groups", (f"{c.num_wave_groups}: {c.variant} with layout {c.layout} transposes an operand "
                                  "through LDS, which CK cannot do in wave groups")


@rule("warp_tile.supported", "the warp tile is in the arch's table for the data types (no table: unsupported)",
      needs=("tile.positive",), kinds=BOTH, variants=UNQUANTIZED, reads=("variant", "datatype", *WARP_TILE, "arch"))
def _warp_tile(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    preshuffle = c.variant == "preshuffle"
    tables = arch.preshuffle_warp_tiles if preshuffle else arch.warp_tiles
    key = dtype_key(c.datatype, c.datatype)
    what = "preshuffle warp tile" if preshuffle else "warp tile"
    warp_tile = _triple(c, "warp_tile")
    if key not in tables:
        yield "datatype", f"{arch.name} has no {what} for {key}; types with {what}s: {', '.join(tables) or 'none'}"
    elif warp_tile not in tables[key]:
        yield "warp_tile_m", f"{what} {_x(warp_tile)} is not supported for {key} on {arch.name}; supported: {_list(tables[key])}"


@rule("lds.capacity", "A and B block tiles fit in the LDS budget of the config's own pipeline and buffering",
      needs=("tile.positive",), kinds=BOTH, variants=TILED, waivable=True,
      reads=(*TILE, "datatype", "pipeline", "double_smem_buffer", "arch"))
def _lds(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    used = (c.tile_m + c.tile_n) * c.tile_k * DTYPES[c.datatype].size
    budget = arch.lds_budget(c.pipeline, c.double_smem_buffer)
    if used > budget:
        yield "tile_k", (
            f"(tile_m + tile_n) x tile_k x {DTYPES[c.datatype].size} B = {used} B exceeds the {budget} B LDS "
            f"budget of {c.pipeline}{' with a double LDS buffer' if c.double_smem_buffer else ''} on {arch.name}"
        )


@rule("trait.combination", "CK implements the (pipeline, epilogue, scheduler) combination",
      kinds=BOTH, variants=TILED, reads=("pipeline", "epilogue", "scheduler"))
def _traits(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if (c.pipeline, c.epilogue, c.scheduler) in UNSUPPORTED_TRAITS:
        yield "scheduler", f"{c.pipeline} has no {c.scheduler} schedule (with the {c.epilogue} epilogue)"


@rule("profile.warp_gemm", "the CK API profile's WarpGemmDispatcher has the warp tile for the data types",
      needs=("warp_tile.supported",), kinds=BOTH, variants=UNQUANTIZED,
      reads=("datatype", "ck_api", *WARP_TILE, "arch"))
def _profile_warp_gemm(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if arch.uses_wmma:  # WMMA warp GEMMs are dispatched per arch family, outside this table
        return
    key = dtype_key(c.datatype, c.datatype)
    have = catalog.load_profile(c.ck_api).warp_gemms.get(key, frozenset())
    warp_tile = _triple(c, "warp_tile")
    if warp_tile not in have:
        yield "warp_tile_m", (f"CK API profile {c.ck_api} has no {key} warp GEMM {_x(warp_tile)} "
                              f"(it has: {_list(sorted(have)) or 'none'})")


# --- weight preshuffle -----------------------------------------------------------------------------

@rule("preshuffle.pipeline", "the preshuffle variant and only it uses a preshuffle pipeline",
      reads=("variant", "pipeline"))
def _preshuffle_pipeline(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if (c.variant == "preshuffle") != (c.pipeline in PRESHUFFLE_PIPELINES):
        allowed = ", ".join(PRESHUFFLE_PIPELINES)
        if c.variant == "preshuffle":
            yield "pipeline", f"{c.pipeline} is not a preshuffle pipeline; preshuffle needs one of: {allowed}"
        else:
            yield "pipeline", f"{c.pipeline} needs the preshuffled weights of variant preshuffle"


@rule("preshuffle.double_buffer", "the preshuffle pipeline needs the double LDS buffer", variants=("preshuffle",),
      reads=("double_smem_buffer",))
def _preshuffle_dsb(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if not c.double_smem_buffer:
        yield "double_smem_buffer", "false, but CK's weight-preshuffle pipeline only builds with a double LDS buffer"


@rule("preshuffle.layout", "preshuffled B (the weights) is column-major", variants=("preshuffle",), reads=("layout",))
def _preshuffle_layout(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.layout[1] != "c":
        yield "layout", f"{c.layout}: the preshuffle pipeline reads B as column-major (use rcr or ccr)"


@rule("preshuffle.warp_tile_n", "the preshuffle pipeline handles warp_tile_n 16 or 32 only", variants=("preshuffle",),
      reads=("warp_tile_n",))
def _preshuffle_warp_n(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.warp_tile_n not in (16, 32):
        yield "warp_tile_n", f"{c.warp_tile_n}: CK's weight-preshuffle pipeline asserts warp_tile_n is 16 or 32"


@rule("preshuffle.vector_load", "each lane loads a whole number of 16-byte vectors of the preshuffled warp tile",
      variants=("preshuffle",), needs=("tile.positive", "tile.divisible"),
      reads=("datatype", "tile_m", "warp_m", "warp_tile_m", "warp_tile_k", "arch"))
def _preshuffle_vector(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    size = DTYPES[c.datatype].size
    m_iter = c.tile_m // (c.warp_m * c.warp_tile_m)
    per_lane = c.warp_tile_m * c.warp_tile_k * size * m_iter
    if per_lane % (16 * arch.warp_size):
        yield "warp_tile_k", (
            f"warp_tile_m x warp_tile_k x {size} B x {m_iter} iterations / {arch.warp_size} lanes "
            f"= {per_lane / arch.warp_size:g} B per lane is not a multiple of 16 B"
        )


@rule("preshuffle.m_decomposition", "tile_m splits as waves x M1 x (warp size / K0), with K0 = tile_k / (16 B / element)",
      variants=("preshuffle",), needs=("tile.positive",), reads=("datatype", "tile_m", "tile_k", *WAVES, "arch"))
def _preshuffle_m(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    k1 = 16 // DTYPES[c.datatype].size
    if c.tile_k % k1:
        yield "tile_k", f"{c.tile_k} is not a multiple of K1 = 16 B / element = {k1}"
        return
    k0 = c.tile_k // k1
    if arch.warp_size % k0:
        yield "tile_k", f"K0 = tile_k / K1 = {k0} does not divide the warp size {arch.warp_size}"
        return
    m0, m2 = waves_per_block(c), arch.warp_size // k0
    if c.tile_m % (m0 * m2):
        yield "tile_m", f"{c.tile_m} is not a multiple of M0 x M2 = {m0} waves x {m2}"


# --- WMMA (warp size 32) ---------------------------------------------------------------------------

@rule("wmma.warp_tile_mn", "WMMA computes 16x16 output tiles: warp_tile_m and warp_tile_n are 16 on warp-size-32 archs",
      needs=("tile.positive",), kinds=BOTH, variants=TILED, reads=("warp_tile_m", "warp_tile_n", "arch"))
def _wmma_mn(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if arch.uses_wmma and (c.warp_tile_m, c.warp_tile_n) != (16, 16):
        yield "warp_tile_m", f"{c.warp_tile_m}x{c.warp_tile_n} warp tile on {arch.name} (WMMA, warp size 32); use 16x16"


@rule("wmma.fp32", "WMMA has no fp32 instruction; fp32 needs an MFMA arch", kinds=BOTH, variants=TILED,
      reads=("datatype", "arch"))
def _wmma_fp32(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if arch.uses_wmma and c.datatype == "fp32":
        yield "datatype", f"fp32 on {arch.name} (WMMA, warp size 32)"


# --- run-time features ---------------------------------------------------------------------------

@rule("multi_d.d_layout", "D tensors have C's layout", variants=("multi_d",), reads=("d_layout", "layout"))
def _d_layout(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.d_layout != c.layout[2]:
        yield "d_layout", f"{c.d_layout!r}, but CK's multi-D epilogue reads each D in C's layout {c.layout[2]!r}"


@rule("multi_d.binary_op", "the multi-D element-wise op takes the D tensors (op(e, c, d0[, d1])); unary ops cannot",
      variants=("multi_d",), reads=("elementwise_op", "num_d_tensors"))
def _binary_op(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.elementwise_op in UNARY_ELEMENTWISE_OPS:
        yield "elementwise_op", (f"{c.elementwise_op} is unary (op(y, x)); it has no argument for the "
                                 f"{c.num_d_tensors} D tensor(s)")


@rule("multi_d.epilogue", "the multi-D kernel fuses its D tensors in the CShuffle epilogue", variants=("multi_d",),
      reads=("epilogue",))
def _multi_d_epilogue(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.epilogue != "cshuffle":
        yield "epilogue", (f"{c.epilogue}: multi-D kernels use the cshuffle epilogue "
                           "(CK's generator builds it whatever the config names)")


@rule("batched.persistent", "CK's batched kernel maps each block to one tile of one batch: it has no persistent path",
      variants=("batched",), reads=("persistent",))
def _batched_persistent(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.persistent:
        yield "persistent", ("CK's BatchedGemmKernel launches one block per tile, batch and K split and has no "
                             "persistent grid; set persistent to false")
# --- Stream-K --------------------------------------------------------------------------------------

@rule("stream_k.epilogue", "the Stream-K kernel writes through the CShuffle epilogue (the only one CK's generator "
      "pairs it with)", variants=(STREAM_K,), reads=("epilogue",))
def _streamk_epilogue(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.epilogue != "cshuffle":
        yield "epilogue", f"{c.epilogue}: CK builds its Stream-K GEMM with the cshuffle epilogue only"


@rule("stream_k.pipeline", "the pipeline takes its hot loop and tail at run time (Stream-K workgroups run loop "
      "counts only known on the device)", variants=(STREAM_K,), reads=("pipeline",))
def _streamk_pipeline(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.pipeline not in STREAMK_GEMM_PIPELINES:
        yield "pipeline", f"{c.pipeline}: the Stream-K GEMM kernel drives {', '.join(STREAMK_GEMM_PIPELINES)} only"


@rule("stream_k.arch", "CK's Stream-K GEMM runs on the MFMA archs it is built for (not on warp-size-32 archs)",
      variants=(STREAM_K,), reads=("arch",))
def _streamk_gemm_arch(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if arch.name not in STREAMK_GEMM_ARCHS:
        yield "arch", f"Stream-K GEMM is not supported on {arch.name}; it runs on {', '.join(STREAMK_GEMM_ARCHS)}"


@rule("profile.streamk_reduction", "the CK API profile has the Stream-K reduction strategy (the tree reduction is "
      "newer than ck-2025.11)", variants=(STREAM_K,), reads=("streamk_reduction", "ck_api"))
def _streamk_reduction(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.streamk_reduction == "tree" and not catalog.load_profile(c.ck_api).feature("streamk_tree_reduction"):
        yield "streamk_reduction", (f"tree: CK API profile {c.ck_api} has no tree reduction (its "
                                    "StreamKReductionStrategy is Atomic or Reduction); use atomic or linear, or a "
                                    "newer profile (ck_api)")


# --- quantized GEMM (bquant, abquant, aquant, rowcolquant, tensor_quant) -----------------------------
# From CK's generators at ea607ecdb59e970dc748d4848363b800334ba5c6 as its goldens show them, and CK Tile's
# ops/gemm_quant (both profiles): each AQuant pipeline implements its schedule (Mem intrawave too where the profile
# says so); the pipeline problem asserts whole quant groups per block tile; the scale loads assume row-major A.

@rule("quant.arch", "CK builds its quant GEMMs for gfx942 and gfx950, the MX (e8m0-scale) ones for gfx950",
      variants=QUANT_VARIANTS, reads=("datatype", "arch"), waivable=True)
def _quant_arch(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    archs = QUANT_MX_ARCHS if c.datatype.startswith("mx_") else QUANT_ARCHS
    if arch.name not in archs:
        yield "arch", f"{c.datatype} {c.variant} GEMM is not built for {arch.name}; CK builds it for {', '.join(archs)}"


@rule("quant.layout", "the quant kernels read row-major A, column-major B and write row-major C (rcr)",
      variants=QUANT_VARIANTS, reads=("layout",))
def _quant_layout(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.layout != "rcr":
        yield "layout", (f"{c.layout}: CK's quant GEMMs are rcr only (the scale tensors' layouts follow A and B; "
                         "its scale loads assert a row-major A)")


@rule("quant.epilogue", "quant kernels store through the CShuffle epilogue (CK's quant generators emit no other)",
      variants=QUANT_VARIANTS, reads=("epilogue",))
def _quant_epilogue(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.epilogue != "cshuffle":
        yield "epilogue", f"{c.epilogue}: CK's quant GEMM generators emit the CShuffle epilogue only"


@rule("quant.persistent", "CK's quant GEMM kernel maps one block to one tile (no persistent path; the grouped one has)",
      variants=QUANT_VARIANTS, reads=("persistent", "grouped"))
def _quant_persistent(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.persistent and not c.grouped:
        yield "persistent", "true: CK's QuantGemmKernel has no persistent kernel"


@rule("quant.pipeline", "microscale is the pipeline of the MX (e8m0-scale) types and only theirs; eightwaves is "
      "gfx950 fp8/bf8 (the family's pipelines are the pipeline knob's choices)", variants=QUANT_VARIANTS,
      reads=("datatype", "pipeline", "arch"), waivable=True)
def _quant_pipeline(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if (c.pipeline == "microscale") != c.datatype.startswith("mx_"):
        yield "pipeline", (f"{c.pipeline} with {c.datatype}: the microscale pipeline is the one for e8m0 (mx_*) "
                           "scales, and only it")
    elif c.pipeline == "eightwaves" and (arch.name != "gfx950" or c.datatype not in ("fp8", "bf8")):
        yield "pipeline", "eightwaves: CK's eight-wave ABQuant path is gfx950 fp8/bf8 block scale only"


@rule("quant.warp_tile", "the quant warp tile is 16x16 with the K the arch's MFMA gives",
      needs=("tile.positive",), variants=QUANT_VARIANTS, reads=(*WARP_TILE, "arch"), waivable=True)
def _quant_warp_tile(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    ks = QUANT_WARP_TILE_K.get(arch.name, ())
    if (c.warp_tile_m, c.warp_tile_n) != QUANT_WARP_TILE_MN or c.warp_tile_k not in ks:
        yield "warp_tile_m", (f"warp tile {_x(_triple(c, 'warp_tile'))} is not a quant warp tile on {arch.name}; "
                              f"supported: 16x16x{{{', '.join(map(str, ks)) or 'none'}}}")


@rule("quant.group_divides", "the quant groups tile the block: tile_k by each group K, tile_n by the B group N",
      needs=("tile.positive",), variants=QUANT_VARIANTS,
      reads=("tile_n", "tile_k", "bquant_group_n", "bquant_group_k", "aquant_group_k"))
def _quant_groups(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.bquant_group_k is not None and c.tile_k % c.bquant_group_k:
        yield "bquant_group_k", f"{c.bquant_group_k} does not divide tile_k {c.tile_k}"
    if c.bquant_group_n is not None and c.tile_n % c.bquant_group_n:
        yield "bquant_group_n", f"{c.bquant_group_n} does not divide tile_n {c.tile_n}"
    if c.aquant_group_k is not None and c.tile_k % c.aquant_group_k:
        yield "aquant_group_k", f"{c.aquant_group_k} does not divide tile_k {c.tile_k}"


@rule("quant.preshuffle_b",
      "preshuffle_b is what the pipeline reads: preshuffled B for preshuffleb and eightwaves only, except that the "
      "eight-wave pipeline reads either B in a CK API profile whose policy has both (feature eight_waves_plain_b)",
      variants=BLOCK_SCALE_VARIANTS, reads=("pipeline", "preshuffle_b", "ck_api"))
def _quant_preshuffle_b(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.pipeline == "eightwaves" and catalog.load_profile(c.ck_api).feature("eight_waves_plain_b"):
        return
    if c.preshuffle_b != (c.pipeline in ("preshuffleb", "eightwaves")):
        yield "preshuffle_b", (f"{str(c.preshuffle_b).lower()} with pipeline {c.pipeline}: only preshuffleb and "
                               "eightwaves read a preshuffled B")


@rule("quant.permute_n", "the N-permuted warp tiles store through the PermuteN epilogue, which takes no transposed C",
      variants=BLOCK_SCALE_VARIANTS, reads=("permute_n", "transpose_c"))
def _quant_permute_n(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.permute_n and c.transpose_c:
        yield "permute_n", ("true with transpose_c: CK's PermuteN epilogue takes no transposed C (its eight-wave "
                            "and preshuffled-B ABQuant kernels store through CShuffle)")


@rule("profile.cast_policy", "casting B before the LDS write needs a profile whose B-quant problem takes a cast policy",
      variants=("bquant",), reads=("ck_api", "b_cast_policy"))
def _profile_cast_policy(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.b_cast_policy == "before_lds_write" and not catalog.load_profile(c.ck_api).template(
            "GemmBQuantPipelineProblem").has_param("BCastPolicy_"):
        yield "b_cast_policy", (f"before_lds_write: CK API profile {c.ck_api}'s GemmBQuantPipelineProblem takes no "
                                "cast policy (B is cast after the LDS read); use after_lds_read, or a newer profile "
                                "(ck_api)")


@rule("profile.bq_layout", "row-major B scales need a profile whose BQuant kernel takes them",
      variants=("bquant",), reads=("ck_api", "bq_layout"))
def _profile_bq_layout(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.bq_layout == "r" and not catalog.load_profile(c.ck_api).feature("bquant_row_major_scales"):
        yield "bq_layout", (f"r: CK API profile {c.ck_api}'s BQuant kernel asserts column-major B scales; use c, or "
                            "a newer profile (ck_api)")


@rule("profile.abquant", "the CK API profile has CK Tile's ABQuant kernels (newer than ck-2025.11)",
      variants=("abquant",), reads=("ck_api",))
def _profile_abquant(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if not catalog.load_profile(c.ck_api).feature("abquant"):
        yield "ck_api", f"abquant: CK API profile {c.ck_api} has no QuantType::ABQuantGrouped; use ck-2026.06"


def aquant_schedules(pipeline: str, ck_api: str) -> tuple[str, ...]:
    """The schedules the AQuant `pipeline` takes in CK API profile `ck_api`: its own (the scheduler knob's
    default), and intrawave too for Mem where the profile's feature aquant_mem_intrawave says so."""
    own = QUANT_SCHEDULES[AQUANT][pipeline]
    more = pipeline == "mem" and catalog.load_profile(ck_api).feature("aquant_mem_intrawave")
    return (own, "intrawave") if more else (own,)


@rule("aquant.schedule", "each AQuant pipeline implements its schedule (Mem: interwave, CompV3: intrawave); the Mem "
      "pipeline also takes intrawave in a CK API profile that runs it so (ck-2026.06: its operator() runs the "
      "intrawave PipelineImpl whatever the problem's schedule; the profile's feature aquant_mem_intrawave says where)",
      variants=(AQUANT,), reads=("pipeline", "scheduler", "ck_api"))
def _aquant_schedule(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    takes = aquant_schedules(c.pipeline, c.ck_api)
    if c.scheduler not in takes:
        yield "scheduler", (f"{c.scheduler}: CK API profile {c.ck_api}'s AQuant {c.pipeline} pipeline implements the "
                            f"{' and '.join(takes)} schedule{'s' if len(takes) > 1 else ''} only")


@rule("aquant.preshuffle_pipeline", "preshuffled A scales run the CompV3 pipeline (CK's generator pairs them)",
      variants=(AQUANT,), reads=("pipeline", "preshuffle_aquant"))
def _aquant_preshuffle(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.preshuffle_aquant and c.pipeline != "compv3":
        yield "pipeline", f"{c.pipeline}: CK builds AQuant with preshuffled scales on the compv3 pipeline"


@rule("profile.aquant_mem", "the CK API profile's AQuant block GEMM has the Mem pipeline's interwave schedule",
      variants=(AQUANT,), reads=("ck_api", "pipeline"))
def _profile_aquant_mem(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.pipeline == "mem" and not catalog.load_profile(c.ck_api).feature("aquant_interwave"):
        yield "pipeline", (f"mem: CK API profile {c.ck_api}'s AQuant block GEMM implements the intrawave schedule "
                           "only, which the Mem pipeline does not run; use compv3 (intrawave), or a newer profile "
                           "(ck_api)")


@rule("profile.aquant_int4", "the CK API profile's AQuant pipeline takes a packed-int4 A (fp8i4, bf8i4)",
      variants=(AQUANT,), reads=("ck_api", "datatype"))
def _profile_aquant_int4(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.datatype.endswith("i4") and not catalog.load_profile(c.ck_api).feature("aquant_packed_int4"):
        yield "datatype", (f"{c.datatype}: CK API profile {c.ck_api}'s AQuant pipeline takes an fp8 or bf8 A only; "
                           "use fp8 or bf8, or a newer profile (ck_api)")


# --- grouped quantized GEMM (the `grouped` knob of the quant families) --------------------------------
# CK Tile's QuantGroupedGemmKernel (ops/gemm_quant/kernel/grouped_gemm_quant_kernel.hpp): of the amd-aiter
# wheel for ck-2025.11, of rocm-libraries @705d00c1b483a354153dbe0faeeff9a7c22b731c for ck-2026.06. Both
# run each group's QuantGemmKernel; split-K stays refused as for every quant family (split_k.unsupported).

@rule("profile.grouped_quant_persistent", "the CK API profile's grouped quant kernel has a non-persistent path "
      "(ck-2025.11's static_asserts a persistent pipeline)", variants=QUANT_VARIANTS,
      reads=("grouped", "persistent", "ck_api"))
def _grouped_quant_persistent(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.grouped and not c.persistent and not catalog.load_profile(c.ck_api).feature("grouped_quant_non_persistent"):
        yield "persistent", (f"false: CK API profile {c.ck_api}'s QuantGroupedGemmKernel static_asserts a persistent "
                             "kernel; set persistent to true, or use a newer profile (ck_api)")


@rule("profile.grouped_quant_type", "the CK API profile's grouped quant kernel runs the family (ck-2025.11's: "
      "BQuantGrouped, RowColQuant and TensorQuant)", variants=(AQUANT,), reads=("grouped", "ck_api"))
def _grouped_quant_type(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.grouped and not catalog.load_profile(c.ck_api).feature("grouped_quant_aquant"):
        yield "grouped", (f"true: CK API profile {c.ck_api}'s QuantGroupedGemmKernel has no AQuantGrouped path (it "
                          "passes the pipeline no A scales); use bquant, rowcolquant or tensor_quant, or a newer "
                          "profile (ck_api)")


@rule("grouped_quant.double_smem_buffer", "the grouped quant kernel double-buffers LDS for BQuant only (its two-LDS "
      "path static_asserts BQuantGrouped)", variants=QUANT_VARIANTS, reads=("grouped", "variant", "double_smem_buffer"))
def _grouped_quant_dsb(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.grouped and c.double_smem_buffer and c.variant != "bquant":
        yield "double_smem_buffer", (f"true: CK's QuantGroupedGemmKernel runs a double LDS buffer for bquant only, "
                                     f"not {c.variant}; use a single-buffered pipeline")


@rule("split_k.unsupported", "split-K (k_batch > 1) only where CK's kernel accumulates partial results",
      variants=GEMM_VARIANTS_WITHOUT_SPLIT_K, reads=("split_k", "variant"))
def _split_k(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.split_k:
        yield "split_k", f"CK's {c.variant} GEMM kernel does not support k_batch > 1; set split_k to false"


@rule("split_k.epilogue", "split-K through the default 2-D epilogue needs a 32-bit output (scalar atomics)",
      variants=("standard",), reads=("datatype", "split_k", "epilogue"))
def _split_k_epilogue(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    output = DTYPES[c.datatype].output
    if c.split_k and c.epilogue == "default" and output not in SPLIT_K_DEFAULT_EPILOGUE_OUTPUTS:
        yield "split_k", (f"the default epilogue cannot add {output} atomically one element at a time; "
                          "use the cshuffle epilogue or set split_k to false")


# --- pipelines and LDS buffering (GEMM and conv) -----------------------------------------------------

@rule("pipeline.lds_buffering", "double_smem_buffer matches a pipeline that always (or never) double-buffers LDS "
      "(the eight-wave ABQuant pipeline takes either where it ping-pongs inside its own LDS: feature "
      "eight_waves_own_lds)",
      kinds=BOTH, variants=TILED, reads=("pipeline", "double_smem_buffer", "ck_api"))
def _lds_buffering(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.pipeline == "eightwaves" and catalog.load_profile(c.ck_api).feature("eight_waves_own_lds"):
        return
    lds = PIPELINES[c.pipeline].lds
    if c.double_smem_buffer != (lds == "double"):
        yield "double_smem_buffer", (f"{str(c.double_smem_buffer).lower()}, but {c.pipeline} "
                                     f"{'always' if lds == 'double' else 'never'} double-buffers LDS")


@rule("profile.pipeline", "the CK API profile has the pipeline class (and, where launchers pick the loop variant "
      "at compile time, its base class)", kinds=BOTH, variants=TILED, reads=("ck_api", "pipeline"))
def _profile_pipeline(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    profile = catalog.load_profile(c.ck_api)
    spec = PIPELINES[c.pipeline]
    needed = [spec.cls] + ([spec.base] if not profile.feature("runtime_hot_loop") else [])
    for key in needed:
        try:
            profile.template(key)
        except catalog.CatalogError as exc:
            yield "pipeline", f"{c.pipeline} cannot be built: {exc}"
            return


# --- grouped convolution -----------------------------------------------------------------------------

def _conv(id: str, reason: str, *, reads: tuple[str, ...], variants: tuple[str, ...] = CONV_VARIANTS,
          needs: tuple[str, ...] = ()):
    return rule(id, reason, reads=reads, kinds=("grouped_conv",), variants=variants, needs=needs)


def _feature_rule(id: str, feature: str, knob: str, what: str, variants: tuple[str, ...] = CONV_VARIANTS,
                  enabled: Callable[[Any], bool] | None = None) -> None:
    """A refusal of `knob` on profiles without `feature` (the catalog says why it is absent); `enabled`
    reads no field but `knob`."""

    def check(c: Any, arch: ArchSpec) -> Iterator[Finding]:
        on = enabled(c) if enabled else bool(getattr(c, knob))
        if on and not catalog.load_profile(c.ck_api).feature(feature):
            yield knob, f"CK API profile {c.ck_api} has no {what}; use a newer profile (ck_api)"

    rule(id, f"{what} needs a CK API profile that has it", reads=(knob, "ck_api"), kinds=("grouped_conv",),
         variants=variants)(check)


_feature_rule("profile.explicit_gemm", "explicit_gemm", "explicit_gemm", "explicit-GEMM conv path (GroupedConvTraits::ExplicitGemm_)")
_feature_rule("profile.conv_lds_policy", "conv_lds_policy", "lds_policy", "grouped-conv LDS policy (GroupedConvUniversalPipelineAgBgCrPolicy)",
              enabled=lambda c: c.lds_policy == "conv")
_feature_rule("profile.streamk_conv", "streamk_conv", "streamk_enabled", "stream-K backward-weight conv kernel",
              variants=("bwd_weight",))
_feature_rule("profile.backward_specialization", "backward_conv_specialization", "specialization",
              "non-default specialization in the backward conv kernels (their argument check does not compile)",
              variants=("bwd_data", "bwd_weight"), enabled=lambda c: c.specialization != "default")
_feature_rule("profile.depthwise", "depthwise_conv", "variant", "depthwise forward conv (DepthwiseConvFwdTraits)",
              variants=(DEPTHWISE,), enabled=lambda c: True)


@_conv("profile.conv_pipeline", "the CK API profile's conv kernels can drive the pipeline",
       reads=("ck_api", "pipeline"))
def _profile_conv_pipeline(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    reason = catalog.load_profile(c.ck_api).conv_pipelines_unusable.get(c.pipeline)
    if reason:
        yield "pipeline", f"{c.pipeline} cannot run in CK API profile {c.ck_api}'s conv kernels: {reason}"


@_conv("conv.lds_policy", "CK's grouped-conv LDS policy fits the basic, mem, compv3 and wavelet pipelines only",
       reads=("lds_policy", "pipeline"))
def _conv_lds_policy(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.lds_policy == "conv" and not PIPELINES[c.pipeline].conv_policy:
        takes = ", ".join(name for name, p in PIPELINES.items() if p.conv_policy)
        yield "lds_policy", f"{c.pipeline} keeps its own LDS policy; the conv policy fits {takes}"


@_conv("conv.backward_pipeline", "the backward conv directions do not run the compv5 pipeline, nor bwd_data one that "
       "double-buffers LDS (its kernel's two-buffer path does not compile)", variants=("bwd_data", "bwd_weight"),
       reads=("pipeline", "variant"))
def _backward_pipeline(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.pipeline in BACKWARD_EXCLUDED_PIPELINES:
        yield "pipeline", f"{c.pipeline} is not available for {c.variant}"
    elif c.variant == "bwd_data" and PIPELINES[c.pipeline].lds == "double":
        yield "pipeline", (f"{c.pipeline} double-buffers LDS; CK's bwd_data kernel reads a tile window length its "
                           "window type lacks on that path (found by compiling)")


MAX_GROUPS_TO_MERGE = 64


@_conv("conv.groups_to_merge", f"forward and bwd_weight merge a power-of-two number of groups, at most "
       f"{MAX_GROUPS_TO_MERGE} (CK's XOR transform of merged groups static_asserts it)",
       variants=("forward", "bwd_weight"), reads=("num_groups_to_merge",))
def _groups_to_merge(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    n = c.num_groups_to_merge
    if n > MAX_GROUPS_TO_MERGE or n & (n - 1):
        yield "num_groups_to_merge", f"{n} is not a power of two up to {MAX_GROUPS_TO_MERGE}"


@_conv("conv.vector_width", "each vector is a power-of-two number of elements of at most 32 bytes (one LDS access)",
       reads=("datatype", *VECTORS))
def _vector_width(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    size = DTYPES[c.datatype].size
    for x in "abc":
        vec = getattr(c, f"vector_size_{x}")
        if vec & (vec - 1) or vec * size > 32:
            yield f"vector_size_{x}", f"{vec} x {size} B is not a power-of-two vector of at most 32 B"


@_conv("conv.vector_c", "vector_size_c divides tile_n (the epilogue stores whole vectors along N)",
       needs=("tile.positive",), reads=("tile_n", "vector_size_c"))
def _vector_c(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.tile_n % c.vector_size_c:
        yield "vector_size_c", f"{c.vector_size_c} does not divide tile_n = {c.tile_n}"


def _per_thread(c: Any, arch: ArchSpec, tile: int) -> int:
    """Elements of a tile x tile_k block tile each thread loads."""
    return tile * c.tile_k // (waves_per_block(c) * arch.warp_size)


@_conv("conv.vector_per_thread", "each thread's share of the A and B block tiles divides, or is divided by, the vector",
       needs=("tile.positive",), reads=(*TILE, *WAVES, "vector_size_a", "vector_size_b", "arch"))
def _vector_per_thread(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    for x, tile in (("a", c.tile_m), ("b", c.tile_n)):
        vec, share = getattr(c, f"vector_size_{x}"), _per_thread(c, arch, tile)
        if share == 0 or (share % vec and vec % share):
            yield f"vector_size_{x}", f"{vec} neither divides nor is divided by the {share} elements per thread"


@_conv("compv6.loads_per_thread", "compv6 issues at least one A and one B buffer load per thread",
       needs=("tile.positive",), reads=("pipeline", *TILE, *WAVES, "vector_size_a", "vector_size_b", "arch"))
def _compv6_loads(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.pipeline != "compv6":
        return
    for x, tile in (("a", c.tile_m), ("b", c.tile_n)):
        if _per_thread(c, arch, tile) < getattr(c, f"vector_size_{x}"):
            yield f"vector_size_{x}", f"compv6 needs tile x tile_k / (threads x vector) >= 1 for {x.upper()}"


def _shuffle_vector(extent: int, share: int, size: int) -> int:
    """The vector CK's default policy uses for the LDS shuffle (GetGlobalVectorLoadSize): the widest of
    16 B, 8 B, then 4 B (only for elements of 4 B or more) and 2 B (2 B or more) that divides both."""
    widths = [16, 8] + ([4] if size >= 4 else []) + ([2] if size >= 2 else [])
    for width in widths:
        v = width // size
        if extent % v == 0 and share % v == 0:
            return v
    return 1


@_conv("conv.transpose_vector", "a transposed operand's load vector equals the vector of CK's LDS shuffle",
       variants=("bwd_data", "bwd_weight"), needs=("tile.positive",),
       reads=("lds_policy", "datatype", "variant", *TILE, *WAVES, "vector_size_a", "vector_size_b", "arch"))
def _transpose_vector(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.lds_policy != "gemm" or arch.name == "gfx950":  # gfx950 loads transposed directly
        return
    size = DTYPES[c.datatype].size
    for x in TRANSPOSED[c.variant]:
        tile = c.tile_m if x == "a" else c.tile_n
        vec, share = getattr(c, f"vector_size_{x}"), _per_thread(c, arch, tile)
        shuffle = _shuffle_vector(tile, share, size)
        if share and min(vec, share) != shuffle:
            yield f"vector_size_{x}", (f"{vec}: CK's default policy shuffles {x.upper()} through LDS in vectors of "
                                       f"{shuffle} (min(vector, {share} per thread) must equal it) or transpose_tile2d "
                                       "fails to compile")


ATOMIC_VECTOR = {2: 8, 4: 4}
"""Longest vector CK can add atomically, per output element size (float and int32: 4; fp16, bf16: 8)."""


@_conv("atomic.vector_c", "split-K adds the output in vectors CK's atomics support",
       variants=("bwd_weight",), reads=("streamk_enabled", "two_stage", "datatype", "vector_size_c"))
def _atomic_vector(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.streamk_enabled:
        return
    output = 4 if c.two_stage else DTYPES[c.datatype].size
    if c.vector_size_c > ATOMIC_VECTOR[output]:
        what = "the fp32 workspace" if c.two_stage else f"{c.datatype} dWei"
        yield "vector_size_c", f"{c.vector_size_c}: split-K adds {what} atomically in vectors of at most {ATOMIC_VECTOR[output]}"


@_conv("explicit_gemm.requirements", "explicit GEMM is a batched GEMM over 1x1, stride-1, unpadded forward or "
       "backward-weight convolutions without group merging", needs=("profile.explicit_gemm",),
       reads=("explicit_gemm", "variant", "specialization", "num_groups_to_merge", "pipeline"))
def _explicit_gemm(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if not c.explicit_gemm:
        return
    if c.variant == "bwd_data":
        yield "explicit_gemm", "CK's backward-data kernel has no explicit-GEMM path"
    if c.specialization != "filter1x1_stride1_pad0":
        yield "specialization", f"{c.specialization}: explicit GEMM needs filter1x1_stride1_pad0"
    if c.num_groups_to_merge != 1:
        yield "num_groups_to_merge", "explicit GEMM cannot merge groups"
    if c.pipeline == "wavelet":
        yield "pipeline", "the wavelet pipeline has no explicit-GEMM form"


@_conv("streamk.exclusive", "stream-K and two-stage are different reductions of the same GEMM K; pick one",
       variants=("bwd_weight",), reads=("streamk_enabled", "two_stage"))
def _streamk_two_stage(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.streamk_enabled and c.two_stage:
        yield "two_stage", "true together with streamk_enabled"


@_conv("streamk.arch", "CK's stream-K conv kernel runs on the MFMA archs it was built for (not on warp-size-32 archs)",
       variants=("bwd_weight",), reads=("streamk_enabled", "arch"))
def _streamk_arch(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.streamk_enabled and arch.name not in STREAMK_CONV_ARCHS:
        yield "streamk_enabled", f"stream-K conv is not supported on {arch.name}; it runs on {', '.join(STREAMK_CONV_ARCHS)}"


# --- depthwise forward ------------------------------------------------------------------------------
# CK's depthwise pipeline maps sub-tiles of the output tile to the threads of one wave and stages
# each tile's padded input window in LDS; these rules are its static asserts and argument checks.

def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(value: int, multiple: int) -> int:
    return _ceil_div(value, multiple) * multiple


@attrs.frozen
class DepthwiseTile:
    """What CK's depthwise pipeline derives from the tile knobs."""

    sub_tiles: int  # sub-tiles per output tile, one thread each
    tiles_per_block: int  # output tiles (batch images) one block works on at once
    lds_h: int  # rows and columns of the input window staged in LDS
    lds_w: int
    in_vector: int  # the LDS store vector (CK caps the input vector at 4 for it)

    @classmethod
    def of(cls, c: Any) -> DepthwiseTile:
        sub_tiles = _ceil_div(c.tile_h, c.sub_h) * _ceil_div(c.tile_w, c.sub_w)
        return cls(sub_tiles, DEPTHWISE_BLOCK_SIZE // sub_tiles, c.tile_h * c.str_h + 2 * c.pad_h,
                   c.tile_w * c.str_w + 2 * c.pad_w, min(c.in_vec, 4))

    def lds_bytes(self, c: Any) -> int:
        """LDS of one block: a padded window per tile, its row stride aligned for both vector widths."""
        stride = max(_round_up(self.lds_w, c.in_vec), _round_up(self.lds_w + c.pad_w, self.in_vector))
        return self.lds_h * stride * self.tiles_per_block * DTYPES[c.datatype].size


DEPTHWISE_TILE = ("tile_h", "tile_w", "sub_h", "sub_w", "str_h", "str_w", "pad_h", "pad_w", "in_vec")
"""The knobs `DepthwiseTile.of` reads."""


def _depthwise(id: str, reason: str, *, reads: tuple[str, ...], needs: tuple[str, ...] = ()):
    return rule(id, reason, reads=reads, kinds=("grouped_conv",), variants=(DEPTHWISE,), needs=needs)


@_depthwise("depthwise.filter", "the depthwise filter is square with an odd size (it is centred on the output pixel)",
            reads=("filt",))
def _dw_filter(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.filt % 2 == 0:
        yield "filt", f"{c.filt} is even"


@_depthwise("depthwise.vectors", "depthwise input and output vectors are powers of two", reads=("in_vec", "out_vec"))
def _dw_vectors(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    for knob in ("in_vec", "out_vec"):
        value = getattr(c, knob)
        if value & (value - 1):
            yield knob, f"{value} is not a power of two"


@_depthwise("depthwise.sub_tile", "a sub-tile fits in the output tile", reads=("tile_h", "tile_w", "sub_h", "sub_w"))
def _dw_sub_tile(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    for d in "hw":
        if getattr(c, f"sub_{d}") > getattr(c, f"tile_{d}"):
            yield f"sub_{d}", f"{getattr(c, f'sub_{d}')} exceeds tile_{d} = {getattr(c, f'tile_{d}')}"


@_depthwise("depthwise.stride_w", "the horizontal stride is 1 or even (the LDS loads step over whole vectors)",
            reads=("str_w",))
def _dw_stride_w(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.str_w != 1 and c.str_w % 2:
        yield "str_w", f"{c.str_w} is odd and not 1"


@_depthwise("depthwise.pad_w", "the horizontal padding is positive (the LDS row stride adds it as a bank-conflict skew)",
            reads=("pad_w",))
def _dw_pad_w(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.pad_w == 0:
        yield "pad_w", "0"


@_depthwise("depthwise.sub_tiles", f"each of a block's {DEPTHWISE_BLOCK_SIZE} threads computes one sub-tile, so an "
            "output tile has at most that many sub-tiles", reads=DEPTHWISE_TILE)
def _dw_sub_tiles(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    tile = DepthwiseTile.of(c)
    if tile.sub_tiles > DEPTHWISE_BLOCK_SIZE:
        yield "sub_h", (f"{c.tile_h}x{c.tile_w} in {c.sub_h}x{c.sub_w} sub-tiles is {tile.sub_tiles} sub-tiles; "
                        f"at most {DEPTHWISE_BLOCK_SIZE}")


@_depthwise("depthwise.nbatch", "a block works on whole groups of images: nbatch is a multiple of the tiles per block",
            needs=("depthwise.sub_tiles",), reads=(*DEPTHWISE_TILE, "nbatch"))
def _dw_nbatch(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    per_block = DepthwiseTile.of(c).tiles_per_block
    if c.nbatch % per_block:
        yield "nbatch", f"{c.nbatch} is not a multiple of the {per_block} tiles a block holds"


@_depthwise("depthwise.in_vector", "a sub-tile's input row span (sub_w x str_w) is whole LDS store vectors",
            reads=DEPTHWISE_TILE)
def _dw_in_vector(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    vector = DepthwiseTile.of(c).in_vector
    if c.sub_w * c.str_w % vector:
        yield "in_vec", f"sub_w x str_w = {c.sub_w * c.str_w} is not a multiple of min(in_vec, 4) = {vector}"


@_depthwise("depthwise.lds_row", f"one wave loads an LDS row: at most {DEPTHWISE_BLOCK_SIZE} input vectors per row",
            reads=DEPTHWISE_TILE)
def _dw_lds_row(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    loads = _ceil_div(DepthwiseTile.of(c).lds_w, c.in_vec)
    if loads > DEPTHWISE_BLOCK_SIZE:
        yield "in_vec", f"an input row needs {loads} loads of {c.in_vec}; at most {DEPTHWISE_BLOCK_SIZE}"


@_depthwise("depthwise.lds_capacity", "the staged input windows fit the arch's LDS", needs=("depthwise.sub_tiles",),
            reads=(*DEPTHWISE_TILE, "datatype", "arch"))
def _dw_lds(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    used = DepthwiseTile.of(c).lds_bytes(c)
    if used > arch.lds_bytes:
        yield "tile_h", f"{used} B of LDS exceeds the {arch.lds_bytes} B of {arch.name}"

