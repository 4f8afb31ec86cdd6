"""A LightGBM forest as C++: static constant arrays and an evaluator with LightGBM's exact decisions, partially
evaluated per kernel (issue 22).

Partial evaluation. Some features are known at emit time for a kernel (`known`/`known_mask`: kernel- and
hardware-only features). In each tree every split on a known feature is decided in Python with the reference
semantics (`forest.go_left`) for each kernel; what is left, the *residual tree*, splits on unknown features
only. Kernels with equal known values (over the features the forest splits on) form one class; residual
nodes are hash-consed over all trees and classes (a node is its split and its two children), so classes whose
known splits route them the same way share their residual tree, and equal subtrees are stored once.

Layout (all `static constexpr`, namespace scope, names prefixed):
- nodes, structure of arrays: `feature` (uint16), `threshold` (double; for a categorical split the index of
  its bitset), `kind` (uint8, below), `left`/`right` (int32: a node index, or `~leaf` for a leaf);
- `leaf` (double): the distinct leaf values; a tree a class's known splits decide entirely is a leaf entry;
- `roots` (int32, classes x trees, class-major): the residual root of each tree for each class;
- `kernel_class` (uint16 or int32): each kernel's class; `bits`/`bit_bounds`: the categorical bitsets.

Evaluation of `predict(k, row)` sums, from 0.0 and in tree order, the leaf each tree's residual reaches (a
constant tree costs one load and one add), then applies the objective's output transform: the same
additions in the same order as LightGBM, so the result is bit-identical (no constant folding across trees).
A node's `kind` folds LightGBM's missing-value rules (missing type none / zero / NaN, `default_left`) into
where a NaN and a zero go: bit 0 (`NAN_LEFT`) a NaN goes left (else right, where `x <= threshold` sends it);
bit 1 (`ZERO_RULE`) a zero goes left iff bit 2 (`ZERO_LEFT`), not by its threshold (missing type zero only);
otherwise left iff `x <= threshold`. Kind 8 (`CATEGORY`): left iff -1 < x < 32 * words and bit `int(x)` of the
bitset is set (LightGBM: NaN, negative and out-of-range values go right). A feature value with
|x| <= 1e-35f reads as 0.0 first, as LightGBM's dense-row reader makes it.
"""

from __future__ import annotations

import attrs
import numpy as np

from ckast import nodes as n
from ckast.select.forest import (CATEGORICAL, DEFAULT_LEFT, MISSING_NAN, MISSING_NONE, MISSING_ZERO, Forest, Tree,
                                 _input, go_left)

NAN_LEFT, ZERO_RULE, ZERO_LEFT, CATEGORY = 1, 2, 4, 8
"""Node kinds (see the module docstring)."""


@attrs.frozen(eq=False)
class Program:
    """The lowered forest as arrays (what the C++ arrays hold)."""

    feature: np.ndarray
    threshold: np.ndarray
    kind: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf: np.ndarray
    bits: np.ndarray
    bit_bounds: np.ndarray
    roots: np.ndarray
    kernel_class: np.ndarray

    @property
    def trees(self) -> int:
        return self.roots.shape[1]


class _Builder:
    """Hash-conses residual nodes, leaves and bitsets into flat lists."""

    def __init__(self) -> None:
        self.nodes: dict[tuple, int] = {}
        self.rows: list[tuple[int, float, int, int, int]] = []
        self.leaves: dict[int, int] = {}
        self.leaf_values: list[float] = []
        self.bitsets: dict[tuple[int, ...], int] = {}
        self.bit_words: list[int] = []
        self.bit_bounds: list[int] = [0]

    def leaf(self, value: float) -> int:
        key = int(np.float64(value).view(np.int64))
        found = self.leaves.get(key)
        if found is None:
            found = self.leaves[key] = len(self.leaf_values)
            self.leaf_values.append(float(value))
        return ~found

    def bitset(self, words: tuple[int, ...]) -> int:
        found = self.bitsets.get(words)
        if found is None:
            found = self.bitsets[words] = len(self.bitsets)
            self.bit_words.extend(words)
            self.bit_bounds.append(len(self.bit_words))
        return found

    def node(self, feature: int, threshold: float, kind: int, left: int, right: int) -> int:
        key = (feature, int(np.float64(threshold).view(np.int64)), kind, left, right)
        found = self.nodes.get(key)
        if found is None:
            found = self.nodes[key] = len(self.rows)
            self.rows.append((feature, threshold, kind, left, right))
        return found


def _split(tree: Tree, node: int, builder: _Builder) -> tuple[float, int]:
    """(threshold, kind) of a residual copy of `node` (see the module docstring)."""
    decision = int(tree.decision_type[node])
    if decision & CATEGORICAL:
        k = int(tree.threshold[node])
        words = tuple(int(w) for w in tree.cat_threshold[tree.cat_boundaries[k]:tree.cat_boundaries[k + 1]])
        return float(builder.bitset(words)), CATEGORY
    threshold = float(tree.threshold[node])
    missing, default_left = (decision >> 2) & 3, bool(decision & DEFAULT_LEFT)
    zero_plain = 0.0 <= threshold
    nan_left = {MISSING_NONE: zero_plain, MISSING_ZERO: default_left, MISSING_NAN: default_left}[missing]
    zero_left = default_left if missing == MISSING_ZERO else zero_plain
    zero_rule = ZERO_RULE | ZERO_LEFT * zero_left if zero_left != zero_plain else 0
    return threshold, NAN_LEFT * nan_left | zero_rule


def _residual(tree: Tree, node: int, classes: np.ndarray, values: np.ndarray, mask: np.ndarray,
              builder: _Builder) -> np.ndarray:
    """The residual node (or ~leaf) of `node`'s subtree for each of `classes`."""
    if node < 0:
        return np.full(len(classes), builder.leaf(tree.leaf_value[~node]), dtype=np.int64)
    feature = int(tree.split_feature[node])
    out = np.empty(len(classes), dtype=np.int64)
    known = mask[classes, feature]
    if known.any():
        where = np.flatnonzero(known)
        left = go_left(tree, np.full(len(where), node), values[classes[where], feature])
        for side, child in ((left, int(tree.left[node])), (~left, int(tree.right[node]))):
            if side.any():
                out[where[side]] = _residual(tree, child, classes[where[side]], values, mask, builder)
    if not known.all():
        where = np.flatnonzero(~known)
        sub = classes[where]
        lo = _residual(tree, int(tree.left[node]), sub, values, mask, builder)
        hi = _residual(tree, int(tree.right[node]), sub, values, mask, builder)
        pairs, inverse = np.unique((lo << 32) | (hi & 0xFFFFFFFF), return_inverse=True)  # children fit int32
        threshold, kind = _split(tree, node, builder)
        ids = np.array([builder.node(feature, threshold, kind, p >> 32, ((p & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000)
                        for p in pairs.tolist()], dtype=np.int64)
        out[where] = ids[inverse]
    return out


def _classes(forest: Forest, known: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kernel -> class, class known values, class mask): kernels equal on the known features the forest splits on."""
    used = np.zeros(len(forest.feature_names), dtype=bool)
    for tree in forest.trees:
        used[tree.split_feature] = True
    mask = mask & used
    values = np.where(mask, _input(known) if known.size else known, 0.0)
    key = np.concatenate([values.view(np.int64), mask.astype(np.int64)], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)  # classes numbered by their first kernel: deterministic and stable
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], values[first[order]], mask[first[order]]


def lower_arrays(forest: Forest, known: np.ndarray, known_mask: np.ndarray) -> Program:
    """The forest partially evaluated for each kernel (rows of `known`/`known_mask`) as arrays."""
    known = np.asarray(known, dtype=np.float64).reshape(len(known_mask), len(forest.feature_names))
    known_mask = np.asarray(known_mask, dtype=bool).reshape(known.shape)
    kernel_class, values, mask = _classes(forest, known, known_mask)
    classes = np.arange(len(values))
    builder = _Builder()
    roots = np.empty((len(values), len(forest.trees)), dtype=np.int64)
    for t, tree in enumerate(forest.trees):
        roots[:, t] = _residual(tree, 0 if tree.num_leaves > 1 else ~0, classes, values, mask, builder)
    rows = builder.rows
    return Program(
        feature=np.array([r[0] for r in rows], dtype=np.int64),
        threshold=np.array([r[1] for r in rows], dtype=np.float64),
        kind=np.array([r[2] for r in rows], dtype=np.int64),
        left=np.array([r[3] for r in rows], dtype=np.int64),
        right=np.array([r[4] for r in rows], dtype=np.int64),
        leaf=np.array(builder.leaf_values, dtype=np.float64),
        bits=np.array(builder.bit_words, dtype=np.uint32),
        bit_bounds=np.array(builder.bit_bounds, dtype=np.int64),
        roots=roots,
        kernel_class=kernel_class.astype(np.int64),
    )


ZERO = float(np.float32(1e-35))
"""LightGBM's kZeroThreshold (1e-35f) as the double it widens to."""

_CMATH, _CSTDINT, _ALGORITHM = (n.Header(h, system=True) for h in ("cmath", "cstdint", "algorithm"))
_STD = {name: n.Symbol(f"std_{name}", ("std", name), header) for name, header in (
    ("fabs", _CMATH), ("isnan", _CMATH), ("exp", _CMATH), ("expm1", _CMATH), ("max", _ALGORITHM), ("int32_t", _CSTDINT),
    ("uint32_t", _CSTDINT), ("uint16_t", _CSTDINT), ("uint8_t", _CSTDINT))}


def _std(name: str) -> n.Id:
    return n.Id(n.Name((_STD[name],)))


def _std_type(name: str) -> n.Type:
    return n.TypeName(n.Name((_STD[name],)))


DOUBLE, INT, BOOL = n.Builtin("double"), n.Builtin("int"), n.Builtin("bool")


@attrs.frozen(eq=False)
class LoweredForest:
    """The emitted forest: `decls` (namespace scope: the arrays and `<prefix>_raw`, `<prefix>_predict`,
    `<prefix>_tflops`) and the calls into them."""

    program: Program
    prefix: str
    decls: tuple[n.Decl, ...]

    def raw(self, kernel: n.Expr, row: n.Expr) -> n.Expr:
        """The raw score (the trees' sum) of kernel `kernel` on `row` (a `const double*` of the forest's features)."""
        return n.call(f"{self.prefix}_raw", kernel, row)

    def predict(self, kernel: n.Expr, row: n.Expr) -> n.Expr:
        """What `Forest.predict` (and lightgbm's `Booster.predict`) returns for that row."""
        return n.call(f"{self.prefix}_predict", kernel, row)

    def tflops(self, kernel: n.Expr, row: n.Expr) -> n.Expr:
        """The prediction as TFLOPS, as `LightGBMPredictor.transform` makes it (expm1 under `log_targets`,
        else clamped at 0)."""
        return n.call(f"{self.prefix}_tflops", kernel, row)


def lower_forest(forest: Forest, known: np.ndarray, known_mask: np.ndarray, *, prefix: str,
                 log_targets: bool = True) -> LoweredForest:
    """The forest as C++ for the kernels of `known`/`known_mask` (kernels x forest features: the values fixed at
    emit time and which ones are), partially evaluated per kernel (module docstring)."""
    program = lower_arrays(forest, known, known_mask)
    return LoweredForest(program, prefix, _decls(program, forest, prefix, log_targets))


def _array(name: str, element: n.Type, values: np.ndarray, literal) -> n.VarDecl:
    items = [literal(v) for v in values.tolist()] or [literal(0)]  # C++ has no empty arrays; never read then
    return n.VarDecl(n.Array(element, None), name, n.BraceInit(None, items), static=True, constexpr=True)


def _int_type(values: np.ndarray, unsigned: tuple[str, ...] = ("uint8_t", "uint16_t")) -> n.Type:
    top = int(values.max()) if values.size else 0
    bits = {"uint8_t": 255, "uint16_t": 65535}
    return _std_type(next((t for t in unsigned if top <= bits[t]), "int32_t"))


def _decls(p: Program, forest: Forest, prefix: str, log_targets: bool) -> tuple[n.Decl, ...]:
    def name(part: str) -> str:
        return f"{prefix}_{part}"

    def at(array: str, index: n.Expr) -> n.Expr:
        return n.Index(n.ident(name(array)), index)

    arrays = [
        _array(name("feature"), _int_type(p.feature), p.feature, n.IntLit),
        _array(name("threshold"), DOUBLE, p.threshold, n.FloatLit),
        _array(name("kind"), _std_type("uint8_t"), p.kind, n.IntLit),
        _array(name("left"), _std_type("int32_t"), p.left, n.IntLit),
        _array(name("right"), _std_type("int32_t"), p.right, n.IntLit),
        _array(name("leaf"), DOUBLE, p.leaf, n.FloatLit),
        _array(name("roots"), _std_type("int32_t"), p.roots.reshape(-1), n.IntLit),
        _array(name("kernel_class"), _int_type(p.kernel_class, ("uint16_t",)), p.kernel_class, n.IntLit),
    ]
    categorical = bool((p.kind & CATEGORY).any())
    zero_rule = bool((p.kind & ZERO_RULE).any())
    if categorical:
        arrays += [_array(name("bits"), _std_type("uint32_t"), p.bits, lambda v: n.IntLit(v, "u")),
                   _array(name("bit_bounds"), _std_type("int32_t"), p.bit_bounds, n.IntLit)]
    node, x, kind, left = n.ident("node"), n.ident("x"), n.ident("kind"), n.ident("left")

    def flag(bit: int) -> n.Expr:
        return n.BinOp("!=", n.BinOp("&", kind, n.IntLit(bit)), n.IntLit(0))

    numeric = [n.ExprStmt(n.BinOp("=", left, n.BinOp("||", n.BinOp("<=", x, at("threshold", node)), n.BinOp(
        "&&", flag(NAN_LEFT), n.call(_std("isnan"), x)))))]
    if zero_rule:
        numeric.append(n.If(n.BinOp("&&", flag(ZERO_RULE), n.BinOp("==", x, n.FloatLit(0.0))),
                            [n.ExprStmt(n.BinOp("=", left, flag(ZERO_LEFT)))]))
    decide: list[n.Stmt] = [n.VarDecl(BOOL, "left", n.BoolLit(False))]
    if categorical:
        decide.append(n.If(flag(CATEGORY), _category(name, at, x, node, left), numeric))
    else:
        decide += numeric
    trees = n.IntLit(p.trees)
    walk = n.While(n.BinOp(">=", node, n.IntLit(0)), [
        n.VarDecl(DOUBLE, "x", n.Index(n.ident("row"), at("feature", node))),
        n.If(n.BinOp("<=", n.call(_std("fabs"), x), n.FloatLit(ZERO)), [n.ExprStmt(n.BinOp("=", x, n.FloatLit(0.0)))]),
        n.VarDecl(n.Const(_std_type("uint8_t")), "kind", at("kind", node)),
        *decide,
        n.ExprStmt(n.BinOp("=", node, n.Cond(left, at("left", node), at("right", node)))),
    ])
    t, total, roots = n.ident("t"), n.ident("sum"), n.ident("roots")
    raw_body = (
        n.VarDecl(n.Ptr(n.Const(_std_type("int32_t"))), "roots",
                  n.BinOp("+", n.ident(name("roots")), n.BinOp("*", at("kernel_class", n.ident("kernel")), trees))),
        n.VarDecl(DOUBLE, "sum", n.FloatLit(0.0)),
        n.For(n.VarDecl(INT, "t", n.IntLit(0)), n.BinOp("<", t, trees), n.UnOp("++", t), [
            n.VarDecl(_std_type("int32_t"), "node", n.Index(roots, t)),
            walk,
            n.ExprStmt(n.BinOp("+=", total, at("leaf", n.UnOp("~", node)))),
        ]),
        n.Return(total),
    )
    params = (n.FuncParam(INT, "kernel"), n.FuncParam(n.Ptr(n.Const(DOUBLE)), "row"))
    raw = n.call(name("raw"), n.ident("kernel"), n.ident("row"))
    value = n.ident("value")
    out = {"identity": value, "signed_square": n.BinOp("*", value, n.call(_std("fabs"), value)),
           "exp": n.call(_std("exp"), value)}[forest.transform]
    tflops = n.call(_std("expm1"), value) if log_targets else n.call(_std("max"), value, n.FloatLit(0.0))

    def function(part: str, body) -> n.FunctionDef:
        return n.FunctionDef(name(part), DOUBLE, params, body, inline=True)

    return (*arrays, function("raw", raw_body),
            function("predict", [n.VarDecl(n.Const(DOUBLE), "value", raw), n.Return(out)]),
            function("tflops", [n.VarDecl(n.Const(DOUBLE), "value", n.call(name("predict"), n.ident("kernel"),
                                                                           n.ident("row"))), n.Return(tflops)]))


def _category(name, at, x: n.Expr, node: n.Expr, left: n.Expr) -> list[n.Stmt]:
    """`left` for a categorical split: -1 < x < 32 * words and the bit of `int(x)` set."""
    bounds, begin, category = n.ident(name("bit_bounds")), n.ident("begin"), n.ident("category")
    index = n.StaticCast(INT, at("threshold", node))
    words = n.BinOp("-", n.Index(bounds, n.BinOp("+", index, n.IntLit(1))), begin)
    word = at("bits", n.BinOp("+", begin, n.BinOp("/", category, n.IntLit(32))))
    bit = n.BinOp("&", n.BinOp(">>", word, n.BinOp("%", category, n.IntLit(32))), n.IntLit(1, "u"))
    return [
        n.VarDecl(n.Const(_std_type("int32_t")), "begin", n.Index(bounds, index)),
        n.If(n.BinOp("&&", n.BinOp(">", x, n.FloatLit(-1.0)),
                     n.BinOp("<", x, n.BinOp("*", n.FloatLit(32.0), words))), [
            n.VarDecl(n.Const(INT), "category", n.StaticCast(INT, x)),
            n.ExprStmt(n.BinOp("=", left, n.BinOp("!=", bit, n.IntLit(0, "u")))),
        ]),
    ]
