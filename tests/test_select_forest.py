"""LightGBM models as data (`ckast.select.models.forest`): the reference evaluator equals `lightgbm`'s predict bit for
bit on every decision kind (numeric, missing as NaN or zero with default_left, categorical bitsets), on
single-leaf and many-tree models and the objectives' output transforms; bad model files are refused."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest

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
