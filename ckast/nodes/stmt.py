"""Statements of function and lambda bodies (declarations usable as statements are in decl.py)."""

from __future__ import annotations

import attrs

from .base import Expr, Stmt, as_tuple, each, instances_of, node


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
