"""Names and type-ids."""

from __future__ import annotations

import attrs

from .base import Node, Type, as_tuple, instances_of, node
from .names import identifier
from .symbols import EnumSpec, Symbol
from .templates import TemplateId

BUILTIN_TYPES = frozenset({"void", "bool", "char", "int", "unsigned", "long", "float", "double", "auto"})


def _name_parts(parts: object) -> tuple[object, ...]:
    parts = as_tuple(parts)
    if not parts:
        raise ValueError("a name needs at least one component")
    checked: list[object] = []
    for i, part in enumerate(parts):
        if isinstance(part, (Symbol, EnumSpec, TemplateId)):
            if i:
                raise ValueError("catalog symbols and template-ids may only start a name")
            checked.append(part)
        else:
            checked.append(identifier(part))
    return tuple(checked)


@node
class Name(Node):
    """A possibly qualified name: `a::b`, `ck_tile::half_t`, `ck_tile::GemmKernel<...>::BlockSize`.

    The first component may be a catalog `Symbol` or `EnumSpec`, or a `TemplateId` (which print their qualified
    names); the rest are identifiers.
    """

    parts: tuple[object, ...] = attrs.field(converter=_name_parts)


@node
class TypeName(Type):
    """A type spelled by name (alias, class, catalog type or template-id)."""

    name: Name = attrs.field(validator=instances_of(Name))


@node
class Builtin(Type):
    """A fundamental type keyword, or `auto`."""

    keyword: str = attrs.field(validator=attrs.validators.in_(BUILTIN_TYPES))


@node
class Const(Type):
    """`const T` (or `T* const` when T is a pointer)."""

    of: Type = attrs.field(validator=instances_of(Type))


@node
class Ptr(Type):
    """`T*`."""

    of: Type = attrs.field(validator=instances_of(Type))


@node
class LRef(Type):
    """`T&`."""

    of: Type = attrs.field(validator=instances_of(Type))


@node
class Array(Type):
    """`T[size]`, or `T[]` (size from the initializer) when `size` is None; as a variable's type the
    bounds follow the name: `static constexpr double x[] = {...};`."""

    of: Type = attrs.field(validator=instances_of(Type))
    size: int | None = attrs.field(default=None, validator=instances_of(int, optional=True))

    def __attrs_post_init__(self) -> None:
        if self.size is not None and (isinstance(self.size, bool) or self.size < 1):
            raise ValueError(f"an array bound must be a positive int, got {self.size!r}")


def type_of(part: object, *more: str) -> TypeName:
    """Shorthand: `type_of(sym_or_tid_or_ident, "member", ...)` -> `TypeName`."""
    return TypeName(Name((part, *more)))
