"""The analytic model's calibrated constants per arch (packaged data, `calibration.toml`), each with the
measurements it was fitted on.

`calibration(arch)` is the table of `arch`, or of the arch `calibration.toml` names as `fallback` when it
has none (`Calibration.arch` says whose constants they are). The constants are physical (rates, latencies,
register counts; `ckast/select/models/analytic.py` says what each means in the model); `tools/calibrate_analytic.py`
fits them once on CK's published measurements and writes the file. Nothing is fitted at run time.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import attrs

from ckast.data_files import load_toml

from .specs import ARCH_NAMES

CONSTANTS = (
    "matrix_fraction", "feed_bytes_per_clock", "im2col_feed_cost", "lds_bytes_per_clock", "wave_issue",
    "tile_latency_us", "base_vgprs", "vgprs_per_lane", "wave_tail", "launch_us", "persistent_tile_us", "interwave_step",
)
"""The scalar constants of an arch's table (`calibration.toml`, `[archs.<arch>]`)."""
PATH = Path(__file__).with_name("calibration.toml")


@attrs.frozen
class Calibration:
    """One arch's constants (see `ckast/select/models/analytic.py`). `pipeline_step`: (pipeline, k-step cost
    relative to compv3) of the pipelines measured on an arch; `sources`: constant (`pipeline_step.<name>`
    for those) -> where its value comes from."""

    arch: str
    matrix_fraction: float
    feed_bytes_per_clock: float
    im2col_feed_cost: float
    lds_bytes_per_clock: float
    wave_issue: float
    tile_latency_us: float
    base_vgprs: float
    vgprs_per_lane: float
    wave_tail: float
    launch_us: float
    persistent_tile_us: float
    interwave_step: float
    pipeline_step: tuple[tuple[str, float], ...]
    sources: Mapping[str, str] = attrs.field(eq=False, repr=False)


def _cite(raw: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    source = raw["sources"][entry["source"]]
    return f"{source} ({entry['note']})" if "note" in entry else source


def parse(raw: Mapping[str, Any], arch: str) -> Calibration:
    """The table of `arch` in the parsed `calibration.toml` `raw` (KeyError when it has none)."""
    table = raw["archs"][arch]
    values = {name: float(table[name]["value"]) for name in CONSTANTS}
    sources = {name: _cite(raw, table[name]) for name in CONSTANTS}
    steps = table.get("pipeline_step", {})
    sources.update({f"pipeline_step.{p}": _cite(raw, entry) for p, entry in steps.items()})
    return Calibration(arch, **values, pipeline_step=tuple(sorted((p, float(e["value"])) for p, e in steps.items())),
                       sources=MappingProxyType(sources))


@functools.cache
def fitted_problems(arch: str) -> frozenset[str]:
    """The digests of the problems `arch`'s own constants were fitted on (`fitted_on.problems`; none for an arch
    that uses the fallback's table)."""
    raw = load_toml(PATH)
    return frozenset(raw["archs"].get(arch, {}).get("fitted_on", {}).get("problems", ()))


@functools.cache
def calibration(arch: str) -> Calibration:
    """The analytic model's constants for `arch` (an arch of archs.toml): its own, else the fallback arch's."""
    if arch not in ARCH_NAMES:
        raise KeyError(f"no calibration for {arch!r}; known archs: {', '.join(ARCH_NAMES)}")
    raw = load_toml(PATH)
    return parse(raw, arch if arch in raw["archs"] else raw["fallback"])
