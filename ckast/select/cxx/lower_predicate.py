"""A conjunction of bool trees of the selection language (`applicability.CONDITIONS`) as C++: whether each
kernel accepts a problem.

Everything that reads only kernel columns is decided here, per kernel, with the same numpy evaluation
(`expr.Scope`): a condition whose guard is false for a kernel, or whose requirement is constant,
disappears for it, and strings (datatype, variant, layout, ...) are compared here. What is left of each
condition reads only the problem; every distinct leftover is one term computed once per problem
(`per_problem`, by `lower_expr.Lowering`, the language's one translation), and kernels with the same
terms form a group whose flag is their `&&`. The value for kernel `k` is then one array read:
`<prefix>_ok[<prefix>_group[k]]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from ckast import nodes as n
from ckast.select.serving.applicability import LAYERS, conditions
from ckast.select.expr import Const, Expr, Field, Lookup, Named, Op, Over, Scope, children
from ckast.select.features.table import KernelTable

from . import numeric as num
from .lower_expr import Lowering
from .problem_struct import ProblemStruct, problem_struct

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


def lower_predicate(trees: Sequence[Expr], table: KernelTable, struct: ProblemStruct, *, problem: n.Expr,
                    kernel: n.Expr, prefix: str) -> LoweredPredicate:
    """The `&&` of bool `trees` per kernel of `table`, over the struct object `problem` (of `struct`)."""
    scope = Scope(table)
    terms: dict[Expr, int] = {}
    signatures: list[set[int] | None] = [set() for _ in range(len(table))]
    with np.errstate(all="ignore"):
        for tree in trees:
            for kernels, left in _residuals(tree, scope, struct):
                if isinstance(left, Const):
                    if not left.value:
                        for k in kernels:
                            signatures[k] = None
                    continue
                term = terms.setdefault(left, len(terms))
                for k in kernels:
                    if signatures[k] is not None:
                        signatures[k].add(term)
    return _Emitter(struct, problem, prefix).emit(terms, signatures, kernel)


def _residuals(tree: Expr, scope: Scope, struct: ProblemStruct) -> list[tuple[list[int], Expr]]:
    """`tree` folded per kernel: (kernels, what is left for them) for each distinct leftover."""
    frontier = _frontier(tree)
    size = len(scope.table)
    values = [_per_kernel(scope.value(node), size) for node in frontier]
    groups: dict[tuple, list[int]] = {}
    for k, key in enumerate(zip(*values) if values else [()] * size):
        groups.setdefault(key, []).append(k)
    out: dict[Expr, list[int]] = {}
    for key, kernels in groups.items():
        left = _fold(tree, dict(zip(frontier, key)), struct)
        out.setdefault(left, []).extend(kernels)
    return [(kernels, left) for left, kernels in out.items()]


def _frontier(tree: Expr) -> list[Expr]:
    """The largest subtrees that read kernel columns and no problem field."""
    found: dict[Expr, None] = {}

    def visit(node: Expr) -> None:
        if "problem" not in node.sources:
            if not isinstance(node, Const):
                found[node] = None
            return
        for child in children(node):
            visit(child)

    visit(tree)
    return list(found)


def _per_kernel(value: Any, size: int) -> list[Any]:
    return [value] * size if np.ndim(value) == 0 else list(value)


def _fold(node: Expr, known: dict[Expr, Any], struct: ProblemStruct) -> Expr:
    """`node` with the kernel-side values `known` put in and what they decide decided."""
    if node in known:
        return Const(known[node])
    if isinstance(node, Field):
        return Const(struct.constants[node.name]) if node.name in struct.constants else node
    if isinstance(node, Named):
        return _fold(node.expr, known, struct)
    if isinstance(node, Over):
        return Over(node.op, _fold(node.arg, known, struct))
    if isinstance(node, Lookup):
        key = _fold(node.key, known, struct)
        return Const(dict(node.table).get(key.value, node.default)) if isinstance(key, Const) else \
            Lookup(node.name, node.table, key, node.default)
    if not isinstance(node, Op):
        return node
    if node.op == "where":
        cond = _fold(node.args[0], known, struct)
        if isinstance(cond, Const):
            return _fold(node.args[1] if cond.value else node.args[2], known, struct)
        args = (cond, *(_fold(a, known, struct) for a in node.args[1:]))
    else:
        args = tuple(_fold(a, known, struct) for a in node.args)
    if node.op in ("and", "or"):
        decisive = node.op == "or"
        if any(isinstance(a, Const) and a.value == decisive for a in args):
            return Const(decisive)
        args = tuple(a for a in args if not isinstance(a, Const))
        if len(args) < 2:
            return args[0] if args else Const(not decisive)
    if node.op in ("//", "%") and args[1] == Const(1):
        return args[0] if node.op == "//" else Const(0)
    if all(isinstance(a, Const) for a in args):  # e.g. a GEMM problem's constant direction against the kernel's
        return Const(Scope().value(Op(node.op, args)))
    return Op(node.op, args)


class _Emitter(Lowering):
    """Terms and groups as nodes."""

    def emit(self, terms: dict[Expr, int], signatures: list[set[int] | None], kernel: n.Expr) -> LoweredPredicate:
        names = []
        for left in terms:
            names.append(n.ident(f"{self.prefix}_t{len(names)}"))
            self.per_problem.append(n.VarDecl(n.Const(num.BOOL), names[-1].name.parts[0], self.lower(left)))
        groups: dict[tuple[int, ...] | None, int] = {}
        of_kernel = [groups.setdefault(None if s is None else tuple(sorted(s)), len(groups)) for s in signatures]
        flags = [n.BoolLit(False) if g is None else _all([names[t] for t in g]) for g in groups]
        known_mask = np.array([s is None or not s for s in signatures], dtype=bool)
        known = np.array([s is not None for s in signatures], dtype=bool) & known_mask
        if len(flags) == 1:
            return LoweredPredicate((), tuple(self.per_problem), flags[0], known, known_mask)
        ok, group = f"{self.prefix}_ok", f"{self.prefix}_group"
        self.per_problem.append(n.VarDecl(n.Array(n.Const(num.BOOL), None), ok, n.BraceInit(None, flags)))
        decl = n.VarDecl(n.Array(n.Const(_INT32), None), group, n.BraceInit(None, [n.IntLit(g) for g in of_kernel]),
                         static=True, constexpr=True)
        value = n.Index(n.ident(ok), n.Index(n.ident(group), kernel))
        return LoweredPredicate((decl,), tuple(self.per_problem), value, known, known_mask)


def _all(terms: list[n.Expr]) -> n.Expr:
    if not terms:
        return n.BoolLit(True)
    out = terms[0]
    for t in terms[1:]:
        out = n.BinOp("&&", out, t)
    return out
