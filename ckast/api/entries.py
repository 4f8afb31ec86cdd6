"""A profile's catalog as `ckast api` compares it: one `Entry` per template, enum, type and function.

Parameters come from the loaded `Profile` (so defaults and value types are resolved to fully qualified
names exactly as ckast prints them); `include` and `source` come from the profile's tables. A profile is
named (packaged) or given as the path of a `.toml` file (a draft under review).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import attrs

from ckast import nodes as n
from ckast.catalog import CatalogError, load_profile, load_profile_file, profile_names, profile_tables

from .model import EnumInfo, Info, NameInfo, ParamInfo, TemplateInfo, Where, normalize

TABLES = ("templates", "enums", "types", "functions")
TREE_PREFIX = "ck_tile/"
"""Entries whose `source` lies under this path are CK Tile's and are checked against an include tree; the
others (the standard library, HIP, CK's separate dispatcher library) are not."""


@attrs.frozen
class Entry:
    key: str
    table: str
    include: str
    source: str
    info: Info

    @property
    def in_tree(self) -> bool:
        return self.source.startswith(TREE_PREFIX)


@attrs.frozen
class Catalog:
    """One profile's entries by key, what it marks absent (with the reason) and its feature flags."""

    name: str
    base: str | None
    entries: dict[str, Entry]
    absent: dict[str, str]
    features: dict[str, bool]

    def umbrellas(self) -> list[str]:
        """The include headers the entries checked against a tree name."""
        return sorted({e.include for e in self.entries.values() if e.in_tree})


def profile_ref(text: str) -> str | Path:
    """A packaged profile name, or the path of a profile file (`*.toml`)."""
    if text in profile_names() or not text.endswith(".toml"):
        return text
    return Path(text)


def load_catalog(ref: str | Path) -> Catalog:
    """The catalog of a packaged profile or profile file (CatalogError if it does not load)."""
    if isinstance(ref, Path) and not ref.is_file():
        raise CatalogError(f"no profile file {ref}")
    profile = load_profile_file(ref) if isinstance(ref, Path) else load_profile(ref)
    tables = profile_tables(ref)
    entries: dict[str, Entry] = {}
    for table in TABLES:
        for key, raw in tables.get(table, {}).items():
            where = Where(raw.get("source", raw.get("include", "")))
            if table == "templates":
                info: Info = _template(profile.template(key), raw, where)
            elif table == "enums":
                spec = profile.enum(key)
                info = EnumInfo(raw["qualname"], spec.scoped, spec.values, where)
            else:
                info = NameInfo(raw["qualname"], "type" if table == "types" else "function", where)
            entries[key] = Entry(key, table, raw.get("include", ""), where.file, info)
    info = tables["profile"]
    return Catalog(info["name"], info.get("base"), entries, dict(tables.get("absent", {})),
                   dict(tables.get("features", {})))


def _template(sig: n.Signature, raw: dict[str, Any], where: Where) -> TemplateInfo:
    raws = {p["name"]: p for p in raw.get("params", ())}
    params = tuple(_param(p, raws[p.name]) for p in sig.params)
    return TemplateInfo("::".join(sig.qualname), sig.kind, params, where)


def _param(p: n.Param, raw: dict[str, Any]) -> ParamInfo:
    if p.kind == "enum":
        ctype = "::".join(p.enum.qualname)  # type: ignore[union-attr]
    else:
        ctype = normalize(n.to_source(p.ctype)) if p.ctype is not None else ""
    return ParamInfo(p.name, p.kind, ctype, default=default_text(p.default, raw))


def default_text(default: n.Node | None, raw: dict[str, Any]) -> str | None:
    """A catalog default in the form `parse` gives header defaults: names fully qualified, enumerators
    as `Enum::value`; `header_default` (a default the catalog cannot express as a value) verbatim."""
    if "header_default" in raw:
        return normalize(raw["header_default"])
    if default is None:
        return None
    if isinstance(default, n.ParamRef):
        return default.name
    if isinstance(default, n.EnumValue):
        return "::".join((*default.spec.qualname, default.value))
    return normalize(n.to_source(default))


@functools.cache
def absent_qualname(key: str) -> str:
    """The qualified name an absent entity key stands for: as a packaged profile that has it names it,
    else `ck_tile::<key>`."""
    for name in profile_names():
        for table in TABLES:
            raw = profile_tables(name).get(table, {}).get(key)
            if raw is not None:
                return raw["qualname"]
    return f"ck_tile::{key}"
