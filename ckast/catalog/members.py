"""Members and signatures of catalog entities (CK's dispatcher declarations).

A record (a `types` or class `templates` entry) may list its data `fields` (nested structs' members as
dotted paths, after the struct member itself), `constructors`, `methods`, member type `aliases` and
`bases`; a function or function template its `result` and `args` (or several `overloads`), and the
`guard` macro it is declared under. Types and defaults are C++ text as CK writes them, every name fully
qualified (`const std::string&`, `ck_tile::dispatcher::GroupedConvKernelInstance::RunFn`, `"compv3"`).

Emitted code binds to these by name: a field by its path, a call's arguments by parameter name, put
in the catalog's order with trailing defaulted ones left out. A name the catalog lacks is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .errors import CatalogError


@attrs.frozen
class Arg:
    """A parameter, data member or member type alias: its name, type and default (C++ text)."""

    name: str
    type: str
    default: str | None = None
    node: Any = attrs.field(default=None, eq=False, repr=False)
    """The type as nodes (arguments of `functions` entries, which emitted code declares)."""


@attrs.frozen
class Call:
    """A function's, method's or constructor's signature (a constructor's `result` is empty).

    `declared_in` names the base class that declares an inherited method; `guard` the macro a
    declaration is under (`#ifdef`)."""

    name: str
    result: str = ""
    args: tuple[Arg, ...] = ()
    static: bool = False
    declared_in: str = ""
    guard: str = ""

    def bind(self, owner: str, **given: Any) -> list[Any]:
        """The given arguments in the catalog's order; those left out must have defaults and come last."""
        names = [a.name for a in self.args]
        where = f"{owner}({', '.join(names)})"
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise CatalogError(f"{where}: no parameter {unknown[0]!r}")
        out = []
        for i, a in enumerate(self.args):
            if a.name in given:
                out.append(given[a.name])
            elif a.default is None:
                raise CatalogError(f"{where}: parameter {a.name!r} has no default and is not given")
            elif any(b.name in given for b in self.args[i + 1:]):
                raise CatalogError(f"{where}: parameter {a.name!r} is left to its default before a given one")
        return out


@attrs.frozen
class Members:
    """A record's members as the catalog lists them."""

    fields: tuple[Arg, ...] = ()
    constructors: tuple[Call, ...] = ()
    methods: tuple[Call, ...] = ()
    aliases: tuple[Arg, ...] = ()
    bases: tuple[str, ...] = ()

    def field(self, owner: str, path: str) -> Arg:
        found = [f for f in self.fields if f.name == path]
        if not found:
            raise CatalogError(f"{owner} has no field {path!r} in the catalog")
        return found[0]

    def construct(self, owner: str, **given: Any) -> list[Any]:
        """The arguments of the first constructor that binds the given ones, in its order."""
        errors = []
        for ctor in self.constructors:
            try:
                return ctor.bind(owner, **given)
            except CatalogError as exc:
                errors.append(str(exc))
        raise CatalogError("; ".join(errors) or f"{owner} has no constructor in the catalog")

    def method(self, owner: str, name: str) -> Call:
        found = [m for m in self.methods if m.name == name]
        if not found:
            raise CatalogError(f"{owner} has no method {name!r} in the catalog")
        return found[0]


def _text(value: Any) -> str:
    """A TOML default as C++ text (`true`, `2`, or the string itself)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _args(raw: Any) -> tuple[Arg, ...]:
    return tuple(Arg(a["name"], a["type"], _text(a["default"]) if "default" in a else None) for a in raw or ())


def _call(name: str, raw: Mapping[str, Any], guard: str = "") -> Call:
    return Call(name, raw.get("result", ""), _args(raw.get("args")), raw.get("static", False),
                raw.get("declared_in", ""), raw.get("guard", guard))


def members_of(raw: Mapping[str, Any]) -> Members | None:
    """The members a `types` or `templates` entry lists, or None when it lists none."""
    if not any(k in raw for k in ("fields", "constructors", "methods", "aliases", "bases")):
        return None
    return Members(
        fields=_args(raw.get("fields")),
        constructors=tuple(_call("", c) for c in raw.get("constructors", ())),
        methods=tuple(_call(m["name"], m) for m in raw.get("methods", ())),
        aliases=_args(raw.get("aliases")),
        bases=tuple(raw.get("bases", ())),
    )


def calls_of(name: str, raw: Mapping[str, Any]) -> tuple[Call, ...]:
    """The signatures a function or function template entry records (its `overloads`, or one)."""
    if "overloads" in raw:
        return tuple(_call(name, o, raw.get("guard", "")) for o in raw["overloads"])
    if "result" in raw:
        return (_call(name, raw),)
    return ()
