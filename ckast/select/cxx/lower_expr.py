"""Feature trees (`features.expr`) as C++, staged by what they read.

`lower_features` turns trees into nodes whose double values are bit-identical to `FeatureSet.matrix`:
- a subtree that reads only kernel and hardware columns (a `Lookup` too) is computed here, with the
  same numpy evaluation (`expr.Columns`), and emitted as `static constexpr double <prefix>_k<i>[]`
  (one entry per kernel of the table, indexed by the kernel's position) or, when every kernel has the
  same value, as a literal;
- a subtree that reads only the problem (and hardware) is a local computed once per problem
  (`per_problem`) when it is shared or feeds a per-kernel computation;
- a subtree that reads both is computed per kernel (`per_kernel`; a shared one once).
A node shared by several trees (trees are hashable, equal subtrees are one node) is computed once.
A product that feeds a sum is kept in a local of its own, so no compiler contracts them into an FMA
under the default `-ffp-contract=on` (code compiled with `-ffp-contract=fast`, HIP's default, must turn
contraction off).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import attrs
import numpy as np

from ckast import nodes as n
from ckast.select.features.expr import Binary, Columns, Expr, Field, Unary, Where, children, sources
from ckast.select.features.table import KernelTable

from . import numeric as num

STAGES = ("const", "kernel", "problem", "mixed")
_COMPARE = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_ARITHMETIC = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_HELPERS = {"floordiv": num.FLOOR_DIVIDE, "mod": num.REMAINDER, "min": num.MINIMUM, "max": num.MAXIMUM}
_CONST_DOUBLE = n.Const(num.DOUBLE)


@attrs.frozen(eq=False)
class Lowered:
    """Lowered trees: `decls` (namespace scope: the kernel arrays), `per_problem` and `per_kernel`
    statements (run once per problem, then once per kernel with the kernel's index in scope), and per
    input tree its `values` expression (valid after both), its stage (`STAGES`: "const" and "kernel"
    are known here) and `known` (kernels x trees: the value where the stage is const or kernel, NaN
    elsewhere; `known_mask` says where)."""

    decls: tuple[n.Decl, ...]
    per_problem: tuple[n.Stmt, ...]
    per_kernel: tuple[n.Stmt, ...]
    values: tuple[n.Expr, ...]
    staged: tuple[str, ...]
    known: np.ndarray
    known_mask: np.ndarray


def lower_features(trees: Sequence[Expr], table: KernelTable, hw: Mapping[str, float], *, problem: n.Expr,
                   kernel: n.Expr, prefix: str) -> Lowered:
    """`trees` as C++ over the problem struct object `problem` (its int64 fields read as doubles) and the
    kernel index `kernel` (a position in `table`); `hw` holds the hardware columns; names start `prefix`."""
    return _Lowering(table, hw, problem, kernel, prefix).run(tuple(trees))


class _Lowering:
    def __init__(self, table: KernelTable, hw: Mapping[str, float], problem: n.Expr, kernel: n.Expr,
                 prefix: str) -> None:
        self.table, self.columns = table, Columns({}, hw, table)
        self.problem, self.kernel, self.prefix = problem, kernel, prefix
        self.decls: list[n.Decl] = []
        self.arrays: dict[bytes, n.Id] = {}
        self.stmts: dict[str, list[n.Stmt]] = {"problem": [], "mixed": []}
        self.memo: dict[Expr, n.Expr] = {}
        self.local: set[Expr] = set()

    def run(self, trees: tuple[Expr, ...]) -> Lowered:
        uses: Counter[Expr] = Counter(trees)
        seen: set[Expr] = set()

        def visit(node: Expr) -> None:
            if node in seen:
                return
            seen.add(node)
            for child in children(node):
                uses[child] += 1
                if self.stage(node) == "mixed" and self.stage(child) == "problem":
                    self.local.add(child)  # computed once per problem, read per kernel
                visit(child)

        for tree in trees:
            visit(tree)
        self.local.update(node for node, count in uses.items() if count > 1)
        self.local.update(trees)
        known = np.full((len(self.table), len(trees)), np.nan)
        mask = np.zeros(known.shape, dtype=bool)
        staged = []
        with np.errstate(all="ignore"):
            values = tuple(self.expr(tree) for tree in trees)
            for j, tree in enumerate(trees):
                stage = self.stage(tree)
                if stage == "kernel":
                    known[:, j], mask[:, j] = self.columns.value(tree), True
                    stage = "kernel" if isinstance(values[j], n.Index) else "const"
                staged.append(stage)
        return Lowered(tuple(self.decls), tuple(self.stmts["problem"]), tuple(self.stmts["mixed"]), values,
                       tuple(staged), known, mask)

    @staticmethod
    def stage(node: Expr) -> str:
        """"kernel" (known here: reads no problem column), "problem" or "mixed"."""
        read = sources(node)
        if "problem" not in read:
            return "kernel"
        return "mixed" if "kernel" in read else "problem"

    def expr(self, node: Expr) -> n.Expr:
        found = self.memo.get(node)
        if found is None:
            found = self.memo[node] = self._build(node)
        return found

    def _build(self, node: Expr) -> n.Expr:
        stage = self.stage(node)
        if stage == "kernel":
            return self.known(node)
        if isinstance(node, Field):
            return n.StaticCast(num.DOUBLE, n.Member(self.problem, node.name))
        built = self.operation(node)
        return self.hoisted(node, built) if node in self.local else built

    def hoisted(self, node: Expr, built: n.Expr) -> n.Id:
        """`built` kept in a local of `node`'s stage."""
        stage = self.stage(node)
        body = self.stmts[stage]
        name = f"{self.prefix}_{stage[0]}{len(body)}"
        body.append(n.VarDecl(_CONST_DOUBLE, name, built))
        return n.ident(name)

    def known(self, node: Expr) -> n.Expr:
        """A value computed here: a literal, or the kernel's entry of a constant array."""
        value = self.columns.value(node)
        if np.ndim(value) == 0 or not np.any(value.view(np.uint64) != value.view(np.uint64)[0]):
            return num.literal(float(np.ravel(value)[0]))
        key = value.tobytes()
        name = self.arrays.get(key)
        if name is None:
            name = self.arrays[key] = n.ident(f"{self.prefix}_k{len(self.arrays)}")
            items = [num.literal(v) for v in value.tolist()]
            array = n.Array(_CONST_DOUBLE, None)
            self.decls.append(n.VarDecl(array, name.name.parts[0], n.BraceInit(None, items), static=True,
                                        constexpr=True))
        return n.Index(name, self.kernel)

    def operand(self, node: Expr) -> n.Expr:
        """A sum's operand: a product (negated or not) goes to a local, so no FMA contracts the two."""
        built = self.expr(node)
        inner = built.operand if isinstance(built, n.UnOp) else built
        if isinstance(inner, n.BinOp) and inner.op == "*":
            built = self.memo[node] = self.hoisted(node, built)
        return built

    def operation(self, node: Expr) -> n.Expr:
        if isinstance(node, Unary):
            a = self.expr(node.arg)
            if node.op == "neg":
                return n.UnOp("-", a)
            if node.op == "log2":
                return num.call(num.LOG2, a)
            if node.op == "not":
                return num.flag(n.BinOp("==", a, num.ZERO))
            return num.std(node.op, a)
        if isinstance(node, Binary):
            if node.op in ("add", "sub"):
                return n.BinOp(_ARITHMETIC[node.op], self.operand(node.left), self.operand(node.right))
            a, b = self.expr(node.left), self.expr(node.right)
            if node.op in _ARITHMETIC:
                return n.BinOp(_ARITHMETIC[node.op], a, b)
            if node.op in _HELPERS:
                return num.call(_HELPERS[node.op], a, b)
            if node.op in _COMPARE:
                return num.flag(n.BinOp(_COMPARE[node.op], a, b))
            return num.flag(n.BinOp("&&" if node.op == "and" else "||", num.truthy(a), num.truthy(b)))
        if isinstance(node, Where):
            return num.where(self.expr(node.cond), self.expr(node.then), self.expr(node.otherwise))
        raise TypeError(f"not a feature expression node: {node!r}")
