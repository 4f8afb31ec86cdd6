"""The nodes of ckast's selection language, typed when a tree is built.

A tree is immutable data: frozen, hashable nodes (equal trees are equal dictionary keys). Every node has
a `type`, one of `int`, `float`, `bool`, `str` (`TYPES`), and the `sources` it reads: "problem" (the
problem's fields), "kernel" (the kernel table's columns), "hw" (the hardware profile's figures).

Types:
- `int`: int64, as numpy computes it (wrapping arithmetic); problem sizes and integer knobs.
- `float`: float64, IEEE as numpy computes it; the features and the analytic model (as CK's feature
  engines compute on float64 arrays). A tree's float value has one NaN, the positive quiet one, whatever
  sign the CPU's or the C library's NaN has (no operation tells NaNs apart: comparisons, `where`, lookups
  and truth treat them alike), so Python and the generated C++ agree bit for bit.
- `bool`: comparisons, logic and boolean knobs.
- `str`: categorical knobs (pipeline, variant, layout, ...) and a problem's direction; a string is only
  compared (`.eq`, `.ne`, `.isin`), looked up (`lookup`) or picked (`where`).

Leaves:
- `Const(value)`: typed by its Python value.
- `Field(name, index=None)`: a problem field, int (str where the problem classes declare it a str; a
  `type` given overrides). A spatial field (`input`, `stride`, ...) is an int per problem axis, outermost
  first: element-wise operations keep it per axis and `Over` reduces it; `index` picks one axis
  (negative: from the innermost; 0 where the problem has no such axis).
- `Col(name, type)`: a kernel column, one value per kernel of the table. Read as the knob's own type
  (the default) a kernel without the knob holds 1 (int: keeps divisions defined), false or "" (so a
  condition that reads a knob holds only where its guard says the kernel has it); read as `float` it
  holds the knob's number (a boolean 0.0 or 1.0) and NaN where the kernel lacks the knob (CK's
  feature engines' reading of a missing value).
- `Hw(name)`: a figure of the hardware profile, float.

Operations (`Op(op, args)`; built with Python's operators and the functions at the end of this module):
- `+ - *` and unary `neg` on two ints (int) or two floats (float); `/` on floats: true division.
- `//` and `%` on ints or floats: floor division and the modulo with the divisor's sign (numpy's; an
  int divided by 0 gives 0 for both, a float as numpy's `npy_divmod`).
- `min`, `max` on ints or floats (numpy's: a NaN operand propagates); `gcd`, `ceil_div` (-(-a // b)) on
  ints; `log2` (the C library's), `ceil`, `floor`, `trunc` on floats.
- `== !=` on two values of one type, `< <= > >=` on ints or floats: bool (a NaN compares unequal).
- `and`, `or`, `not` on bools (`& | ~`); both operands are computed.
- `where(cond, then, otherwise)`: a bool condition and two branches of one type, element-wise (both
  branches computed, as numpy does).
- `float`: an int (exactly, below 2**53) or a bool (1.0, 0.0) as a float (`as_float()`).
`Lookup(name, table, key, default)` maps a key (of the table's keys' type) to the table's value, or
`default`; `Over(op, arg)` is `all` / `any` of a bool, or `prod` of an int, over a spatial value's axes;
`Named(name, expr)` is `expr` with a name (shown by `text`).

Nothing converts implicitly, except Python literals: one beside a node takes the node's type where it
can (an int literal beside a float is that float, exactly).
"""

from __future__ import annotations

import functools
import struct
import typing
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ckast.config.knobs import KNOBS
from ckast.select.problem import ConvProblem, GemmProblem

TYPES = (int, float, bool, str)
NUMBERS = (int, float)
_KNOB_TYPES = {k.name: k.type for k in KNOBS}
_FIELD_TYPES = {name: str if hint is str else int for cls in (GemmProblem, ConvProblem)
                for name, hint in typing.get_type_hints(cls).items()}
_NONE: frozenset[str] = frozenset()
_DOUBLE = struct.Struct("<d")

SIGNATURES: Mapping[str, tuple[tuple[type, ...], type | None]] = {
    **{op: (NUMBERS, None) for op in ("+", "-", "*", "//", "%", "min", "max", "neg")},
    "/": ((float,), None),
    **{op: ((int,), None) for op in ("gcd", "ceil_div")},
    **{op: ((float,), None) for op in ("log2", "ceil", "floor", "trunc")},
    **{op: (TYPES, bool) for op in ("==", "!=")},
    **{op: (NUMBERS, bool) for op in ("<", "<=", ">", ">=")},
    **{op: ((bool,), bool) for op in ("and", "or", "not")},
    "float": ((int, bool), float),
}
"""Each operation but `where`: the types its operands may have (all one), and its result's (None: theirs)."""
ARITY = {"neg": 1, "log2": 1, "ceil": 1, "floor": 1, "trunc": 1, "not": 1, "float": 1, "where": 3}
"""Operands of the operations that do not take two."""
OPS = (*SIGNATURES, "where")
OVER: Mapping[str, type] = {"all": bool, "any": bool, "prod": int}
"""`Over`'s reductions and the type each takes (and gives)."""


def _name(t: type) -> str:
    return t.__name__


class Expr:
    """Base of every node: Python's operators build `Op` nodes (`==` stays the nodes' equality: compare
    with `.eq` / `.ne`)."""

    __slots__ = ()
    type: type
    sources: frozenset[str]

    def __add__(self, o: Any) -> Op: return _op("+", self, o)
    def __radd__(self, o: Any) -> Op: return _op("+", o, self)
    def __sub__(self, o: Any) -> Op: return _op("-", self, o)
    def __rsub__(self, o: Any) -> Op: return _op("-", o, self)
    def __mul__(self, o: Any) -> Op: return _op("*", self, o)
    def __rmul__(self, o: Any) -> Op: return _op("*", o, self)
    def __truediv__(self, o: Any) -> Op: return _op("/", self, o)
    def __rtruediv__(self, o: Any) -> Op: return _op("/", o, self)
    def __floordiv__(self, o: Any) -> Op: return _op("//", self, o)
    def __rfloordiv__(self, o: Any) -> Op: return _op("//", o, self)
    def __mod__(self, o: Any) -> Op: return _op("%", self, o)
    def __neg__(self) -> Op: return Op("neg", (self,))
    def __lt__(self, o: Any) -> Op: return _op("<", self, o)
    def __le__(self, o: Any) -> Op: return _op("<=", self, o)
    def __gt__(self, o: Any) -> Op: return _op(">", self, o)
    def __ge__(self, o: Any) -> Op: return _op(">=", self, o)
    def __and__(self, o: Any) -> Op: return _op("and", self, o)
    def __or__(self, o: Any) -> Op: return _op("or", self, o)
    def __invert__(self) -> Op: return Op("not", (self,))

    def eq(self, o: Any) -> Op:
        return _op("==", self, o)

    def ne(self, o: Any) -> Op:
        return _op("!=", self, o)

    def isin(self, values: Sequence[Any]) -> Expr:
        """True where the value is one of `values` (at least one): `or` of `.eq`, left to right."""
        return functools.reduce(Expr.__or__, [self.eq(v) for v in values])

    def as_float(self) -> Op:
        """An int or a bool as a float."""
        return Op("float", (self,))


def _plain(value: Any) -> Any:
    """A numpy scalar (or 0-d array) as its Python value."""
    return value.item() if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0) \
        else value


def _bits(value: Any) -> Any:
    """What tells two constants apart: a float by its bits (-0.0 is not 0.0, a NaN is itself)."""
    return _DOUBLE.pack(value) if type(value) is float else value


def _const_type(self: Const) -> type:
    kind = type(self.value)
    if kind not in TYPES:
        raise TypeError(f"a constant must be a bool, int, float or str, not {kind.__name__} ({self.value!r})")
    return kind


@attrs.frozen(cache_hash=True)
class Const(Expr):
    value: int | float | bool | str = attrs.field(converter=_plain, eq=_bits)
    type: type = attrs.field(init=False, default=attrs.Factory(_const_type, takes_self=True))
    sources: frozenset[str] = attrs.field(init=False, default=_NONE, eq=False, repr=False)


@attrs.frozen(cache_hash=True)
class Field(Expr):
    """Problem field `name`; `index` picks one spatial axis (see the module docstring)."""

    name: str
    index: int | None = None
    type: type = attrs.field(default=attrs.Factory(lambda self: _FIELD_TYPES.get(self.name, int), takes_self=True),
                             validator=attrs.validators.in_(TYPES))
    sources: frozenset[str] = attrs.field(init=False, default=frozenset(("problem",)), eq=False, repr=False)


def _knob_type(self: Col) -> type:
    if self.name not in _KNOB_TYPES:
        raise TypeError(f"kernel column {self.name!r} is no knob: give the type it is read as")
    return _KNOB_TYPES[self.name]


@attrs.frozen(cache_hash=True)
class Col(Expr):
    """Kernel column `name`, read as `type` (the knob's own by default; see the module docstring)."""

    name: str
    type: type = attrs.field(default=attrs.Factory(_knob_type, takes_self=True), validator=attrs.validators.in_(TYPES))
    sources: frozenset[str] = attrs.field(init=False, default=frozenset(("kernel",)), eq=False, repr=False)


@attrs.frozen(cache_hash=True)
class Hw(Expr):
    """Hardware figure `name` (a float)."""

    name: str
    type: type = attrs.field(init=False, default=float)
    sources: frozenset[str] = attrs.field(init=False, default=frozenset(("hw",)), eq=False, repr=False)


def _union(children: Sequence[Expr]) -> frozenset[str]:
    out = children[0].sources
    for child in children[1:]:
        if not child.sources <= out:
            out = out | child.sources
    return out


def _op_type(self: Op) -> type:
    args, op = self.args, self.op
    first = args[0].type if args else None
    signature = SIGNATURES.get(op)
    if signature is not None and len(args) == ARITY.get(op, 2) and first in signature[0] \
            and all(a.type is first for a in args):
        return signature[1] or first
    if op == "where" and len(args) == 3 and first is bool and args[1].type is args[2].type:
        return args[1].type
    raise _type_error(op, args)


def _type_error(op: str, args: tuple[Expr, ...]) -> Exception:
    if op not in OPS:
        return ValueError(f"no operation {op!r}; known: {', '.join(OPS)}")
    if len(args) != ARITY.get(op, 2):
        return TypeError(f"{op} takes {ARITY.get(op, 2)} operands, not {len(args)}")
    types = ", ".join(_name(a.type) for a in args)
    if op == "where":
        return TypeError(f"where takes a bool and two values of one type, not {types}")
    allowed = " or ".join(map(_name, SIGNATURES[op][0]))
    return TypeError(f"{op} takes {allowed} operands{' of one type' if len(args) > 1 else ''}, not {types}")


@attrs.frozen(cache_hash=True)
class Op(Expr):
    op: str
    args: tuple[Expr, ...]
    type: type = attrs.field(init=False, eq=False, repr=False, default=attrs.Factory(_op_type, takes_self=True))
    sources: frozenset[str] = attrs.field(init=False, eq=False, repr=False,
                                          default=attrs.Factory(lambda self: _union(self.args), takes_self=True))


def _lookup_type(self: Lookup) -> type:
    keys = {type(k) for k, _ in self.table}
    if keys - {self.key.type}:
        raise TypeError(f"lookup {self.name}: {', '.join(sorted(map(_name, keys)))} keys for a key of type "
                        f"{_name(self.key.type)}")
    values = {type(v) for _, v in self.table} | {type(self.default)}
    if len(values) != 1 or not values <= set(TYPES):
        raise TypeError(f"lookup {self.name}: values of one type, not {', '.join(sorted(map(_name, values)))}")
    return values.pop()


@attrs.frozen(cache_hash=True)
class Lookup(Expr):
    """`table[key]` (`default` for a key the table does not hold); `table` holds (key, value) pairs."""

    name: str
    table: tuple[tuple[Any, Any], ...]
    key: Expr
    default: Any
    type: type = attrs.field(init=False, eq=False, repr=False, default=attrs.Factory(_lookup_type, takes_self=True))
    sources: frozenset[str] = attrs.field(init=False, eq=False, repr=False,
                                          default=attrs.Factory(lambda self: self.key.sources, takes_self=True))


def _over_type(self: Over) -> type:
    if self.op not in OVER:
        raise ValueError(f"no reduction {self.op!r}; known: {', '.join(OVER)}")
    if self.arg.type is not OVER[self.op]:
        raise TypeError(f"{self.op} over the axes takes {_name(OVER[self.op])}, not {_name(self.arg.type)}")
    return self.arg.type


@attrs.frozen(cache_hash=True)
class Over(Expr):
    """A reduction (`OVER`) of a spatial value over the problem's axes."""

    op: str
    arg: Expr
    type: type = attrs.field(init=False, eq=False, repr=False, default=attrs.Factory(_over_type, takes_self=True))
    sources: frozenset[str] = attrs.field(init=False, eq=False, repr=False,
                                          default=attrs.Factory(lambda self: self.arg.sources, takes_self=True))


@attrs.frozen(cache_hash=True)
class Named(Expr):
    """`expr` with a name (`text` shows the name; `leaves` stops at it)."""

    name: str
    expr: Expr
    type: type = attrs.field(init=False, eq=False, repr=False,
                             default=attrs.Factory(lambda self: self.expr.type, takes_self=True))
    sources: frozenset[str] = attrs.field(init=False, eq=False, repr=False,
                                          default=attrs.Factory(lambda self: self.expr.sources, takes_self=True))


TRUE, FALSE = Const(True), Const(False)


def lift(value: Any, like: type | None = None) -> Expr:
    """`value` as a node: a node as it is, a Python literal as a `Const` (an int literal as a float where
    `like` is float)."""
    if isinstance(value, Expr):
        return value
    value = _plain(value)
    if like is float and type(value) is int:
        if float(value) != value:
            raise TypeError(f"{value} is not exactly a float")
        value = float(value)
    if type(value) not in TYPES:
        raise TypeError(f"not an expression operand: {value!r}")
    return Const(value)


def lift_pair(a: Any, b: Any) -> tuple[Expr, Expr]:
    """Two operands as nodes, a literal taking the other's type where it can."""
    return lift(a, getattr(b, "type", None)), lift(b, getattr(a, "type", None))


def _op(op: str, a: Any, b: Any) -> Op:
    return Op(op, lift_pair(a, b))


def children(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Op):
        return node.args
    if isinstance(node, Lookup):
        return (node.key,)
    if isinstance(node, Over):
        return (node.arg,)
    if isinstance(node, Named):
        return (node.expr,)
    return ()


def with_children(node: Expr, kids: tuple[Expr, ...]) -> Expr:
    """`node` over other children (of the same types)."""
    if isinstance(node, Op):
        return Op(node.op, kids)
    if isinstance(node, Lookup):
        return Lookup(node.name, node.table, kids[0], node.default)
    if isinstance(node, Over):
        return Over(node.op, kids[0])
    if isinstance(node, Named):
        return Named(node.name, kids[0])
    return node


def walk(node: Expr) -> Iterator[Expr]:
    """Every node of a tree, parents first."""
    yield node
    for child in children(node):
        yield from walk(child)


def leaves(node: Expr) -> tuple[Expr, ...]:
    """The fields, columns, figures and named quantities a tree reads, first use first (named ones not
    opened)."""
    out: dict[Expr, None] = {}

    def visit(e: Expr) -> None:
        if isinstance(e, (Field, Col, Hw, Named)):
            out[e] = None
        else:
            for child in children(e):
                visit(child)

    visit(node)
    return tuple(out)


_INTERNED: dict[Expr, Expr] = {}
"""One object per distinct subtree of the trees `interned` has seen."""


def interned(node: Expr) -> Expr:
    """`node` with every subtree equal to one seen before made that object: the evaluation's memos (dicts
    keyed by node) then find the subtrees of every tree by identity, not by comparing them whole."""
    found = _INTERNED.get(node)
    if found is None:
        kids = children(node)
        shared = tuple(interned(c) for c in kids)
        if any(a is not b for a, b in zip(shared, kids)):
            node = with_children(node, shared)
        found = _INTERNED[node] = node
    return found


# --- builders -----------------------------------------------------------------------------------------


def where(cond: Any, then: Any, otherwise: Any) -> Op:
    return Op("where", (lift(cond), *lift_pair(then, otherwise)))


def minimum(a: Any, b: Any) -> Op:
    return _op("min", a, b)


def maximum(a: Any, b: Any) -> Op:
    return _op("max", a, b)


def ceil_div(a: Any, b: Any) -> Op:
    return _op("ceil_div", a, b)


def gcd(a: Any, b: Any) -> Op:
    return _op("gcd", a, b)


def log2(a: Any) -> Op:
    return Op("log2", (lift(a),))


def ceil(a: Any) -> Op:
    return Op("ceil", (lift(a),))


def floor(a: Any) -> Op:
    return Op("floor", (lift(a),))


def trunc(a: Any) -> Op:
    return Op("trunc", (lift(a),))


def any_of(*terms: Expr) -> Expr:
    """`or` of the terms, left to right."""
    return functools.reduce(Expr.__or__, terms)


def all_of(*terms: Expr) -> Expr:
    """`and` of the terms, left to right."""
    return functools.reduce(Expr.__and__, terms)


def lookup(name: str, table: Mapping[Any, Any], key: Expr, default: Any = 0) -> Lookup:
    """`table[key]`, `default` for other keys; entries sorted by key. Int values beside float ones are
    those floats."""
    table, default = {_plain(k): _plain(v) for k, v in table.items()}, _plain(default)
    values = {type(v) for v in (*table.values(), default)}
    if float in values and values <= {int, float}:
        table, default = {k: float(v) for k, v in table.items()}, float(default)
    return Lookup(name, tuple(sorted(table.items())), key, default)
