"""`gemm-full`: CK tile_engine's full GEMM search space per datatype and layout, with padded kernels
(`data/gemm_full.toml`, which names the CK files and commits).

Per variant, datatype and layout (CK's dispatcher order: datatype, then layout), every tile of the
space's tile product is proposed with every trait of its trait product, every knob set its variant's
line adds (a list value is swept) and every padding of the data's list. A tile that ckast's rules refuse whatever its traits and padding (every rule that
refuses it reads only the tile, the datatype, the layout and the arch) is proposed once, with the
first trait and no padding, so it is refused by name without repeating the refusal for each trait.
Enumerating is arithmetic on the data and one rule check per tile: no C++ is built to list the set.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Any

from ckast.arch.rules import GEMM_VARIANTS, RULES
from ckast.config import resolve_kernel
from ckast.config.knobs import GEMM

from .conv_common import data
from .gemm_sets import TILE_FIELDS, gemm_candidate
from .selection import Candidate, Selection, SelectionError

NAME = "gemm-full"
TILE_LEVEL = frozenset({*TILE_FIELDS, "kind", "variant", "datatype", "layout", "arch", "ck_api"})
"""The knobs a tile's probe shares with every config of the tile: a rule that reads only these
refuses the whole tile."""


@functools.cache
def space() -> dict[str, Any]:
    """The data file, checked: its variants are GEMM variants ckast has, its datatypes and layouts
    GEMM ones (a packaged file: a failure here is a defect of the package)."""
    from ckast.config.knobs import DATATYPES, GEMM_LAYOUTS

    s = data("gemm_full")
    for field, have, allowed in (("variants", s["variants"], GEMM_VARIANTS), ("datatypes", s["datatypes"], DATATYPES[GEMM]),
                                 ("layouts", s["layouts"], GEMM_LAYOUTS)):
        unknown = [v for v in have if v not in allowed]
        if unknown:
            raise SelectionError(f"data/gemm_full.toml: {field}: {', '.join(unknown)} not among {', '.join(allowed)}")
    return s


def summary() -> str:
    return str(space()["summary"])


def _axes(selection: Selection) -> tuple[list[str], list[str]]:
    s = space()
    for dtype in selection.datatypes:
        if dtype not in s["datatypes"]:
            raise SelectionError(f"datatype {dtype!r} is not in rule set {NAME}; it has: {', '.join(s['datatypes'])}")
    for variant in selection.variants:
        if variant not in s["variants"]:
            raise SelectionError(f"variant {variant!r} is not in rule set {NAME}; it has: {', '.join(s['variants'])}")
    return ([v for v in s["variants"] if selection.wants(variant=v)],
            [d for d in s["datatypes"] if selection.wants(datatype=d)])


@functools.cache
def _tile_level_rules() -> frozenset[str]:
    return frozenset(r.id for r in RULES if set(r.reads) <= TILE_LEVEL)


def _tile_refused(knobs: dict[str, Any], selection: Selection) -> bool:
    """Whether the rules refuse this tile for every trait and padding: its probe is refused, and only
    by rules that read no knob the traits or padding set."""
    defaults = {"arch": selection.arch, "ck_api": selection.ck_api}
    r = resolve_kernel(knobs, NAME, defaults)
    if r.config is None or not r.issues:
        return False
    return all(i.rule in _tile_level_rules() for i in r.issues)


def candidates(selection: Selection) -> list[Candidate]:
    s = space()
    variants, datatypes = _axes(selection)
    tiles = list(_product({f: s["tile"][f] for f in TILE_FIELDS}))
    traits = list(_product(s["trait"]))
    pads = [dict(zip(("pad_m", "pad_n", "pad_k"), p)) for p in s["padding"]["pads"]]
    out: list[Candidate] = []
    for variant in variants:
        for dtype in datatypes:
            for layout in s["layouts"]:
                group = f"{NAME}/{variant}/{dtype}/{layout}"
                configs: list[dict[str, Any]] = []
                added = _variant_knobs(s["variants"][variant])
                for tile in tiles:
                    probe = {**tile, **traits[0], **pads[0], **added[0]}
                    if _tile_refused({"kind": GEMM, "variant": variant, "datatype": dtype, "layout": layout, **probe},
                                     selection):
                        configs.append(probe)
                        continue
                    configs += [{**tile, **trait, **pad, **more} for trait in traits for more in added for pad in pads]
                out += [gemm_candidate(f"{group}[{i}]", variant, dtype, layout, selection.arch, **knobs)
                        for i, knobs in enumerate(configs)]
    return out


def _variant_knobs(knobs: dict[str, Any]) -> list[dict[str, Any]]:
    """The knob sets a variant's line adds: a list value is swept, any other value is fixed."""
    return list(_product({k: v if isinstance(v, list) else [v] for k, v in knobs.items()}))


def _product(table: dict[str, list[Any]]) -> Iterator[dict[str, Any]]:
    """Every combination of the table's values, the last key varying fastest."""
    return (dict(zip(table, values)) for values in itertools.product(*table.values()))
