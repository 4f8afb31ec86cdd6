"""Statements of function and lambda bodies (declarations usable as statements are in decl.py)."""

from __future__ import annotations

import attrs

from .base import Expr, Node, Stmt, as_tuple, each, field_names, instances_of, node
from .names import identifier


@node
class ExprStmt(Stmt):
    expr: Expr = attrs.field(validator=instances_of(Expr))


@node
class Return(Stmt):
    value: Expr | None = attrs.field(default=None, validator=instances_of(Expr, optional=True))


@node
class Throw(Stmt):
    value: Expr = attrs.field(validator=instances_of(Expr))


def _else_branch(value: object) -> object:
    if value is None or isinstance(value, If):
        return value
    return as_tuple(value)  # type: ignore[arg-type]


@node
class If(Stmt):
    """`if (cond) { then } else { else_ }`; an `If` as `else_` prints as `else if`."""

    cond: Expr = attrs.field(validator=instances_of(Expr))
    then: tuple[Stmt, ...] = attrs.field(converter=as_tuple, validator=each(Stmt))
    else_: tuple[Stmt, ...] | If | None = attrs.field(default=None, converter=_else_branch)

    def __attrs_post_init__(self) -> None:
        if isinstance(self.else_, tuple):
            each(Stmt)(self, attrs.fields(If).else_, self.else_)


@node
class For(Stmt):
    """`for (init; cond; step) { body }`; any of the three heads may be absent."""

    init: Stmt | None = attrs.field(validator=instances_of(Stmt, optional=True))
    cond: Expr | None = attrs.field(validator=instances_of(Expr, optional=True))
    step: Expr | None = attrs.field(validator=instances_of(Expr, optional=True))
    body: tuple[Stmt, ...] = attrs.field(converter=as_tuple, validator=each(Stmt))

    def __attrs_post_init__(self) -> None:
        from .decl import VarDecl

        if self.init is not None and not isinstance(self.init, (VarDecl, ExprStmt)):
            raise TypeError(f"a for-loop's init must be a VarDecl or ExprStmt, got {type(self.init).__name__}")


@node
class While(Stmt):
    """`while (cond) { body }`."""

    cond: Expr = attrs.field(validator=instances_of(Expr))
    body: tuple[Stmt, ...] = attrs.field(converter=as_tuple, validator=each(Stmt))


@node
class Break(Stmt):
    """`break;`."""


@node
class Continue(Stmt):
    """`continue;`."""


def _identifiers(names: object) -> tuple[str, ...]:
    return tuple(identifier(name) for name in as_tuple(names))  # type: ignore[arg-type]


@node
class Repeated(Stmt):
    """`body` once per name in `names`, with the identifier `placeholder` replaced by that name wherever
    it is a name component (a registration statement per kernel of a run, in one node). The printer
    prints the body once and fills the names in where that gives the same layout."""

    body: Stmt = attrs.field(validator=instances_of(Stmt))
    placeholder: str = attrs.field(converter=identifier)
    names: tuple[str, ...] = attrs.field(converter=_identifiers)

    def with_name(self, name: str) -> Stmt:
        """The body for one name."""
        return _replace(self.body, self.placeholder, name)


def _replace(value: object, old: str, new: str) -> object:
    """`value` with every string field or tuple item equal to `old` (a name component) replaced by `new`."""
    if isinstance(value, str):
        return new if value == old else value
    if isinstance(value, tuple):
        items = tuple(_replace(v, old, new) for v in value)
        return value if all(a is b for a, b in zip(items, value)) else items
    if isinstance(value, Node):
        changes = {f: v for f in field_names(type(value))
                   if (v := _replace(getattr(value, f), old, new)) is not getattr(value, f)}
        return attrs.evolve(value, **changes) if changes else value
    return value
