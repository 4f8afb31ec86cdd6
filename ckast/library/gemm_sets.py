"""CK's GEMM rule sets: its generator's built-in lists (`gemm-default`, `data/gemm_default.toml`) and its
preselected sets (one rule set each, `data/gemm_preselected.toml`).

`gemm-default` proposes what CK's generator would write: every tile of the list product that CK's
own tile selection keeps (per datatype, once per tile), times its valid traits; preshuffle takes the
compv3/intrawave traits with CK's forced pipeline, scheduler and epilogue, multi-D every trait with
each op and D count. GEMM selections have no spatial rank, so `ndims` is ignored.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from ckast.arch.rules import GEMM_VARIANTS
from ckast.arch.specs import DTYPES, arch_spec, dtype_key
from ckast.config.knobs import DATATYPES, GEMM

from .conv_common import data
from .selection import Candidate, Selection, SelectionError

DIMS = "mnk"
TILE_FIELDS = tuple(f"{p}_{d}" for p in ("tile", "warp", "warp_tile") for d in DIMS)
"""CK's TileConfig field order."""
Tile = tuple[int, ...]


def axes(selection: Selection) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(variants, datatypes) the selection asks for, in CK's order; the selection's ranks are ignored."""
    for dtype in selection.datatypes:
        if dtype not in DATATYPES[GEMM]:
            raise SelectionError(f"datatype {dtype!r} is not a GEMM datatype; allowed: {', '.join(DATATYPES[GEMM])}")
    for variant in selection.variants:
        if variant not in GEMM_VARIANTS:
            raise SelectionError(f"variant {variant!r} is not a GEMM variant; allowed: {', '.join(GEMM_VARIANTS)}")
    return (tuple(v for v in GEMM_VARIANTS if selection.wants(variant=v)),
            tuple(d for d in DATATYPES[GEMM] if selection.wants(datatype=d)))


def gemm_candidate(origin: str, variant: str, datatype: str, layout: str, arch: str, **knobs: Any) -> Candidate:
    """A GEMM kernel object; multi-D D tensors take C's layout (CK's default D layout)."""
    extra = {"d_layout": layout[2]} if variant == "multi_d" else {}
    return Candidate(origin, {"kind": GEMM, "variant": variant, "datatype": datatype, "layout": layout, "arch": arch,
                              **extra, **knobs})


def _product(table: dict[str, list[Any]]) -> Iterator[dict[str, Any]]:
    return (dict(zip(table, values)) for values in itertools.product(*table.values()))


# --- gemm-default ---------------------------------------------------------------------------------------

def _traits() -> list[dict[str, Any]]:
    """CK's trait list: the product of the trait lists less what TraitConfigBase.is_valid drops."""
    t = data("gemm_default")
    return [tr for tr in _product(t["trait"])
            if not (tr["scheduler"] == "interwave" and tr["pipeline"] in t["trait_check"]["no_interwave"])]


@functools.cache
def _tiles(datatype: str, arch: str, preshuffle: bool) -> tuple[Tile, ...]:
    """The tiles CK's generator keeps: its shared tile list (standard and multi-D check the same again),
    and of those, for preshuffle, the ones that pass its preshuffle checks too."""
    if preshuffle:
        return tuple(t for t in _tiles(datatype, arch, False) if _ck_keeps(t, datatype, arch, True))
    raw = data("gemm_default")["tile"]
    return tuple(t for t in itertools.product(*(raw[f] for f in TILE_FIELDS)) if _ck_keeps(t, datatype, arch, False))


def _ck_keeps(tile: Tile, datatype: str, arch: str, preshuffle: bool) -> bool:
    """CK's TileConfig.is_valid and non-strict ArchFilter check of one tile (`data/gemm_default.toml`)."""
    c = data("gemm_default")["arch_check"]
    block, waves, warp_tile = tile[:3], tile[3:6], tile[6:]
    if any(b % (w * wt) for b, w, wt in zip(block, waves, warp_tile)):
        return False
    spec = arch_spec(arch)
    checked = datatype if datatype in c["dtype_map"] else c["dtype_fallback"]
    table = (spec.preshuffle_warp_tiles if preshuffle else spec.warp_tiles).get(dtype_key(checked, checked))
    if waves not in spec.waves or (table is not None and warp_tile not in table):
        return False
    pipeline = c["preshuffle_pipeline" if preshuffle else "pipeline"]
    if (block[0] + block[1]) * block[2] * DTYPES[checked].size > c["lds_limit"][pipeline]:
        return False
    return not preshuffle or _preshuffle_ok(block, waves, warp_tile, DTYPES[datatype].size, c)


def _preshuffle_ok(block: Tile, waves: Tile, warp_tile: Tile, size: int, c: dict[str, Any]) -> bool:
    """is_preshuffle_config_valid: whole 16-byte loads per lane and the M0 x M1 x M2 split of tile_m."""
    wave, load = c["preshuffle_wave"], c["preshuffle_load_bytes"]
    m_iter = block[0] // (waves[0] * warp_tile[0])
    if warp_tile[0] * warp_tile[2] * size * m_iter % (wave * load):
        return False
    k1 = load // size
    if block[2] % k1 or wave % (block[2] // k1):
        return False
    return block[0] % (waves[0] * waves[1] * waves[2] * (wave // (block[2] // k1))) == 0


def default_candidates(selection: Selection) -> list[Candidate]:
    """CK's generator run per requested variant and datatype (tile-major, as CK loops)."""
    t = data("gemm_default")
    variants, datatypes = axes(selection)
    traits = _traits()
    src, forced = t["preshuffle"]["source"], t["preshuffle"]["forced"]
    per_variant = {
        "standard": traits,
        "preshuffle": [dict(tr, **forced) for tr in traits if all(tr[k] == v for k, v in src.items())],
        "multi_d": [dict(tr, **ops) for tr in traits for ops in _product(t["multi_d"])],
    }
    out: list[Candidate] = []
    # CK's generator at that commit builds neither batched nor Stream-K kernels
    for variant in (v for v in variants if v in per_variant):
        for dtype in datatypes:
            configs = ({**dict(zip(TILE_FIELDS, tile)), **trait}
                       for tile in _tiles(dtype, selection.arch, variant == "preshuffle")
                       for trait in per_variant[variant])
            out += [gemm_candidate(f"gemm-default/{variant}/{dtype}[{i}]", variant, dtype, t["layout"], selection.arch,
                                   **knobs) for i, knobs in enumerate(configs)]
    return out


# --- preselected sets -----------------------------------------------------------------------------------

PRESELECTED: tuple[str, ...] = tuple(data("gemm_preselected")["sets"])


def _configs(name: str) -> Iterable[dict[str, Any]]:
    """A set's configs in CK's order, with the sets it concatenates expanded."""
    s = data("gemm_preselected")["sets"][name]
    for included in s.get("includes", []):
        yield from _configs(included)
    yield from s.get("configs", [])


def preselected_candidates(name: str, selection: Selection) -> list[Candidate]:
    """CK's preselected set `name`, as the selection's variants and datatypes filter it."""
    p = data("gemm_preselected")
    variants, datatypes = axes(selection)
    dtype = p["sets"][name]["datatype"]
    out = []
    for i, config in enumerate(_configs(name)):
        variant = config.get("variant", "standard")
        if variant not in variants or dtype not in datatypes:
            continue
        knobs = {**p["bases"][config["base"]], **dict(zip(TILE_FIELDS, config["tile"])),
                 **{k: v for k, v in config.items() if k not in ("base", "tile", "variant")}}
        out.append(gemm_candidate(f"{name}[{i}]", variant, dtype, p["layout"], selection.arch, **knobs))
    return out
