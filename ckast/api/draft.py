"""Draft a new profile from a CK tree: a delta on an existing profile (`base = ...`), like ck-2026.06.

Entries of the base that match the tree are inherited as they are. Every other CK Tile entry is written
from the tree's declaration (or marked absent when the tree does not declare it), entities the base marks
absent but the tree declares are written too, and the base's absent marks that still hold are repeated
(a profile's `[absent]` is its own). Features, warp tiles and unusable conv pipelines stay the base's:
headers do not tell them. What was written is returned for review.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from ckast.nodes.templates import PARAM_KINDS

from .compare import closest, declarations_of, entry_rows, present_absent
from .entries import Catalog, absent_qualname
from .model import Declarations, EnumInfo, Info, NameInfo, ParamInfo, TemplateInfo

REVIEW = "to review (drafted by ckast api new)"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_INT = re.compile(r"-?[0-9]+")


@attrs.frozen
class Draft:
    text: str
    written: dict[str, str]
    """`table.key` -> why it was written from the headers (the kinds of mismatch)."""
    absent: dict[str, str]
    inherited: int
    kept: dict[str, str] = attrs.field(factory=dict)
    """Dispatcher entries that differ from the tree, inherited as they are: their members are edited by hand."""


def draft(name: str, base: Catalog, decls: Declarations, ck_include: Path) -> Draft:
    writer = _Writer(base, decls)
    inherited = 0
    kept: dict[str, str] = {}
    for entry in base.entries.values():
        if not entry.in_tree or entry.part == "dispatcher" and not decls.dispatcher:
            inherited += 1
            continue
        rows = entry_rows(entry, base, decls)
        if not rows:
            inherited += 1
            continue
        if entry.part == "dispatcher":
            inherited += 1
            kept[f"{entry.table}.{entry.key}"] = ", ".join(dict.fromkeys(f"{r.item} {r.what}".strip() for r in rows))
            continue
        found = [] if entry.include in decls.missing else declarations_of(entry, decls)
        why = ", ".join(dict.fromkeys(r.what for r in rows))
        if not found:
            writer.absent[entry.key] = f"not declared in {ck_include} ({why}); {REVIEW}"
            continue
        decl = closest(entry, base, found, decls)[0] if isinstance(entry.info, TemplateInfo) else found[0]  # type: ignore[arg-type]
        writer.entry(entry.key, entry.table, decl, entry.include, why)
    for key, decl in present_absent(base, decls).items():
        writer.entry(key, _table_of(decl), decl, None, "marked absent in the base profile, but declared")
    writer.keep_absent()
    header = [
        f"# ckast catalog: API profile {name}, drafted by `ckast api new` from the CK tree {ck_include}.",
        f"# Entries of {base.name} that match the tree are inherited; the tables below were written from the",
        f"# tree's declarations. Review them, and {base.name}'s features, warp_gemms and conv_pipelines_unusable,",
        "# which headers do not tell.",
        "",
        "[profile]",
        f"name = {_str(name)}",
        f"description = {_str(f'CK Tile at {ck_include}: draft from {base.name} by ckast api new, to review')}",
        f"base = {_str(base.name)}",
    ]
    body = [line for table in writer.tables for line in ("", *table)]
    if writer.absent:
        body += ["", "[absent]", *(f"{_key(k)} = {_str(v)}" for k, v in sorted(writer.absent.items()))]
    return Draft("\n".join([*header, *body]) + "\n", writer.written, writer.absent, inherited, kept)


class _Writer:
    def __init__(self, base: Catalog, decls: Declarations) -> None:
        self.base = base
        self.decls = decls
        self.tables: list[list[str]] = []
        self.written: dict[str, str] = {}
        self.params: dict[str, set[str]] = {}
        self.absent: dict[str, str] = {}
        self.enum_keys = {e.info.qualname: k for k, e in base.entries.items() if e.table == "enums"}
        self.umbrellas = base.umbrellas()

    def entry(self, key: str, table: str, decl: Info, include: str | None, why: str) -> None:
        if include is None or not self.decls.reaches(include, decl.where.file):
            include = next((u for u in self.umbrellas if self.decls.reaches(u, decl.where.file)), decl.where.file)
        lines = [f"[{table}.{_key(key)}]", f"# written from {decl.where} ({why})", f"qualname = {_str(decl.qualname)}"]
        if isinstance(decl, TemplateInfo):
            params = decl.params
            if decl.kind == "function" and key in self.base.entries:  # callers give the leading parameters only
                params = params[:len(self.base.entries[key].info.params)]  # type: ignore[union-attr]
            lines.append(f"kind = {_str(decl.kind)}")
        lines += [f"include = {_str(include)}", f"source = {_str(decl.where.file)}"]
        if isinstance(decl, EnumInfo):
            lines += [f"scoped = {_bool(decl.scoped)}", f"values = [{', '.join(map(_str, decl.values))}]"]
        if isinstance(decl, TemplateInfo):
            names = self.params[key] = {p.name for p in params}
            lines += ["params = [", *(f"  {{ {_inline(self.param(p, names))} }}," for p in params), "]"]
            for p in self.base.entries[key].info.params if key in self.base.entries else ():  # type: ignore[union-attr]
                if p.name not in names:
                    self.absent[f"{key}.{p.name}"] = f"not a parameter of {decl.qualname} in this tree; {REVIEW}"
            odd = [p.name for p in params if _catalog_kind(p) != p.kind]
            if odd:
                why += f"; written as typename, which the catalog cannot say they are: {', '.join(odd)}"
        self.tables.append(lines)
        self.written[f"{table}.{key}"] = why

    def param(self, p: ParamInfo, siblings: set[str]) -> dict[str, Any]:
        """The catalog's form of a parameter; a default it cannot hold as a value becomes `header_default`."""
        kind = _catalog_kind(p)
        out: dict[str, Any] = {"name": p.name, "kind": kind}
        if kind in ("int", "int_pack"):
            out["ctype"] = p.ctype
        if kind == "enum":
            out["enum"] = self.enum_key(p.ctype)
        if p.default is None:
            return out
        value: Any = None
        if kind == "bool" and p.default in ("true", "false"):
            value = p.default == "true"
        elif kind == "int" and _INT.fullmatch(p.default):
            value = int(p.default)
        elif kind == "enum" and p.default.startswith(f"{p.ctype}::"):
            value = p.default.removeprefix(f"{p.ctype}::")
        elif kind == p.kind == "type" and (p.default in siblings or _parses(p.default)):
            value = p.default
        out["default" if value is not None else "header_default"] = value if value is not None else p.default
        return out

    def enum_key(self, qualname: str) -> str:
        """The base's key for the enum, or a new enum entry written from the tree."""
        if qualname not in self.enum_keys:
            key = qualname.split("::")[-1]
            self.enum_keys[qualname] = key
            self.entry(key, "enums", self.decls.enums[qualname], None, "an enum new parameters use")
        return self.enum_keys[qualname]

    def keep_absent(self) -> None:
        """Repeat the base's absent marks that still hold."""
        for key, reason in self.base.absent.items():
            template, _, param = key.partition(".")
            if param:
                holds = param not in self.params.get(template, ())
            else:
                holds = not self.decls.declared(absent_qualname(key))
            if holds:
                self.absent.setdefault(key, reason)


def _catalog_kind(p: ParamInfo) -> str:
    """The parameter's kind if the catalog has it (type, int, bool, enum, type and int packs), else `type`."""
    return p.kind if p.kind in PARAM_KINDS else "type"


def _table_of(decl: Info) -> str:
    if isinstance(decl, TemplateInfo):
        return "templates"
    if isinstance(decl, EnumInfo):
        return "enums"
    assert isinstance(decl, NameInfo)
    return "types" if decl.kind == "type" else "functions"


def _parses(text: str) -> bool:
    from ckast.nodes.parse import ParseError, parse_type

    try:
        parse_type(text, lambda _: None)
    except (ParseError, ValueError):
        return False
    return True


def _inline(fields: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {_bool(v) if isinstance(v, bool) else v if isinstance(v, int) else _str(v)}"
                     for k, v in fields.items())


def _str(text: str) -> str:
    return json.dumps(text)  # a JSON string (ASCII, escaped) is a TOML basic string


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _str(key)


def review_lines(d: Draft, path: Path, base: str) -> Iterable[str]:
    yield f"{path}: draft profile; {d.inherited} entries inherited from {base} unchanged"
    if d.written:
        yield f"written from the tree's declarations ({len(d.written)}; review):"
        yield from (f"  {key}: {why}" for key, why in sorted(d.written.items()))
    if d.absent:
        yield f"marked absent ({len(d.absent)}):"
        yield from (f"  {key}: {why}" for key, why in sorted(d.absent.items()))
    if d.kept:
        yield f"dispatcher entries that differ, inherited as they are (edit their members by hand; {len(d.kept)}):"
        yield from (f"  {key}: {why}" for key, why in sorted(d.kept.items()))
