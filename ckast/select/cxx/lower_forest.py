"""A LightGBM forest as C++: static constant arrays and an evaluator with LightGBM's exact decisions, partially
evaluated per kernel.

Partial evaluation. Some features are known at emit time for a kernel (`known`/`known_mask`: kernel- and
hardware-only features). In each tree every split on a known feature is decided in Python with the reference
semantics (`forest.go_left`) for each kernel; what is left, the *residual tree*, splits on unknown features
only. Kernels with equal known values (over the features the forest splits on) form one class; residual
nodes are hash-consed over all trees and classes (a node is its split and its two children), so classes whose
known splits route them the same way share their residual tree, and equal subtrees are stored once. Deciding a
known split below a run-time split copies the run-time splits above it per outcome; a tree whose residual
outgrows its budget (`GROWTH`, `NODES`) is redone deciding known splits only under fewer run-time splits
(`LIMITS`, down to the known splits above the first run-time one), the rest becoming run-time splits that read
the kernel's value from `known` (kernels x such features).

Walks. A tree's residual is walked once per set of kernels with one residual root and equal values of every
feature that residual reads (`kernel_keys`: a feature of the problem and hardware only is equal for every
kernel; one of kernel columns too is equal for kernels with equal columns), from the row of the set's first
kernel; each kernel then adds its walk's leaf.

Layout (all `static constexpr`, namespace scope, names prefixed):
- nodes, structure of arrays: `code` (uint16: the forest's feature index | kind << 12, kind below),
  `threshold` (double; for a categorical split the index of its bitset), `children` (uint64: left | right << 32,
  each a node below `internal`, else leaf `child - internal`); `leaf` (double): the distinct leaf values;
- walks: tree t's are `walk_bounds[t] .. walk_bounds[t + 1]`, each a root (`walk_root`, a node or a leaf: a
  tree the kernel's known splits decide entirely) and the kernel whose row it reads (`walk_kernel`);
  `local` (trees x kernels, tree-major, 8 / 4 / 2 entries of 8 / 16 / 32 bits per uint64 word): each kernel's
  walk in its tree; `known` (double, kernels x the known features split on at run time); `bits`/`bit_bounds`:
  the categorical bitsets.
Fewer, wider literals because a literal costs the printer and the compiler about the same whatever its width.

Evaluation sums, from 0.0 and in tree order, the leaf each tree's walk reaches (a constant tree costs one load
and one add), then applies the objective's output transform: the same additions in the same order as
LightGBM, so the result is bit-identical (no constant folding across trees). `<prefix>_raw_all` goes tree by
tree (a tree's nodes stay in cache while its walks run), each walk once, then adds per kernel.

A node's `kind` folds LightGBM's missing-value rules (missing type none / zero / NaN, `default_left`; per node
as `forest.Tree` holds them) into where a NaN and a zero go: bit 0 (`NAN_LEFT`) a NaN goes left (else right,
where `x <= threshold` sends it); bit 1 (`ZERO_RULE`) a zero goes left iff bit 2 (`ZERO_LEFT`), not by its
threshold (missing type zero only); otherwise left iff `x <= threshold`. Kind 8 (`CATEGORY`): left iff
-1 < x < 32 * words and bit `int(x)` of the bitset is set (LightGBM: NaN, negative and out-of-range values go
right). A feature value with |x| <= 1e-35f reads as 0.0 first, as LightGBM's dense-row reader makes it.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

from ckast import nodes as n
from ckast.select.expr import Col, walk
from ckast.select.features.featureset import Feature
from ckast.select.features.table import KernelTable
from ckast.select.models.forest import Forest, Tree, _input, go_left

from .numeric import BOOL, DOUBLE

NAN_LEFT, ZERO_RULE, ZERO_LEFT, CATEGORY = 1, 2, 4, 8
"""Node kinds (see the module docstring)."""
GROWTH, NODES = 4, 2_000_000
"""A tree's residual may hold GROWTH times its own splits, or its share of NODES if more (what keeps a 2,000-tree
255-leaf forest over 2,000 kernels within 2 GiB to compile); past that, known splits below run-time ones are
left to run time (`LIMITS`: how many run-time splits they may sit below and still be decided, tried in order)."""
LIMITS = (None, 3, 2, 1, 0)
KIND_SHIFT = 12
"""A node's `code` is its feature index | kind << 12 (so a forest has at most 2,048 features: a known feature
split on at run time is index `features + f`)."""


@attrs.frozen(eq=False)
class Program:
    """The lowered forest as arrays (what the C++ arrays hold). A child (or root) below `internal` is a node,
    `internal + j` is leaf j. Tree t's walks are `walk_bounds[t] .. walk_bounds[t + 1]`; kernel k takes the
    leaf of its tree-t walk `walk_bounds[t] + local[t, k]`."""

    feature: np.ndarray
    threshold: np.ndarray
    kind: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf: np.ndarray
    bits: np.ndarray
    bit_bounds: np.ndarray
    walk_bounds: np.ndarray
    walk_root: np.ndarray
    walk_kernel: np.ndarray
    """The kernel whose row a walk reads (the first of the kernels it serves)."""
    local: np.ndarray
    """trees x kernels: each kernel's walk within its tree."""
    features: int
    deferred: np.ndarray
    """The known features some node splits on at run time (feature `features + j` is `deferred[j]`)."""
    known: np.ndarray
    """kernels x deferred: the kernels' values of those features."""

    @property
    def internal(self) -> int:
        return len(self.feature)

    @property
    def trees(self) -> int:
        return len(self.walk_bounds) - 1

    @property
    def kernels(self) -> int:
        return self.local.shape[1]


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

    def mark(self) -> tuple[int, int, int]:
        return len(self.rows), len(self.leaf_values), len(self.bitsets)

    def rollback(self, mark: tuple[int, int, int]) -> None:
        """Forget what was added since `mark` (dicts pop their newest entries first)."""
        rows, leaves, bitsets = mark
        for table, keep in ((self.nodes, rows), (self.leaves, leaves), (self.bitsets, bitsets)):
            while len(table) > keep:
                table.popitem()
        del self.rows[rows:], self.leaf_values[leaves:]
        del self.bit_bounds[bitsets + 1:]
        del self.bit_words[self.bit_bounds[-1]:]

    def node(self, feature: int, threshold: float, kind: int, left: int, right: int) -> int:
        key = (feature, int(np.float64(threshold).view(np.int64)), kind, left, right)
        found = self.nodes.get(key)
        if found is None:
            found = self.nodes[key] = len(self.rows)
            self.rows.append((feature, threshold, kind, left, right))
        return found


def _split(tree: Tree, node: int, builder: _Builder) -> tuple[float, int]:
    """(threshold, kind) of a residual copy of `node` (see the module docstring)."""
    if tree.categorical[node]:
        k = int(tree.threshold[node])
        words = tuple(int(w) for w in tree.cat_threshold[tree.cat_boundaries[k]:tree.cat_boundaries[k + 1]])
        return float(builder.bitset(words)), CATEGORY
    zero_rule = ZERO_RULE | ZERO_LEFT * bool(tree.zero_left[node]) if tree.zero_rule[node] else 0
    return float(tree.threshold[node]), NAN_LEFT * bool(tree.nan_left[node]) | zero_rule


def _unknown_below(tree: Tree, never_known: np.ndarray) -> np.ndarray:
    """Per node, whether its subtree splits only on features no kernel knows (its residual is the same for all)."""
    out = np.zeros(max(tree.num_leaves - 1, 0), dtype=bool)

    def visit(node: int) -> bool:
        if node < 0:
            return True
        below = visit(int(tree.left[node])) & visit(int(tree.right[node]))  # both sides visited
        out[node] = below and bool(never_known[tree.split_feature[node]])
        return bool(out[node])

    if len(out):
        visit(0)
    return out


def _copy(tree: Tree, node: int, builder: _Builder) -> int:
    """The residual of a subtree no kernel decides anything in: the subtree itself."""
    if node < 0:
        return builder.leaf(tree.leaf_value[~node])
    left, right = _copy(tree, int(tree.left[node]), builder), _copy(tree, int(tree.right[node]), builder)
    return builder.node(int(tree.split_feature[node]), *_split(tree, node, builder), left, right)


@attrs.frozen
class _Walk:
    """What `_residual` carries down a tree: the classes' known values and masks, the builder, the subtrees no
    kernel decides anything in, and how many run-time splits a known split may sit below and still be decided at
    emit time (None: any; the rest read the kernel's value at run time, as feature `features + f`)."""

    tree: Tree
    values: np.ndarray
    mask: np.ndarray
    builder: _Builder
    same: np.ndarray
    limit: int | None
    budget: int | None
    """Nodes the builder may hold before this attempt is abandoned (None: no limit)."""


class _OverBudget(Exception):
    """A tree's residual outgrew its budget (the next limit is tried)."""


def _residual(w: _Walk, node: int, classes: np.ndarray, below: int) -> np.ndarray:
    """The residual node (or ~leaf) of `node`'s subtree for each of `classes`, `below` run-time splits down."""
    tree, builder = w.tree, w.builder
    if node < 0:
        return np.full(len(classes), builder.leaf(tree.leaf_value[~node]), dtype=np.int64)
    if w.same[node]:
        return np.full(len(classes), _copy(tree, node, builder), dtype=np.int64)
    feature = int(tree.split_feature[node])
    out = np.empty(len(classes), dtype=np.int64)
    known = w.mask[classes, feature]
    decided = known if w.limit is None or below <= w.limit else np.zeros_like(known)
    if decided.any():
        where = np.flatnonzero(decided)
        left = go_left(tree, np.full(len(where), node), w.values[classes[where], feature])
        for side, child in ((left, int(tree.left[node])), (~left, int(tree.right[node]))):
            if side.any():
                out[where[side]] = _residual(w, child, classes[where[side]], below)
    for code, run in ((feature + w.mask.shape[1], known & ~decided), (feature, ~known)):
        if run.any():
            where = np.flatnonzero(run)
            sub = classes[where]
            lo = _residual(w, int(tree.left[node]), sub, below + 1)
            hi = _residual(w, int(tree.right[node]), sub, below + 1)
            pairs, inverse = np.unique((lo << 32) | (hi & 0xFFFFFFFF), return_inverse=True)  # children fit int32
            threshold, kind = _split(tree, node, builder)
            ids = np.array([builder.node(code, threshold, kind, p >> 32, ((p & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000)
                            for p in pairs.tolist()], dtype=np.int64)
            out[where] = ids[inverse]
            if w.budget is not None and len(builder.rows) > w.budget:
                raise _OverBudget
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


def lower_arrays(forest: Forest, known: np.ndarray, known_mask: np.ndarray,
                 kernel_keys: np.ndarray | None = None) -> Program:
    """The forest partially evaluated for each kernel (rows of `known`/`known_mask`) as arrays; `kernel_keys`
    as `lower_forest` takes them."""
    known = np.asarray(known, dtype=np.float64).reshape(len(known_mask), len(forest.feature_names))
    known_mask = np.asarray(known_mask, dtype=bool).reshape(known.shape)
    kernel_class, values, mask = _classes(forest, known, known_mask)
    classes = np.arange(len(values))
    builder = _Builder()
    never_known = ~mask.any(axis=0)
    roots = np.empty((len(forest.trees), len(values)), dtype=np.int64)
    for t, tree in enumerate(forest.trees):
        same, start = _unknown_below(tree, never_known), builder.mark()
        budget = start[0] + max(GROWTH * (tree.num_leaves - 1), NODES // len(forest.trees))
        for limit in LIMITS:  # the first that keeps the tree within its budget (the last has none)
            walk = _Walk(tree, values, mask, builder, same, limit, budget if limit != LIMITS[-1] else None)
            try:
                roots[t] = _residual(walk, 0 if tree.num_leaves > 1 else ~0, classes, 0)
                break
            except _OverBudget:
                builder.rollback(start)
    if kernel_keys is None:
        kernel_keys = np.broadcast_to(np.arange(len(known))[:, None], known.shape)
    by_value = np.stack([np.unique(column.view(np.int64), return_inverse=True)[1].reshape(-1)
                         for column in _input(known).T], axis=1) if known.size else np.zeros_like(known_mask, int)
    keys = np.concatenate([np.asarray(kernel_keys, dtype=np.int64), by_value], axis=1)
    return _program(builder, roots[:, kernel_class], keys, _input(known) if known.size else known)


def _reads(builder: _Builder) -> list[int]:
    """Per node, the features its subtree splits on (a bit set)."""
    reads: list[int] = []
    for feature, _, _, left, right in builder.rows:  # children come first
        reads.append(1 << feature | (reads[left] if left >= 0 else 0) | (reads[right] if right >= 0 else 0))
    return reads


def _walks(roots: np.ndarray, keys: np.ndarray, reads: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One tree's walks: (root, first kernel) of each set of kernels with one root and equal keys on every feature
    that root's subtree reads, numbered by first kernel, and each kernel's walk."""
    distinct, which = np.unique(roots, return_inverse=True)
    width = (keys.shape[1] + 7) // 8
    read = np.unpackbits(np.frombuffer(b"".join(
        (reads[r] if r >= 0 else 0).to_bytes(width, "little") for r in distinct.tolist()), dtype=np.uint8).reshape(
        len(distinct), width), axis=1, bitorder="little")[:, :keys.shape[1]].astype(bool)
    code = which
    for f in np.flatnonzero(read.any(axis=0)):  # one code per distinct (root, keys read), column by column
        code = np.unique(code * (keys[:, f].max() + 2) + np.where(read[which, f], keys[:, f] + 1, 0),
                         return_inverse=True)[1].reshape(-1)
    _, first, local = np.unique(code, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return roots[first[order]], first[order], rank[local.reshape(-1)]


def _program(builder: _Builder, roots: np.ndarray, keys: np.ndarray, known: np.ndarray) -> Program:
    """The builder's nodes and leaves as arrays (leaves numbered after the nodes), each tree's walks, and the
    kernels' values of the known features split on at run time (a node's feature `features + f` reads
    `known[kernel, slot of f]`)."""
    rows = builder.rows
    internal = len(rows)
    features = known.shape[1]
    code = np.array([r[0] for r in rows], dtype=np.int64)
    deferred = np.unique(code[code >= features]) - features
    code = np.where(code >= features, features + np.searchsorted(deferred, code - features), code)

    def column(i: int, dtype) -> np.ndarray:
        return np.array([r[i] for r in rows], dtype=dtype)

    def node(ids: np.ndarray) -> np.ndarray:
        return np.where(ids < 0, internal + ~ids, ids)

    reads = _reads(builder)
    walks = [_walks(tree_roots, keys, reads) for tree_roots in roots]
    bounds = np.cumsum([0] + [len(w[0]) for w in walks])
    return Program(
        feature=code,
        threshold=column(1, np.float64),
        kind=column(2, np.int64),
        left=node(column(3, np.int64)),
        right=node(column(4, np.int64)),
        leaf=np.array(builder.leaf_values, dtype=np.float64),
        bits=np.array(builder.bit_words, dtype=np.uint32),
        bit_bounds=np.array(builder.bit_bounds, dtype=np.int64),
        walk_bounds=bounds.astype(np.int64),
        walk_root=node(np.concatenate([w[0] for w in walks]).astype(np.int64)),
        walk_kernel=np.concatenate([w[1] for w in walks]).astype(np.int64),
        local=np.stack([w[2] for w in walks]) if walks else np.zeros((0, len(keys)), dtype=np.int64),
        features=features,
        deferred=deferred,
        known=np.ascontiguousarray(known[:, deferred]),
    )


ZERO = float(np.float32(1e-35))
"""LightGBM's kZeroThreshold (1e-35f) as the double it widens to."""

_CMATH, _CSTDINT, _ALGORITHM = (n.Header(h, system=True) for h in ("cmath", "cstdint", "algorithm"))
_STD = {name: n.Symbol(f"std_{name}", ("std", name), header) for name, header in (
    ("fabs", _CMATH), ("isnan", _CMATH), ("exp", _CMATH), ("expm1", _CMATH), ("max", _ALGORITHM), ("int32_t", _CSTDINT),
    ("uint32_t", _CSTDINT), ("uint64_t", _CSTDINT), ("uint16_t", _CSTDINT))}


def _std(name: str) -> n.Id:
    return n.Id(n.Name((_STD[name],)))


def _std_type(name: str) -> n.Type:
    return n.TypeName(n.Name((_STD[name],)))


INT = n.Builtin("int")


@attrs.frozen(eq=False)
class LoweredForest:
    """The emitted forest: `decls` (namespace scope: the arrays; `<prefix>_raw`, `_predict`, `_tflops` for one
    kernel and `<prefix>_raw_all`, `_predict_all`, `_tflops_all` for every kernel) and calls into them. A row is a
    `const double*` to the forest's features (in `forest.feature_names` order) for that kernel; the `_all`
    functions take every kernel's row, one after another, and write one value per kernel."""

    program: Program
    prefix: str
    decls: tuple[n.Decl, ...]

    @property
    def headers(self) -> tuple[n.Header, ...]:
        """What `n.required_headers` finds in `decls`, without walking their millions of literals."""
        functions = n.File([d for d in self.decls if isinstance(d, n.FunctionDef)])
        finite = all(np.isfinite(a).all() for a in (self.program.threshold, self.program.leaf, self.program.known))
        extra = () if finite else (n.Header("limits", system=True),)
        return tuple(sorted({*n.required_headers(functions), *extra}, key=lambda h: (not h.system, h.path)))

    def call(self, what: str, kernel: n.Expr, row: n.Expr) -> n.Expr:
        """`<prefix>_<what>(kernel, row)`: what is "raw" (the trees' sum), "predict" (`Forest.predict`, lightgbm's
        `Booster.predict`) or "tflops" (as `LightGBMPredictor.transform` makes the prediction: expm1 under
        `log_targets`, else clamped at 0)."""
        return n.call(f"{self.prefix}_{what}", kernel, row)

    def call_all(self, what: str, rows: n.Expr, out: n.Expr) -> n.Expr:
        """`<prefix>_<what>_all(rows, out)`: the same for every kernel (`rows`: one row per kernel, in order),
        fastest per kernel."""
        return n.call(f"{self.prefix}_{what}_all", rows, out)


def lower_forest(forest: Forest, known: np.ndarray, known_mask: np.ndarray, *, prefix: str,
                 log_targets: bool = True, kernel_keys: np.ndarray | None = None) -> LoweredForest:
    """The forest as C++ for the kernels of `known`/`known_mask` (kernels x forest features: the values fixed at
    emit time and which ones are), partially evaluated per kernel (module docstring). `log_targets`: the model
    directory's spec names tflops in `log_targets`. `kernel_keys` (kernels x features, ints; see `kernel_keys`):
    kernels with equal keys in a column have equal values of that feature in every problem's rows, so one walk
    serves them; None: no two kernels share a walk."""
    if 2 * len(forest.feature_names) > 1 << KIND_SHIFT:  # a feature index, or features + a known feature's
        raise ValueError(f"a forest of {len(forest.feature_names)} features: the emitted forest takes at most "
                         f"{1 << (KIND_SHIFT - 1)}")
    program = lower_arrays(forest, known, known_mask, kernel_keys)
    return LoweredForest(program, prefix, _Emitter(program, prefix).decls(forest, log_targets))


def kernel_keys(features: Sequence[Feature], table: KernelTable) -> np.ndarray:
    """(kernels x features) keys for `lower_forest`: per feature, kernels numbered by the values of the kernel
    columns its expression reads (a feature that reads none, of the problem and hardware only, is one key)."""
    out = np.zeros((len(table), len(features)), dtype=np.int64)
    for j, feature in enumerate(features):
        read = dict.fromkeys((x.type is str, x.name) for x in walk(feature.expr) if isinstance(x, Col))
        if read:
            columns = [np.asarray(table.categorical(name)[0], dtype=np.int64) if categorical else
                       table.numeric(name).view(np.int64) for categorical, name in read]
            out[:, j] = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)[1].reshape(-1)
    return out


def _array(name: str, element: n.Type, values: np.ndarray, literal) -> n.VarDecl:
    items = [literal(v) for v in values.tolist()] or [literal(0)]  # C++ has no empty arrays; never read then
    return n.VarDecl(n.Array(element, None), name, n.BraceInit(None, items), static=True, constexpr=True)


def _index_type(values: np.ndarray) -> n.Type:
    """uint16 for indices that fit, else int32."""
    return _std_type("uint16_t" if not values.size or values.max() < 1 << 16 else "int32_t")


def _assign(target: n.Expr, value: n.Expr) -> n.Stmt:
    return n.ExprStmt(n.BinOp("=", target, value))


def _loop(var: str, stop: n.Expr, body: list[n.Stmt], start: n.Expr | None = None, step: int = 1) -> n.For:
    i = n.ident(var)
    advance = n.UnOp("++", i) if step == 1 else n.BinOp("+=", i, n.IntLit(step))
    return n.For(n.VarDecl(INT, var, start or n.IntLit(0)), n.BinOp("<", i, stop), advance, body)


class _Emitter:
    """Builds the declarations of one program."""

    def __init__(self, program: Program, prefix: str) -> None:
        self.p = program
        self.prefix = prefix

    def name(self, part: str) -> str:
        return f"{self.prefix}_{part}"

    def at(self, array: str, index: n.Expr) -> n.Expr:
        return n.Index(n.ident(self.name(array)), index)

    def arrays(self) -> list[n.Decl]:
        p = self.p
        out = [
            _array(self.name("code"), _std_type("uint16_t"), p.feature | p.kind << KIND_SHIFT, n.IntLit),
            _array(self.name("threshold"), DOUBLE, p.threshold, n.FloatLit),
            _array(self.name("children"), _std_type("uint64_t"), p.left | p.right << 32, _u64),
            _array(self.name("leaf"), DOUBLE, p.leaf, n.FloatLit),
            _array(self.name("walk_bounds"), _std_type("int32_t"), p.walk_bounds, n.IntLit),
            _array(self.name("walk_root"), _std_type("int32_t"), p.walk_root, n.IntLit),
            _array(self.name("walk_kernel"), _index_type(p.walk_kernel), p.walk_kernel, n.IntLit),
            _array(self.name("local"), _std_type("uint64_t"), self.packed_local(), _u64),
        ]
        if len(p.deferred):
            out.append(_array(self.name("known"), DOUBLE, p.known.reshape(-1), n.FloatLit))
        if (p.kind & CATEGORY).any():
            out += [_array(self.name("bits"), _std_type("uint32_t"), p.bits, lambda v: n.IntLit(v, "u")),
                    _array(self.name("bit_bounds"), _std_type("int32_t"), p.bit_bounds, n.IntLit)]
        return out

    def next_node(self) -> n.FunctionDef:
        """`<prefix>_next(node, x)`: the child `x` (already read as LightGBM reads it) goes to."""
        node, x, kind, left = n.ident("node"), n.ident("x"), n.ident("kind"), n.ident("left")

        def flag(bit: int) -> n.Expr:
            return n.BinOp("!=", n.BinOp("&", kind, n.IntLit(bit)), n.IntLit(0))

        numeric: list[n.Stmt] = [_assign(left, n.BinOp("||", n.BinOp("<=", x, self.at("threshold", node)), n.BinOp(
            "&&", flag(NAN_LEFT), n.call(_std("isnan"), x))))]
        if (self.p.kind & ZERO_RULE).any():
            numeric.append(n.If(n.BinOp("&&", flag(ZERO_RULE), n.BinOp("==", x, n.FloatLit(0.0))),
                                [_assign(left, flag(ZERO_LEFT))]))
        kind_of = n.BinOp(">>", self.at("code", node), n.IntLit(KIND_SHIFT))
        body: list[n.Stmt] = [n.VarDecl(n.Const(INT), "kind", kind_of),
                              n.VarDecl(BOOL, "left", n.BoolLit(False))]
        if (self.p.kind & CATEGORY).any():
            body.append(n.If(flag(CATEGORY), self.category(x, node, left), numeric))
        else:
            body += numeric
        children = self.at("children", node)
        body.append(n.Return(n.StaticCast(_std_type("int32_t"), n.Cond(
            left, n.BinOp("&", children, n.IntLit(0xFFFFFFFF, "u")), n.BinOp(">>", children, n.IntLit(32))))))
        return n.FunctionDef(self.name("next"), _std_type("int32_t"),
                             (n.FuncParam(_std_type("int32_t"), "node"), n.FuncParam(DOUBLE, "x")), body, inline=True)

    def category(self, x: n.Expr, node: n.Expr, left: n.Expr) -> list[n.Stmt]:
        """`left` for a categorical split: -1 < x < 32 * words and the bit of `int(x)` set."""
        bounds, begin, category = n.ident(self.name("bit_bounds")), n.ident("begin"), n.ident("category")
        index = n.StaticCast(INT, self.at("threshold", node))
        words = n.BinOp("-", n.Index(bounds, n.BinOp("+", index, n.IntLit(1))), begin)
        word = self.at("bits", n.BinOp("+", begin, n.BinOp("/", category, n.IntLit(32))))
        bit = n.BinOp("&", n.BinOp(">>", word, n.BinOp("%", category, n.IntLit(32))), n.IntLit(1, "u"))
        return [
            n.VarDecl(n.Const(_std_type("int32_t")), "begin", n.Index(bounds, index)),
            n.If(n.BinOp("&&", n.BinOp(">", x, n.FloatLit(-1.0)),
                         n.BinOp("<", x, n.BinOp("*", n.FloatLit(32.0), words))), [
                n.VarDecl(n.Const(INT), "category", n.StaticCast(INT, x)),
                _assign(left, n.BinOp("!=", bit, n.IntLit(0, "u"))),
            ]),
        ]

    def read(self) -> n.FunctionDef:
        """`<prefix>_read(x)`: a feature value as LightGBM's dense-row reader reads it (|x| <= 1e-35f is 0)."""
        x = n.ident("x")
        return n.FunctionDef(self.name("read"), DOUBLE, (n.FuncParam(DOUBLE, "x"),), [
            n.Return(n.Cond(n.BinOp("<=", n.call(_std("fabs"), x), n.FloatLit(ZERO)), n.FloatLit(0.0), x))],
            inline=True)

    def walk(self, node: n.Expr) -> n.Stmt:
        """`while (node < internal) node = <prefix>_next(node, <prefix>_read(x));` with x the row's feature, or
        for a known feature split on at run time the kernel's value."""
        p = self.p
        feature = n.BinOp("&", self.at("code", node), n.IntLit((1 << KIND_SHIFT) - 1))
        x: n.Expr = n.Index(n.ident("row"), n.ident("feature"))
        if len(p.deferred):
            slot = n.BinOp("-", n.BinOp("+", n.BinOp("*", n.ident("kernel"), n.IntLit(len(p.deferred))),
                                        n.ident("feature")), n.IntLit(p.features))
            x = n.Cond(n.BinOp("<", n.ident("feature"), n.IntLit(p.features)), x, self.at("known", slot))
        return n.While(n.BinOp("<", node, n.IntLit(p.internal)), [
            n.VarDecl(n.Const(INT), "feature", feature),
            _assign(node, n.call(self.name("next"), node, n.call(self.name("read"), x)))])

    def leaf(self, node: n.Expr) -> n.Expr:
        return self.at("leaf", n.BinOp("-", node, n.IntLit(self.p.internal)))

    def local_bits(self) -> int:
        """Bits per entry of the packed `local` table (a tree's walk numbers are below its walk count)."""
        widest = int(self.p.local.max()) if self.p.local.size else 0
        return next(b for b in (8, 16, 32) if widest < 1 << b)

    def packed_local(self) -> np.ndarray:
        """`local`, 64 // bits entries per uint64 word, each tree's row padded to whole words."""
        bits = self.local_bits()
        per = 64 // bits
        words = -(-self.p.kernels // per)
        padded = np.zeros((self.p.trees, words * per), dtype=np.uint64)
        padded[:, :self.p.kernels] = self.p.local
        shifts = (np.arange(per, dtype=np.uint64) * np.uint64(bits))
        return np.bitwise_or.reduce(padded.reshape(self.p.trees, words, per) << shifts, axis=2).reshape(-1)

    def local_of(self) -> n.FunctionDef:
        """`<prefix>_local_of(t, kernel)`: the kernel's walk within tree t, from the packed table."""
        bits = self.local_bits()
        per = 64 // bits
        t, kernel = n.ident("t"), n.ident("kernel")
        word = self.at("local", n.BinOp("+", n.BinOp("*", t, n.IntLit(-(-self.p.kernels // per))),
                                        n.BinOp("/", kernel, n.IntLit(per))))
        entry = n.BinOp("&", n.BinOp(">>", word, n.BinOp("*", n.IntLit(bits), n.BinOp("%", kernel, n.IntLit(per)))),
                        n.IntLit((1 << bits) - 1, "u"))
        return n.FunctionDef(self.name("local_of"), INT, (n.FuncParam(INT, "t"), n.FuncParam(INT, "kernel")),
                             [n.Return(n.StaticCast(INT, entry))], inline=True)

    def raw(self) -> n.FunctionDef:
        """`<prefix>_raw(kernel, row)`: each tree's residual for the kernel, summed in tree order from 0.0."""
        p = self.p
        t, node, total = n.ident("t"), n.ident("node"), n.ident("sum")
        local = n.call(self.name("local_of"), t, n.ident("kernel"))
        body = [
            n.VarDecl(DOUBLE, "sum", n.FloatLit(0.0)),
            _loop("t", n.IntLit(p.trees), [
                n.VarDecl(_std_type("int32_t"), "node", self.at("walk_root", n.BinOp("+", self.at("walk_bounds", t),
                                                                                     local))),
                self.walk(node),
                n.ExprStmt(n.BinOp("+=", total, self.leaf(node))),
            ]),
            n.Return(total),
        ]
        return n.FunctionDef(self.name("raw"), DOUBLE, (n.FuncParam(INT, "kernel"), n.FuncParam(_ROW, "row")), body,
                             inline=True)

    def raw_all(self) -> n.FunctionDef:
        """`<prefix>_raw_all(rows, sums)` for every kernel: tree by tree, each walk once (from the row of its first
        kernel), then every kernel adds its walk's leaf, so each kernel's sum is in tree order from 0.0."""
        p = self.p
        t, w, k, node, sums, first = (n.ident(v) for v in ("t", "w", "k", "node", "sums", "first"))
        value = n.ident("value")
        widest = int(np.diff(p.walk_bounds).max()) if p.trees else 1
        body = [
            n.VarDecl(n.Array(DOUBLE, max(widest, 1)), "value"),
            _loop("k", n.IntLit(p.kernels), [_assign(n.Index(sums, k), n.FloatLit(0.0))]),
            _loop("t", n.IntLit(p.trees), [
                n.VarDecl(n.Const(INT), "first", self.at("walk_bounds", t)),
                _loop("w", n.BinOp("-", self.at("walk_bounds", n.BinOp("+", t, n.IntLit(1))), first), [
                    n.VarDecl(_std_type("int32_t"), "node", self.at("walk_root", n.BinOp("+", first, w))),
                    n.VarDecl(n.Const(INT), "kernel", self.at("walk_kernel", n.BinOp("+", first, w))),
                    n.VarDecl(_ROW, "row", n.BinOp("+", n.ident("rows"), n.BinOp(
                        "*", n.ident("kernel"), n.IntLit(self.features)))),
                    self.walk(node),
                    _assign(n.Index(value, w), self.leaf(node)),
                ]),
                _loop("k", n.IntLit(p.kernels), [n.ExprStmt(n.BinOp("+=", n.Index(sums, k), n.Index(
                    value, n.call(self.name("local_of"), t, k))))]),
            ]),
        ]
        return n.FunctionDef(self.name("raw_all"), n.Builtin("void"), (
            n.FuncParam(_ROW, "rows"), n.FuncParam(n.Ptr(DOUBLE), "sums")), body, inline=True)

    def decls(self, forest: Forest, log_targets: bool) -> tuple[n.Decl, ...]:
        self.features = len(forest.feature_names)
        value = n.ident("value")
        output = {"identity": value, "signed_square": n.BinOp("*", value, n.call(_std("fabs"), value)),
                  "exp": n.call(_std("exp"), value)}[forest.transform]
        tflops = n.call(_std("expm1"), value) if log_targets else n.call(_std("max"), value, n.FloatLit(0.0))
        kernel, row = n.ident("kernel"), n.ident("row")
        one = (n.FuncParam(INT, "kernel"), n.FuncParam(_ROW, "row"))
        transforms = []
        for what, source, result in (("output", "raw", output), ("tflops", "predict", tflops)):
            transforms.append(n.FunctionDef(self.name(what), DOUBLE, (n.FuncParam(DOUBLE, "value"),),
                                            [n.Return(result)], inline=True))
        singles = [n.FunctionDef(self.name(what), DOUBLE, one, [n.Return(n.call(self.name(how), n.call(
            self.name(source), kernel, row)))], inline=True)
            for what, source, how in (("predict", "raw", "output"), ("tflops", "predict", "tflops_of"))]
        out, i = n.ident("out"), n.ident("i")
        alls = []
        for what, source, how in (("predict", "raw", "output"), ("tflops", "predict", "tflops_of")):
            alls.append(n.FunctionDef(self.name(f"{what}_all"), n.Builtin("void"), (
                n.FuncParam(_ROW, "rows"), n.FuncParam(n.Ptr(DOUBLE), "out")), [
                n.ExprStmt(n.call(self.name(f"{source}_all"), n.ident("rows"), out)),
                _loop("i", n.IntLit(self.p.kernels), [_assign(n.Index(out, i), n.call(self.name(how),
                                                                                      n.Index(out, i)))]),
            ], inline=True))
        transforms[1] = attrs.evolve(transforms[1], name=self.name("tflops_of"))
        return (*self.arrays(), self.read(), self.next_node(), self.local_of(), self.raw(), self.raw_all(), *transforms,
                singles[0], alls[0], singles[1], alls[1])


_ROW = n.Ptr(n.Const(DOUBLE))


def _u64(value: int) -> n.IntLit:
    return n.IntLit(int(value), "ull")
