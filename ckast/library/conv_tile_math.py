"""CK's tile arithmetic that the `full` rule set selects with (its `tile_math`): which wave layouts
and warp tiles exactly tile a block, and which vector triples suit a thread's share of it.

These choose among the rule set's curated options (and fall back when none fits); they do not
validate. The arch facts come from ckast's arch data.
"""

from __future__ import annotations

import functools

from ckast.arch import DTYPES, arch_spec
from ckast.arch.specs import dtype_key

from .conv_common import Triple

VECTORS = (1, 2, 4, 8, 16)
MAX_VECTOR_BYTES = 32
"""A vector may span two 16-byte global loads (CK's bwd_data loads 8 fp32 at a time)."""
MAX_LDS_BITS = 256
WAVE_THREADS = 64
"""CK's tile_math counts 64 threads per wave on every arch; kept so the set matches CK's."""


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@functools.cache
def wave_warp_pairs(tile: Triple, datatype: str, arch: str) -> tuple[tuple[Triple, tuple[int, int]], ...]:
    """Every (waves, warp tile m x n) that tiles the block exactly: tile = waves x warp tile x
    iterations in M and N, with waves the arch supports (wave_k 1, or 2 where the arch has it)."""
    spec = arch_spec(arch)
    supported = set(spec.waves)
    out: dict[tuple[Triple, tuple[int, int]], None] = {}
    for wm, wn, _ in spec.warp_tiles.get(dtype_key(datatype, datatype), ()):
        if tile[0] % wm or tile[1] % wn:
            continue
        for iter_m in _divisors(tile[0] // wm):
            for iter_n in _divisors(tile[1] // wn):
                for wave_k in (1, 2):
                    waves = (tile[0] // (wm * iter_m), tile[1] // (wn * iter_n), wave_k)
                    if waves in supported:
                        out[(waves, (wm, wn))] = None
    return tuple(out)


def _lds_ok(vector: int, size: int) -> bool:
    bits = vector * size * 8
    return bits <= MAX_LDS_BITS and bits & (bits - 1) == 0


@functools.cache
def vector_triples(tile: Triple, waves: Triple, datatype: str) -> frozenset[Triple]:
    """(a, b, c) vectors whose A and B widths divide, or are multiples of, each thread's share of
    the A and B block tiles, whose C width divides tile_n, and that fit one LDS access."""
    size = DTYPES[datatype].size
    threads = WAVE_THREADS * waves[0] * waves[1] * waves[2]
    if (tile[0] * tile[2]) % threads or (tile[1] * tile[2]) % threads:
        return frozenset()
    share_a, share_b = tile[0] * tile[2] // threads, tile[1] * tile[2] // threads
    fits = [v for v in VECTORS if v * size <= MAX_VECTOR_BYTES and _lds_ok(v, size)]
    a = [v for v in fits if share_a % v == 0 or v % share_a == 0]
    b = [v for v in fits if share_b % v == 0 or v % share_b == 0]
    c = [v for v in fits if tile[1] % v == 0]
    return frozenset((x, y, z) for x in a for y in b for z in c)
