"""Validation rules: what a kernel config must satisfy on its arch, each with a stable id.

Every rule has an id (stable: tests, scripts and users refer to it), a one-line reason, the kinds
and variants it covers, and a check that yields (field, detail) for each violation. Rules read
their facts from the packaged arch data only. `check_config` applies every rule that covers a
config; the config loader calls it for every kernel, so there is one filter on every path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import attrs

from .specs import DTYPES, MIN_TILE, PRESHUFFLE_PIPELINES, UNSUPPORTED_TRAITS, ArchSpec, arch_spec, dtype_key

Finding = tuple[str, str]
"""(config field, what is wrong)."""
Check = Callable[[Any, ArchSpec], Iterator[Finding]]

GEMM_VARIANTS_WITHOUT_SPLIT_K = ("preshuffle", "multi_d")
"""CK refuses k_batch > 1 for multi-D (IsSupportedArgument) and does not support it for the weight
preshuffle pipeline (its flattened B view has no K split)."""
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

    def covers(self, config: Any) -> bool:
        return config.kind in self.kinds and (self.variants is None or config.variant in self.variants)


@attrs.frozen
class Violation:
    rule: Rule
    field: str
    detail: str


RULES: list[Rule] = []


def rule(id: str, reason: str, *, kinds: tuple[str, ...] = ("gemm",), variants: tuple[str, ...] | None = None,
         needs: tuple[str, ...] = ()) -> Callable[[Check], Check]:
    """Register a check as a rule (registration order is reporting order)."""

    def register(check: Check) -> Check:
        assert all(r.id != id for r in RULES), f"duplicate rule id {id}"
        RULES.append(Rule(id, reason, check, kinds, variants, needs))
        return check

    return register


def check_config(config: Any) -> list[Violation]:
    """Every violation of every rule covering `config` (whose knobs are already valid)."""
    arch = arch_spec(config.arch)
    failed: set[str] = set()
    out: list[Violation] = []
    for r in RULES:
        if not r.covers(config) or failed.intersection(r.needs):
            continue
        for field, detail in r.check(config, arch):
            failed.add(r.id)
            out.append(Violation(r, field, detail))
    return out


# --- helpers -------------------------------------------------------------------------------------

DIMS = "mnk"


def _triple(config: Any, prefix: str) -> tuple[int, int, int]:
    return (getattr(config, f"{prefix}_m"), getattr(config, f"{prefix}_n"), getattr(config, f"{prefix}_k"))


def _x(triple: tuple[int, ...]) -> str:
    return "x".join(map(str, triple))


def _list(triples) -> str:
    return ", ".join(_x(t) for t in triples)


def waves_per_block(config: Any) -> int:
    return config.warp_m * config.warp_n * config.warp_k


# --- GEMM tile geometry ----------------------------------------------------------------------------

_TILE = ("tile", "warp", "warp_tile")


@rule("tile.positive", "block tile, waves and warp tile are positive in every dimension",
      kinds=("gemm", "grouped_conv"), variants=("standard", "preshuffle", "multi_d", "forward", "bwd_data", "bwd_weight"))
def _positive(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    for prefix in _TILE:
        for d in DIMS:
            value = getattr(c, f"{prefix}_{d}")
            if value < 1:
                yield f"{prefix}_{d}", f"{value} must be at least 1"


@rule("tile.minimum", "the block tile is at least the operator's smallest tile", needs=("tile.positive",))
def _minimum(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    least = MIN_TILE[c.variant]
    tile = _triple(c, "tile")
    if any(t < m for t, m in zip(tile, least)):
        yield "tile_m", f"block tile {_x(tile)} is below the {c.variant} minimum {_x(least)}"


@rule("tile.divisible", "each block-tile dim is a multiple of waves x warp tile in that dim", needs=("tile.positive",))
def _divisible(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    for d in DIMS:
        tile, waves, warp_tile = (getattr(c, f"{p}_{d}") for p in _TILE)
        if tile % (waves * warp_tile):
            yield f"tile_{d}", f"{tile} is not a multiple of warp_{d} x warp_tile_{d} = {waves} x {warp_tile}"


@rule("waves.supported", "the (warp_m, warp_n, warp_k) wave layout is one the arch supports", needs=("tile.positive",))
def _waves(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    waves = _triple(c, "warp")
    if waves not in arch.waves:
        yield "warp_m", f"waves {_x(waves)} are not supported on {arch.name}; supported: {_list(arch.waves)}"


@rule("warp_tile.supported", "the warp tile is in the arch's table for the data types (no table: unsupported)",
      needs=("tile.positive",))
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
      needs=("tile.positive",))
def _lds(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    used = (c.tile_m + c.tile_n) * c.tile_k * DTYPES[c.datatype].size
    budget = arch.lds_budget(c.pipeline, c.double_smem_buffer)
    if used > budget:
        yield "tile_k", (
            f"(tile_m + tile_n) x tile_k x {DTYPES[c.datatype].size} B = {used} B exceeds the {budget} B LDS "
            f"budget of {c.pipeline}{' with a double LDS buffer' if c.double_smem_buffer else ''} on {arch.name}"
        )


@rule("trait.combination", "CK implements the (pipeline, epilogue, scheduler) combination",
      kinds=("gemm", "grouped_conv"), variants=("standard", "preshuffle", "multi_d", "forward", "bwd_data", "bwd_weight"))
def _traits(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if (c.pipeline, c.epilogue, c.scheduler) in UNSUPPORTED_TRAITS:
        yield "scheduler", f"{c.pipeline} has no {c.scheduler} schedule (with the {c.epilogue} epilogue)"


# --- weight preshuffle -----------------------------------------------------------------------------

@rule("preshuffle.pipeline", "the preshuffle variant and only it uses a preshuffle pipeline")
def _preshuffle_pipeline(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if (c.variant == "preshuffle") != (c.pipeline in PRESHUFFLE_PIPELINES):
        allowed = ", ".join(PRESHUFFLE_PIPELINES)
        if c.variant == "preshuffle":
            yield "pipeline", f"{c.pipeline} is not a preshuffle pipeline; preshuffle needs one of: {allowed}"
        else:
            yield "pipeline", f"{c.pipeline} needs the preshuffled weights of variant preshuffle"


@rule("preshuffle.double_buffer", "the preshuffle pipeline needs the double LDS buffer", variants=("preshuffle",))
def _preshuffle_dsb(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if not c.double_smem_buffer:
        yield "double_smem_buffer", "false, but CK's weight-preshuffle pipeline only builds with a double LDS buffer"


@rule("preshuffle.layout", "preshuffled B (the weights) is column-major", variants=("preshuffle",))
def _preshuffle_layout(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.layout[1] != "c":
        yield "layout", f"{c.layout}: the preshuffle pipeline reads B as column-major (use rcr or ccr)"


@rule("preshuffle.warp_tile_n", "the preshuffle pipeline handles warp_tile_n 16 or 32 only", variants=("preshuffle",))
def _preshuffle_warp_n(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.warp_tile_n not in (16, 32):
        yield "warp_tile_n", f"{c.warp_tile_n}: CK's weight-preshuffle pipeline asserts warp_tile_n is 16 or 32"


@rule("preshuffle.vector_load", "each lane loads a whole number of 16-byte vectors of the preshuffled warp tile",
      variants=("preshuffle",), needs=("tile.positive", "tile.divisible"))
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
      variants=("preshuffle",), needs=("tile.positive",))
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
      needs=("tile.positive",))
def _wmma_mn(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if arch.uses_wmma and (c.warp_tile_m, c.warp_tile_n) != (16, 16):
        yield "warp_tile_m", f"{c.warp_tile_m}x{c.warp_tile_n} warp tile on {arch.name} (WMMA, warp size 32); use 16x16"


@rule("wmma.fp32", "WMMA has no fp32 instruction; fp32 GEMM needs an MFMA arch")
def _wmma_fp32(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if arch.uses_wmma and c.datatype == "fp32":
        yield "datatype", f"fp32 on {arch.name} (WMMA, warp size 32)"


# --- run-time features ---------------------------------------------------------------------------

@rule("multi_d.d_layout", "D tensors have C's layout", variants=("multi_d",))
def _d_layout(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.d_layout != c.layout[2]:
        yield "d_layout", f"{c.d_layout!r}, but CK's multi-D epilogue reads each D in C's layout {c.layout[2]!r}"


@rule("split_k.unsupported", "split-K (k_batch > 1) only where CK's kernel accumulates partial results",
      variants=GEMM_VARIANTS_WITHOUT_SPLIT_K)
def _split_k(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    if c.split_k:
        yield "split_k", f"CK's {c.variant} GEMM kernel does not support k_batch > 1; set split_k to false"


@rule("split_k.epilogue", "split-K through the default 2-D epilogue needs a 32-bit output (scalar atomics)",
      variants=("standard",))
def _split_k_epilogue(c: Any, arch: ArchSpec) -> Iterator[Finding]:
    output = DTYPES[c.datatype].output
    if c.split_k and c.epilogue == "default" and output not in SPLIT_K_DEFAULT_EPILOGUE_OUTPUTS:
        yield "split_k", (f"the default epilogue cannot add {output} atomically one element at a time; "
                          "use the cshuffle epilogue or set split_k to false")
