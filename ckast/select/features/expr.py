"""A tiny expression language for selection features: immutable nodes, evaluated over numpy columns.

A feature is data, not code: a tree of `Const`, `Field` (a problem, kernel or hardware column),
`Lookup` (a categorical kernel column mapped through a table), `Unary`, `Binary` and `Where` nodes.
Python builds the trees with operators (`a + b`, `a // b`, `a % b`) and the functions below
(`maximum`, `log2`, `where`, `lt`, ...); the same trees are what a C++ emitter walks.

Semantics (those of CK's vectorized feature engines, which compute on float64 numpy arrays):
every value is a float64; `/` is true division, `//` numpy's floor division, `%` numpy's modulo
(the sign of the divisor); comparisons and `and`/`or`/`not` give 1.0 or 0.0 and treat any
non-zero value as true; `Where` picks per element (both branches are computed, as numpy does);
`trunc` is the truncation of numpy's cast to int64; `log2` is glibc's (see `_log2`). NaN (a kernel
column a config does not have) propagates as numpy propagates it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs
import numpy as np

from ckast.select.libm import libm

SOURCES = ("problem", "kernel", "hw")
"""Where a `Field` reads: the problem's columns, the kernel table's columns, the hardware profile's."""

Value = np.ndarray | np.float64


def _bool(x: Value) -> Value:
    return np.not_equal(x, 0.0)


def _flag(x: Value) -> Value:
    return np.asarray(x, dtype=np.float64) if np.ndim(x) else np.float64(x)


def _log2(x: Value) -> Value:
    """The C library's log2 (`select.libm`), which the generated C++ (`std::log2`) calls; numpy and the C
    library agree on zero, negative, infinite and NaN arguments, where `math.log2` raises."""
    out = np.log2(x)
    regular = np.isfinite(x) & (x > 0)
    if np.ndim(out):
        out[regular] = libm(math.log2, np.asarray(x, dtype=np.float64)[regular])
        return out
    return np.float64(math.log2(x)) if regular else out


UNARY: Mapping[str, Callable[[Value], Value]] = {
    "neg": np.negative,
    "log2": _log2,
    "ceil": np.ceil,
    "floor": np.floor,
    "trunc": np.trunc,
    "not": lambda x: _flag(np.logical_not(_bool(x))),
}
BINARY: Mapping[str, Callable[[Value, Value], Value]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.mod,
    "min": np.minimum,
    "max": np.maximum,
    "lt": lambda a, b: _flag(np.less(a, b)),
    "le": lambda a, b: _flag(np.less_equal(a, b)),
    "gt": lambda a, b: _flag(np.greater(a, b)),
    "ge": lambda a, b: _flag(np.greater_equal(a, b)),
    "eq": lambda a, b: _flag(np.equal(a, b)),
    "ne": lambda a, b: _flag(np.not_equal(a, b)),
    "and": lambda a, b: _flag(np.logical_and(_bool(a), _bool(b))),
    "or": lambda a, b: _flag(np.logical_or(_bool(a), _bool(b))),
}


class Expr:
    """Base of the nodes: Python operators build `Binary` nodes (numbers become `Const`)."""

    __slots__ = ()

    def __add__(self, other: Operand) -> Expr:
        return Binary("add", self, lift(other))

    def __radd__(self, other: Operand) -> Expr:
        return Binary("add", lift(other), self)

    def __sub__(self, other: Operand) -> Expr:
        return Binary("sub", self, lift(other))

    def __rsub__(self, other: Operand) -> Expr:
        return Binary("sub", lift(other), self)

    def __mul__(self, other: Operand) -> Expr:
        return Binary("mul", self, lift(other))

    def __rmul__(self, other: Operand) -> Expr:
        return Binary("mul", lift(other), self)

    def __truediv__(self, other: Operand) -> Expr:
        return Binary("div", self, lift(other))

    def __rtruediv__(self, other: Operand) -> Expr:
        return Binary("div", lift(other), self)

    def __floordiv__(self, other: Operand) -> Expr:
        return Binary("floordiv", self, lift(other))

    def __mod__(self, other: Operand) -> Expr:
        return Binary("mod", self, lift(other))

    def __neg__(self) -> Expr:
        return Unary("neg", self)


Operand = Expr | int | float


@attrs.frozen(cache_hash=True)
class Const(Expr):
    value: float = attrs.field(converter=float)


@attrs.frozen(cache_hash=True)
class Field(Expr):
    """Column `name` of `source` ("problem", "kernel" or "hw")."""

    source: str = attrs.field(validator=attrs.validators.in_(SOURCES))
    name: str


@attrs.frozen(cache_hash=True)
class Lookup(Expr):
    """The categorical kernel column `name` mapped through `table` ((value, result) pairs);
    `default` for a value the table does not hold (and for a config without the column's knob)."""

    name: str
    table: tuple[tuple[str, float], ...] = attrs.field(
        converter=lambda t: tuple((str(k), float(v)) for k, v in (t.items() if isinstance(t, Mapping) else t)))
    default: float = attrs.field(default=0.0, converter=float)


@attrs.frozen(cache_hash=True)
class Unary(Expr):
    op: str = attrs.field(validator=attrs.validators.in_(tuple(UNARY)))
    arg: Expr


@attrs.frozen(cache_hash=True)
class Binary(Expr):
    op: str = attrs.field(validator=attrs.validators.in_(tuple(BINARY)))
    left: Expr
    right: Expr


@attrs.frozen(cache_hash=True)
class Where(Expr):
    """`then` where `cond` is non-zero, else `otherwise`."""

    cond: Expr
    then: Expr
    otherwise: Expr


def lift(x: Operand) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return Const(x)
    raise TypeError(f"not an expression operand: {x!r}")


def problem(name: str) -> Field:
    return Field("problem", name)


def kernel(name: str) -> Field:
    return Field("kernel", name)


def hw(name: str) -> Field:
    return Field("hw", name)


def _binary(op: str) -> Callable[[Operand, Operand], Expr]:
    def build(a: Operand, b: Operand) -> Expr:
        return Binary(op, lift(a), lift(b))

    build.__name__ = op
    return build


def _unary(op: str) -> Callable[[Operand], Expr]:
    def build(a: Operand) -> Expr:
        return Unary(op, lift(a))

    build.__name__ = op
    return build


minimum, maximum = _binary("min"), _binary("max")
lt, le, gt, ge, eq, ne = (_binary(op) for op in ("lt", "le", "gt", "ge", "eq", "ne"))
and_, or_ = _binary("and"), _binary("or")
log2, ceil, floor, trunc, not_ = (_unary(op) for op in ("log2", "ceil", "floor", "trunc", "not"))


def where(cond: Operand, then: Operand, otherwise: Operand) -> Expr:
    return Where(lift(cond), lift(then), lift(otherwise))


def any_of(*terms: Operand) -> Expr:
    """`or` of the terms, left to right."""
    return functools.reduce(or_, terms)


def all_of(*terms: Operand) -> Expr:
    """`and` of the terms, left to right."""
    return functools.reduce(and_, terms)


def is_in(name: str, values: tuple[str, ...] | list[str]) -> Lookup:
    """1.0 where categorical kernel column `name` is one of `values`, else 0.0."""
    return Lookup(name, tuple((v, 1.0) for v in values), 0.0)


def children(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Unary):
        return (node.arg,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Where):
        return (node.cond, node.then, node.otherwise)
    return ()


def walk(node: Expr) -> Iterator[Expr]:
    """Every node of the tree, parents first."""
    yield node
    for child in children(node):
        yield from walk(child)


@functools.cache
def sources(node: Expr) -> frozenset[str]:
    """The sources a node reads (a `Lookup` reads the kernel table)."""
    if isinstance(node, Field):
        return frozenset((node.source,))
    if isinstance(node, Lookup):
        return frozenset(("kernel",))
    return frozenset().union(*(sources(c) for c in children(node)))


class Columns:
    """What an evaluation reads: problem and hardware scalars, and the kernel table (an object with
    `numeric(name) -> float64 array`, `categorical(name) -> (codes, values)` and a `cache` dict for
    the values of kernel-only subtrees, which do not change from one problem to the next)."""

    def __init__(self, problem: Mapping[str, float], hw: Mapping[str, float], kernels: Any) -> None:
        self.scalars = {"problem": problem, "hw": hw}
        self.kernels = kernels
        self.memo: dict[Expr, Value] = {}

    def value(self, node: Expr) -> Value:
        """`node` evaluated: a float64 scalar when it reads no kernel column, else one value per kernel."""
        kernel_only = sources(node) == {"kernel"}
        memo = self.kernels.cache if kernel_only else self.memo
        found = memo.get(node)
        if found is None:
            found = memo[node] = self._compute(node)
        return found

    def _compute(self, node: Expr) -> Value:
        if isinstance(node, Const):
            return np.float64(node.value)
        if isinstance(node, Field):
            if node.source == "kernel":
                return self.kernels.numeric(node.name)
            try:
                return np.float64(self.scalars[node.source][node.name])
            except KeyError:
                raise KeyError(f"no {node.source} column {node.name!r}") from None
        if isinstance(node, Lookup):
            codes, values = self.kernels.categorical(node.name)
            table = dict(node.table)
            mapped = np.array([table.get(v, node.default) if v is not None else node.default for v in values],
                              dtype=np.float64)
            return mapped[codes]
        if isinstance(node, Unary):
            return UNARY[node.op](self.value(node.arg))
        if isinstance(node, Binary):
            return BINARY[node.op](self.value(node.left), self.value(node.right))
        if isinstance(node, Where):
            return np.where(_bool(self.value(node.cond)), self.value(node.then), self.value(node.otherwise))
        raise TypeError(f"not an expression node: {node!r}")
