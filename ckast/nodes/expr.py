"""Expressions."""

from __future__ import annotations

import math

import attrs

from .base import Expr, Node, Stmt, Type, as_tuple, each, instances_of, node
from .marks import Slot
from .names import identifier
from .symbols import EnumSpec
from .types import Name

BINARY_OPS = frozenset(
    "* / % + - << >> < <= > >= == != & ^ | && || = += -= *= /=".split()
)
UNARY_OPS = frozenset("! - + ~ & * ++ --".split())
INT_SUFFIXES = ("", "u", "l", "ul", "ll", "ull")


@node
class IntLit(Expr):
    """An integer literal (decimal), optionally suffixed (`u`, `l`, `ul`, `ll`, `ull`)."""

    value: int = attrs.field(validator=instances_of(int, Slot))  # a Slot while a template is recorded
    suffix: str = attrs.field(default="", validator=attrs.validators.in_(INT_SUFFIXES))
    literal_kind = "int"

    def __attrs_post_init__(self) -> None:
        if isinstance(self.value, bool):
            raise TypeError("IntLit takes an int, not a bool (use BoolLit)")


def _double(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"FloatLit takes a float, got {type(value).__name__}")
    return float(value)


@node
class FloatLit(Expr):
    """A `double` literal that reads back as exactly `value` (the shortest round-trip decimal form);
    NaN and infinities print as `std::numeric_limits<double>` calls (header `<limits>`)."""

    value: float = attrs.field(converter=_double)
    literal_kind = "float"

    @property
    def finite(self) -> bool:
        return math.isfinite(self.value)


@node
class BoolLit(Expr):
    value: bool = attrs.field(validator=instances_of(bool))
    literal_kind = "bool"


@node
class StrLit(Expr):
    """A narrow string literal; any text is allowed, the printer escapes it."""

    value: str = attrs.field(validator=instances_of(str))
    literal_kind = "string"


@node
class NullPtr(Expr):
    literal_kind = "pointer"


@node
class EnumValue(Expr):
    """An enumerator of a catalog enum, checked against the enum's values."""

    spec: EnumSpec = attrs.field(validator=instances_of(EnumSpec))
    value: str = attrs.field(converter=identifier)
    literal_kind = "enum"

    def __attrs_post_init__(self) -> None:
        if self.value not in self.spec.values:
            raise ValueError(
                f"{'::'.join(self.spec.qualname)} (profile {self.spec.profile}) has no enumerator "
                f"{self.value!r}; it has {', '.join(self.spec.values)}"
            )


@node
class Id(Expr):
    """A named value: variable, constant, function, static member (`A::B`)."""

    name: Name = attrs.field(validator=instances_of(Name))


@node
class Call(Expr):
    fn: Expr = attrs.field(validator=instances_of(Expr))
    args: tuple[Expr, ...] = attrs.field(default=(), converter=as_tuple, validator=each(Expr))


@node
class Member(Expr):
    """`obj.name` or, with `arrow`, `obj->name`; with `targs`, a member template `obj.name<targs>`."""

    obj: Expr = attrs.field(validator=instances_of(Expr))
    name: str = attrs.field(converter=identifier)
    arrow: bool = False
    targs: tuple[Node, ...] = attrs.field(default=(), converter=as_tuple, validator=each(Type, Expr))


@node
class Index(Expr):
    obj: Expr = attrs.field(validator=instances_of(Expr))
    index: Expr = attrs.field(validator=instances_of(Expr))


@node
class BinOp(Expr):
    op: str = attrs.field(validator=attrs.validators.in_(BINARY_OPS))
    lhs: Expr = attrs.field(validator=instances_of(Expr))
    rhs: Expr = attrs.field(validator=instances_of(Expr))


@node
class UnOp(Expr):
    """A prefix operator."""

    op: str = attrs.field(validator=attrs.validators.in_(UNARY_OPS))
    operand: Expr = attrs.field(validator=instances_of(Expr))


@node
class Cond(Expr):
    """`cond ? then : else_`."""

    cond: Expr = attrs.field(validator=instances_of(Expr))
    then: Expr = attrs.field(validator=instances_of(Expr))
    else_: Expr = attrs.field(validator=instances_of(Expr))


@node
class BraceInit(Expr):
    """`T{items}`, or a bare braced list `{items}` when `type` is None."""

    type: Type | None = attrs.field(validator=instances_of(Type, optional=True))
    items: tuple[Expr, ...] = attrs.field(default=(), converter=as_tuple, validator=each(Expr))


@node
class StaticCast(Expr):
    type: Type = attrs.field(validator=instances_of(Type))
    value: Expr = attrs.field(validator=instances_of(Expr))


@node
class SizeOf(Expr):
    type: Type = attrs.field(validator=instances_of(Type))


@node
class FuncParam(Node):
    """A function or lambda parameter."""

    type: Type = attrs.field(validator=instances_of(Type))
    name: str = attrs.field(converter=identifier)
    default: Expr | None = attrs.field(default=None, validator=instances_of(Expr, optional=True))


def _capture(value: object) -> str:
    if value in ("&", "=", "this"):
        return value  # type: ignore[return-value]
    if isinstance(value, str) and value.startswith("&"):
        return "&" + identifier(value[1:])
    return identifier(value)


@node
class Lambda(Expr):
    """`[captures](params) { body }`."""

    captures: tuple[str, ...] = attrs.field(converter=lambda c: tuple(_capture(x) for x in as_tuple(c)))
    params: tuple[FuncParam, ...] = attrs.field(converter=as_tuple, validator=each(FuncParam))
    body: tuple[Stmt, ...] = attrs.field(converter=as_tuple, validator=each(Stmt))


def ident(*parts: object) -> Id:
    """Shorthand: `ident("GemmKernel", "BlockSize")` -> `Id(Name(...))`."""
    return Id(Name(parts))


def call(fn: Expr | str, *args: Expr) -> Call:
    """Shorthand for a call; a string callee is a (possibly `::`-qualified) name."""
    return Call(ident(*fn.split("::")) if isinstance(fn, str) else fn, args)
