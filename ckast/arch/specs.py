"""The packaged arch data (`archs.toml`), loaded once into typed, read-only specs."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import attrs

from ckast.data_files import load_toml

Triple = tuple[int, int, int]


@attrs.frozen
class DtypeSpec:
    name: str
    size: int
    acc: str
    output: str


@attrs.frozen
class PipelineSpec:
    name: str
    cls: str
    base: str
    lds: str  # "double" or "single"
    lds_buffers: int = 1
    conv_policy: bool = False
    load_waves: int | None = None


@attrs.frozen
class ArchSpec:
    name: str
    family: str
    warp_size: int
    lds_bytes: int
    waves: tuple[Triple, ...]
    warp_tiles: Mapping[str, tuple[Triple, ...]]
    preshuffle_warp_tiles: Mapping[str, tuple[Triple, ...]]

    @property
    def uses_wmma(self) -> bool:
        """Warp-size-32 archs compute with WMMA instead of MFMA."""
        return self.warp_size == 32

    def lds_budget(self, pipeline: str, double_smem_buffer: bool) -> int:
        """LDS bytes the A and B block tiles may take under `pipeline`.

        A pipeline that double-buffers by construction gets half the LDS; so does any pipeline
        configured with `double_smem_buffer` (never halved twice).
        """
        budget = self.lds_bytes // PIPELINES[pipeline].lds_buffers
        return min(budget, self.lds_bytes // 2) if double_smem_buffer else budget


def _triples(rows: list[list[int]]) -> tuple[Triple, ...]:
    return tuple((a, b, c) for a, b, c in rows)


def _tables(raw: dict) -> Mapping[str, tuple[Triple, ...]]:
    return MappingProxyType({key: _triples(rows) for key, rows in raw.items()})


_RAW = load_toml(Path(__file__).with_name("archs.toml"))

DTYPES: Mapping[str, DtypeSpec] = MappingProxyType(
    {name: DtypeSpec(name, **fields) for name, fields in _RAW["dtypes"].items()}
)
PIPELINES: Mapping[str, PipelineSpec] = MappingProxyType({
    name: PipelineSpec(name, cls=fields["class"], **{k: v for k, v in fields.items() if k != "class"})
    for name, fields in _RAW["pipelines"].items()
})
PRESHUFFLE_PIPELINES: tuple[str, ...] = tuple(_RAW["preshuffle"]["pipelines"])
BACKWARD_EXCLUDED_PIPELINES: tuple[str, ...] = tuple(_RAW["conv"]["backward_excluded_pipelines"])
STREAMK_CONV_ARCHS: tuple[str, ...] = tuple(_RAW["conv"]["streamk_archs"])
STREAMK_GEMM_PIPELINES: tuple[str, ...] = tuple(_RAW["streamk_gemm"]["pipelines"])
STREAMK_GEMM_ARCHS: tuple[str, ...] = tuple(_RAW["streamk_gemm"]["archs"])
QUANT_ARCHS: tuple[str, ...] = tuple(_RAW["quant"]["archs"])
QUANT_MX_ARCHS: tuple[str, ...] = tuple(_RAW["quant"]["mx_archs"])
QUANT_EIGHT_WAVES: tuple[Triple, ...] = _triples(_RAW["quant"]["eight_waves"])
QUANT_WARP_TILE_MN: tuple[int, int] = (_RAW["quant"]["warp_tile_mn"][0], _RAW["quant"]["warp_tile_mn"][1])
QUANT_WARP_TILE_K: Mapping[str, tuple[int, ...]] = MappingProxyType(
    {arch: tuple(ks) for arch, ks in _RAW["quant"]["warp_tile_k"].items()})
_QUANT_FAMILIES = {family: spec for family, spec in _RAW["quant"].items() if isinstance(spec, dict)
                   and "datatypes" in spec}
QUANT_DATATYPES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {family: tuple(spec["datatypes"]) for family, spec in _QUANT_FAMILIES.items()})
"""Per quant family (variant): CK's variant keys, ckast's `datatype` values."""
QUANT_PIPELINES: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {family: MappingProxyType(dict(spec["pipelines"])) for family, spec in _QUANT_FAMILIES.items()})
"""Per quant family: pipeline name -> CK's pipeline class (catalog key)."""
QUANT_SCHEDULES: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {family: MappingProxyType(dict(spec["schedules"])) for family, spec in _QUANT_FAMILIES.items()
     if "schedules" in spec})
"""Per quant family whose pipelines implement one schedule each: pipeline name -> that schedule."""
QUANT_BASE_PIPELINES: Mapping[str, str] = MappingProxyType(
    {family: spec["base"] for family, spec in _QUANT_FAMILIES.items() if "base" in spec})
"""Per quant family whose launcher dispatches hot loop and tail on another base pipeline than its pipeline's."""
DEPTHWISE_BLOCK_SIZE: int = _RAW["depthwise"]["block_size"]
DEPTHWISE_DILATION: int = _RAW["depthwise"]["dilation"]
UNSUPPORTED_TRAITS: frozenset[tuple[str, str, str]] = frozenset(tuple(t) for t in _RAW["traits"]["unsupported"])
MIN_TILE: Mapping[str, Triple] = MappingProxyType({k: (v[0], v[1], v[2]) for k, v in _RAW["min_tile"].items()})

_SPECS: dict[str, ArchSpec] = {
    name: ArchSpec(
        name,
        family=fields["family"],
        warp_size=fields["warp_size"],
        lds_bytes=fields["lds_bytes"],
        waves=_triples(fields["waves"]),
        warp_tiles=_tables(fields["warp_tiles"]),
        preshuffle_warp_tiles=_tables(fields.get("preshuffle_warp_tiles", {})),
    )
    for name, fields in _RAW["archs"].items()
}
ARCH_NAMES: tuple[str, ...] = tuple(_SPECS)


def arch_spec(name: str) -> ArchSpec:
    return _SPECS[name]


def dtype_key(a: str, b: str) -> str:
    """The warp-tile table key of an (A, B) type pair: `A_B_Acc`."""
    return f"{a}_{b}_{DTYPES[a].acc}"
