"""The selection language evaluated over numpy: a tree's value for every kernel of a table at once.

`Scope(table, problem, hw).value(tree)` is a numpy array (one entry per kernel) where the tree reads a
kernel column, else a scalar; a spatial problem field is an int64 array over the problem's axes
(`problem_values`). Each node is computed once per scope (trees evaluated in one scope share their
common subtrees); a subtree that reads neither the problem nor the hardware is computed once per table
and kept in its `cache`. Each operation is numpy's on the node's type (`nodes` states them); `log2` is
the C library's, which the generated C++ calls (`_log2`). A float value `value` gives has its NaN the
canonical one (`canonical`): which sign numpy's loops give a NaN depends on the CPU they run on, and no
operation tells one NaN from another (comparisons, `where`, lookups and truth treat every NaN alike), so
the sign shows only in a tree's value.

`ProblemsScope` evaluates a tree for many problems at once: each problem field is a column with one row
per problem (`problems_values`), and a value is an array of (problems, kernels), or (problems, 1) where
the tree reads no kernel column; every entry is the one `Scope` computes for its problem, by the same
numpy operation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .libm import libm

from .nodes import Col, Const, Expr, Field, Hw, Lookup, Named, Op, Over

if TYPE_CHECKING:
    from ckast.select.features.table import KernelTable

Value = Any
"""A numpy array (one entry per kernel, or per spatial axis) or a scalar."""
DTYPES: Mapping[type, type] = {int: np.int64, float: np.float64, bool: np.bool_, str: np.str_}
FILL: Mapping[type, Any] = {int: 1, bool: False, str: ""}
"""A kernel column's value where a kernel lacks the knob, read as the knob's type (as float: NaN)."""
_KEPT = {frozenset(), frozenset(("kernel",))}
"""The sources of the subtrees a table's cache keeps."""


NAN = np.float64(math.nan)
"""The canonical NaN: the positive quiet NaN (`math.nan`'s bits; C++'s `quiet_NaN()`)."""


def canonical(x: Value) -> Value:
    """The float value `x` with every NaN the canonical `NAN` (`x` itself when it holds none): numpy's SIMD
    loops give the NaN of, say, `log2(-1)` a sign that depends on the CPU, and two NaN operands either one's."""
    if np.ndim(x) == 0:
        return NAN if x != x else x
    if np.isnan(np.minimum.reduce(x, axis=None, initial=math.inf)):  # NaN propagates: one pass, no new array
        return np.where(np.isnan(x), NAN, x)
    return x


def _log2(x: Value) -> Value:
    """The C library's log2 (`select.libm`), which the generated C++ (`std::log2`) calls; numpy and the C
    library agree on zero and infinite arguments, where `math.log2` raises, and give a NaN for negative
    and NaN arguments (of a sign `canonical` makes the same)."""
    out = np.log2(x)
    regular = np.isfinite(x) & (x > 0)
    if np.ndim(out):
        out[regular] = libm(math.log2, np.asarray(x, dtype=np.float64)[regular])
        return out
    return np.float64(math.log2(x)) if regular else out


def _float(x: Value) -> Value:
    return np.asarray(x, dtype=np.float64) if np.ndim(x) else np.float64(x)


def _ceil_div(a: Value, b: Value) -> Value:
    return np.negative(np.floor_divide(np.negative(a), b))


FUNCTIONS: Mapping[str, Callable[..., Value]] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "//": np.floor_divide, "%": np.mod,
    "neg": np.negative, "min": np.minimum, "max": np.maximum, "gcd": np.gcd, "ceil_div": _ceil_div, "log2": _log2,
    "ceil": np.ceil, "floor": np.floor, "trunc": np.trunc, "==": np.equal, "!=": np.not_equal, "<": np.less,
    "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "and": np.logical_and, "or": np.logical_or,
    "not": np.logical_not, "where": np.where, "float": _float,
}
"""Each operation's numpy function."""
_OVER: Mapping[str, Callable[[Value], Value]] = {"all": np.all, "any": np.any, "prod": np.prod}


def problem_values(fields: Mapping[str, Any]) -> dict[str, Value]:
    """A problem's fields for a `Scope`: spatial tuples as int64 arrays."""
    return {k: np.array(v, dtype=np.int64) if isinstance(v, tuple) else v for k, v in fields.items()}


class Scope:
    """What trees are evaluated over: a kernel table (None: trees that read no column), the problem's
    fields (`problem_values`) and the hardware's figures."""

    def __init__(self, table: KernelTable | None = None, problem: Mapping[str, Value] | None = None,
                 hw: Mapping[str, float] | None = None) -> None:
        self.table, self.problem, self.hw = table, problem or {}, hw or {}
        self.memo: dict[Expr, Value] = {}
        self.kept: dict[Expr, Value] = self.memo if table is None else table.cache

    def value(self, node: Expr) -> Value:
        """`node`'s value: one entry per kernel of the table where it reads a kernel column; a float's NaN
        is the canonical one."""
        found = self._value(node)
        return canonical(found) if node.type is float else found

    def _value(self, node: Expr) -> Value:
        """`node`'s value as computed (a NaN of any sign), memoized."""
        memo = self.kept if node.sources in _KEPT else self.memo
        found = memo.get(node)
        if found is None:
            found = memo[node] = self._compute(node)
        return found

    def _compute(self, node: Expr) -> Value:
        if isinstance(node, Op):
            return FUNCTIONS[node.op](*[self._value(a) for a in node.args])
        if isinstance(node, Const):
            return np.float64(node.value) if node.type is float else node.value
        if isinstance(node, Field):
            return self._field(node)
        if isinstance(node, Col):
            return self._column(node)
        if isinstance(node, Hw):
            try:
                return np.float64(self.hw[node.name])
            except KeyError:
                raise KeyError(f"no hw column {node.name!r}") from None
        if isinstance(node, Lookup):
            return self._lookup(node)
        if isinstance(node, Over):
            return self._over(node)
        if isinstance(node, Named):
            return self._value(node.expr)
        raise TypeError(f"not an expression node: {node!r}")

    def _field(self, node: Field) -> Value:
        try:
            v = self.problem[node.name]
        except KeyError:
            raise KeyError(f"no problem field {node.name!r}") from None
        if node.index is not None:
            v = self._axis(v, node.index)
        return np.float64(v) if node.type is float else v

    @staticmethod
    def _axis(v: Any, index: int) -> Value:
        """Axis `index` of a spatial field's value (0 past its rank)."""
        return v[index] if -len(v) <= index < len(v) else 0

    def _over(self, node: Over) -> Value:
        return _OVER[node.op](self._value(node.arg))

    def _column(self, node: Col) -> np.ndarray:
        if node.type is str:
            codes, values = self.table.categorical(node.name)
            return np.array([FILL[str] if v is None else v for v in values], dtype=np.str_)[codes]
        values = self.table.numeric(node.name)
        if node.type is float:
            return values
        filled = np.where(np.isnan(values), FILL[node.type], values)
        return filled.astype(np.int64) if node.type is int else filled != 0

    def _lookup(self, node: Lookup) -> Value:
        table, dtype = dict(node.table), DTYPES[node.type]
        if isinstance(node.key, Col) and node.key.type is str:  # through the column's codes
            codes, values = self.table.categorical(node.key.name)
            mapped = [table.get(FILL[str] if v is None else v, node.default) for v in values]
            return np.array(mapped, dtype=dtype)[codes]
        keys = self._value(node.key)
        if np.ndim(keys) == 0:
            found = table.get(keys.item() if isinstance(keys, np.generic) else keys, node.default)
            return np.float64(found) if node.type is float else found
        unique, inverse = np.unique(keys, return_inverse=True)
        mapped = np.array([table.get(k.item(), node.default) for k in unique], dtype=dtype)
        return mapped[inverse].reshape(keys.shape)


def problems_values(problems: Sequence[Mapping[str, Value]]) -> dict[str, np.ndarray]:
    """The fields of problems of one kind (and spatial rank), each as `problem_values` gives them, for a
    `ProblemsScope`: a column of one row per problem (a spatial field: one column per axis)."""
    out = {}
    for name in problems[0]:
        values = np.array([problem[name] for problem in problems])
        out[name] = values if values.ndim == 2 else values[:, None]
    return out


class ProblemsScope(Scope):
    """A `Scope` over many problems at once (their fields: `problems_values`): a problem's values are rows,
    kernels columns, a spatial value's axes the columns of its rows."""

    @staticmethod
    def _axis(v: Any, index: int) -> Value:
        axes = v.shape[1]
        return v[:, [index]] if -axes <= index < axes else np.zeros((len(v), 1), dtype=v.dtype)

    def _over(self, node: Over) -> Value:
        return _OVER[node.op](self._value(node.arg), axis=-1, keepdims=True)
