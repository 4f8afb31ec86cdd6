"""A problem's rules (`select.validity`) as C++: the body of the selector's `invalid(problem)`.

Each rule, in order, is a test that returns its refusal ("<field>: <rule>") when the rule does not hold; a
rule is computed only once the rules before it hold, so it never computes with a field they have not bounded
(the struct's fields are any `std::int64_t`; after the field rules, every product the rules compute fits).
An operation several rules compute (a conv output length) is kept in a local where it is first used, just
before that rule's test.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ckast import nodes as n
from ckast.select.expr import Expr, Field, Op, children, walk
from ckast.select.serving.validity import rules

from .lower_expr import Lowering
from .problem_struct import ProblemStruct, problem_struct


def lower_validity(kind: str, problem: n.Expr, prefix: str) -> list[n.Stmt]:
    """Statements that return the refusal of the first rule of `kind` the struct object `problem` breaks (and
    fall through when it breaks none); locals start `prefix`."""
    trees = [rule.holds for rule in rules(kind)]
    lowering = _Shared(problem_struct(kind), problem, prefix, trees)
    body: list[n.Stmt] = []
    for rule, tree in zip(rules(kind), trees):
        done = len(lowering.per_problem)
        holds = lowering.lower(tree)
        body += lowering.per_problem[done:]
        body.append(n.If(n.UnOp("!", holds), [n.Return(n.StrLit(f"{rule.field}: {rule.text}"))]))
    return body


class _Shared(Lowering):
    """`Lowering` that keeps the outermost operations several trees compute in locals, made on first use."""

    def __init__(self, struct: ProblemStruct, problem: n.Expr, prefix: str, trees: Sequence[Expr]) -> None:
        super().__init__(struct, problem, prefix)
        trees_of = Counter(node for tree in trees for node in set(walk(tree)))
        self.shared: set[Expr] = set()

        def visit(node: Expr) -> None:
            read = isinstance(node, Op) and node.op == "float" and isinstance(node.args[0], Field)
            if trees_of[node] > 1 and isinstance(node, Op) and not read:
                self.shared.add(node)
                return
            for child in children(node):
                visit(child)

        for tree in trees:
            visit(tree)
        self.kept: dict[Expr, n.Expr] = {}

    def child(self, node: Expr, axis: int | None) -> n.Expr:
        if node not in self.shared:
            return self.lower(node, axis)
        if node not in self.kept:
            self.kept[node] = self.hoisted(node, self.lower(node, axis), axis)
        return self.kept[node]
