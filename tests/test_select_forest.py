"""LightGBM models as data (`ckast.select.models.forest`): the reference evaluator equals `lightgbm`'s predict bit for
bit on every decision kind (numeric, missing as NaN or zero with default_left, categorical bitsets), on
single-leaf and many-tree models and the objectives' output transforms; bad model files are refused."""

from __future__ import annotations

import gzip
import math
import re

import numpy as np
import pytest

from ckast.select.models import forest as forest_module
from ckast.select.models.forest import CATEGORICAL, DEFAULT_LEFT, ModelError, parse_model, read_model

lgb = pytest.importorskip("lightgbm")


def _data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=(n, 5))
    x[:, 3] = rng.integers(0, 40, n)                 # a categorical feature
    x[rng.random(n) < 0.1, 1] = np.nan               # missing values
    x[rng.random(n) < 0.2, 2] = 0.0                  # zeros (missing under zero_as_missing)
    y = 2 * x[:, 0] + np.nan_to_num(x[:, 1]) + 3 * (x[:, 3] % 7 == 0) + 4 + rng.normal(size=n) * 0.1
    return x, np.abs(y)  # positive targets: poisson takes them too


def _probe(rng: np.random.Generator) -> np.ndarray:
    """Rows that reach every corner: NaN, tiny values (read as 0), negative and huge categories, -0.5."""
    t = rng.normal(size=(4000, 5))
    t[:, 3] = rng.integers(-3, 50, len(t)).astype(float)
    t[::7, 3] = np.nan
    t[::13, 3] = -0.5
    t[::17, 3] = 3e9
    t[::5, 1] = np.nan
    t[::3, 2] = 0.0
    t[::11, 2] = 1e-40
    return t


def _train(params: dict, rounds: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x, y = _data(rng, 3000)
    data = lgb.Dataset(x, y, categorical_feature=[3], free_raw_data=False)
    booster = lgb.train({"objective": "regression", "verbose": -1, "num_leaves": 31, "min_data_per_group": 5,
                         "cat_smooth": 1, "seed": seed, **params}, data, rounds)
    return booster, _probe(rng)


@pytest.mark.parametrize("params, kinds", [
    ({}, {"numeric", "nan_missing", "categorical"}),
    ({"zero_as_missing": True}, {"zero_missing", "categorical"}),
    ({"use_missing": False}, {"numeric", "categorical"}),
])
def test_equal_to_lightgbm_for_each_decision_kind(params, kinds):
    booster, probe = _train(params, 40)
    forest = parse_model(booster.model_to_string())
    types = np.concatenate([t.decision_type for t in forest.trees]).astype(int)
    seen = {"categorical" if t & CATEGORICAL else {0: "numeric", 1: "zero_missing", 2: "nan_missing"}[(t >> 2) & 3]
            for t in types}
    assert kinds <= seen
    if "nan_missing" in kinds or "zero_missing" in kinds:
        missing = types[((types >> 2) & 3) > 0]
        assert {bool(t & DEFAULT_LEFT) for t in missing} == {True, False}  # both default sides occur
    assert np.array_equal(forest.predict(probe), booster.predict(probe))


@pytest.mark.slow  # about 20 s: 300 trees of 63 leaves trained
def test_many_trees():
    booster, probe = _train({"num_leaves": 63}, 300)
    forest = parse_model(booster.model_to_string())
    assert len(forest.trees) == 300 and np.array_equal(forest.predict(probe), booster.predict(probe))


def test_a_single_leaf_tree():
    one, probe = _train({"min_data_in_leaf": 10_000}, 1)  # nothing to split: one leaf (the mean)
    forest = parse_model(one.model_to_string())
    assert forest.trees[0].num_leaves == 1
    assert np.array_equal(forest.predict(probe), one.predict(probe))


@pytest.mark.parametrize("objective, transform", [("regression_sqrt", "signed_square"), ("poisson", "exp"),
                                                  ("huber", "identity")])
def test_output_transforms(objective, transform):
    params = {"objective": "regression", "reg_sqrt": True} if objective == "regression_sqrt" else {"objective": objective}
    booster, probe = _train(params, 30)
    forest = parse_model(booster.model_to_string())
    assert forest.transform == transform
    ours, theirs = forest.predict(probe), booster.predict(probe)
    if transform == "exp":  # numpy's exp and LightGBM's std::exp may round the last bit differently
        np.testing.assert_array_max_ulp(ours, theirs, maxulp=1)
        assert np.array_equal(forest.raw(probe), booster.predict(probe, raw_score=True))
    else:
        assert np.array_equal(ours, theirs)


def test_files_plain_and_gzip(tmp_path):
    booster, probe = _train({}, 10)
    text = booster.model_to_string()
    (tmp_path / "m.lgbm").write_text(text)
    (tmp_path / "m.lgbm.gz").write_bytes(gzip.compress(text.encode()))
    for name in ("m.lgbm", "m.lgbm.gz"):
        assert np.array_equal(read_model(tmp_path / name).predict(probe), booster.predict(probe))
    assert read_model(tmp_path / "m.lgbm").feature_names == ("Column_0", "Column_1", "Column_2", "Column_3", "Column_4")


_HEAD = b"tree\nversion=v4\nnum_class=1\nmax_feature_idx=0\nobjective=regression\nfeature_names=a\n\nTree=0\n"
_END = b"\n\nend of trees\n"
_STUMP = b"num_leaves=2\nnum_cat=0\nsplit_feature=0\nthreshold=1\ndecision_type=2\nleft_child=-1\nright_child=-2\n"


@pytest.mark.parametrize("content, message", [
    (None, "No such file"),
    (b"\x1f\x8b\x08garbage", "not a complete gzip file"),
    (b"\xff\xfe not text", "not a LightGBM text model"),
    (b"hello", "not a LightGBM text model"),
    (_HEAD.replace(b"objective=regression", b"objective=binary sigmoid:1") + b"num_leaves=1\nnum_cat=0\nleaf_value=0\n"
     + _END, "objective: 'binary'"),
    (_HEAD + b"num_leaves=1\nnum_cat=0\nleaf_value=0\n", "no 'end of trees' (truncated?)"),
    (_HEAD.replace(b"max_feature_idx=0\n", b"") + b"num_leaves=1\nnum_cat=0\nleaf_value=0\n" + _END,
     "max_feature_idx: missing"),
    (_HEAD + _STUMP + b"leaf_value=1 2 3\n" + _END, "Tree=0: leaf_value: 3 values, not 2 (num_leaves)"),
    (_HEAD + _STUMP + b"leaf_value=1\n" + _END,
     "Tree=0: num_leaves: 2, but leaf_value has room for 1 value at most"),  # checked before anything is sized
    (_HEAD + _STUMP.replace(b"split_feature=0", b"split_feature=3") + b"leaf_value=1 2\n" + _END,
     "Tree=0: split_feature: node 0 splits on feature 3; the model has features 0..0"),
    (_HEAD + _STUMP.replace(b"threshold=1", b"threshold=x") + b"leaf_value=1 2\n" + _END,
     "Tree=0: threshold: 'x' is not a number"),
])
def test_bad_model_files(tmp_path, content, message):
    path = tmp_path / "model_tflops.lgbm"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ModelError, match=re.escape(message)) as info:
        read_model(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def _reference_raw(forest, x: np.ndarray) -> np.ndarray:
    """LightGBM's prediction one row and one tree at a time, in plain Python (its `Tree::Decision`), each row's
    leaf values added from 0.0 in tree order."""
    out = []
    for row in np.asarray(x, dtype=np.float64).tolist():
        total = 0.0
        for tree in forest.trees:
            node = 0 if tree.num_leaves > 1 else -1
            while node >= 0:
                value = row[tree.split_feature[node]]
                node = int(tree.left[node] if _reference_left(tree, node, value) else tree.right[node])
            total += float(tree.leaf_value[~node])
        out.append(total)
    return np.array(out)


def _reference_left(tree, node: int, value: float) -> bool:
    value = 0.0 if abs(value) <= float(np.float32(1e-35)) else value  # what LightGBM's row reader drops
    kind = int(tree.decision_type[node])
    if kind & CATEGORICAL:
        inside = not math.isnan(value) and -2147483649.0 < value < 2147483648.0
        category = math.trunc(value) if inside else -(2**31)
        k = int(tree.threshold[node])
        words = tree.cat_threshold[tree.cat_boundaries[k]:tree.cat_boundaries[k + 1]]
        return 0 <= category < 32 * len(words) and bool(int(words[category // 32]) >> (category % 32) & 1)
    missing = (kind >> 2) & 3
    if math.isnan(value) and missing != 2:
        value = 0.0
    if (missing == 1 and value == 0.0) or (missing == 2 and math.isnan(value)):
        return bool(kind & DEFAULT_LEFT)
    return value <= tree.threshold[node]


_THRESHOLDS = (-np.inf, -2.0, -0.5, 0.0, 0.5, 3.0, np.inf)
_VALUES = (np.nan, 0.0, -0.0, 1e-40, -np.inf, np.inf, -3.0, -1.0, -0.5, 0.25, 0.5, 1.0, 2.0, 3.0, 7.0, 33.0, 3e9)


def _random_tree(rng: np.random.Generator, features: int) -> str:
    """A LightGBM tree's text: up to 12 leaves, every decision type (numeric with each missing type and default
    side, categorical bitsets), thresholds of +-inf and 0 among them."""
    leaves = int(rng.integers(1, 13))
    if leaves == 1:
        return f"num_leaves=1\nnum_cat=0\nleaf_value={rng.normal():.17g}\n"
    fields = {key: [] for key in ("split_feature", "threshold", "decision_type", "left_child", "right_child")}
    bounds, words = [0], []
    open_leaves = [(None, None)]  # (parent node, side) of each leaf yet to be numbered or split
    for node in range(leaves - 1):
        parent, side = open_leaves.pop(int(rng.integers(len(open_leaves))))
        if parent is not None:
            fields[side][parent] = node
        categorical = rng.random() < 0.25
        fields["split_feature"].append(int(rng.integers(features)))
        if categorical:
            fields["threshold"].append(len(bounds) - 1)
            fields["decision_type"].append(CATEGORICAL)
            count = int(rng.integers(1, 3))
            words += [int(w) for w in rng.integers(0, 2**32, count)]
            bounds.append(bounds[-1] + count)
        else:
            fields["threshold"].append(_THRESHOLDS[int(rng.integers(len(_THRESHOLDS)))])
            fields["decision_type"].append(int(rng.integers(3)) << 2 | int(rng.integers(2)) * DEFAULT_LEFT)
        fields["left_child"].append(None)
        fields["right_child"].append(None)
        open_leaves += [(node, "left_child"), (node, "right_child")]
    for leaf, (parent, side) in enumerate(open_leaves):
        fields[side][parent] = ~leaf
    text = f"num_leaves={leaves}\nnum_cat={len(bounds) - 1}\n"
    text += "".join(f"{key}={' '.join(str(v) for v in values)}\n" for key, values in fields.items())
    if len(bounds) > 1:
        text += f"cat_boundaries={' '.join(map(str, bounds))}\ncat_threshold={' '.join(map(str, words))}\n"
    return text + f"leaf_value={' '.join(f'{v:.17g}' for v in rng.normal(size=leaves))}\n"


@pytest.mark.parametrize("resolve", [1, 10**9])  # every call resolves its constant columns first; none does
def test_the_walk_equals_a_tree_by_tree_walk(resolve, monkeypatch):
    """Every decision kind, NaN, zeros, tiny values, +-inf and categories, columns constant over the rows (whose
    splits `Forest.raw` resolves once) and varying ones, one row alone: the same float64 sums bit for bit."""
    monkeypatch.setattr(forest_module, "_RESOLVE", resolve)
    rng = np.random.default_rng(5)
    features = 6
    trees = "".join(f"Tree={n}\n{_random_tree(rng, features)}\n" for n in range(40))
    forest = parse_model(f"tree\nversion=v4\nnum_class=1\nmax_feature_idx={features - 1}\nobjective=regression\n"
                         f"feature_names={' '.join(f'f{i}' for i in range(features))}\n\n{trees}end of trees\n")
    assert set(forest.flat.decision_type.tolist()) == {0, CATEGORICAL, 2, 4, 6, 8, 10}  # every missing type, side
    assert {-np.inf, np.inf} <= set(forest.flat.threshold.tolist())
    x = rng.choice(_VALUES, size=(120, features))
    x[:, 1] = np.nan                      # constant columns: all NaN, all (-)zero or tiny, one category
    x[:, 2] = rng.choice([0.0, -0.0, 1e-40], size=len(x))
    x[:, 4] = 7.0
    expected = _reference_raw(forest, x)
    assert np.array_equal(forest.raw(x), expected)
    assert np.array_equal(forest.raw(x[:1]), expected[:1])  # every column constant
    for column in range(features):  # each column constant in turn, the others varying
        y = rng.choice(_VALUES, size=(40, features))
        y[:, column] = _VALUES[column]
        assert np.array_equal(forest.raw(y), _reference_raw(forest, y))


@pytest.mark.parametrize("params", [{}, {"zero_as_missing": True}, {"use_missing": False}])
def test_constant_columns_equal_to_lightgbm(params):
    """A trained model on rows sharing some columns (a NaN, a zero, a category), as one problem's rows do."""
    booster, probe = _train(params, 40)
    forest = parse_model(booster.model_to_string())
    probe = probe[:500]
    for column, value in ((1, np.nan), (2, 0.0), (3, 7.0), (0, 0.3)):
        probe[:, column] = value
        assert np.array_equal(forest.raw(probe), booster.predict(probe, raw_score=True))
