"""`gemm-full`: CK tile_engine's full GEMM search space per datatype and layout, with padded kernels
(`data/gemm_full.toml`, which names the CK files and commits).

Per variant, datatype and layout (CK's dispatcher order: datatype, then layout), every tile of the
space's tile product is proposed with every trait of its trait product, every knob set its variant's
line adds (a list value is swept) and every padding of the data's list. What ckast's rules refuse
whatever the rest is proposed once, so it is refused by name without the refusal repeated for each
combination: a tile refused only by rules that read nothing but the tile (and the datatype, layout
and arch), with the first trait and no padding; a trait refused only by rules that read nothing but
the trait, the variant's knobs and the padding, with the first tile the rules accept. What CK's sweep
leaves out although ckast's rules accept it (the data's `gates`: wave layouts outside tile_engine's
table, CShuffle stores CK found wrong) is proposed and refused by the gate's id. Enumerating is
arithmetic on the data and a rule check per tile and per trait: no C++ is built to list the set.
An opt-in variant (batched) is the set's only when the selection names it.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Any

import attrs

from ckast.arch.rules import GEMM_VARIANTS, RULES
from ckast.config import resolve_kernel
from ckast.config.knobs import DATATYPES, GEMM, GEMM_LAYOUTS

from .conv_common import data
from .gemm_sets import TILE_FIELDS, axes, gemm_candidate
from .selection import Candidate, Selection, SelectionError

NAME = "gemm-full"
PADS = ("pad_m", "pad_n", "pad_k")
FIXED = frozenset({"kind", "variant", "datatype", "layout", "arch", "ck_api"})
"""The knobs every config of one (variant, datatype, layout) of the set shares."""


@functools.cache
def space() -> dict[str, Any]:
    """The data file, checked: its variants are GEMM variants ckast has, its datatypes and layouts
    GEMM ones (a packaged file: a failure here is a defect of the package)."""
    s = data("gemm_full")
    for field, allowed in (("variants", GEMM_VARIANTS), ("datatypes", DATATYPES[GEMM]), ("layouts", GEMM_LAYOUTS),
                           ("opt_in", s["variants"])):
        have = s[field]["variants"] if field == "opt_in" else s[field]
        unknown = [v for v in have if v not in allowed]
        if unknown:
            raise SelectionError(f"data/gemm_full.toml: {field}: {', '.join(unknown)} not among {', '.join(allowed)}")
    return s


def _axes(selection: Selection) -> tuple[list[str], list[str]]:
    """(variants, datatypes) of the set the selection asks for; a GEMM datatype or variant the set has
    not yields nothing (as in the other GEMM sets), one that is not a GEMM one is refused."""
    s = space()
    variants, datatypes = axes(selection)
    named = set(selection.variants)
    return ([v for v in s["variants"] if v in variants and (v in named or v not in s["opt_in"]["variants"])],
            [d for d in s["datatypes"] if d in datatypes])


def _refused_by_only(knobs: dict[str, Any], selection: Selection, reads: frozenset[str]) -> bool:
    """Whether the rules refuse `knobs` (one config of the set), and each rule that does reads only `reads`
    (so every config that agrees with it there is refused as well)."""
    r = resolve_kernel(knobs, NAME, {"arch": selection.arch, "ck_api": selection.ck_api})
    if r.config is None or not r.issues:
        return False
    return all(i.rule in _rules_within(reads) for i in r.issues)


@functools.cache
def _rules_within(reads: frozenset[str]) -> frozenset[str]:
    return frozenset(r.id for r in RULES if set(r.reads) <= reads)


def candidates(selection: Selection) -> list[Candidate]:
    s = space()
    variants, datatypes = _axes(selection)
    tiles = list(_product({f: s["tile"][f] for f in TILE_FIELDS}))
    pads = [dict(zip(PADS, p)) for p in s["padding"]["pads"]]
    gates = s["gates"]
    out: list[Candidate] = []
    for variant in variants:
        added = _variant_knobs(s["variants"][variant])
        traits = [{**trait, **more, **pad} for trait in _product(s["trait"]) for more in added for pad in pads]
        tile_level = FIXED | set(TILE_FIELDS)
        trait_level = FIXED | set(traits[0])
        for dtype in datatypes:
            for layout in s["layouts"]:
                fixed = {"kind": GEMM, "variant": variant, "datatype": dtype, "layout": layout}
                configs: list[tuple[dict[str, Any], tuple[str, str] | None]] = []
                live = traits  # the traits not yet found refused whatever the tile
                for tile in tiles:
                    if _refused_by_only({**fixed, **tile, **traits[0]}, selection, tile_level):
                        configs.append(({**tile, **traits[0]}, None))
                        continue
                    waves = _waves_gate(gates["waves"], selection.arch, tile)
                    if waves is not None:
                        configs.append(({**tile, **traits[0]}, waves))
                        continue
                    if live is traits:
                        live = [t for t in traits
                                if not _refused_by_only({**fixed, **tile, **t}, selection, trait_level)]
                        configs += [({**tile, **t}, None) for t in traits if t not in live]
                    configs += [({**tile, **t}, _config_gate(gates, selection.arch, tile, t)) for t in live]
                group = f"{NAME}/{variant}/{dtype}/{layout}"
                out += [attrs.evolve(gemm_candidate(f"{group}[{i}]", variant, dtype, layout, selection.arch, **knobs),
                                     refusal=refusal)
                        for i, (knobs, refusal) in enumerate(configs)]
    return out


def _waves_gate(table: dict[str, list[list[int]]], arch: str, tile: dict[str, Any]) -> tuple[str, str] | None:
    """sweep.waves: CK's sweep keeps the wave layouts of tile_engine's table for the arch (all without one)."""
    kept = [tuple(w) for w in table.get(arch, [])]
    waves = (tile["warp_m"], tile["warp_n"], tile["warp_k"])
    if not kept or waves in kept:
        return None
    return ("sweep.waves", f"waves {'x'.join(map(str, waves))} are not in CK's sweep on {arch}; it keeps "
                           f"{', '.join('x'.join(map(str, w)) for w in kept)}")


def _config_gate(gates: dict[str, Any], arch: str, tile: dict[str, Any],
                 trait: dict[str, Any]) -> tuple[str, str] | None:
    """CK's sweep gates of one config beyond its waves (sweep.cshuffle_store, sweep.gfx1250_compv3)."""
    if trait["epilogue"] == "cshuffle":
        for d in "mn":
            repeat = tile[f"tile_{d}"] // (tile[f"warp_{d}"] * tile[f"warp_tile_{d}"])
            if repeat > 1 and repeat % 2 and tile[f"warp_tile_{d}"] == gates["cshuffle_store"]["warp_tile"]:
                return ("sweep.cshuffle_store", f"{d.upper()} repeat {repeat} per wave over warp_tile_{d} "
                                                f"{tile[f'warp_tile_{d}']} with the CShuffle epilogue")
    g = gates["gfx1250_compv3"]
    if (arch == g["arch"] and trait["pipeline"] == g["pipeline"] and trait["scheduler"] == g["scheduler"]
            and tile["warp_m"] * tile["warp_n"] == g["waves_mn"]):
        return ("sweep.gfx1250_compv3", f"{g['pipeline']} {g['scheduler']} with {g['waves_mn']} waves on {arch}")
    return None


def _variant_knobs(knobs: dict[str, Any]) -> list[dict[str, Any]]:
    """The knob sets a variant's line adds: a list value is swept, any other value is fixed."""
    return list(_product({k: v if isinstance(v, list) else [v] for k, v in knobs.items()}))


def _product(table: dict[str, list[Any]]) -> Iterator[dict[str, Any]]:
    """Every combination of the table's values, the last key varying fastest."""
    return (dict(zip(table, values)) for values in itertools.product(*table.values()))
