"""What a library run asks for (`Selection`) and what a rule set proposes (`Candidate`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ckast.errors import CkastError


class SelectionError(CkastError, ValueError):
    """The selection cannot be served (unknown rule set, a datatype the set has not, a missing input)."""


def check_names(arch: str, profile: str) -> None:
    """SelectionError unless `arch` and the API profile `profile` (each when given) are names ckast knows."""
    from ckast.arch import ARCH_NAMES
    from ckast.catalog import profile_names

    if arch and arch not in ARCH_NAMES:
        raise SelectionError(f"unknown arch {arch!r}; known: {', '.join(ARCH_NAMES)}")
    if profile and profile not in profile_names():
        raise SelectionError(f"unknown CK API profile {profile!r}; known: {', '.join(profile_names())}")


@attrs.frozen
class Selection:
    """One library request: a rule set for an arch, or config files (`configs`; then `rule_set` and
    `arch` may be empty). Empty `datatypes`, `ndims` or `variants` mean: all the rule set has."""

    rule_set: str
    arch: str
    ck_api: str
    datatypes: tuple[str, ...] = ()
    ndims: tuple[int, ...] = ()
    variants: tuple[str, ...] = ()
    builder_conf: Path | None = None
    configs: tuple[Path, ...] = ()

    def wants(self, *, datatype: str | None = None, ndim: int | None = None, variant: str | None = None) -> bool:
        return ((datatype is None or not self.datatypes or datatype in self.datatypes)
                and (ndim is None or not self.ndims or ndim in self.ndims)
                and (variant is None or not self.variants or variant in self.variants))

    def as_dict(self) -> dict[str, Any]:
        """The selection as recorded in a manifest: no machine-specific paths (a config file is its name
        and the digest of its bytes), so a tree is the same wherever its inputs lie."""
        if self.configs:
            return {"configs": [file_record(p) for p in self.configs], "ck_api": self.ck_api}
        return {"rule_set": self.rule_set, "arch": self.arch, "ck_api": self.ck_api,
                "datatypes": list(self.datatypes), "ndims": list(self.ndims), "variants": list(self.variants)}

    def input_files(self) -> tuple[Path, ...]:
        """The files the selection reads (its config files, the builder .conf files), for the run key
        (`ckast.output.stamp.run_key`)."""
        conf = sorted(Path(self.builder_conf).rglob("*.conf")) if self.builder_conf is not None else []
        return (*self.configs, *conf)


def file_record(path: Path) -> dict[str, Any]:
    """A user's file as a manifest records it: its name and the digest of its bytes."""
    return {"file": path.name, "sha256": _digest(path)}


def _digest(path: Path) -> str | None:
    """The sha256 of a file's bytes; None when it cannot be read (the library build refuses it, exit 2)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


RULE_SET_REFUSALS: dict[str, str] = {
    "sweep.waves": "CK's GEMM sweep keeps only the wave layouts of tile_engine's table for the arch",
    "sweep.cshuffle_store": "CK's GEMM sweep leaves out CShuffle stores of an odd per-wave repeat over a 32-wide warp "
                            "tile (they store wrong results)",
    "sweep.gfx1250_compv3": "CK's GEMM sweep leaves out compv3 intrawave with 8 waves on gfx1250 (wrong results)",
}
"""A rule set's own refusals (id -> reason): configs ckast's rules accept that the CK generator the set
reproduces leaves out."""


@attrs.frozen
class Candidate:
    """A config a rule set proposes: knob name -> value (a kernel object of the config language),
    and where it came from (e.g. `full/bwd_weight/2d/fp16[12]`), used in every message about it.
    `refusal` is the set's own refusal of it (an id of `RULE_SET_REFUSALS`, what it finds), for a
    config ckast's rules accept but the set's CK generator leaves out."""

    origin: str
    knobs: Mapping[str, Any] = attrs.field(converter=lambda m: dict(sorted(m.items())))
    refusal: tuple[str, str] | None = None

    @property
    def category(self) -> str:
        """CK's feature category of the config (full-tests and tiny stratify by it)."""
        k = self.knobs
        if k.get("variant") == "forward_depthwise":
            return "depthwise"
        for knob, name in (("streamk_enabled", "streamk"), ("split_image", "split_image")):
            if k.get(knob):
                return name
        if k.get("num_groups_to_merge", 1) > 1:
            return "merged_groups"
        for knob in ("two_stage", "explicit_gemm"):
            if k.get(knob):
                return knob
        return "regular"
