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
from ckast.catalog.members import Call, Members

from .model import (
    CallInfo,
    EnumInfo,
    Info,
    NameInfo,
    ParamInfo,
    RecordInfo,
    TemplateInfo,
    Where,
    normalize,
)
from .parts import TABLES, TREE_PREFIX, part


@attrs.frozen
class Entry:
    """One catalog entry: its declaration (`info`), the members it lists (`record`), the signatures of
    its overloads (`calls`, functions) and the macro it is declared under (`guard`)."""

    key: str
    table: str
    include: str
    source: str
    info: Info
    record: RecordInfo | None = None
    calls: tuple[CallInfo, ...] = ()
    guard: str = ""

    @property
    def in_tree(self) -> bool:
        return self.source.startswith(TREE_PREFIX)

    @property
    def part(self) -> str:
        """`tile` or `dispatcher` for entries a tree declares, else empty."""
        return part(self.source)


@attrs.frozen
class Catalog:
    """One profile's entries by key, what it marks absent (with the reason) and its feature flags."""

    name: str
    base: str | None
    entries: dict[str, Entry]
    absent: dict[str, str]
    features: dict[str, bool]

    def umbrellas(self, part: str = "tile") -> list[str]:
        """The include headers the entries of `part` (checked against a tree) name."""
        return sorted({e.include for e in self.entries.values() if e.part == part})

    def guards(self) -> list[str]:
        """The macros dispatcher entries are declared under."""
        return sorted({e.guard for e in self.entries.values() if e.part == "dispatcher" and e.guard})


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
            calls = tuple(map(call_info, profile.calls.get(key, ())))
            if table == "templates":
                info: Info = _template(profile.template(key), raw, where, calls[0] if calls else None)
            elif table == "enums":
                spec = profile.enum(key)
                info = EnumInfo(raw["qualname"], spec.scoped, spec.values, where)
            else:
                info = NameInfo(raw["qualname"], "type" if table == "types" else "function", where,
                                spelled=normalize(raw.get("aliased", "")))
            members = profile.records.get(key)
            record = record_info(raw["qualname"], members, where) if members is not None else None
            guard = next((c.guard for c in profile.calls.get(key, ()) if c.guard), "")
            entries[key] = Entry(key, table, raw.get("include", ""), where.file, info, record,
                                 calls if table == "functions" else (), guard)
    info = tables["profile"]
    return Catalog(info["name"], info.get("base"), entries, dict(tables.get("absent", {})),
                   dict(tables.get("features", {})))


def _template(sig: n.Signature, raw: dict[str, Any], where: Where, call: CallInfo | None) -> TemplateInfo:
    raws = {p["name"]: p for p in raw.get("params", ())}
    params = tuple(_param(p, raws[p.name]) for p in sig.params)
    return TemplateInfo("::".join(sig.qualname), sig.kind, params, where, call)


def call_info(call: Call) -> CallInfo:
    """A catalog signature in the form `parse` gives header signatures (text normalized)."""
    args = tuple(ParamInfo(a.name, "typed", normalize(a.type), default=None if a.default is None else normalize(a.default))
                 for a in call.args)
    return CallInfo(normalize(call.result), args, call.static, owner=call.declared_in)


def record_info(qualname: str, members: Members, where: Where) -> RecordInfo:
    """A catalog record's members in the form `parse` gives a header's."""
    def typed(args: Any) -> tuple[ParamInfo, ...]:
        return tuple(ParamInfo(a.name, "typed", normalize(a.type), default=None if a.default is None else normalize(a.default))
                     for a in args)

    return RecordInfo(qualname, typed(members.fields), tuple(map(call_info, members.constructors)),
                      tuple((m.name, call_info(m)) for m in members.methods), typed(members.aliases),
                      tuple(normalize(b) for b in members.bases), where)


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
