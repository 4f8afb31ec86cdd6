"""A LightGBM model as data: its trees as arrays, read from LightGBM's text model format, and a reference
evaluator with LightGBM's exact decision semantics (the source the emitted C++ selector is built from).

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
"""

from __future__ import annotations

import gzip
import math
import zlib
from collections.abc import Sequence
from pathlib import Path

import attrs
import numpy as np

from .libm import libm

ZERO_THRESHOLD = float(np.float32(1e-35))
INT_MIN = -(2**31)

CATEGORICAL, DEFAULT_LEFT = 1, 2
MISSING_NONE, MISSING_ZERO, MISSING_NAN = 0, 1, 2

_IDENTITY = ("regression", "regression_l1", "huber", "fair", "quantile", "mape", "l2", "l1", "mse", "mae",
             "root_mean_squared_error", "rmse")
_EXP = ("poisson", "gamma", "tweedie")


class ModelError(ValueError):
    """A model file that is not a LightGBM text model ckast can evaluate (one line)."""


@attrs.frozen(eq=False)
class Tree:
    """One tree: node arrays (`left`/`right` children are node indices, or ~leaf for a leaf) and leaves."""

    split_feature: np.ndarray
    threshold: np.ndarray
    decision_type: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf_value: np.ndarray
    cat_boundaries: np.ndarray
    cat_threshold: np.ndarray

    @property
    def num_leaves(self) -> int:
        return len(self.leaf_value)


@attrs.frozen(eq=False)
class Forest:
    feature_names: tuple[str, ...]
    trees: tuple[Tree, ...]
    objective: str
    transform: str  # "identity", "signed_square" or "exp"

    def raw(self, x: np.ndarray) -> np.ndarray:
        """Raw scores of rows `x` (n x features, float64), summed in tree order."""
        x = _input(x)
        out = np.zeros(len(x))
        for tree in self.trees:
            out += tree.leaf_value[leaves(tree, x)]
        return out

    def predict(self, x: np.ndarray) -> np.ndarray:
        raw = self.raw(x)
        if self.transform == "exp":
            return libm(math.exp, raw)
        if self.transform == "signed_square":
            return raw * np.abs(raw)
        return raw


def leaves(tree: Tree, x: np.ndarray) -> np.ndarray:
    """The leaf each row of `x` (already through `_input`) reaches."""
    if tree.num_leaves == 1:
        return np.zeros(len(x), dtype=np.int64)
    node = np.zeros(len(x), dtype=np.int64)
    rows = np.arange(len(x))
    active = rows
    while len(active):
        at = node[active]
        value = x[active, tree.split_feature[at]]
        node[active] = np.where(go_left(tree, at, value), tree.left[at], tree.right[at])
        active = active[node[active] >= 0]
    return ~node


def go_left(tree: Tree, nodes: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Whether `value` goes left at each of `nodes` (LightGBM's Decision)."""
    kind = tree.decision_type[nodes].astype(np.int64)
    missing = (kind >> 2) & 3
    default_left = (kind & DEFAULT_LEFT) != 0
    nan = np.isnan(value)
    numeric = np.where(nan & (missing != MISSING_NAN), 0.0, value)
    is_missing = ((missing == MISSING_ZERO) & (numeric > -ZERO_THRESHOLD) & (numeric <= ZERO_THRESHOLD)) | (
        (missing == MISSING_NAN) & nan)
    with np.errstate(invalid="ignore"):
        numeric_left = np.where(is_missing, default_left, numeric <= tree.threshold[nodes])
    categorical = (kind & CATEGORICAL) != 0
    if not categorical.any():
        return numeric_left
    return np.where(categorical, _in_bitset(tree, nodes, value), numeric_left)


def _in_bitset(tree: Tree, nodes: np.ndarray, value: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        inside = (value > -2147483649.0) & (value < 2147483648.0)  # NaN compares false: INT_MIN
        category = np.where(inside, np.trunc(np.where(inside, value, 0.0)), INT_MIN).astype(np.int64)
    k = np.clip(tree.threshold[nodes], 0, max(len(tree.cat_boundaries) - 2, 0)).astype(np.int64)
    start, stop = tree.cat_boundaries[k], tree.cat_boundaries[np.minimum(k + 1, len(tree.cat_boundaries) - 1)]
    word = start + np.maximum(category, 0) // 32
    ok = (category >= 0) & (word < stop)
    bits = tree.cat_threshold[np.where(ok, word, 0)] if len(tree.cat_threshold) else np.zeros(len(nodes), np.uint32)
    return ok & (((bits.astype(np.int64) >> (np.maximum(category, 0) % 32)) & 1) == 1)


def _input(x: np.ndarray) -> np.ndarray:
    x = np.array(x, dtype=np.float64, copy=True, ndmin=2)
    x[np.abs(x) <= ZERO_THRESHOLD] = 0.0
    return x


def read_model(path: Path) -> Forest:
    """A model file (LightGBM's text format, optionally gzip'd)."""
    return read_model_text(path)[1]


def read_model_text(path: Path) -> tuple[str, Forest]:
    """A model file's text (gunzipped when its bytes are gzip's) and its trees; ModelError naming the file
    when it cannot be read, is not a complete gzip file or UTF-8 text, or is not a model ckast evaluates."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ModelError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ModelError(f"{path}: not a complete gzip file ({exc})") from None
    try:
        text = data.decode()
        return text, parse_model(text)
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not a LightGBM text model (not UTF-8 text)") from None
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}") from None


def parse_model(text: str) -> Forest:
    """A LightGBM text model (`Booster.model_to_string()`, `model.txt`)."""
    header, _, rest = text.partition("\nTree=")
    if not text.startswith("tree\n") or not rest:
        raise ModelError("not a LightGBM text model (no 'tree' header or no trees)")
    rest, ended, _ = rest.partition("\nend of trees")
    if not ended:
        raise ModelError("not a complete LightGBM model: no 'end of trees' (truncated?)")
    fields = _fields(header)
    try:
        num_features = int(fields["max_feature_idx"]) + 1
    except (KeyError, ValueError):
        raise ModelError("not a complete LightGBM model: no max_feature_idx") from None
    if int(fields.get("num_tree_per_iteration", "1")) != 1 or int(fields.get("num_class", "1")) != 1:
        raise ModelError("only single-output models (regression) are supported")
    if fields.get("average_output") is not None:
        raise ModelError("random-forest models (average_output) are not supported")
    names = tuple(fields.get("feature_names", "").split())
    if len(names) != num_features:
        raise ModelError(f"feature_names holds {len(names)} names for {num_features} features")
    objective = fields.get("objective", "regression").split()
    transform = _transform(objective)
    trees = []
    for number, block in enumerate(("Tree=" + rest).split("\nTree=")):
        try:
            trees.append(_tree(_fields(block), num_features))
        except ModelError as exc:
            raise ModelError(f"tree {number}: {exc}") from None
    return Forest(names, tuple(trees), " ".join(objective), transform)


def _transform(objective: Sequence[str]) -> str:
    name = objective[0] if objective else "regression"
    if name in _EXP:
        return "exp"
    if name in _IDENTITY:
        return "signed_square" if "sqrt" in objective[1:] else "identity"
    raise ModelError(f"objective {name!r} has an output transform ckast does not evaluate "
                     f"(supported: {', '.join(_IDENTITY + _EXP)})")


def _fields(block: str) -> dict[str, str]:
    out = {}
    for line in block.splitlines():
        key, eq, value = line.partition("=")
        if eq:
            out[key.strip()] = value.strip()
    return out


def _tree(f: dict[str, str], num_features: int) -> Tree:
    def ints(key: str, dtype=np.int64) -> np.ndarray:
        return np.array(f[key].split(), dtype=dtype) if f.get(key) else np.zeros(0, dtype=dtype)

    def floats(key: str) -> np.ndarray:
        return np.array([float(v) for v in f[key].split()]) if f.get(key) else np.zeros(0)

    try:
        if f.get("is_linear", "0") != "0":
            raise ModelError("linear trees are not supported")
        num_leaves = int(f["num_leaves"])
        tree = Tree(ints("split_feature"), floats("threshold"), ints("decision_type", np.int8), ints("left_child"),
                    ints("right_child"), floats("leaf_value"), ints("cat_boundaries"),
                    ints("cat_threshold", np.uint32))
    except (KeyError, ValueError) as exc:
        if isinstance(exc, ModelError):
            raise
        raise ModelError(f"malformed ({exc})") from None
    internal = num_leaves - 1
    if len(tree.leaf_value) != num_leaves or any(len(a) != internal for a in (
            tree.split_feature, tree.threshold, tree.decision_type, tree.left, tree.right)):
        raise ModelError("its arrays do not match its num_leaves")
    if internal and (tree.split_feature.min() < 0 or tree.split_feature.max() >= num_features):
        raise ModelError("it splits on a feature the model does not have")
    return tree
