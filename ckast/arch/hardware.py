"""Hardware profiles per arch (packaged data, `hardware.toml`), each figure with its public source.

`hardware(arch)` is the profile of the product `hardware.toml` names for `arch`; its LDS size,
wavefront size and family come from `archs.toml` (one source per fact). Peak matrix throughput per
datatype is derived: FLOPS per clock per CU of the family x CUs x peak clock; `mfma_full_rate_k` is the
K of a 16x16 MFMA that reaches it, per datatype (of the families that have a slower, smaller-K MFMA).
`ck_engine_hardware(recorded)` is what CK's feature engines use when a model's `feature_spec.json`
records no (or only some) hardware: CK's constructor defaults, overridden by what it records.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import attrs

from ckast.data_files import load_toml

from .specs import ARCH_NAMES, arch_spec

FIGURES = (
    "num_cus", "simds_per_cu", "shader_engines", "max_clock_mhz", "max_waves_per_cu", "wavefront_size",
    "lds_bytes", "l1_cache_kb", "l2_cache_kb", "l3_cache_kb", "num_xcd",
)
"""The scalar figures of a profile (CK's hardware features, LDS in bytes)."""
FROM_ARCHS = {"lds_bytes": "lds_bytes", "wavefront_size": "warp_size"}
"""Figures `archs.toml` holds (figure -> ArchSpec field)."""
CK_RECORDED = {"lds_capacity": "lds_bytes"}
"""CK's names of figures in a model's recorded `hardware` that ckast names otherwise."""
ARCHS_SOURCE = "ckast/arch/archs.toml (CK's dispatcher arch specs)"


@attrs.frozen
class Hardware:
    """One GPU. `peak_tflops`: dense matrix peak per datatype (absent: no public figure, or a type
    the matrix cores do not take); `hbm_gbps` is None where no figure is public (gfx1250).
    `mfma_full_rate_k`: per datatype, the K of a 16x16 MFMA at the peak rate (absent: none slower).
    `sources`: figure name (and `peak_tflops.<dtype>`, `mfma_full_rate_k.<dtype>`) -> its source."""

    arch: str
    product: str
    num_cus: int
    simds_per_cu: int
    shader_engines: int
    max_clock_mhz: int
    max_waves_per_cu: int
    wavefront_size: int
    lds_bytes: int
    l1_cache_kb: int
    l2_cache_kb: int
    l3_cache_kb: int
    num_xcd: int
    hbm_gbps: float | None
    peak_tflops: Mapping[str, float]
    mfma_full_rate_k: Mapping[str, int]
    sources: Mapping[str, str] = attrs.field(repr=False)

    @property
    def total_simds(self) -> int:
        return self.num_cus * self.simds_per_cu


_RAW = load_toml(Path(__file__).with_name("hardware.toml"))


def _cite(entry: Mapping[str, Any]) -> str:
    source = _RAW["sources"][entry["source"]]
    return f"{source} ({entry['note']})" if "note" in entry else source


@functools.cache
def hardware(arch: str) -> Hardware:
    """The hardware profile of `arch` (an arch of archs.toml)."""
    if arch not in ARCH_NAMES:
        raise KeyError(f"no hardware profile for {arch!r}; known: {', '.join(ARCH_NAMES)}")
    raw, spec = _RAW["archs"][arch], arch_spec(arch)
    figures: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name in FIGURES:
        if name in FROM_ARCHS:
            figures[name] = getattr(spec, FROM_ARCHS[name])
            sources[name] = ARCHS_SOURCE
        else:
            figures[name], sources[name] = raw[name]["value"], _cite(raw[name])
    hbm = raw.get("hbm_gbps")
    if hbm is not None:
        sources["hbm_gbps"] = _cite(hbm)
    peaks = {}
    for dtype, rate in _RAW["matrix_flops_per_clock_per_cu"].get(spec.family, {}).items():
        peaks[dtype] = rate["value"] * figures["num_cus"] * figures["max_clock_mhz"] * 1e-6
        sources[f"peak_tflops.{dtype}"] = (f"{rate['value']} FLOPS/clock/CU x num_cus x max_clock_mhz; "
                                           f"the rate: {_cite(rate)}")
    full_k = {}
    for dtype, k in _RAW["mfma_full_rate_k"].get(spec.family, {}).items():
        full_k[dtype] = k["value"]
        sources[f"mfma_full_rate_k.{dtype}"] = _cite(k)
    return Hardware(arch, raw["product"], **figures, hbm_gbps=None if hbm is None else float(hbm["value"]),
                    peak_tflops=MappingProxyType(peaks), mfma_full_rate_k=MappingProxyType(full_k),
                    sources=MappingProxyType(sources))


def ck_engine_hardware(recorded: Mapping[str, int] | None = None) -> Hardware:
    """The hardware CK's feature engines compute with: their constructor defaults (`[ck_engine]`),
    overridden by a model's recorded `hardware` (CK's keys: num_cus, lds_capacity, ...). Bandwidth
    and peak rates, which CK's engines do not have, are those of gfx950, the arch CK's defaults
    describe."""
    recorded = {CK_RECORDED.get(k, k): v for k, v in (recorded or {}).items()}
    unknown = sorted(set(recorded) - set(FIGURES))
    if unknown:
        raise KeyError(f"unknown hardware figure(s) {', '.join(unknown)}; known: {', '.join(FIGURES)}")
    base = hardware("gfx950")
    defaults = _RAW["ck_engine"]
    figures = {name: int(recorded.get(name, defaults[name]["value"])) for name in FIGURES}
    sources = {**base.sources, **{name: "recorded in the model's feature_spec.json" if name in recorded
                                  else _cite(defaults[name]) for name in FIGURES}}
    return attrs.evolve(base, product="CK feature-engine hardware", **figures, sources=MappingProxyType(sources))
