"""The LightGBM forest as C++ (`ckast.select.cxx.lower_forest`), JIT'd with cppyy: predictions bit-identical
(uint64 compare) to `lightgbm.Booster.predict` on the same rows, per kernel and for all kernels at once, with
the kernel features partially evaluated and without; every decision kind (numeric, missing as NaN or zero with
default left and right, categorical bitsets over several words with negative, NaN and out-of-range values),
one tree, a single-leaf tree, hundreds of trees, and the objectives' output transforms."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ckast import nodes as n
from ckast.select.cxx.lower_forest import (
    CATEGORY,
    NAN_LEFT,
    ZERO_RULE,
    kernel_keys,
    lower_forest,
)
from ckast.select.expr import Col, ceil, lookup
from ckast.select.features.featureset import Feature, kernel, problem
from ckast.select.features.table import KernelTable
from ckast.select.models.forest import DEFAULT_LEFT, parse_model

lgb = pytest.importorskip("lightgbm")
cppyy = pytest.importorskip("cppyy")

KERNELS, PROBLEMS = 24, 40
KNOWN = np.array([True, True, True, False, False, False, False])
"""Columns: kernel numeric, kernel numeric with NaN, kernel category (0..99: four bitset words); problem numeric
with zeros and tiny values, problem numeric with NaN, problem category (negative, NaN, -0.5, 3e9, past the
bitset); a mixed feature (problem x the sign of kernel column 0)."""
CATEGORICAL = [2, 5]
_units = itertools.count()


def _kernels(rng: np.random.Generator) -> np.ndarray:
    k = rng.normal(size=(KERNELS, 3))
    k[::5, 1] = np.nan
    k[:, 2] = rng.integers(0, 100, KERNELS)
    return k


def _rows(kernels: np.ndarray, rng: np.random.Generator, problems: int) -> np.ndarray:
    """problems x kernels rows (problem-major): every kernel's row for each problem."""
    p = rng.normal(size=(problems, 3))
    p[::4, 0] = 0.0
    p[::7, 0] = 1e-40
    p[::3, 1] = np.nan
    p[:, 2] = rng.integers(-3, 130, problems).astype(float)
    p[::11, 2], p[::13, 2], p[::17, 2] = np.nan, -0.5, 3e9
    rows = np.concatenate([np.repeat(kernels[None], problems, 0),
                           np.repeat(p[:, None], len(kernels), 1),
                           np.zeros((problems, len(kernels), 1))], axis=2)
    rows[..., 6] = rows[..., 3] * np.where(rows[..., 0] > 0, 2.0, 0.5)
    return rows.reshape(-1, 7)


def _keys(kernels: np.ndarray) -> np.ndarray:
    keys = np.zeros((len(kernels), 7), dtype=np.int64)
    keys[:, :3] = np.arange(len(kernels))[:, None]
    keys[:, 6] = kernels[:, 0] > 0  # the mixed feature reads only the sign of kernel column 0
    return keys


def _train(params: dict, rounds: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    kernels = _kernels(rng)
    x = _rows(kernels, rng, 150)
    y = np.abs(2 * x[:, 0] + np.nan_to_num(x[:, 4]) + 3 * (x[:, 2] % 7 == 0) + 2 * (np.nan_to_num(x[:, 5]) % 5 == 1)
               + x[:, 6] + 6) + 0.1 * rng.random(len(x))
    booster = lgb.train({"objective": "regression", "verbose": -1, "num_leaves": 31, "min_data_per_group": 5,
                         "cat_smooth": 1, "max_cat_to_onehot": 1, "min_data_in_leaf": 5, "seed": seed, **params},
                        lgb.Dataset(x, y, categorical_feature=CATEGORICAL), rounds)
    return booster, kernels, _rows(kernels, rng, PROBLEMS)


def _jit(booster, kernels: np.ndarray, mask: np.ndarray, **options):
    """The lowered forest, compiled in a namespace of its own: (lowered, namespace)."""
    forest = parse_model(booster.model_to_string())
    known = np.where(mask, kernels_padded(kernels), np.nan)
    lowered = lower_forest(forest, known, mask, prefix="forest", **options)
    space = f"ckast_test_forest_{next(_units)}"
    decls = [n.Namespace(space, lowered.decls)]
    assert lowered.headers == n.required_headers(n.File(decls))
    cppyy.cppdef(n.to_source(n.File(decls, includes=lowered.headers, pragma_once=False)))
    return lowered, getattr(cppyy.gbl, space)


def kernels_padded(kernels: np.ndarray) -> np.ndarray:
    return np.concatenate([kernels, np.zeros((len(kernels), 4))], axis=1)


def _ours(space, what: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(per-kernel calls, the `_all` call per problem) of `what` over problem-major rows."""
    one = getattr(space, f"forest_{what}")
    single = np.array([one(i % KERNELS, np.ascontiguousarray(row)) for i, row in enumerate(rows)])
    batch = np.empty(len(rows))
    every = getattr(space, f"forest_{what}_all")
    for p in range(len(rows) // KERNELS):
        out = np.zeros(KERNELS)
        every(np.ascontiguousarray(rows[p * KERNELS:(p + 1) * KERNELS]), out)
        batch[p * KERNELS:(p + 1) * KERNELS] = out
    return single, batch


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(a.view(np.uint64), b.view(np.uint64))


def _masks() -> dict[str, np.ndarray]:
    varying = np.broadcast_to(KNOWN, (KERNELS, 7)).copy()
    varying[::3, 0] = varying[1::4, 2] = False  # some kernels leave some kernel features to run time
    return {"partial": np.broadcast_to(KNOWN, (KERNELS, 7)).copy(), "varying": varying,
            "none": np.zeros((KERNELS, 7), dtype=bool)}


@pytest.mark.parametrize("params, kinds", [
    ({}, {NAN_LEFT, CATEGORY}),
    ({"zero_as_missing": True}, {ZERO_RULE, CATEGORY}),
    ({"use_missing": False}, {NAN_LEFT, CATEGORY}),
])
def test_equal_to_lightgbm_for_each_decision_kind(params, kinds):
    booster, kernels, rows = _train(params, 40)
    forest = parse_model(booster.model_to_string())
    types = np.concatenate([t.decision_type for t in forest.trees]).astype(int)
    missing = types[((types >> 2) & 3) > 0]
    if params.get("use_missing", True):
        assert {bool(t & DEFAULT_LEFT) for t in missing} == {True, False}  # both default sides occur
    theirs = booster.predict(rows)
    for label, mask in _masks().items():
        lowered, space = _jit(booster, kernels, mask, kernel_keys=_keys(kernels))
        seen = {bit for bit in (NAN_LEFT, ZERO_RULE, CATEGORY) if (lowered.program.kind & bit).any()}
        if label == "none":
            assert kinds <= seen
        single, batch = _ours(space, "predict", rows)
        assert _same(single, theirs), label
        assert _same(batch, theirs), label


def test_partial_evaluation_shrinks_the_trees_and_walks_are_shared():
    booster, kernels, rows = _train({}, 60)
    masks = _masks()
    full, _ = _jit(booster, kernels, masks["none"])
    partial, space = _jit(booster, kernels, masks["partial"], kernel_keys=_keys(kernels))
    visits = sum(t.num_leaves - 1 for t in parse_model(booster.model_to_string()).trees)
    assert full.program.internal == visits  # nothing known: the trees as they are
    assert not (partial.program.feature < 3).any()  # no split on a known feature is left
    assert len(partial.program.walk_root) < len(full.program.walk_root) == 60 * KERNELS
    single, batch = _ours(space, "predict", rows)
    assert _same(single, booster.predict(rows)) and _same(batch, booster.predict(rows))


@pytest.mark.parametrize("limits, mask", [((0,), "partial"), ((1,), "varying"), ((None, 0), "varying")])
def test_known_splits_left_to_run_time_read_the_kernels_values(monkeypatch, limits, mask):
    """Past a tree's size budget, known splits below run-time splits stay splits and read the kernel's value."""
    from ckast.select.cxx import lower_forest as module

    monkeypatch.setattr(module, "LIMITS", limits)
    monkeypatch.setattr(module, "GROWTH", 1)
    monkeypatch.setattr(module, "NODES", 0)
    booster, kernels, rows = _train({}, 40)
    lowered, space = _jit(booster, kernels, _masks()[mask], kernel_keys=_keys(kernels))
    assert len(lowered.program.deferred) and set(lowered.program.deferred.tolist()) <= {0, 1, 2}
    if limits == (0,):  # the same mask for every kernel: one copy of each tree below its first run-time split
        original = sum(t.num_leaves - 1 for t in parse_model(booster.model_to_string()).trees)
        assert lowered.program.internal <= original
    single, batch = _ours(space, "predict", rows)
    assert _same(single, booster.predict(rows)) and _same(batch, booster.predict(rows))


def test_one_tree_and_a_single_leaf_tree():
    for params in ({}, {"min_data_in_leaf": 100_000}):  # the second has nothing to split: one leaf
        booster, kernels, rows = _train(params, 1)
        assert booster.num_trees() == 1
        _, space = _jit(booster, kernels, _masks()["partial"])
        single, batch = _ours(space, "predict", rows)
        assert _same(single, booster.predict(rows)) and _same(batch, booster.predict(rows))


@pytest.mark.slow  # about 20 s: 300 trees of 63 leaves trained and JIT-compiled
def test_hundreds_of_trees():
    booster, kernels, rows = _train({"num_leaves": 63}, 300)
    _, space = _jit(booster, kernels, _masks()["varying"], kernel_keys=_keys(kernels))
    single, batch = _ours(space, "predict", rows)
    assert _same(single, booster.predict(rows)) and _same(batch, booster.predict(rows))


@pytest.mark.parametrize("params", [{"objective": "regression", "reg_sqrt": True}, {"objective": "poisson"}])
def test_output_transforms_and_tflops(params):
    booster, kernels, rows = _train(params, 30)
    for log_targets in (True, False):
        _, space = _jit(booster, kernels, _masks()["partial"], log_targets=log_targets)
        predicted = booster.predict(rows)
        single, batch = _ours(space, "predict", rows)
        assert _same(single, predicted) and _same(batch, predicted)
        # LightGBMPredictor.transform's, with the C library's expm1 (as CK's C++ calls it): numpy's own expm1 may
        # round the last bit differently
        tflops = np.array([math.expm1(v) for v in predicted]) if log_targets else np.maximum(predicted, 0.0)
        single, batch = _ours(space, "tflops", rows)
        assert _same(single, tflops) and _same(batch, tflops)
        np.testing.assert_array_max_ulp(single, np.expm1(predicted) if log_targets else tflops, maxulp=1)
        single, _ = _ours(space, "raw", rows)
        assert _same(single, booster.predict(rows, raw_score=True))


def test_kernel_keys_follow_the_kernel_columns_a_feature_reads():
    table = KernelTable.of([{"tile_m": 64, "pipeline": "compv3"}, {"tile_m": 128, "pipeline": "compv3"},
                            {"tile_m": 64, "pipeline": "mem"}, {"tile_m": 64, "pipeline": "compv3"}])
    features = [Feature("M", problem("M")), Feature("tiles", ceil(problem("M") / kernel("tile_m"))),
                Feature("pipe", lookup("pipeline", {"compv3": 0, "mem": 1}, Col("pipeline"), 2).as_float(),
                        {"compv3": 0, "mem": 1})]
    keys = kernel_keys(features, table)
    assert keys[:, 0].tolist() == [0, 0, 0, 0]  # the problem's alone: equal for every kernel
    assert keys[0, 1] == keys[2, 1] == keys[3, 1] != keys[1, 1]
    assert keys[0, 2] == keys[1, 2] == keys[3, 2] != keys[2, 2]
