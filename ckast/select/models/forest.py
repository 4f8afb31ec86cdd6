"""A LightGBM model as data: its trees as arrays, read and checked completely from LightGBM's text model format,
and an evaluator with LightGBM's exact decision semantics (what `ckast select` predicts with, and the source the
emitted C++ selector is built from).

Semantics, as LightGBM's `Tree` predicts from raw feature values:
- Input: a value with |x| <= kZeroThreshold (1e-35f) is 0.0 (LightGBM's dense-row reader drops it).
- Numeric split (`decision_type` bit 0 clear): missing type = bits 2-3 (0 none, 1 zero, 2 NaN). A NaN becomes
  0.0 unless the missing type is NaN. A missing value (type zero and |x| tiny, or type NaN and NaN) goes to
  the default side (bit 1: left); otherwise left iff x <= threshold.
- Categorical split (bit 0 set): x is truncated to an int (a NaN or a value outside int32 gives INT_MIN, as
  the x86 conversion does); negative goes right; else left iff that bit is set in the node's bitset
  `cat_threshold[cat_boundaries[k] : cat_boundaries[k + 1]]` with k = int(threshold).
- A model's raw score is the sum of its trees' leaf values in tree order, from 0.0; the objective's output
  transform then applies (identity for regression, `x * |x|` for regression with `sqrt`, exp for poisson,
  gamma and tweedie).

Reading (`read_model`, `parse_model`) refuses, in one line naming the tree and the field, anything LightGBM would
read otherwise than this module, or crash on, or that this module could not evaluate to a number: every header
field's type and value, `tree_sizes` against the trees' text, every tree's fields (counts, integers, numbers:
finite leaf values, thresholds not NaN; feature indices, decision types, categorical bitsets) and its shape
(each node and leaf reached exactly once from the root, no deeper than MAX_DEPTH).
"""

from __future__ import annotations

import functools
import math
import re
import zlib
from collections.abc import Sequence
from pathlib import Path

import attrs
import numpy as np

from ckast.errors import CkastError
from ckast.input_file import DEFAULT_LIMIT, InputFileError, read_input
from ckast.number_text import INTEGER, REAL
from ckast.wording import quantity

from ckast.select.expr.libm import libm
from .limits import MAX_DEPTH, MAX_TREES

ZERO_THRESHOLD = float(np.float32(1e-35))
INT_MIN = -(2**31)

CATEGORICAL, DEFAULT_LEFT = 1, 2
MISSING_NONE, MISSING_ZERO, MISSING_NAN = 0, 1, 2
DECISION_TYPES = (MISSING_NAN + 1) << 2
"""Valid `decision_type`s are below it (0..11): bit 0 categorical, bit 1 default left, bits 2-3 the missing type."""

MODEL_LIMIT = DEFAULT_LIMIT
"""Largest model file read, and the most its gzip form may unpack to (a 2,000-tree, 255-leaf model is ~40 MB)."""
VERSIONS = ("v2", "v3", "v4")
"""LightGBM's text model versions whose trees this module reads."""

_IDENTITY = ("regression", "regression_l1", "huber", "fair", "quantile", "mape", "l2", "l1", "mse", "mae",
             "root_mean_squared_error", "rmse")
_EXP = ("poisson", "gamma", "tweedie")

_GZIP = b"\x1f\x8b"
_NUMBER = rf"{REAL}|[-+]?(?:nan|inf)"
"""A model's number: ckast's (`number_text.REAL`), or LightGBM's nan and inf (a threshold may be +-inf)."""
_CHARACTERS = {int: re.compile(r"[^-0-9 ]"), float: re.compile(r"[^-+.0-9eEnaifNAIF ]")}
"""What no integer (number) field holds: within these characters Python reads a token as LightGBM does."""
_TREE_START = re.compile(rb"\nTree=")
_TREES_END = re.compile(rb"\nend of trees(?:\n|\Z)")

_PER_NODE = {"split_feature": int, "threshold": float, "decision_type": int, "left_child": int, "right_child": int,
             "split_gain": float, "internal_value": float, "internal_weight": float, "internal_count": int}
_PER_LEAF = {"leaf_value": float, "leaf_weight": float, "leaf_count": int, "leaf_parent": int}
_RECORDS = {"split_gain", "internal_value", "internal_weight", "internal_count", "leaf_weight", "leaf_count",
            "leaf_parent"}
"""Fields LightGBM records from training that prediction does not read (left empty in a single-leaf tree)."""
_TREE_FIELDS = {*_PER_NODE, *_PER_LEAF, "num_leaves", "num_cat", "cat_boundaries", "cat_threshold", "is_linear",
                "shrinkage", "has_categorical"}
"""The fields of a LightGBM tree (those of linear trees excepted: ckast evaluates constant leaves only)."""


class ModelError(CkastError, ValueError):
    """A model file that is not a LightGBM text model ckast can evaluate (one line)."""


def _node_rules(decision_type: np.ndarray, threshold: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per node: (categorical, where a NaN goes (left?), whether a zero goes by a rule rather than by its
    threshold, where such a zero goes (left?)): LightGBM's missing-value handling folded per node."""
    kind = decision_type.astype(np.int64)
    missing, default_left = (kind >> 2) & 3, (kind & DEFAULT_LEFT) != 0
    zero_plain = 0.0 <= threshold
    nan_left = np.where(missing == MISSING_NONE, zero_plain, default_left)
    zero_rule = (missing == MISSING_ZERO) & (default_left != zero_plain)
    return (kind & CATEGORICAL) != 0, nan_left, zero_rule, default_left


@attrs.frozen(eq=False)
class Tree:
    """One tree: node arrays (`left`/`right` children are node indices, or ~leaf for a leaf) and leaves, and
    per node the missing-value rules its `decision_type` sets (`_node_rules`)."""

    split_feature: np.ndarray
    threshold: np.ndarray
    decision_type: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf_value: np.ndarray
    cat_boundaries: np.ndarray
    cat_threshold: np.ndarray
    categorical: np.ndarray = attrs.field(init=False)
    nan_left: np.ndarray = attrs.field(init=False)
    zero_rule: np.ndarray = attrs.field(init=False)
    zero_left: np.ndarray = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        for name, value in zip(("categorical", "nan_left", "zero_rule", "zero_left"),
                               _node_rules(self.decision_type, self.threshold)):
            object.__setattr__(self, name, value)

    @property
    def num_leaves(self) -> int:
        return len(self.leaf_value)


@attrs.frozen(eq=False)
class Forest:
    """A model's trees, held joined in one (`flat`: node and leaf arrays concatenated, children a node of the
    flat arrays or ~its leaf, categorical thresholds and bitset bounds renumbered likewise), each tree's root
    in `roots` (a node, or ~leaf for a single-leaf tree) and where each tree's nodes, leaves, bitsets and bitset
    words start (`offsets`: trees + 1 rows of those four)."""

    feature_names: tuple[str, ...]
    objective: str
    transform: str  # "identity", "signed_square" or "exp"
    flat: Tree
    roots: np.ndarray
    offsets: np.ndarray

    @functools.cached_property
    def trees(self) -> tuple[Tree, ...]:
        """Each tree on its own (its nodes, leaves and bitsets numbered from 0)."""
        flat, out = self.flat, []
        for (n0, l0, b0, w0), (n1, l1, b1, w1) in zip(self.offsets[:-1].tolist(), self.offsets[1:].tolist()):
            categorical = flat.categorical[n0:n1]
            left, right = (np.where(c >= 0, c - n0, c + l0) for c in (flat.left[n0:n1], flat.right[n0:n1]))
            out.append(Tree(flat.split_feature[n0:n1], np.where(categorical, flat.threshold[n0:n1] - b0,
                                                                 flat.threshold[n0:n1]),
                            flat.decision_type[n0:n1], left, right, flat.leaf_value[l0:l1],
                            flat.cat_boundaries[b0:b1 + 1] - w0 if b1 > b0 else np.zeros(0, dtype=np.int64),
                            flat.cat_threshold[w0:w1]))
        return tuple(out)

    @functools.cached_property
    def _walk(self) -> _Walk:
        return _Walk.of(self)

    def raw(self, x: np.ndarray) -> np.ndarray:
        """Raw scores of rows `x` (n x features, float64), summed in tree order."""
        x = _input(x)
        if x.shape[1] != len(self.feature_names):
            raise ModelError(f"rows of {x.shape[1]} features for a model of {len(self.feature_names)}")
        out = np.zeros(len(x))
        step = max(1, min(_ROWS, _CHUNK // len(self.roots)))
        for start in range(0, len(x), step):
            out[start:start + step] = self._raw(x[start:start + step])
        return out

    def _raw(self, x: np.ndarray) -> np.ndarray:
        """Raw scores of rows `x` (read through `_input`): every (row, tree) pair walked down its tree, a block of
        trees at a time, each step `value <= threshold` on the node's walk column (`_Walk.columns`), the first
        step of a block for all its pairs at once (they all stand at their tree's start); with enough rows, the
        splits on columns constant over the rows are decided once (`_Walk.resolved`) and not walked."""
        walk, rows, trees = self._walk, len(x), len(self.roots)
        first = x[0]
        constant = ((x == first) | (np.isnan(x) & np.isnan(first))).all(axis=0) & (rows >= _RESOLVE)
        child, start = walk.resolved(self.flat, first, constant)
        columns, column = walk.columns(self.flat, x, constant)
        values, offset = columns.ravel(), rows * (column - walk.tree)  # pair p at node n reads values[offset[n] + p]
        leaf = np.repeat(np.where(start < 0, ~start, 0), rows)  # per pair: tree * rows + row
        walked = np.flatnonzero(start >= 0)
        block = max(1, _PAIRS // rows)
        for begin in range(0, len(walked), block):
            some = walked[begin:begin + block]
            top = start[some]
            right = columns[column[top]] > walk.threshold[top][:, None]
            node = np.where(right, child[2 * top + 1][:, None], child[2 * top][:, None]).ravel()
            pair = (some[:, None] * rows + np.arange(rows)).ravel()
            while True:
                done = node < 0
                leaf[pair[done]] = ~node[done]
                node, pair = node[~done], pair[~done]
                if not len(node):
                    break
                node = child[2 * node + (values[offset[node] + pair] > walk.threshold[node])]
        with np.errstate(over="ignore"):  # finite leaves may add up to inf: the caller refuses it
            return _tree_sums(self.flat.leaf_value[leaf].reshape(trees, rows))

    def predict(self, x: np.ndarray) -> np.ndarray:
        raw = self.raw(x)
        if self.transform == "exp":
            return libm(math.exp, raw)
        if self.transform == "signed_square":
            return raw * np.abs(raw)
        return raw


_PAIRS = 1 << 15
"""(row, tree) pairs walked at a time: a block of trees, for every row of a chunk (measured ranking one problem
with a 2,000-tree model: 2**14 to 2**15 pairs at a time fastest, 2**16 10% slower, 2**17 and more 20-50% slower:
the block's nodes stay in the CPU's caches)."""
_ROWS, _CHUNK = 1024, 1 << 21
"""Rows evaluated at a time, each chunk with its own constant columns and walk columns: at most `_ROWS`, and at
most `_CHUNK` (row, tree) pairs (measured on 16,000 rows of mixed problems with a 2,000-tree model: 1,024 rows at
a time 10% faster than 2,048, 25% faster than 8,192)."""
_RESOLVE = 64
"""Fewest rows whose constant columns are resolved before the walk (`_Walk.resolved` costs about as much as
walking the splits it saves at 64 to 96 rows of a 2,000-tree model; at 165 rows it saves 6%, at 495 rows 9%)."""

_VERSIONS = ((False, np.inf), (False, -np.inf), (False, None), (True, np.inf), (True, -np.inf), (True, None))
"""How a numeric node reads its feature in the walk, so that it decides by `value <= threshold` alone: (whether a
zero is missing too, what a missing value (a NaN) becomes: +inf goes right, -inf goes left; None: the value read
is 1.0 for a missing value and 0.0 otherwise, against a threshold of 0.5, for a threshold of +inf with missing
values going right). A node reads version 3 * zero_rule + (1 if missing values go left, else 2 for a threshold of
+inf, else 0)."""


@attrs.frozen(eq=False)
class _Walk:
    """`Forest.raw`'s tables over the flat nodes: `child` (each node's left and right, interleaved, then each
    tree's root), `slot` (where in `child` each node is named: its parent's left or right, or its tree's root),
    `threshold` (a node goes right iff the value it reads exceeds it), `column` (the walk column each numeric node
    reads: its feature in the block of its version), `tree` (each node's tree), `categorical` (the categorical
    nodes) and `versions` (the `_VERSIONS` some node reads, in the order of their blocks)."""

    child: np.ndarray
    slot: np.ndarray
    threshold: np.ndarray
    column: np.ndarray
    tree: np.ndarray
    categorical: np.ndarray
    versions: tuple[int, ...]

    @classmethod
    def of(cls, forest: Forest) -> _Walk:
        flat, features = forest.flat, len(forest.feature_names)
        version = 3 * flat.zero_rule + np.where(flat.nan_left, 1, np.where(flat.threshold == np.inf, 2, 0))
        versions = np.unique(version[~flat.categorical])
        block = np.zeros(len(_VERSIONS), dtype=np.int64)
        block[versions] = np.arange(len(versions))
        child = np.concatenate([np.stack([flat.left, flat.right], axis=1).ravel(), forest.roots])
        slot = np.zeros(len(flat.split_feature), dtype=np.int64)
        named = np.flatnonzero(child >= 0)
        slot[child[named]] = named
        indicator = np.isin(version, (2, 5)) | flat.categorical
        return cls(child, slot, np.where(indicator, 0.5, flat.threshold),
                   np.where(flat.categorical, 0, block[version] * features + flat.split_feature),
                   np.repeat(np.arange(len(forest.roots)), np.diff(forest.offsets[:, 0])),
                   np.flatnonzero(flat.categorical), tuple(versions.tolist()))

    def resolved(self, flat: Tree, first: np.ndarray, constant: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(`child` without the roots, each tree's start) with the nodes that split on a `constant` column (of value
        `first`) jumped over: a child or root that is such a node replaced by the node on a varying column, or
        ~leaf, that `first` leads to from it (pointer jumping: log2(depth) passes over those nodes)."""
        nodes = len(flat.split_feature)
        fixed = constant[flat.split_feature] if constant.any() else np.zeros(0, dtype=bool)
        at = np.flatnonzero(fixed)
        if not len(at):
            return self.child[:2 * nodes], self.child[2 * nodes:]
        target = np.empty(nodes, dtype=np.int64)
        target[at] = self.child[2 * at + ~go_left(flat, at, first[flat.split_feature[at]])]
        pending = at
        while True:
            to = target[pending]
            pending = pending[(to >= 0) & fixed[np.maximum(to, 0)]]
            if not len(pending):
                break
            target[pending] = target[target[pending]]
        child = self.child.copy()
        child[self.slot[at]] = target[at]
        return child[:2 * nodes], child[2 * nodes:]

    def columns(self, flat: Tree, x: np.ndarray, constant: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the walk columns of rows `x` (columns x rows), the column each node reads): each version's block of
        `x`'s features, then per categorical feature not `constant` a 0/1 column (1: goes right) for each pattern
        its nodes' bitsets make over the values in `x`."""
        xt = x.T
        blocks = []
        for version in self.versions:
            zero, becomes = _VERSIONS[version]
            missing = np.isnan(xt) | (xt == 0.0) if zero else np.isnan(xt)
            blocks.append(missing.astype(np.float64) if becomes is None else np.where(missing, becomes, xt))
        column = self.column
        nodes = self.categorical[~constant[flat.split_feature[self.categorical]]]
        if len(nodes):
            features, of = np.unique(flat.split_feature[nodes], return_inverse=True)
            found = [np.unique(x[:, feature], return_inverse=True) for feature in features.tolist()]
            most = max(len(values) for values, _ in found)
            values = np.stack([np.resize(values, most) for values, _ in found])  # cycled to the same count
            code = np.stack([code.ravel() for _, code in found])  # per feature, which of its values each row holds
            right = ~go_left(flat, np.repeat(nodes, most), values[of].ravel()).reshape(len(nodes), most)
            keys = np.concatenate([of.astype(np.int64)[:, None].view(np.uint8), np.packbits(right, axis=1)], axis=1)
            _, index, which = np.unique(keys.view(np.dtype((np.void, keys.shape[1]))).ravel(), return_index=True,
                                        return_inverse=True)  # one column per feature and pattern over its values
            blocks.append(right[index[:, None], code[of[index]]].astype(np.float64))
            column = column.copy()
            column[nodes] = len(self.versions) * x.shape[1] + which
        return (np.concatenate(blocks) if blocks else np.zeros((0, len(x)))), column


def _tree_sums(values: np.ndarray) -> np.ndarray:
    """Per column of `values` (trees x rows): its leaf values added from 0.0, tree by tree, as LightGBM adds: one
    vector add per tree for 64 rows or more, `np.add.accumulate` along each row for fewer (faster there)."""
    if values.shape[1] >= 64:
        out = np.zeros(values.shape[1])
        for tree in values:
            out += tree
        return out
    leaves = np.zeros((values.shape[1], len(values) + 1))
    leaves[:, 1:] = values.T
    return np.add.accumulate(leaves, axis=1)[:, -1]


def go_left(tree: Tree, nodes: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Whether `value` (read through `_input`) goes left at each of `nodes` (LightGBM's Decision)."""
    left = value <= tree.threshold[nodes]  # a NaN compares false
    nan = np.isnan(value)
    if nan.any():
        left[nan] = tree.nan_left[nodes[nan]]
    zero = (value == 0.0) & tree.zero_rule[nodes]
    if zero.any():
        left[zero] = tree.zero_left[nodes[zero]]
    categorical = tree.categorical[nodes]
    if categorical.any():
        left[categorical] = _in_bitset(tree, nodes[categorical], value[categorical])
    return left


def _in_bitset(tree: Tree, nodes: np.ndarray, value: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        inside = (value > -2147483649.0) & (value < 2147483648.0)  # NaN compares false: INT_MIN
        category = np.where(inside, np.trunc(np.where(inside, value, 0.0)), INT_MIN).astype(np.int64)
    k = tree.threshold[nodes].astype(np.int64)
    start, stop = tree.cat_boundaries[k], tree.cat_boundaries[k + 1]
    word = start + np.maximum(category, 0) // 32
    ok = (category >= 0) & (word < stop)
    bits = tree.cat_threshold[np.where(ok, word, 0)]
    return ok & (((bits.astype(np.int64) >> (np.maximum(category, 0) % 32)) & 1) == 1)


def _input(x: np.ndarray) -> np.ndarray:
    x = np.array(x, dtype=np.float64, copy=True, ndmin=2)
    x[np.abs(x) <= ZERO_THRESHOLD] = 0.0
    return x


def read_model(path: Path) -> Forest:
    """A model file (LightGBM's text format, optionally gzip'd), of at most MODEL_LIMIT bytes (unpacked too);
    ModelError naming the file (and the tree and field) when it cannot be read or is not a model ckast evaluates."""
    try:
        data = read_input(path, MODEL_LIMIT)
    except InputFileError as exc:
        raise ModelError(str(exc)) from None
    try:
        return parse_model(_gunzip(data, MODEL_LIMIT) if data.startswith(_GZIP) else data)
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}") from None


def check_model_text(text: str) -> None:
    """ModelError unless `read_model` reads a model file holding `text` (what the trainer checks before writing)."""
    data = text.encode()
    if len(data) > MODEL_LIMIT:
        raise ModelError(f"{len(data):,} bytes, more than the {MODEL_LIMIT:,} a model file ckast reads may have")
    parse_model(data)


def _gunzip(data: bytes, limit: int) -> bytes:
    """The bytes of gzip `data` (every member), refused once they pass `limit` (a gzip bomb stops there)."""
    out = bytearray()
    rest = data
    while rest:
        if not rest.startswith(_GZIP):
            raise ModelError("not a complete gzip file (data after its end)")
        unpack = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            out += unpack.decompress(rest, limit + 1 - len(out))
        except zlib.error as exc:
            raise ModelError(f"not a complete gzip file ({exc})") from None
        if len(out) > limit:
            raise ModelError(f"its gzip data unpacks to more than {limit:,} bytes (the most read)")
        if not unpack.eof:
            raise ModelError("not a complete gzip file (truncated)")
        rest = unpack.unused_data
    return bytes(out)


def parse_model(text: str | bytes) -> Forest:
    """A LightGBM text model (`Booster.model_to_string()`, `model.txt`), checked completely."""
    data = text.encode() if isinstance(text, str) else bytes(text)
    first = _TREE_START.search(data)
    if not data.startswith(b"tree\n") or first is None:
        raise ModelError("not a LightGBM text model (no 'tree' header or no trees)")
    end = _TREES_END.search(data, first.start())
    if end is None:
        raise ModelError("not a complete LightGBM model: no 'end of trees' (truncated?)")
    if b"\r" in data[:end.start()]:
        line = data.count(b"\n", 0, data.index(b"\r")) + 1
        raise ModelError(f"line {line}: a carriage return (LightGBM's model lines end in a newline alone)")
    region = data[first.start() + 1:end.start() + 1]
    starts = [0, *(m.start() + 1 for m in _TREE_START.finditer(region))]
    if len(starts) > MAX_TREES:
        raise ModelError(f"holds {len(starts):,} trees, more than the {MAX_TREES:,} ckast reads")
    blocks = [region[a:b] for a, b in zip(starts, [*starts[1:], len(region)])]
    try:
        header = data[:first.start() + 1].decode()
    except UnicodeDecodeError:
        raise ModelError("its header is not UTF-8 text") from None
    names, objective, transform, sizes = _header(_fields(header.split("\n")[1:], "header"), len(blocks))
    texts = []
    for number, block in enumerate(blocks):
        try:
            texts.append(_tree_text(block, number))
        except ModelError as exc:
            raise ModelError(f"Tree={number}: {exc}") from None
    flat, roots, offsets = _Trees(texts, len(names)).joined()
    wrong = next((n for n, block in enumerate(blocks) if sizes is not None and sizes[n] != len(block)), None)
    if wrong is not None:
        raise ModelError(f"Tree={wrong}: tree_sizes: says {sizes[wrong]} bytes, the tree's text has "
                         f"{len(blocks[wrong])} (edited after LightGBM wrote it?)")
    return Forest(names, objective, transform, flat, roots, offsets)


def _shown(token: str) -> str:
    return repr(token if len(token) <= 40 else token[:30] + "...")


def _fields(lines: Sequence[str], where: str) -> dict[str, str]:
    """`key=value` lines (blank lines skipped) as a dict; a line without '=' or a key given twice is refused."""
    out: dict[str, str] = {}
    for line in lines:
        if not line:
            continue
        key, eq, value = line.partition("=")
        if not eq:
            raise ModelError(f"{where}: {_shown(line)} is not a field=value line")
        if key in out:
            raise ModelError(f"{key}: given twice")
        out[key] = value
    return out


def _integer(fields: dict[str, str], key: str, default: int | None = None, low: int | None = None) -> int:
    """Field `key` as one integer (>= `low`); `default` when absent, refused when absent without one."""
    value = fields.get(key)
    if value is None:
        if default is None:
            raise ModelError(f"{key}: missing")
        return default
    if re.fullmatch(INTEGER, value) is None:
        raise ModelError(f"{key}: {_shown(value)} is not an integer")
    if len(value) > 19:
        raise ModelError(f"{key}: {_shown(value)} is out of range")
    number = int(value)
    if low is not None and number < low:
        raise ModelError(f"{key}: {number} is below {low}")
    return number


def _header(fields: dict[str, str], trees: int) -> tuple[tuple[str, ...], str, str, list[int] | None]:
    """(feature names, objective, output transform, tree sizes or None) of a model's header fields."""
    version = fields.get("version")
    if version not in VERSIONS:
        got = "missing" if version is None else f"{_shown(version)} is not a version ckast reads"
        raise ModelError(f"version: {got} ({', '.join(VERSIONS)})")
    for key in ("num_class", "num_tree_per_iteration"):
        if _integer(fields, key, None if key == "num_class" else 1) != 1:
            raise ModelError(f"{key}: {fields[key]}: ckast evaluates single-output (regression) models only")
    _integer(fields, "label_index", 0, low=0)
    if "average_output" in fields:
        raise ModelError("average_output: random-forest models are not supported")
    features = _integer(fields, "max_feature_idx", low=0) + 1
    if "feature_names" not in fields:
        raise ModelError("feature_names: missing")
    names = tuple(fields["feature_names"].split(" "))
    if len(names) != features:
        raise ModelError(f"feature_names: {len(names)} names for {features} features (max_feature_idx)")
    if "" in names:
        raise ModelError(f"feature_names: name {names.index('')} is empty (names are separated by one space)")
    if len(set(names)) != len(names):
        twice = next(name for i, name in enumerate(names) if name in names[:i])
        raise ModelError(f"feature_names: {_shown(twice)} is named twice")
    if "feature_infos" in fields and len(fields["feature_infos"].split(" ")) != features:
        raise ModelError(f"feature_infos: {len(fields['feature_infos'].split(' '))} entries for {features} features")
    objective = fields.get("objective", "regression")
    if not objective.strip():
        raise ModelError("objective: empty (LightGBM writes the objective's name)")
    words = objective.split()
    sizes = None
    if "tree_sizes" in fields:
        tokens = fields["tree_sizes"].split(" ")
        bad = next((v for v in tokens if re.fullmatch(INTEGER, v) is None or len(v) > 19), None)
        if bad is not None:
            raise ModelError(f"tree_sizes: {_shown(bad)} is not {'an integer' if len(bad) <= 19 else 'in range'}")
        sizes = [int(v) for v in tokens]
        if len(sizes) != trees:
            raise ModelError(f"tree_sizes: {len(sizes)} size{'s' if len(sizes) > 1 else ''} for the {trees} trees the "
                             "model holds")
    return names, " ".join(words), _transform(words), sizes


def _transform(objective: Sequence[str]) -> str:
    name = objective[0]
    if name in _EXP:
        return "exp"
    if name in _IDENTITY:
        return "signed_square" if "sqrt" in objective[1:] else "identity"
    raise ModelError(f"objective: {_shown(name)} has an output transform ckast does not evaluate "
                     f"(supported: {', '.join(_IDENTITY + _EXP)})")


@attrs.frozen
class _TreeText:
    """A tree's fields as text, with its two counts read."""

    fields: dict[str, str]
    leaves: int
    num_cat: int


def _tree_text(block: bytes, number: int) -> _TreeText:
    """Tree `number`'s fields from its text block: its lines, field names and scalar fields checked."""
    try:
        lines = block.decode("ascii").split("\n")
    except UnicodeDecodeError:
        raise ModelError("not ASCII text") from None
    if lines[0] != f"Tree={number}":
        raise ModelError(f"starts {_shown(lines[0])}, not 'Tree={number}' (trees are numbered in order)")
    blank = lines.index("", 1) if "" in lines[1:] else len(lines)
    after = next((line for line in lines[blank:] if line), None)
    if after is not None:
        raise ModelError(f"{_shown(after)} after the tree's blank line (LightGBM reads no more of it)")
    fields = _fields(lines[1:blank], "line")
    unknown = next((key for key in fields if key not in _TREE_FIELDS), None)
    if unknown is not None:
        raise ModelError(f"{_shown(unknown)}: not a field of a LightGBM tree ckast reads")
    if fields.get("is_linear", "0") != "0":
        raise ModelError("is_linear: linear trees are not supported")
    shrinkage = fields.get("shrinkage", "1")
    if re.fullmatch(_NUMBER, shrinkage, re.IGNORECASE) is None or not math.isfinite(float(shrinkage)):
        raise ModelError(f"shrinkage: {_shown(shrinkage)} is not a finite number")
    leaves = _integer(fields, "num_leaves", low=1)  # checked against the leaves before any array is sized by it
    if "leaf_value" not in fields:
        raise ModelError(f"leaf_value: missing (num_leaves = {leaves} values)")
    room = (len(fields["leaf_value"]) + 1) // 2
    if leaves > room:
        raise ModelError(f"num_leaves: {leaves:,}, but leaf_value has room for {quantity(room, 'value')} at most (its "
                         f"text is {quantity(len(fields['leaf_value']), 'character')})")
    return _TreeText(fields, leaves, _integer(fields, "num_cat", low=0))


class _Trees:
    """Every tree's arrays read field by field over all trees at once, checked, and joined (`Forest.flat`)."""

    def __init__(self, texts: Sequence[_TreeText], features: int) -> None:
        self.texts = texts
        self.features = features
        self.leaves = np.array([t.leaves for t in texts], dtype=np.int64)
        self.internal = self.leaves - 1
        self.num_cat = np.array([t.num_cat for t in texts], dtype=np.int64)
        self.node_start = np.concatenate([[0], np.cumsum(self.internal)])
        self.leaf_start = np.concatenate([[0], np.cumsum(self.leaves)])
        self.node_tree = np.repeat(np.arange(len(texts)), self.internal)

    def column(self, key: str, kind: type, counts: np.ndarray, why: str) -> np.ndarray | None:
        """Field `key` of every tree, concatenated (tree t's `counts[t]` values; a tree may leave out a field it
        has no values of). A record (`_RECORDS`) may be empty whatever its count, and is only checked (None)."""
        record = key in _RECORDS
        values = [t.fields.get(key) for t in self.texts]
        for number, (value, count) in enumerate(zip(values, counts.tolist())):
            if value is None:
                if count and not record:
                    raise ModelError(f"Tree={number}: {key}: missing ({why} = {count} values)")
                continue
            got = value.count(" ") + 1 if value else 0
            if got != count and not (record and not got):
                raise ModelError(f"Tree={number}: {key}: {got} values, not {count} ({why})")
        joined = " ".join(v for v in values if v)
        name = "an integer" if kind is int else "a number"
        tokens = joined.split(" ") if joined else []
        try:
            if _CHARACTERS[kind].search(joined):
                raise ValueError
            return None if record else np.array(tokens, dtype=np.int64 if kind is int else np.float64)
        except ValueError:
            number, bad = next((n, t) for n, v in enumerate(values) if v for t in v.split(" ")
                               if not re.fullmatch(INTEGER if kind is int else _NUMBER, t, re.IGNORECASE))
            raise ModelError(f"Tree={number}: {key}: {_shown(bad)} is not {name}") from None
        except OverflowError:
            bad = max(tokens, key=len)
            number = next(n for n, v in enumerate(values) if v and bad in v.split(" "))
            raise ModelError(f"Tree={number}: {key}: {_shown(bad)} is out of range") from None

    def refuse(self, key: str, start: np.ndarray, index: int, message: str) -> ModelError:
        """A ModelError naming the tree of position `index` of a column whose trees start at `start`, and its
        position within the tree (`{i}` in `message`)."""
        tree = int(np.searchsorted(start, index, side="right")) - 1
        return ModelError(f"Tree={tree}: {key}: {message.format(i=index - int(start[tree]))}")

    def joined(self) -> tuple[Tree, np.ndarray, np.ndarray]:
        """(flat tree, roots, offsets) as `Forest` holds them."""
        for key in sorted(_RECORDS):
            per_node = key in _PER_NODE
            self.column(key, {**_PER_NODE, **_PER_LEAF}[key], self.internal if per_node else self.leaves,
                        "num_leaves - 1" if per_node else "num_leaves")
        feature = self.column("split_feature", int, self.internal, "num_leaves - 1")
        threshold = self.column("threshold", float, self.internal, "num_leaves - 1")
        decision = self.column("decision_type", int, self.internal, "num_leaves - 1")
        left = self.column("left_child", int, self.internal, "num_leaves - 1")
        right = self.column("right_child", int, self.internal, "num_leaves - 1")
        leaf = self.column("leaf_value", float, self.leaves, "num_leaves")
        bad = np.flatnonzero((feature < 0) | (feature >= self.features))
        if len(bad):
            raise self.refuse("split_feature", self.node_start, bad[0], f"node {{i}} splits on feature "
                              f"{feature[bad[0]]}; the model has features 0..{self.features - 1}")
        bad = np.flatnonzero(np.isnan(threshold))
        if len(bad):  # +-inf splits the NaNs of a missing type NaN from the rest
            raise self.refuse("threshold", self.node_start, bad[0], "nan at node {i} (a threshold is a number or "
                              "+-inf)")
        bad = np.flatnonzero(~np.isfinite(leaf))
        if len(bad):
            raise self.refuse("leaf_value", self.leaf_start, bad[0], f"{leaf[bad[0]]} at leaf {{i}} (leaf values are "
                              "finite)")
        bad = np.flatnonzero((decision < 0) | (decision >= DECISION_TYPES))
        if len(bad):
            raise self.refuse("decision_type", self.node_start, bad[0], f"{decision[bad[0]]} at node {{i}} is not a "
                              "decision type (0..11: bit 0 categorical, bit 1 default left, bits 2-3 missing type "
                              "0..2)")
        bounds, words, threshold, word_start = self.bitsets(decision, threshold)
        left, right = self.shape(left, right)
        flat = Tree(feature, threshold, decision.astype(np.int8), left, right, leaf, bounds, words)
        roots = np.where(self.internal > 0, self.node_start[:-1], ~self.leaf_start[:-1])
        offsets = np.stack([self.node_start, self.leaf_start, np.concatenate([[0], np.cumsum(self.num_cat)]),
                            word_start], axis=1)
        return flat, roots, offsets

    def bitsets(self, decision: np.ndarray,
                threshold: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(bitset bounds, bitset words, thresholds, where each tree's words start) with the categorical splits'
        bitsets renumbered over all trees:
        each tree's `num_cat` categorical splits name a bitset of their own (by an integral threshold), each
        bitset of at least one 32-bit word."""
        categorical = (decision & CATEGORICAL) != 0
        found = np.bincount(self.node_tree[categorical], minlength=len(self.texts))
        bad = np.flatnonzero(found != self.num_cat)
        if len(bad):
            raise ModelError(f"Tree={bad[0]}: num_cat: {self.num_cat[bad[0]]}, but the tree has {found[bad[0]]} "
                             "categorical splits (decision_type bit 0)")
        counts = np.where(self.num_cat > 0, self.num_cat + 1, 0)
        bounds = self.column("cat_boundaries", int, counts, "num_cat + 1")
        start = np.concatenate([[0], np.cumsum(counts)])
        head = start[:-1][self.num_cat > 0]
        steps = np.diff(bounds) if len(bounds) else bounds
        inside = np.ones(len(steps), dtype=bool)
        inside[head[1:] - 1] = False  # the step from one tree's bounds to the next
        bad = np.flatnonzero(np.isin(np.arange(len(bounds)), head) & (bounds != 0) | np.append(inside & (steps <= 0),
                                                                                              False))
        if len(bad):
            raise self.refuse("cat_boundaries", start, bad[0], "not increasing from 0 at {i} (each bitset holds at "
                              "least one word)")
        ends = np.zeros(len(self.texts), dtype=np.int64)
        ends[self.num_cat > 0] = bounds[start[1:][self.num_cat > 0] - 1]
        words = self.column("cat_threshold", int, ends, "the last of cat_boundaries")
        bad = np.flatnonzero((words < 0) | (words >= 2**32))
        if len(bad):
            raise self.refuse("cat_threshold", np.concatenate([[0], np.cumsum(ends)]), bad[0],
                              f"{words[bad[0]]} at {{i}} is not a 32-bit word")
        nodes = np.flatnonzero(categorical)
        k, tree = threshold[nodes], self.node_tree[nodes]
        bad = np.flatnonzero((k != np.trunc(k)) | (k < 0) | (k >= self.num_cat[tree]))
        if len(bad):
            raise self.refuse("threshold", self.node_start, nodes[bad[0]], f"categorical node {{i}} names bitset "
                              f"{k[bad[0]]}; the tree has bitsets 0..{self.num_cat[tree[bad[0]]] - 1}")
        first_bitset = np.concatenate([[0], np.cumsum(self.num_cat)])
        renumbered = k.astype(np.int64) + first_bitset[tree]
        _, first, seen = np.unique(renumbered, return_index=True, return_counts=True)
        if (seen > 1).any():
            twice = nodes[np.flatnonzero(renumbered == renumbered[first[seen > 1][0]])[1]]
            raise self.refuse("threshold", self.node_start, twice, "categorical node {i} names a bitset another "
                              "node of the tree names")
        word_start = np.concatenate([[0], np.cumsum(ends)])
        tree_of_bound = np.repeat(np.arange(len(self.texts)), counts)
        moved = bounds + word_start[:-1][tree_of_bound]
        keep = np.ones(len(bounds), dtype=bool)
        keep[head] = False
        flat_threshold = threshold.copy()
        flat_threshold[nodes] = renumbered
        return (np.concatenate([[0], moved[keep]]).astype(np.int64), words.astype(np.uint32), flat_threshold,
                word_start)

    def shape(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The children renumbered over all trees (a node of the flat arrays, or ~its leaf), once each tree is
        seen to be a binary tree rooted at its node 0: every child a node 1..internal-1 or a leaf ~0..~(leaves-1),
        each node and leaf the child of exactly one node, every node reached from the root, no deeper than
        MAX_DEPTH."""
        internal, leaves = self.internal[self.node_tree], self.leaves[self.node_tree]
        for key, children in (("left_child", left), ("right_child", right)):
            bad = np.flatnonzero((children >= internal) | (children < -leaves))
            if len(bad):
                child, n = int(children[bad[0]]), int(internal[bad[0]])
                target = (f"node {child}; the tree has nodes 0..{n - 1}" if child >= 0 else
                          f"leaf {~child} (~{~child} = {child}); the tree has leaves 0..{int(leaves[bad[0]]) - 1}")
                raise self.refuse(key, self.node_start, bad[0], f"node {{i}} points to {target}")
            bad = np.flatnonzero(children == 0)
            if len(bad):
                local = bad[0] - self.node_start[self.node_tree[bad[0]]]
                back = "itself" if local == 0 else "node 0, the root"
                raise self.refuse(key, self.node_start, bad[0], f"node {{i}} reaches {back} (a tree has no cycles)")
        node_start, leaf_start = self.node_start[self.node_tree], self.leaf_start[self.node_tree]
        flat_left, flat_right = (np.where(c >= 0, c + node_start, c - leaf_start) for c in (left, right))
        slots = np.concatenate([flat_left, flat_right])
        order = np.argsort(slots, kind="stable")
        repeated = np.flatnonzero(slots[order][1:] == slots[order][:-1])
        if len(repeated):
            one, two = (int(v) % len(left) for v in order[repeated[0]:repeated[0] + 2])
            child = int(np.concatenate([left, right])[order[repeated[0]]])
            what = f"node {child}" if child >= 0 else f"leaf {~child}"
            local = one - self.node_start[self.node_tree[one]]
            key = "left_child" if order[repeated[0] + 1] < len(left) else "right_child"
            raise self.refuse(key, self.node_start, two, f"{what} is the child of nodes {local} and {{i}} (a tree "
                              "reaches each node once)")
        # Now every node but a root and every leaf has exactly one parent: a node no root reaches lies on a cycle.
        reached = np.zeros(len(left), dtype=bool)
        level = self.node_start[:-1][self.internal > 0]
        for _ in range(MAX_DEPTH):
            reached[level] = True
            level = np.concatenate([flat_left[level], flat_right[level]])
            level = level[level >= 0]
            if not len(level):
                break
        else:
            raise self.refuse("left_child/right_child", self.node_start, level[0], f"node {{i}} lies deeper than "
                              f"{MAX_DEPTH} levels (ckast reads trees up to {MAX_DEPTH} deep)")
        if not reached.all():
            lost = np.flatnonzero(~reached)
            tree = self.node_tree[lost[0]]
            local = [int(v) for v in lost[self.node_tree[lost] == tree] - self.node_start[tree]]
            shown = ", ".join(str(v) for v in local[:5]) + (", ..." if len(local) > 5 else "")
            raise ModelError(f"Tree={tree}: left_child/right_child: nodes {shown} are not reached from the root: "
                             "they lead to each other (a tree has no cycles)")
        return flat_left, flat_right
