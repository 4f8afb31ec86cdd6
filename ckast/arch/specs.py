"""Loading the packaged arch data."""

from __future__ import annotations

import tomllib
from pathlib import Path

import attrs


@attrs.frozen
class ArchSpec:
    name: str
    family: str
    warp_size: int


def _load() -> dict[str, ArchSpec]:
    with open(Path(__file__).with_name("archs.toml"), "rb") as fh:
        raw = tomllib.load(fh)
    return {name: ArchSpec(name, **fields) for name, fields in sorted(raw.items())}


_SPECS = _load()
ARCH_NAMES: tuple[str, ...] = tuple(_SPECS)


def arch_spec(name: str) -> ArchSpec:
    return _SPECS[name]
