"""Node base classes, child enumeration and attrs helpers.

Every node is an immutable attrs class (frozen, slotted): equality and hashing are structural, so
nodes can be graph vertices and dictionary keys. Sequence fields are tuples.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs


class Node:
    """Base of every C++ AST node."""

    __slots__ = ()


class Type(Node):
    """A C++ type-id."""

    __slots__ = ()


class Expr(Node):
    """A C++ expression.

    `literal_kind` names the kind of a literal ("int", "bool", "string", "enum", "pointer") so
    that template binding can refuse a literal of the wrong kind; it is None for expressions
    whose kind is only known to the C++ compiler (names, calls, member access, ...).
    """

    __slots__ = ()
    literal_kind: str | None = None


class Stmt(Node):
    """A statement inside a function or lambda body."""

    __slots__ = ()


class Decl(Node):
    """A declaration at namespace or class scope."""

    __slots__ = ()


def node(cls: type) -> type:
    """Class decorator for AST nodes: frozen, slotted attrs class with structural eq/hash."""
    return attrs.frozen(cls)


_FIELDS: dict[type, tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """The attrs field names of a node class (cached)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in attrs.fields(cls))
    return names


def children(n: Node) -> list[Node]:
    """The direct child nodes of `n` in field order (tuples are flattened)."""
    out: list[Node] = []
    for name in field_names(type(n)):
        value = getattr(n, name)
        if isinstance(value, Node):
            out.append(value)
        elif isinstance(value, tuple):
            _add_nodes_in(value, out)
    return out


def _add_nodes_in(values: tuple, out: list[Node]) -> None:
    for value in values:
        if isinstance(value, Node):
            out.append(value)
        elif isinstance(value, tuple):
            _add_nodes_in(value, out)


def as_tuple(items: Iterable[Any]) -> tuple[Any, ...]:
    """Converter for sequence fields: any iterable becomes a tuple (strings are refused)."""
    if isinstance(items, (str, bytes)):
        raise TypeError("expected a sequence of nodes, got a string")
    return tuple(items)


def instances_of(*types: type, optional: bool = False):
    """attrs validator: the value is an instance of one of `types` (or None when optional)."""

    def check(_inst: object, attribute: attrs.Attribute, value: object) -> None:
        if value is None and optional:
            return
        if not isinstance(value, types):
            names = " or ".join(t.__name__ for t in types)
            raise TypeError(f"{attribute.name} must be {names}, got {type(value).__name__}")

    return check


def each(*types: type):
    """attrs validator: every element of a tuple field is an instance of one of `types`."""

    def check(_inst: object, attribute: attrs.Attribute, value: tuple) -> None:
        for item in value:
            if not isinstance(item, types):
                names = " or ".join(t.__name__ for t in types)
                raise TypeError(f"{attribute.name} items must be {names}, got {type(item).__name__}")

    return check
