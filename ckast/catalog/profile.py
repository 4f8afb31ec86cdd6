"""Loading API profiles into nodes: `Signature`, `EnumSpec` and `Symbol` objects."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ckast.nodes import (
    BoolLit,
    EnumSpec,
    EnumValue,
    Header,
    IntLit,
    Param,
    ParamRef,
    Signature,
    Symbol,
    TypeName,
    split_qualname,
    type_of,
)
from ckast.nodes.parse import ParseError, parse_type

from ckast.data_files import load_toml

from .errors import CatalogError, FeatureAbsent
from .members import Call, Members, calls_of, members_of
from .names import DEFAULT_PROFILE, PROFILES_DIR, profile_names

_ENTITY_TABLES = ("templates", "enums", "types", "functions")


@attrs.frozen
class DispatcherSupports:
    """What CK's dispatcher of a profile checks before it runs a kernel of one op kind (its backend's
    `supports()`): the rule set's name (`select.applicability.DISPATCHER_RULES` holds its conditions) and
    the backend header it was read from (repository, commit and path under dispatcher/include)."""

    rules: str
    repo: str
    commit: str
    source: str


@attrs.frozen
class Profile:
    """One CK API version: look entities up by key; absent ones are refused with the reason."""

    name: str
    description: str
    templates: Mapping[str, Signature]
    enums: Mapping[str, EnumSpec]
    symbols: Mapping[str, Symbol]
    features: Mapping[str, bool]
    absent: Mapping[str, str]
    warp_gemms: Mapping[str, frozenset[tuple[int, int, int]]] = attrs.field(factory=dict)
    """Warp tiles CK's WarpGemmDispatcher has, per "A_B_Acc" type key."""
    conv_pipelines_unusable: Mapping[str, str] = attrs.field(factory=dict)
    """Pipelines this CK's grouped-conv kernels cannot call, with the reason."""
    records: Mapping[str, Members] = attrs.field(factory=dict)
    """Members of the records (types and class templates) that list them, by key."""
    calls: Mapping[str, tuple[Call, ...]] = attrs.field(factory=dict)
    """Signatures of the functions and function templates that record them, by key."""
    dispatcher: Mapping[str, DispatcherSupports] = attrs.field(factory=dict)
    """CK's dispatcher's own check before it runs a kernel, per op kind (`gemm`, `grouped_conv`)."""

    def _lookup(self, table: Mapping[str, Any], key: str, what: str) -> Any:
        if key in table:
            return table[key]
        if key in self.absent:
            raise FeatureAbsent(f"{key} does not exist in CK API profile {self.name}: {self.absent[key]}")
        raise CatalogError(f"no {what} {key!r} in the catalog of CK API profile {self.name}")

    def template(self, key: str) -> Signature:
        return self._lookup(self.templates, key, "template")

    def enum(self, key: str) -> EnumSpec:
        return self._lookup(self.enums, key, "enum")

    def enum_value(self, key: str, value: str) -> EnumValue:
        return EnumValue(self.enum(key), value)

    def symbol(self, key: str) -> Symbol:
        return self._lookup(self.symbols, key, "type or function")

    def type(self, key: str) -> TypeName:
        """A plain catalog type (`half_t`, `RowMajor`, ...) as a type node."""
        return type_of(self.symbol(key))

    def record(self, key: str) -> Members:
        """The members the catalog lists for record `key`."""
        return self._lookup(self.records, key, "record with members")

    def call(self, key: str, *names: str) -> Call:
        """The signature of function `key` whose parameters are `names` (the only one when none are given)."""
        calls = self._lookup(self.calls, key, "function signature")
        found = [c for c in calls if not names and len(calls) == 1 or tuple(a.name for a in c.args) == names]
        if not found:
            listed = "; ".join(f"({', '.join(a.name for a in c.args)})" for c in calls)
            raise CatalogError(f"{key}({', '.join(names)}) is not a signature of {key} in CK API profile {self.name}: "
                               f"{listed}")
        return found[0]

    def enum_of(self, ctype: str) -> EnumSpec | None:
        """The catalog enum a C++ type names (`ck_tile::dispatcher::DataType`), if it is one."""
        return next((e for e in self.enums.values() if "::".join(e.qualname) == ctype), None)

    def dispatcher_supports(self, kind: str) -> DispatcherSupports:
        if kind not in self.dispatcher:
            raise CatalogError(f"CK API profile {self.name} does not say what its dispatcher checks for {kind} kernels "
                               "([dispatcher] table)")
        return self.dispatcher[kind]

    def feature(self, name: str) -> bool:
        if name not in self.features:
            raise CatalogError(f"CK API profile {self.name} does not define feature {name!r}")
        return self.features[name]


@functools.cache
def load_profile(name: str = DEFAULT_PROFILE) -> Profile:
    """Load (once per process) the named profile."""
    if name not in profile_names():
        raise CatalogError(f"unknown CK API profile {name!r}; known: {', '.join(profile_names())}")
    return _Builder(name, _merged(name)).build()


def load_profile_file(path: Path) -> Profile:
    """The profile in the TOML file at `path` (e.g. a draft of `ckast api new` under review); its base, if
    any, is a packaged profile."""
    data = profile_tables(path)
    return _Builder(data["profile"]["name"], data).build()


def profile_tables(ref: str | Path) -> dict[str, Any]:
    """The raw tables of a packaged profile (by name) or of a profile file, with its base folded in."""
    if isinstance(ref, Path):
        return _folded(load_toml(ref))
    if ref not in profile_names():
        raise CatalogError(f"unknown CK API profile {ref!r}; known: {', '.join(profile_names())}")
    return _merged(ref)


def _read(name: str) -> dict[str, Any]:
    return load_toml(PROFILES_DIR / f"{name}.toml")


def _merged(name: str) -> dict[str, Any]:
    """The raw tables of `name` with its base profile's entries folded in."""
    return _folded(_read(name))


def _folded(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with the entries of its base profile (if it names one) folded in."""
    base_name = data.get("profile", {}).get("base")
    if base_name is None:
        return data
    base = profile_tables(base_name)
    absent = data.get("absent", {})
    merged: dict[str, Any] = {"profile": data["profile"], "absent": absent}
    for table in _ENTITY_TABLES:
        entries = {k: v for k, v in base.get(table, {}).items() if k not in absent}
        entries.update(data.get(table, {}))
        merged[table] = entries
    for table in ("features", "warp_gemms", "dispatcher"):
        merged[table] = {**base.get(table, {}), **data.get(table, {})}
    merged["conv_pipelines_unusable"] = data.get("conv_pipelines_unusable", base.get("conv_pipelines_unusable", {}))
    return merged


class _Builder:
    """Turns merged raw tables into nodes, resolving defaults that name other entries."""

    def __init__(self, name: str, data: dict[str, Any]) -> None:
        self.name = name
        self.data = data
        self.enums: dict[str, EnumSpec] = {}
        self.symbols: dict[str, Symbol] = {}
        self.templates: dict[str, Signature] = {}
        self.by_qualname: dict[str, tuple[str, str]] = {}
        for table in _ENTITY_TABLES:
            for key, entry in data.get(table, {}).items():
                self.by_qualname[entry["qualname"]] = (table, key)
        self.absent_params: dict[str, list[tuple[str, str]]] = {}
        for key, reason in data.get("absent", {}).items():
            if "." in key:
                template, param = key.split(".", 1)
                self.absent_params.setdefault(template, []).append((param, reason))

    def fail(self, where: str, message: str) -> CatalogError:
        return CatalogError(f"catalog {self.name}, {where}: {message}")

    def build(self) -> Profile:
        for key, entry in self.data.get("enums", {}).items():
            self.enums[key] = EnumSpec(
                key,
                split_qualname(entry["qualname"]),
                tuple(entry["values"]),
                scoped=entry.get("scoped", True),
                header=self.header(entry),
                profile=self.name,
            )
        for table in ("types", "functions"):
            for key, entry in self.data.get(table, {}).items():
                self.symbols[key] = Symbol(key, split_qualname(entry["qualname"]), self.header(entry), self.name)
        for key in self.data.get("templates", {}):
            self.signature(key)
        records: dict[str, Members] = {}
        calls: dict[str, tuple[Call, ...]] = {}
        for table in ("types", "templates", "functions"):
            for key, entry in self.data.get(table, {}).items():
                found = members_of(entry)
                if found is not None:
                    records[key] = found
                signatures = calls_of(entry["qualname"].split("::")[-1], entry)
                if signatures:
                    calls[key] = tuple(self.typed(key, c) for c in signatures) if table == "functions" else signatures
        info = self.data["profile"]
        return Profile(
            name=self.name,
            description=info.get("description", ""),
            templates=dict(sorted(self.templates.items())),
            enums=dict(sorted(self.enums.items())),
            symbols=dict(sorted(self.symbols.items())),
            features=dict(sorted(self.data.get("features", {}).items())),
            absent=dict(sorted(self.data.get("absent", {}).items())),
            warp_gemms={key: frozenset((m, n, k) for m, n, k in tiles)
                        for key, tiles in sorted(self.data.get("warp_gemms", {}).items())},
            conv_pipelines_unusable=dict(sorted(self.data.get("conv_pipelines_unusable", {}).items())),
            records=dict(sorted(records.items())),
            calls=dict(sorted(calls.items())),
            dispatcher={kind: self.dispatcher_supports(kind, entry)
                        for kind, entry in sorted(self.data.get("dispatcher", {}).items())},
        )

    def dispatcher_supports(self, kind: str, entry: Any) -> DispatcherSupports:
        fields = [f.name for f in attrs.fields(DispatcherSupports)]
        if not isinstance(entry, dict) or sorted(entry) != sorted(fields) or not all(
                isinstance(v, str) for v in entry.values()):
            raise self.fail(f"dispatcher.{kind}", f"expected the strings {', '.join(fields)}")
        return DispatcherSupports(**entry)

    def typed(self, key: str, call: Call) -> Call:
        """`call` with its argument types parsed into nodes (functions, which emitted code declares)."""
        args = tuple(attrs.evolve(a, node=self.parse(a.type, f"functions.{key}.{a.name}", frozenset()))
                     for a in call.args)
        return attrs.evolve(call, args=args)

    @staticmethod
    def header(entry: Mapping[str, Any]) -> Header | None:
        return Header.parse(entry["include"]) if "include" in entry else None

    def signature(self, key: str, _active: frozenset[str] = frozenset()) -> Signature:
        if key in self.templates:
            return self.templates[key]
        if key in _active:
            raise self.fail(f"templates.{key}", "defaults refer to each other in a cycle")
        entry = self.data["templates"][key]
        params = tuple(self.param(key, raw, entry.get("params", ()), _active | {key}) for raw in entry.get("params", ()))
        try:
            sig = Signature(
                key,
                split_qualname(entry["qualname"]),
                entry.get("kind", "struct"),
                params,
                header=self.header(entry),
                profile=self.name,
                absent_params=tuple(sorted(self.absent_params.get(key, ()))),
            )
        except (ValueError, TypeError) as exc:
            raise self.fail(f"templates.{key}", str(exc)) from exc
        self.templates[key] = sig
        return sig

    def param(self, template: str, raw: Mapping[str, Any], siblings: Any, active: frozenset[str]) -> Param:
        where = f"templates.{template}.{raw.get('name')}"
        kind = raw["kind"]
        names = {p["name"] for p in siblings}
        default: Any = None
        if "default" in raw:
            value = raw["default"]
            if kind == "type":
                default = ParamRef(value) if value in names else self.parse(value, where, active)
            elif kind == "bool":
                default = BoolLit(value)
            elif kind == "int":
                default = IntLit(value)
            elif kind == "enum":
                default = EnumValue(self.enums[raw["enum"]], value)
        try:
            return Param(
                raw["name"],
                kind,
                ctype=self.parse(raw["ctype"], where, active) if "ctype" in raw else None,
                enum=self.enums[raw["enum"]] if "enum" in raw else None,
                default=default,
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise self.fail(where, str(exc)) from exc

    def parse(self, text: str, where: str, active: frozenset[str]):
        def resolve(qualname: tuple[str, ...]) -> Symbol | Signature | None:
            found = self.by_qualname.get("::".join(qualname))
            if found is None and len(qualname) == 1:  # a bare catalog key, e.g. "index_t"
                found = next(((t, qualname[0]) for t in _ENTITY_TABLES if qualname[0] in self.data.get(t, {})), None)
            if found is None:
                return None
            table, key = found
            if table == "templates":
                return self.signature(key, active)
            return self.symbols.get(key)

        try:
            return parse_type(text, resolve)
        except (ParseError, ValueError) as exc:
            raise self.fail(where, str(exc)) from exc
