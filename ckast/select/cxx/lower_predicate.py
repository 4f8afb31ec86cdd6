"""Predicate trees (`predicate`, `applicability.CONDITIONS`) as C++: whether each kernel accepts a problem.

Everything that reads only kernel columns is decided here, per kernel, with the same numpy evaluation
(`predicate.evaluate`): a condition whose guard is false for a kernel, or whose requirement is
constant, disappears for it, and strings (datatype, variant, layout, ...) are compared here. What is
left of each condition reads only the problem; every distinct leftover is one term computed once per
problem (`per_problem`), and kernels with the same terms form a group whose flag is their `&&`. The
value for kernel `k` is then one array read: `<prefix>_ok[<prefix>_group[k]]`.

The leftovers compute on `std::int64_t` as numpy computes on int64 (`//` and `%` by
`numeric.floor_divide_i64` / `remainder_i64`, `gcd` by `std::gcd`); a problem's spatial tuple is the
struct's three axes, of which reductions (`Over`) and indexed reads see the problem's `ndim` innermost
ones; `output` is computed per problem as `ConvProblem.output` does; a problem string (`direction`)
compares by its code (`ProblemStruct.codes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from ckast import nodes as n
from ckast.select import predicate as P
from ckast.select.applicability import LAYERS, conditions
from ckast.select.features.table import KernelTable

from . import numeric as num
from .problem_struct import ProblemStruct, problem_struct

AXES = 3
_SPATIAL = {"input": ("Di", "Hi", "Wi"), "filter": ("Z", "Y", "X"),
            **{f: tuple(f"{f}_{a}" for a in "dhw") for f in ("stride", "dilation", "left_pad", "right_pad")}}
_INFIX = {"+": "+", "-": "-", "*": "*", "==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
          "and": "&&", "or": "||"}
_INT32 = n.TypeName(n.Name(("std", "int32_t")))


@attrs.frozen(eq=False)
class LoweredPredicate:
    """The conjunction of some predicate trees per kernel: `decls` (namespace scope), `per_problem`
    statements, `value` (a `bool` for kernel index `kernel`, valid after `per_problem`) and, per kernel
    of the table, `known` (the value where no problem can change it) where `known_mask` is set."""

    decls: tuple[n.Decl, ...]
    per_problem: tuple[n.Stmt, ...]
    value: n.Expr
    known: np.ndarray
    known_mask: np.ndarray


def lower_applicability(table: KernelTable, kind: str, *, problem: n.Expr, kernel: n.Expr, prefix: str,
                        layers: Sequence[str] = LAYERS) -> LoweredPredicate:
    """`applicability.applicable` for problems of `kind` under `layers` as C++ (their conditions)."""
    return lower_predicate([c.holds for c in conditions(kind, layers)], table, problem_struct(kind), problem=problem,
                           kernel=kernel, prefix=prefix)


def lower_predicate(trees: Sequence[P.Expr], table: KernelTable, struct: ProblemStruct, *, problem: n.Expr,
                    kernel: n.Expr, prefix: str) -> LoweredPredicate:
    """The `&&` of boolean `trees` per kernel of `table`, over the struct object `problem` (of `struct`)."""
    columns = P.Columns(table)
    terms: dict[P.Expr, int] = {}
    signatures: list[set[int] | None] = [set() for _ in range(len(table))]
    with np.errstate(all="ignore"):
        for tree in trees:
            for kernels, left in _residuals(tree, columns, struct):
                if isinstance(left, P.Const):
                    if not left.value:
                        for k in kernels:
                            signatures[k] = None
                    continue
                term = terms.setdefault(left, len(terms))
                for k in kernels:
                    if signatures[k] is not None:
                        signatures[k].add(term)
    return _Emitter(struct, problem, prefix).emit(terms, signatures, kernel)


def _residuals(tree: P.Expr, columns: P.Columns, struct: ProblemStruct) -> list[tuple[list[int], P.Expr]]:
    """`tree` folded per kernel: (kernels, what is left for them) for each distinct leftover."""
    frontier = _frontier(tree)
    values = [_per_kernel(P.evaluate(node, {}, columns), len(columns)) for node in frontier]
    groups: dict[tuple, list[int]] = {}
    for k, key in enumerate(zip(*values) if values else [()] * len(columns)):
        groups.setdefault(key, []).append(k)
    out: dict[P.Expr, list[int]] = {}
    for key, kernels in groups.items():
        left = _fold(tree, dict(zip(frontier, key)), struct, columns)
        out.setdefault(left, []).extend(kernels)
    return [(kernels, left) for left, kernels in out.items()]


def _frontier(tree: P.Expr) -> list[P.Expr]:
    """The largest subtrees that read kernel columns and no problem field."""
    found: dict[P.Expr, None] = {}

    def visit(node: P.Expr) -> None:
        if not P.reads_problem(node):
            if not isinstance(node, P.Const):
                found[node] = None
            return
        for child in P.children(node):
            visit(child)

    visit(tree)
    return list(found)


def _per_kernel(value: Any, size: int) -> list[Any]:
    if np.ndim(value) == 0:
        return [_plain(value)] * size
    return [_plain(v) for v in value]


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _fold(node: P.Expr, known: dict[P.Expr, Any], struct: ProblemStruct, columns: P.Columns) -> P.Expr:
    """`node` with the kernel-side values `known` put in and what they decide decided."""
    if node in known:
        return P.Const(known[node])
    if isinstance(node, P.Field):
        return P.Const(struct.constants[node.name]) if node.name in struct.constants else node
    if isinstance(node, P.Named):
        return _fold(node.expr, known, struct, columns)
    if isinstance(node, P.Over):
        return P.Over(node.op, _fold(node.arg, known, struct, columns))
    if isinstance(node, P.Lookup):
        key = _fold(node.key, known, struct, columns)
        return P.Const(dict(node.table).get(key.value, node.default)) if isinstance(key, P.Const) else \
            P.Lookup(node.name, node.table, key, node.default)
    if not isinstance(node, P.Op):
        return node
    if node.op == "where":
        cond = _fold(node.args[0], known, struct, columns)
        if isinstance(cond, P.Const):
            return _fold(node.args[1] if cond.value else node.args[2], known, struct, columns)
        args = (cond, *(_fold(a, known, struct, columns) for a in node.args[1:]))
    else:
        args = tuple(_fold(a, known, struct, columns) for a in node.args)
    if node.op in ("and", "or"):
        decisive = node.op == "or"
        if any(isinstance(a, P.Const) and bool(a.value) == decisive for a in args):
            return P.Const(decisive)
        args = tuple(a for a in args if not isinstance(a, P.Const))
        if len(args) < 2:
            return args[0] if args else P.Const(not decisive)
    if node.op in ("//", "%") and args[1] == P.Const(1):
        return args[0] if node.op == "//" else P.Const(0)
    if all(isinstance(a, P.Const) for a in args):  # e.g. a GEMM problem's constant direction against the kernel's
        return P.Const(_plain(P.evaluate(P.Op(node.op, args), {}, columns)))
    return P.Op(node.op, args)


class _Emitter:
    """Terms and groups as nodes."""

    def __init__(self, struct: ProblemStruct, problem: n.Expr, prefix: str) -> None:
        self.struct, self.problem, self.prefix = struct, problem, prefix
        self.stmts: list[n.Stmt] = []
        self.outputs: dict[int, n.Expr] = {}

    def emit(self, terms: dict[P.Expr, int], signatures: list[set[int] | None], kernel: n.Expr) -> LoweredPredicate:
        names = []
        for left in terms:
            names.append(n.ident(f"{self.prefix}_t{len(names)}"))
            self.stmts.append(n.VarDecl(n.Const(num.BOOL), names[-1].name.parts[0], self.lower(left)))
        groups: dict[tuple[int, ...] | None, int] = {}
        of_kernel = [groups.setdefault(None if s is None else tuple(sorted(s)), len(groups)) for s in signatures]
        flags = [n.BoolLit(False) if g is None else _all([names[t] for t in g]) for g in groups]
        known_mask = np.array([s is None or not s for s in signatures], dtype=bool)
        known = np.array([s is not None for s in signatures], dtype=bool) & known_mask
        if len(flags) == 1:
            return LoweredPredicate((), tuple(self.stmts), flags[0], known, known_mask)
        ok, group = f"{self.prefix}_ok", f"{self.prefix}_group"
        self.stmts.append(n.VarDecl(n.Array(n.Const(num.BOOL), None), ok, n.BraceInit(None, flags)))
        decl = n.VarDecl(n.Array(n.Const(_INT32), None), group, n.BraceInit(None, [n.IntLit(g) for g in of_kernel]),
                         static=True, constexpr=True)
        value = n.Index(n.ident(ok), n.Index(n.ident(group), kernel))
        return LoweredPredicate((decl,), tuple(self.stmts), value, known, known_mask)

    def field(self, name: str) -> n.Expr:
        return n.Member(self.problem, name)

    def ndim_at_least(self, rank: int) -> n.Expr:
        return n.BinOp(">=", self.field("ndim"), n.IntLit(rank))

    def spatial(self, name: str, axis: int) -> n.Expr:
        """Axis `axis` (0 d, 1 h, 2 w) of spatial field `name`."""
        if name == "output":
            return self.output(axis)
        return self.field(_SPATIAL[name][axis])

    def output(self, axis: int) -> n.Expr:
        """`ConvProblem.output` along `axis`, a per-problem local made on first use."""
        if axis not in self.outputs:
            def at(field: str) -> n.Expr:
                return self.spatial(field, axis)

            reach = n.BinOp("+", n.BinOp("*", at("dilation"), n.BinOp("-", at("filter"), n.IntLit(1))), n.IntLit(1))
            span = n.BinOp("-", n.BinOp("+", n.BinOp("+", at("input"), at("left_pad")), at("right_pad")), reach)
            name = f"{self.prefix}_out_{'dhw'[axis]}"
            init = n.BinOp("+", num.call(num.FLOOR_DIVIDE_I64, span, at("stride")), n.IntLit(1))
            self.stmts.append(n.VarDecl(n.Const(num.INT64), name, init))
            self.outputs[axis] = n.ident(name)
        return self.outputs[axis]

    def lower(self, node: P.Expr, axis: int | None = None) -> n.Expr:
        """`node` as C++; `axis` is the spatial axis an element-wise spatial expression is taken at."""
        if isinstance(node, P.Const):
            return self.constant(node.value)
        if isinstance(node, P.Field):
            if node.index is not None:
                rank = -node.index
                if not 0 < rank <= AXES:
                    raise ValueError(f"spatial index {node.index} of {node.name}: only -1..-{AXES} are lowered")
                return n.Cond(self.ndim_at_least(rank), self.spatial(node.name, AXES - rank), n.IntLit(0))
            if node.name in _SPATIAL or node.name == "output":
                if axis is None:
                    raise ValueError(f"spatial field {node.name} outside a reduction")
                return self.spatial(node.name, axis)
            return self.field(node.name)
        if isinstance(node, P.Over):
            return self.over(node)
        if isinstance(node, P.Lookup):
            out = self.constant(node.default)
            for k, v in reversed(node.table):
                out = n.Cond(self.op(P.Op("==", (node.key, P.Const(k))), axis), self.constant(v), out)
            return out
        if isinstance(node, P.Op):
            return self.op(node, axis)
        raise TypeError(f"not a problem-side predicate node: {node!r}")

    def constant(self, value: Any) -> n.Expr:
        if isinstance(value, bool):
            return n.BoolLit(value)
        if isinstance(value, int):
            return n.IntLit(value) if value >= 0 else n.UnOp("-", n.IntLit(-value))
        raise TypeError(f"a {type(value).__name__} constant ({value!r}) left in a problem-side predicate")

    def over(self, node: P.Over) -> n.Expr:
        parts = [self.lower(node.arg, axis) for axis in range(AXES)]
        out = parts[-1]
        for axis in reversed(range(AXES - 1)):
            present = self.ndim_at_least(AXES - axis)
            if node.op == "all":
                part = n.BinOp("||", n.UnOp("!", present), parts[axis])
                out = n.BinOp("&&", part, out)
            elif node.op == "any":
                out = n.BinOp("||", n.BinOp("&&", present, parts[axis]), out)
            else:
                out = n.BinOp("*", n.Cond(present, n.StaticCast(num.INT64, parts[axis]), n.IntLit(1)), out)
        return out

    def op(self, node: P.Op, axis: int | None) -> n.Expr:
        if node.op in ("==", "!=") and any(isinstance(a, P.Const) and isinstance(a.value, str) for a in node.args):
            return self.string_compare(node)
        args = [self.lower(a, axis) for a in node.args]
        if node.op in _INFIX:
            return n.BinOp(_INFIX[node.op], *args)
        if node.op == "not":
            return n.UnOp("!", args[0])
        if node.op == "where":
            return n.Cond(*args)
        if node.op == "//":
            return num.call(num.FLOOR_DIVIDE_I64, *args)
        if node.op == "%":
            return num.call(num.REMAINDER_I64, *args)
        if node.op == "ceil_div":
            return n.UnOp("-", num.call(num.FLOOR_DIVIDE_I64, n.UnOp("-", args[0]), args[1]))
        if node.op in ("min", "max", "gcd"):  # std:: templates want one argument type
            return num.std(node.op, *(a if isinstance(a, n.Member) else n.StaticCast(num.INT64, a) for a in args))
        raise ValueError(f"predicate op {node.op!r} has no C++ lowering")

    def string_compare(self, node: P.Op) -> n.Expr:
        """A problem string field against a string: its code against the string's (no code: never equal)."""
        (text,) = [a.value for a in node.args if isinstance(a, P.Const)]
        (field,) = [a for a in node.args if isinstance(a, P.Field)]
        code = self.struct.codes[field.name].get(text)
        if code is None:
            return n.BoolLit(node.op == "!=")
        return n.BinOp(node.op, self.field(field.name), n.IntLit(code))


def _all(terms: list[n.Expr]) -> n.Expr:
    if not terms:
        return n.BoolLit(True)
    out = terms[0]
    for t in terms[1:]:
        out = n.BinOp("&&", out, t)
    return out
