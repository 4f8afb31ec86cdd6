"""Named C++ entities that come from a catalog: headers, plain types/functions and enums."""

from __future__ import annotations

import attrs

from .base import Node, as_tuple, node
from .names import header_path, identifier


def _qualname(parts: object) -> tuple[str, ...]:
    parts = as_tuple(parts)
    if not parts:
        raise ValueError("a qualified name needs at least one component")
    return tuple(identifier(p) for p in parts)


def split_qualname(text: str) -> tuple[str, ...]:
    """`"ck_tile::half_t"` -> `("ck_tile", "half_t")`, each component validated."""
    return _qualname(text.split("::"))


@node
class Header(Node):
    """An `#include` target: `"path"` or, when `system`, `<path>`."""

    path: str = attrs.field(converter=header_path)
    system: bool = False

    @classmethod
    def parse(cls, spec: str) -> Header:
        """`"<array>"` is a system header; anything else is a quoted project header."""
        if spec.startswith("<") and spec.endswith(">"):
            return cls(spec[1:-1], system=True)
        return cls(spec)


@node
class Symbol(Node):
    """A non-template entity (type, type alias or function) named by a catalog entry."""

    key: str = attrs.field(converter=identifier)
    qualname: tuple[str, ...] = attrs.field(converter=_qualname)
    header: Header | None = None
    profile: str = ""


@node
class EnumSpec(Node):
    """An enumeration known to a catalog; `EnumValue` nodes refer to it."""

    key: str = attrs.field(converter=identifier)
    qualname: tuple[str, ...] = attrs.field(converter=_qualname)
    values: tuple[str, ...] = attrs.field(converter=_qualname)
    scoped: bool = True
    header: Header | None = None
    profile: str = ""
