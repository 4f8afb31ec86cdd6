"""Small declarative expressions over a problem's fields and a kernel library's columns.

An expression is a tree of frozen nodes: `Const`, `Field` (a problem field, a scalar or a spatial
tuple), `Col` (a kernel column: one knob of every kernel's config), `Op` (arithmetic, comparison,
logic, `where`, `min`/`max`, `gcd`, `ceil_div`), `Lookup` (a table keyed by a column, e.g. a
datatype's size), `Over` (a reduction over the spatial axes) and `Named` (a quantity with a name,
shown by `describe` and kept as one variable when the tree is printed as C++). `evaluate` computes a
tree over every kernel of a `KernelTable` at once (numpy); parts that read no problem field are
computed once per table and kept in its cache.

Build trees with the operators (`+ - * // %`, `< <= > >=`, `& | ~`) and `.eq` / `.ne` (`==` stays
structural equality of nodes).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ckast.config.knobs import KNOBS

from .features import KernelTable

Value = Any
"""A numpy array (one entry per kernel, or per spatial axis) or a scalar."""


class Expr:
    """Base of every node; operators build `Op` nodes."""

    def _op(self, op: str, *others: Any) -> Op:
        return Op(op, (self, *map(lift, others)))

    def __add__(self, o: Any) -> Op: return self._op("+", o)
    def __sub__(self, o: Any) -> Op: return self._op("-", o)
    def __mul__(self, o: Any) -> Op: return self._op("*", o)
    def __floordiv__(self, o: Any) -> Op: return self._op("//", o)
    def __mod__(self, o: Any) -> Op: return self._op("%", o)
    def __radd__(self, o: Any) -> Op: return lift(o)._op("+", self)
    def __rmul__(self, o: Any) -> Op: return lift(o)._op("*", self)
    def __lt__(self, o: Any) -> Op: return self._op("<", o)
    def __le__(self, o: Any) -> Op: return self._op("<=", o)
    def __gt__(self, o: Any) -> Op: return self._op(">", o)
    def __ge__(self, o: Any) -> Op: return self._op(">=", o)
    def __and__(self, o: Any) -> Op: return self._op("and", o)
    def __or__(self, o: Any) -> Op: return self._op("or", o)
    def __invert__(self) -> Op: return Op("not", (self,))

    def eq(self, o: Any) -> Op:
        return self._op("==", o)

    def ne(self, o: Any) -> Op:
        return self._op("!=", o)

    def isin(self, values: Sequence[Any]) -> Expr:
        """True where the value is one of `values` (at least one)."""
        return functools.reduce(Expr.__or__, [self.eq(v) for v in values])


@attrs.frozen(cache_hash=True)
class Const(Expr):
    value: int | bool | str


@attrs.frozen(cache_hash=True)
class Field(Expr):
    """A problem field; `index` picks one spatial axis (negative: from the innermost), 0 where the
    problem has no such axis."""

    name: str
    index: int | None = None


@attrs.frozen(cache_hash=True)
class Col(Expr):
    """A kernel column: knob `name` of each kernel (its `FILL` value where a kernel has no such knob)."""

    name: str


@attrs.frozen(cache_hash=True)
class Op(Expr):
    op: str
    args: tuple[Expr, ...]


@attrs.frozen(cache_hash=True)
class Lookup(Expr):
    """`table[key]` for each kernel (`default` for a key the table does not hold); `table` holds
    (key, value) pairs."""

    name: str
    table: tuple[tuple[Any, Any], ...]
    key: Expr
    default: Any = 0


@attrs.frozen(cache_hash=True)
class Over(Expr):
    """A reduction over a spatial expression's axes: `all`, `any` or `prod`."""

    op: str
    arg: Expr


@attrs.frozen(cache_hash=True)
class Named(Expr):
    name: str
    expr: Expr


TRUE, FALSE = Const(True), Const(False)


def lift(value: Any) -> Expr:
    return value if isinstance(value, Expr) else Const(value)


def where(cond: Any, then: Any, otherwise: Any) -> Op:
    return Op("where", (lift(cond), lift(then), lift(otherwise)))


def minimum(a: Any, b: Any) -> Op:
    return Op("min", (lift(a), lift(b)))


def ceil_div(a: Any, b: Any) -> Op:
    return Op("ceil_div", (lift(a), lift(b)))


def gcd(a: Any, b: Any) -> Op:
    return Op("gcd", (lift(a), lift(b)))


def lookup(name: str, table: Mapping[Any, Any], key: Expr, default: Any = 0) -> Lookup:
    return Lookup(name, tuple(sorted(table.items())), key, default)


def _ceil_div(a: Value, b: Value) -> Value:
    return -(-a // b)


_OPS: Mapping[str, Callable[..., Value]] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "//": np.floor_divide, "%": np.mod,
    "==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
    ">=": np.greater_equal, "and": np.logical_and, "or": np.logical_or, "not": np.logical_not,
    "min": np.minimum, "max": np.maximum, "gcd": np.gcd, "ceil_div": _ceil_div, "where": np.where,
}
_OVER: Mapping[str, Callable[[Value], Value]] = {"all": np.all, "any": np.any, "prod": np.prod}
_INFIX = {"+", "-", "*", "//", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or"}

FILL = {int: 1, bool: False, str: ""}
"""A column's value for kernels that lack the knob (1 keeps divisions defined); conditions that read a
knob hold only where the kernel has it."""
_KNOB_TYPES = {k.name: k.type for k in KNOBS}


@functools.cache
def reads_problem(expr: Expr) -> bool:
    """Whether the value depends on the problem (else it is computed once per kernel table)."""
    if isinstance(expr, Field):
        return True
    return any(reads_problem(child) for child in children(expr))


def children(expr: Expr) -> tuple[Expr, ...]:
    if isinstance(expr, Op):
        return expr.args
    if isinstance(expr, Lookup):
        return (expr.key,)
    if isinstance(expr, (Over, Named)):
        return (expr.arg if isinstance(expr, Over) else expr.expr,)
    return ()


def walk(expr: Expr) -> Iterator[Expr]:
    """Every node of a tree, parents first."""
    yield expr
    for child in children(expr):
        yield from walk(child)


def leaves(expr: Expr) -> tuple[Expr, ...]:
    """Fields, columns and named quantities a tree reads, first use first (named ones not opened)."""
    out: dict[Expr, None] = {}

    def walk(e: Expr) -> None:
        if isinstance(e, (Field, Col, Named)):
            out[e] = None
        else:
            for child in children(e):
                walk(child)

    walk(expr)
    return tuple(out)


class Columns:
    """The kernel columns of a `KernelTable` as conditions read them: integer, boolean and string
    arrays by knob name (`FILL` where a kernel has no such knob). Kernel-only values are kept in the
    table's cache, so they are computed once per table."""

    def __init__(self, table: KernelTable) -> None:
        self.table = table
        self.memo: dict[Any, Value] = table.cache

    def __len__(self) -> int:
        return len(self.table)

    def column(self, name: str) -> np.ndarray:
        key = Col(name)
        if key not in self.memo:
            self.memo[key] = self._read(name, _KNOB_TYPES[name])
        return self.memo[key]

    def _read(self, name: str, kind: type) -> np.ndarray:
        size = len(self.table)
        if kind is str:
            if name not in self.table.categories:
                return np.full(size, FILL[str], dtype=np.str_)
            labels = self.table.labels(name)
            return np.array([FILL[str] if v is None else v for v in labels], dtype=np.str_)
        if name not in self.table.numbers:
            return np.full(size, FILL[kind], dtype=np.int64 if kind is int else bool)
        values = self.table.numeric(name)
        filled = np.where(np.isnan(values), FILL[kind], values)
        return filled.astype(np.int64) if kind is int else filled != 0


def problem_values(fields: Mapping[str, Any]) -> dict[str, Value]:
    """A problem's fields for `evaluate`: spatial tuples as int64 arrays."""
    return {k: np.array(v, dtype=np.int64) if isinstance(v, tuple) else v for k, v in fields.items()}


def evaluate(expr: Expr, problem: Mapping[str, Value], columns: Columns) -> Value:
    """The value of `expr` for every kernel of `columns` (a scalar where it reads no column)."""
    call: dict[Expr, Value] = {}

    def value(e: Expr) -> Value:
        kernel_only = not reads_problem(e)
        cache = columns.memo if kernel_only else call
        if e in cache:
            return cache[e]
        out = _value(e, value, problem, columns)
        cache[e] = out
        return out

    return value(expr)


def _value(e: Expr, value: Callable[[Expr], Value], problem: Mapping[str, Value], columns: Columns) -> Value:
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Col):
        return columns.column(e.name)
    if isinstance(e, Field):
        v = problem[e.name]
        if e.index is None:
            return v
        return v[e.index] if -len(v) <= e.index < len(v) else 0
    if isinstance(e, Op):
        return _OPS[e.op](*(value(a) for a in e.args))
    if isinstance(e, Lookup):
        keys = value(e.key)
        table = dict(e.table)
        if np.ndim(keys) == 0:
            return table.get(keys.item() if isinstance(keys, np.generic) else keys, e.default)
        unique, inverse = np.unique(keys, return_inverse=True)
        return np.array([table.get(k.item(), e.default) for k in unique])[inverse]
    if isinstance(e, Over):
        return _OVER[e.op](value(e.arg))
    if isinstance(e, Named):
        return value(e.expr)
    raise TypeError(f"not an expression node: {e!r}")


def text(expr: Expr) -> str:
    """A compact infix rendering (named quantities by name)."""
    if isinstance(expr, Const):
        return repr(expr.value) if isinstance(expr.value, str) else str(expr.value).lower()
    if isinstance(expr, Field):
        return expr.name if expr.index is None else f"{expr.name}[{expr.index}]"
    if isinstance(expr, (Col, Named, Lookup)):
        return expr.name
    if isinstance(expr, Over):
        return f"{expr.op}({text(expr.arg)})"
    if expr.op == "not":
        return f"not {_operand(expr.args[0])}"
    if expr.op in _INFIX:
        return f" {expr.op} ".join(_operand(a) for a in expr.args)
    return f"{expr.op}({', '.join(text(a) for a in expr.args)})"


def _operand(expr: Expr) -> str:
    return f"({text(expr)})" if isinstance(expr, Op) and (expr.op in _INFIX or expr.op == "not") else text(expr)

