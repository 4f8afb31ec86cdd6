"""Selection-language trees (`select.expr`) as C++ through ckast's nodes, with the values `expr.Scope` gives.

`Lowering` is the one translation of the language: each node on its type.
- int: `std::int64_t`, `+ - *` as C++'s, `//` and `%` by `numeric.floor_divide_i64` / `remainder_i64`
  (numpy's), `ceil_div` as `-floor_divide_i64(-a, b)`, `min` / `max` / `gcd` by `std::`;
- float: `double`, IEEE `+ - * /`, `std::ceil` / `floor` / `trunc`, and numpy's `//`, `%`, `min`, `max`
  and the C library's `log2` by `numeric`'s helpers; a product that feeds a sum is kept in a local of its
  own, so no compiler contracts the two into an FMA under the default `-ffp-contract=on` (code compiled
  with `-ffp-contract=fast`, HIP's default, must turn contraction off);
- bool: `bool`, `&& || !`, comparisons as C++'s (both sides are pure, so short-circuiting changes no
  value), `where` as `?:`; `float` of a bool is `b ? 1.0 : 0.0`, of an int a `static_cast<double>`.
Problem fields are members of the problem struct (`problem_struct`): a spatial field's axes are the
struct's three, of which `Over` and indexed reads see the problem's `ndim` innermost ones; `output` is
computed once per problem as `ConvProblem.output` does; a string field compares by its code
(`ProblemStruct.codes`). Kernel columns and hardware figures are never read at run time: the plans
compute what reads them in Python (`Scope`) and emit the values.

The plans: `lower_features` (here) computes trees per kernel, staged by what they read (features and the
analytic model); `lower_predicate.lower_predicate` folds a conjunction of bool trees per kernel
(applicability). `lower_features` turns trees into nodes whose values are bit-identical to
`FeatureSet.matrix`'s (a float value through `numeric.canonical_nan`, the language's one NaN):
- a subtree that reads only kernel columns and hardware figures is computed here and emitted as
  `static constexpr <type> <prefix>_k<i>[]` (one entry per kernel of the table, indexed by the kernel's
  position) or, when every kernel has the same value, as a literal;
- a subtree that reads only the problem (and hardware) is a local computed once per problem
  (`per_problem`) when it is shared or feeds a per-kernel computation;
- a subtree that reads both is computed per kernel (`per_kernel`; a shared one once).
A node shared by several trees (trees are hashable, equal subtrees are one node) is computed once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ckast import nodes as n
from ckast.select.expr import Const, Expr, Field, Lookup, Named, Op, Over, Scope, children
from ckast.select.features.table import KernelTable

from . import numeric as num
from .problem_struct import ProblemStruct

AXES = 3
SPATIAL = {"input": ("Di", "Hi", "Wi"), "filter": ("Z", "Y", "X"),
           **{f: tuple(f"{f}_{a}" for a in "dhw") for f in ("stride", "dilation", "left_pad", "right_pad")}}
"""A spatial field's struct members, axes d, h, w (`output` is computed from them)."""
CTYPES = {int: num.INT64, float: num.DOUBLE, bool: num.BOOL}
STAGES = ("const", "kernel", "problem", "mixed")
_OPERATORS = {"+": "+", "-": "-", "*": "*", "/": "/", "==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">",
              ">=": ">=", "and": "&&", "or": "||"}
_FLOAT_HELPERS = {"//": num.FLOOR_DIVIDE, "%": num.REMAINDER, "min": num.MINIMUM, "max": num.MAXIMUM,
                  "log2": num.LOG2}
_INT_HELPERS = {"//": num.FLOOR_DIVIDE_I64, "%": num.REMAINDER_I64}


def literal(value: Any) -> n.Expr:
    """A bool, int or float constant as a C++ literal (a float of exactly its bits: `numeric.literal`)."""
    if isinstance(value, (bool, np.bool_)):
        return n.BoolLit(bool(value))
    if isinstance(value, (int, np.integer)):
        value = int(value)
        return n.IntLit(value) if value >= 0 else n.UnOp("-", n.IntLit(-value))
    if isinstance(value, (float, np.floating)):
        return num.literal(float(value))
    raise TypeError(f"a {type(value).__name__} constant ({value!r}) has no C++ value here")


class Lowering:
    """Nodes as C++ expressions over the problem struct object `problem` (of `struct`; None: fields read as
    members of their own names). What a problem needs computed once (a conv output axis, a product kept
    out of a sum) goes to `per_problem`, local names starting `prefix`."""

    def __init__(self, struct: ProblemStruct | None, problem: n.Expr, prefix: str) -> None:
        self.struct, self.problem, self.prefix = struct, problem, prefix
        self.per_problem: list[n.Stmt] = []
        self.outputs: dict[int, n.Expr] = {}

    def child(self, node: Expr, axis: int | None) -> n.Expr:
        """An operand: `lower` (a plan may keep it in a local, or compute it here)."""
        return self.lower(node, axis)

    def hoisted(self, node: Expr, built: n.Expr, axis: int | None) -> n.Expr:
        """`built` (of `node`) kept in a per-problem local."""
        name = f"{self.prefix}_h{len(self.per_problem)}"
        self.per_problem.append(n.VarDecl(n.Const(CTYPES[node.type]), name, built))
        return n.ident(name)

    def lower(self, node: Expr, axis: int | None = None) -> n.Expr:
        """`node` as C++; `axis` is the spatial axis an element-wise spatial expression is taken at."""
        if isinstance(node, Op):
            return self.op(node, axis)
        if isinstance(node, Const):
            return literal(node.value)
        if isinstance(node, Field):
            return self.field(node, axis)
        if isinstance(node, Named):
            return self.child(node.expr, axis)
        if isinstance(node, Over):
            return self.over(node)
        if isinstance(node, Lookup):
            out = literal(node.default)
            for k, v in reversed(node.table):
                out = n.Cond(self.op(Op("==", (node.key, Const(k))), axis), literal(v), out)
            return out
        raise TypeError(f"{node!r} is no problem-side node (kernel columns and hardware figures are emitted as values)")

    def member(self, name: str) -> n.Expr:
        return n.Member(self.problem, name)

    def ndim_at_least(self, rank: int) -> n.Expr:
        return n.BinOp(">=", self.member("ndim"), n.IntLit(rank))

    def field(self, node: Field, axis: int | None) -> n.Expr:
        if node.index is not None:
            rank = -node.index
            if not 0 < rank <= AXES:
                raise ValueError(f"spatial index {node.index} of {node.name}: only -1..-{AXES} are lowered")
            return n.Cond(self.ndim_at_least(rank), self.spatial(node.name, AXES - rank), n.IntLit(0))
        if node.name in SPATIAL or node.name == "output":
            if axis is None:
                raise ValueError(f"spatial field {node.name} outside a reduction")
            return self.spatial(node.name, axis)
        if node.type is str:
            raise ValueError(f"problem string {node.name} outside a comparison with a string")
        return self.member(node.name)

    def spatial(self, name: str, axis: int) -> n.Expr:
        """Axis `axis` (0 d, 1 h, 2 w) of spatial field `name`."""
        return self.output(axis) if name == "output" else self.member(SPATIAL[name][axis])

    def output(self, axis: int) -> n.Expr:
        """`ConvProblem.output` along `axis`, a per-problem local made on first use."""
        if axis not in self.outputs:
            def at(field: str) -> n.Expr:
                return self.spatial(field, axis)

            reach = n.BinOp("+", n.BinOp("*", at("dilation"), n.BinOp("-", at("filter"), n.IntLit(1))), n.IntLit(1))
            span = n.BinOp("-", n.BinOp("+", n.BinOp("+", at("input"), at("left_pad")), at("right_pad")), reach)
            name = f"{self.prefix}_out_{'dhw'[axis]}"
            init = n.BinOp("+", num.call(num.FLOOR_DIVIDE_I64, span, at("stride")), n.IntLit(1))
            self.per_problem.append(n.VarDecl(n.Const(num.INT64), name, init))
            self.outputs[axis] = n.ident(name)
        return self.outputs[axis]

    def over(self, node: Over) -> n.Expr:
        parts = [self.child(node.arg, axis) for axis in range(AXES)]
        out = parts[-1]
        for axis in reversed(range(AXES - 1)):
            present = self.ndim_at_least(AXES - axis)
            if node.op == "all":
                out = n.BinOp("&&", n.BinOp("||", n.UnOp("!", present), parts[axis]), out)
            elif node.op == "any":
                out = n.BinOp("||", n.BinOp("&&", present, parts[axis]), out)
            else:
                out = n.BinOp("*", n.Cond(present, n.StaticCast(num.INT64, parts[axis]), n.IntLit(1)), out)
        return out

    def operand(self, node: Expr, axis: int | None) -> n.Expr:
        """A float sum's operand: a product (negated or not) goes to a local, so no FMA contracts the two."""
        built = self.child(node, axis)
        inner = built.operand if isinstance(built, n.UnOp) else built
        if isinstance(inner, n.BinOp) and inner.op == "*":
            built = self.hoisted(node, built, axis)
        return built

    def op(self, node: Op, axis: int | None) -> n.Expr:
        op, kind = node.op, node.args[0].type
        if op in ("==", "!=") and kind is str:
            return self.string_compare(node)
        if op in ("+", "-") and kind is float:
            return n.BinOp(op, *(self.operand(a, axis) for a in node.args))
        args = [self.child(a, axis) for a in node.args]
        if op in _OPERATORS:
            return n.BinOp(_OPERATORS[op], *args)
        if op in ("neg", "not"):
            return n.UnOp("-" if op == "neg" else "!", args[0])
        if op == "where":
            return n.Cond(*args)
        if op == "float":
            return num.flag(args[0]) if kind is bool else n.StaticCast(num.DOUBLE, args[0])
        if kind is float:
            return num.call(_FLOAT_HELPERS[op], *args) if op in _FLOAT_HELPERS else num.std(op, *args)
        if op in _INT_HELPERS:
            return num.call(_INT_HELPERS[op], *args)
        if op == "ceil_div":
            return n.UnOp("-", num.call(num.FLOOR_DIVIDE_I64, n.UnOp("-", args[0]), args[1]))
        # min, max, gcd: std:: templates want one argument type
        return num.std(op, *(a if isinstance(a, n.Member) else n.StaticCast(num.INT64, a) for a in args))

    def string_compare(self, node: Op) -> n.Expr:
        """A problem string field against a string: its code against the string's (no code: never equal)."""
        (text,) = [a.value for a in node.args if isinstance(a, Const)]
        (field,) = [a for a in node.args if isinstance(a, Field)]
        code = self.struct.codes[field.name].get(text)
        if code is None:
            return n.BoolLit(node.op == "!=")
        return n.BinOp(node.op, self.member(field.name), n.IntLit(code))


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
    """`trees` as C++ over the problem struct object `problem` (its fields read by name) and the kernel index
    `kernel` (a position in `table`); `hw` holds the hardware figures; names start `prefix`."""
    return _Staged(table, hw, problem, kernel, prefix).run(tuple(trees))


def _read(node: Expr) -> bool:
    """A problem field's read (converted or not): one member read, kept in no local."""
    return isinstance(node, (Const, Field)) or (isinstance(node, Op) and node.op == "float"
                                                 and isinstance(node.args[0], Field))


class _Staged(Lowering):
    def __init__(self, table: KernelTable, hw: Mapping[str, float], problem: n.Expr, kernel: n.Expr,
                 prefix: str) -> None:
        super().__init__(None, problem, prefix)
        self.table, self.scope, self.kernel = table, Scope(table, None, hw), kernel
        self.decls: list[n.Decl] = []
        self.arrays: dict[tuple, n.Id] = {}
        self.stmts: dict[str, list[n.Stmt]] = {"problem": self.per_problem, "mixed": []}
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
            values = [self.child(tree, None) for tree in trees]
            for j, tree in enumerate(trees):
                stage = self.stage(tree)
                if stage == "kernel":
                    known[:, j], mask[:, j] = self.scope.value(tree), True
                    stage = "kernel" if isinstance(values[j], n.Index) else "const"
                elif tree.type is float:  # the language's one NaN (known values have it already)
                    values[j] = num.call(num.CANONICAL_NAN, values[j])
                staged.append(stage)
        return Lowered(tuple(self.decls), tuple(self.per_problem), tuple(self.stmts["mixed"]), tuple(values),
                       tuple(staged), known, mask)

    @staticmethod
    def stage(node: Expr) -> str:
        """"kernel" (known here: reads no problem field), "problem" or "mixed"."""
        if "problem" not in node.sources:
            return "kernel"
        return "mixed" if "kernel" in node.sources else "problem"

    def child(self, node: Expr, axis: int | None) -> n.Expr:
        if axis is not None:
            return self.lower(node, axis)
        found = self.memo.get(node)
        if found is None:
            found = self.memo[node] = self._build(node)
        return found

    def _build(self, node: Expr) -> n.Expr:
        if self.stage(node) == "kernel":
            return self.known(node)
        built = self.lower(node)
        return self.hoisted(node, built, None) if node in self.local and not _read(node) else built

    def hoisted(self, node: Expr, built: n.Expr, axis: int | None) -> n.Expr:
        """`built` kept in a local of `node`'s stage."""
        if axis is not None:
            return super().hoisted(node, built, axis)
        stage = self.stage(node)
        body = self.stmts[stage]
        name = f"{self.prefix}_{stage[0]}{len(body)}"
        body.append(n.VarDecl(n.Const(CTYPES[node.type]), name, built))
        found = self.memo[node] = n.ident(name)
        return found

    def known(self, node: Expr) -> n.Expr:
        """A value computed here: a literal, or the kernel's entry of a constant array."""
        value = self.scope.value(node)
        bits = np.ravel(value).view(np.uint64) if node.type is float else np.ravel(value)
        if np.ndim(value) == 0 or not np.any(bits != bits[0]):
            return literal(np.ravel(value)[0])
        key = (node.type, value.tobytes())
        name = self.arrays.get(key)
        if name is None:
            name = self.arrays[key] = n.ident(f"{self.prefix}_k{len(self.arrays)}")
            items = [literal(v) for v in value.tolist()]
            self.decls.append(n.VarDecl(n.Array(n.Const(CTYPES[node.type]), None), name.name.parts[0],
                                        n.BraceInit(None, items), static=True, constexpr=True))
        return n.Index(name, self.kernel)
