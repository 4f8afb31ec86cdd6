"""What the grouped-conv rule sets share: their data files, the selection's axes, and the knob
object of one candidate."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from ckast.arch.rules import CONV_VARIANTS, DEPTHWISE
from ckast.config.knobs import CONV, DATATYPES
from ckast.data_files import load_toml

from .selection import Candidate, Selection, SelectionError

DATA = Path(__file__).with_name("data")
CK_ORDER = ("forward", DEPTHWISE, "bwd_data", "bwd_weight")
"""CK emits the depthwise configs right after the forward ones."""
NDIMS = (2, 3)
"""Spatial ranks a conv library has when the selection names none (CK's default)."""

Triple = tuple[int, int, int]


@functools.cache
def data(name: str) -> dict[str, Any]:
    """A packaged rule-set data file (`data/<name>.toml`), read once per process."""
    return load_toml(DATA / f"{name}.toml")


def axes(selection: Selection) -> tuple[tuple[str, ...], tuple[int, ...], tuple[str, ...]]:
    """(variants, ranks, datatypes) the selection asks for, in CK's loop order."""
    for dtype in selection.datatypes:
        if dtype not in DATATYPES[CONV]:
            raise SelectionError(f"datatype {dtype!r} is not a grouped-conv datatype; allowed: {', '.join(DATATYPES[CONV])}")
    for variant in selection.variants:
        if variant not in (*CONV_VARIANTS, DEPTHWISE):
            raise SelectionError(f"variant {variant!r} is not a grouped-conv variant; "
                                 f"allowed: {', '.join((*CONV_VARIANTS, DEPTHWISE))}")
    variants = tuple(v for v in CK_ORDER if selection.wants(variant=v))
    return variants, tuple(n for n in NDIMS if selection.wants(ndim=n)), \
        tuple(d for d in DATATYPES[CONV] if selection.wants(datatype=d))


def triple(value: list[int]) -> Triple:
    a, b, c = value
    return (a, b, c)


def tile_knobs(tile: Triple, waves: Triple, warp_tile: Triple) -> dict[str, int]:
    return {**{f"tile_{d}": v for d, v in zip("mnk", tile)}, **{f"warp_{d}": v for d, v in zip("mnk", waves)},
            **{f"warp_tile_{d}": v for d, v in zip("mnk", warp_tile)}}


def conv_candidate(origin: str, variant: str, ndim: int, datatype: str, arch: str, **knobs: Any) -> Candidate:
    """A grouped-conv kernel object with the given knobs (the rest take the config language's defaults)."""
    return Candidate(origin, {"kind": CONV, "variant": variant, "ndim_spatial": ndim, "datatype": datatype,
                              "arch": arch, **knobs})
