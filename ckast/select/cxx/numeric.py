"""C++ helpers with numpy's semantics where C++'s operators and `<cmath>` differ, as ckast nodes.

The selection language (`select.expr`) computes floats on float64 and ints on int64 as numpy does. IEEE
`+ - * /`, `std::floor`, `std::ceil`, `std::trunc` and comparisons are the same in both; what differs
gets an inline helper here:
- `numpy_floor_divide` / `numpy_remainder`: numpy's `npy_floor_divide` / `npy_remainder` (the
  `npy_divmod` algorithm: fmod, the quotient snapped to an integer, the sign rules of zeros; a zero
  divisor gives `a / b` and `fmod(a, 0)`);
- `numpy_minimum` / `numpy_maximum`: NaN propagates (from the first operand when both are NaN), and
  on equal operands the second is returned (as numpy's loops do; `std::fmin` drops NaN);
- `numpy_log2`: glibc's `log2`, which `expr.Scope` evaluates through (numpy's own `np.log2` uses
  SVML on AVX-512 machines and differs from glibc in the last bit for about 1 in 10,000 arguments);
- `floor_divide_i64` / `remainder_i64`: numpy's int64 `//` and `%` (floor semantics; a zero divisor
  gives 0, as numpy does after its warning).
- `canonical_nan`: a tree's float value with its NaN the canonical one (`expr.evaluate.canonical`: the
  positive quiet NaN), as the language defines it; the sign of the NaN an x86 operation or glibc makes
  differs from numpy's on some CPUs.
A bool as a float (1.0 / 0.0) is a conditional expression (`flag`).
"""

from __future__ import annotations

import math

from ckast import nodes as n

DOUBLE = n.Builtin("double")
BOOL = n.Builtin("bool")
INT64 = n.TypeName(n.Name(("std", "int64_t")))
HEADERS = (n.Header("cmath", system=True), n.Header("cstdint", system=True), n.Header("limits", system=True),
           n.Header("numeric", system=True))
"""The standard headers the helpers and the lowered expressions use."""

FLOOR_DIVIDE, REMAINDER = "numpy_floor_divide", "numpy_remainder"
MINIMUM, MAXIMUM, LOG2 = "numpy_minimum", "numpy_maximum", "numpy_log2"
FLOOR_DIVIDE_I64, REMAINDER_I64 = "floor_divide_i64", "remainder_i64"
CANONICAL_NAN = "canonical_nan"

ZERO, ONE = n.FloatLit(0.0), n.FloatLit(1.0)


def literal(value: float) -> n.Expr:
    """A double literal of exactly `value`'s bits for every value numpy produces: a NaN with its sign
    bit set prints negated (the printer writes every NaN as the positive quiet NaN)."""
    value = float(value)
    if value != value and _sign(value):
        return n.UnOp("-", n.FloatLit(abs(value)))
    return n.FloatLit(value)


def _sign(value: float) -> bool:
    return math.copysign(1.0, value) < 0


def std(name: str, *args: n.Expr) -> n.Call:
    return n.Call(n.Id(n.Name(("std", name))), args)


def call(name: str, *args: n.Expr) -> n.Call:
    """A call of one of this module's helpers (unqualified: they sit beside the code that calls them)."""
    return n.call(name, *args)


def flag(cond: n.Expr) -> n.Expr:
    """`cond ? 1.0 : 0.0`: a bool as a float64."""
    return n.Cond(cond, ONE, ZERO)


def truthy(x: n.Expr) -> n.Expr:
    """`x != 0.0`: numpy's truth of a float64 (NaN is true)."""
    return n.BinOp("!=", x, ZERO)


def _v(name: str) -> n.Id:
    return n.ident(name)


def _local(name: str, init: n.Expr, const: bool = False, type_: n.Type = DOUBLE) -> n.VarDecl:
    return n.VarDecl(n.Const(type_) if const else type_, name, init)


def _assign(op: str, name: str, value: n.Expr) -> n.ExprStmt:
    return n.ExprStmt(n.BinOp(op, _v(name), value))


def _function(name: str, returns: n.Type, params: tuple[tuple[str, n.Type], ...], body: list[n.Stmt]) -> n.FunctionDef:
    return n.FunctionDef(name, returns, [n.FuncParam(t, p) for p, t in params], body, inline=True)


def _differ_in_sign(x: str, y: str) -> n.Expr:
    return n.BinOp("!=", n.BinOp("<", _v(x), ZERO), n.BinOp("<", _v(y), ZERO))


def _floor_divide() -> n.FunctionDef:
    a, b = _v("a"), _v("b")
    return _function(FLOOR_DIVIDE, DOUBLE, (("a", DOUBLE), ("b", DOUBLE)), [
        n.If(n.BinOp("==", b, ZERO), [n.Return(n.BinOp("/", a, b))]),
        _local("mod", std("fmod", a, b), const=True),
        _local("div", n.BinOp("/", n.BinOp("-", a, _v("mod")), b)),
        n.If(n.BinOp("&&", truthy(_v("mod")), _differ_in_sign("b", "mod")), [_assign("-=", "div", ONE)]),
        n.If(n.BinOp("==", _v("div"), ZERO), [n.Return(std("copysign", ZERO, n.BinOp("/", a, b)))]),
        _local("q", std("floor", _v("div"))),
        n.If(n.BinOp(">", n.BinOp("-", _v("div"), _v("q")), n.FloatLit(0.5)), [_assign("+=", "q", ONE)]),
        n.Return(_v("q")),
    ])


def _remainder() -> n.FunctionDef:
    a, b = _v("a"), _v("b")
    return _function(REMAINDER, DOUBLE, (("a", DOUBLE), ("b", DOUBLE)), [
        _local("mod", std("fmod", a, b), const=True),
        n.If(n.BinOp("==", b, ZERO), [n.Return(_v("mod"))]),
        n.If(n.BinOp("==", _v("mod"), ZERO), [n.Return(std("copysign", ZERO, b))]),
        n.Return(n.Cond(_differ_in_sign("b", "mod"), n.BinOp("+", _v("mod"), b), _v("mod"))),
    ])


def _pick(name: str, op: str) -> n.FunctionDef:
    a, b = _v("a"), _v("b")
    first = n.BinOp("||", n.BinOp(op, a, b), n.BinOp("!=", a, a))
    return _function(name, DOUBLE, (("a", DOUBLE), ("b", DOUBLE)), [n.Return(n.Cond(first, a, b))])


def _log2() -> n.FunctionDef:
    return _function(LOG2, DOUBLE, (("a", DOUBLE),), [n.Return(std("log2", _v("a")))])


def _canonical_nan() -> n.FunctionDef:
    a = _v("a")
    return _function(CANONICAL_NAN, DOUBLE, (("a", DOUBLE),),
                     [n.Return(n.Cond(n.BinOp("==", a, a), a, n.FloatLit(math.nan)))])


def _floor_divide_i64() -> n.FunctionDef:
    a, b = _v("a"), _v("b")
    inexact = n.BinOp("&&", n.BinOp("!=", n.BinOp("%", a, b), n.IntLit(0)),
                      n.BinOp("!=", n.BinOp("<", a, n.IntLit(0)), n.BinOp("<", b, n.IntLit(0))))
    return _function(FLOOR_DIVIDE_I64, INT64, (("a", INT64), ("b", INT64)), [
        n.If(n.BinOp("==", b, n.IntLit(0)), [n.Return(n.IntLit(0))]),
        n.If(n.BinOp("==", b, n.UnOp("-", n.IntLit(1))), [n.Return(_wrapping_negation(a))]),
        n.Return(n.BinOp("-", n.BinOp("/", a, b), n.Cond(inexact, n.IntLit(1), n.IntLit(0)))),
    ])


def _wrapping_negation(a: n.Expr) -> n.Expr:
    """`-a` as numpy's int64 computes it (INT64_MIN stays itself) without C++'s overflow."""
    unsigned = n.TypeName(n.Name(("std", "uint64_t")))
    return n.StaticCast(INT64, n.BinOp("-", n.IntLit(0, "ull"), n.StaticCast(unsigned, a)))


def _remainder_i64() -> n.FunctionDef:
    a, b = _v("a"), _v("b")
    return _function(REMAINDER_I64, INT64, (("a", INT64), ("b", INT64)), [
        n.If(n.BinOp("||", n.BinOp("==", b, n.IntLit(0)), n.BinOp("==", b, n.UnOp("-", n.IntLit(1)))),
             [n.Return(n.IntLit(0))]),
        _local("mod", n.BinOp("%", a, b), const=True, type_=INT64),
        n.Return(n.Cond(n.BinOp("&&", n.BinOp("!=", _v("mod"), n.IntLit(0)),
                                n.BinOp("!=", n.BinOp("<", _v("mod"), n.IntLit(0)), n.BinOp("<", b, n.IntLit(0)))),
                        n.BinOp("+", _v("mod"), b), _v("mod"))),
    ])


DEFINITIONS: tuple[n.FunctionDef, ...] = (
    _floor_divide(), _remainder(), _pick(MINIMUM, "<"), _pick(MAXIMUM, ">"), _log2(), _floor_divide_i64(),
    _remainder_i64(), _canonical_nan(),
)
"""Every helper, in dependency order (none calls another)."""
