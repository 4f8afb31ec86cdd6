"""The C++ features (ckast/select/cxx) equal the Python table bit for bit: every feature of
`model_features` for GEMM and conv (each direction, 1-3-D) over small libraries and random problems
JIT'd with cppyy (uint64 bit patterns, NaN included); every op of `features.expr` over edge values
(negative, zero divisors, NaN, infinities, huge) through each stage (kernel-only, problem-only, mixed);
the staging itself (constant arrays, per-problem locals, `known`)."""

from __future__ import annotations

import itertools
import math
import sys

import numpy as np
import pytest

from ckast import nodes as n
from ckast.arch.hardware import hardware
from ckast.select.cxx import numeric as num
from ckast.select.cxx.lower_expr import lower_features
from ckast.select.features import KernelTable, hw_columns
from ckast.select.features import expr as E

from .select_helpers import ROOT, entries, gemm_entries

sys.path.insert(0, str(ROOT / "tools"))
import exact_select_features as X  # noqa: E402

pytest.importorskip("cppyy")
HW = hardware("gfx942")
_UNITS = itertools.count()


def _run_unit(kind: str, table: KernelTable):
    return X.jit(kind, table, HW, f"s1_features_{next(_UNITS)}")


def _check(kind: str, configs: list[dict], problems: list) -> None:
    table = KernelTable.of(configs)
    run = _run_unit(kind, table)
    features, ok, _, _ = X.jit_mismatches(run, kind, problems, table, HW)
    assert (features, ok) == (0, 0)


def test_gemm_features_and_applicability_bit_identical(tmp_path):
    configs = [e["config"] for e in gemm_entries(tmp_path, ("fp16", "fp32"))]
    rng = np.random.default_rng(1)
    _check("gemm", configs, [X.draw_gemm(rng) for _ in range(300)])


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_conv_features_and_applicability_bit_identical(ndim):
    from ckast.library.selection import Selection

    every = entries(Selection("full", "gfx942", "ck-2026.06", ("fp16",), (max(ndim, 2),), (), None, ()))
    configs = [e["config"] for e in every[::max(1, len(every) // 150)]]
    if ndim == 1:  # `full` has no 1-D kernels: its 2-D ones at rank 1 (features and conditions read knobs only)
        configs = [{**c, "ndim_spatial": 1} for c in configs]
    assert {c["variant"] for c in configs} >= {"forward", "bwd_data", "bwd_weight"}
    rng = np.random.default_rng(ndim)
    _check("grouped_conv", configs, [X.draw_conv(rng, (ndim, ndim, ndim, 1 + ndim % 3)) for _ in range(200)])


# --- every op over edge values, through each stage --------------------------------------------------

EDGES = (0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, -7.0, 0.5, 3.0, 1e300, -1e300, 5e-324, math.inf, -math.inf, math.nan,
         -math.nan, 2.0**53 + 2, 1e-3, 6.0)
"""Values a feature can meet, NaN with both signs (the printer has to keep the sign bit)."""


def _tables() -> tuple[KernelTable, list[tuple[float, float]]]:
    """Every pair of edge values, as kernel columns x and y (kernel k holds pair k)."""
    pairs = list(itertools.product(EDGES, repeat=2))
    return KernelTable.of([{"x": a, "y": b} for a, b in pairs]), pairs


def _trees(a: E.Expr, b: E.Expr) -> list[E.Expr]:
    out = [E.Unary(op, a) for op in E.UNARY]
    out += [E.Binary(op, a, b) for op in E.BINARY]
    out += [E.where(a, b, a), E.where(b, a, -b), E.Binary("add", E.Binary("mul", a, b), b)]
    return out


def _edge_unit(trees, table, name):
    import cppyy

    from ckast.hostmodel.jit import session

    p, k = n.ident("p"), n.ident("k")
    lowered = lower_features(trees, table, {}, problem=p, kernel=k, prefix="e")
    struct = n.Struct("Edge", [n.VarDecl(num.DOUBLE, "x"), n.VarDecl(num.DOUBLE, "y")])
    out = n.ident("out")
    stores = [n.ExprStmt(n.BinOp("=", n.Index(out, n.IntLit(j)), v)) for j, v in enumerate(lowered.values)]
    fn = n.FunctionDef("eval", n.Builtin("void"), [n.FuncParam(num.DOUBLE, "x"), n.FuncParam(num.DOUBLE, "y"),
                                                    n.FuncParam(num.INT64, "k"), n.FuncParam(n.Ptr(num.DOUBLE), "out")],
                       [n.VarDecl(n.TypeName(n.Name(("Edge",))), "p", n.BraceInit(None, [n.ident("x"), n.ident("y")])),
                        *lowered.per_problem, *lowered.per_kernel, *stores])
    session().cppdef(n.to_source(n.File([n.Namespace(name, [*num.DEFINITIONS, struct, *lowered.decls, fn])],
                                        includes=num.HEADERS, pragma_once=False)))
    return getattr(cppyy.gbl, name).eval, lowered


def _numpy(trees, problem, table) -> np.ndarray:
    """The Python side: each tree by `FeatureSet.matrix`'s evaluation."""
    columns = E.Columns(problem, {}, table)
    with np.errstate(all="ignore"):
        return np.stack([np.broadcast_to(columns.value(t), (len(table),)) for t in trees], axis=1)


@pytest.mark.parametrize("stage", ["kernel", "problem", "mixed"])
def test_every_op_matches_numpy_on_edge_values(stage):
    table, pairs = _tables()
    a, b = {"kernel": (E.kernel("x"), E.kernel("y")), "problem": (E.Field("problem", "x"), E.Field("problem", "y")),
            "mixed": (E.Field("problem", "x"), E.kernel("y"))}[stage]
    trees = _trees(a, b)
    run, lowered = _edge_unit(trees, table, f"s1_edges_{stage}")
    assert set(lowered.staged) == {"kernel": {"kernel"}, "problem": {"problem"}, "mixed": {"problem", "mixed"}}[stage]
    out = np.empty(len(trees))
    bad = []
    for k, (x, y) in enumerate(pairs):
        px, py = (x, y) if stage == "problem" else (x, 0.0)
        want = _numpy(trees, {"x": px, "y": py}, table)[k]
        run(px, py, k, out)
        differ = out.view(np.uint64) != want.view(np.uint64)
        if math.isnan(x) and math.isnan(y):  # two NaN operands: which sign survives is numpy's loop's choice
            differ &= ~(np.isnan(out) & np.isnan(want))
        for j in np.flatnonzero(differ):
            bad.append((str(trees[j])[:60], x, y, out[j], want[j]))
    assert not bad, bad[:10]


def test_log2_is_glibcs_in_python_and_cxx():
    """features.expr's log2 is glibc's: math.log2 elementwise, numpy's special values."""
    x = np.array([3.0, 10.0, 1e-7, 123456789.0, 0.0, -1.0, math.inf, math.nan])
    with np.errstate(all="ignore"):
        got = E.UNARY["log2"](x)
    assert [v.hex() for v in got[:4]] == [math.log2(v).hex() for v in x[:4]]
    with np.errstate(all="ignore"):
        assert got[4:].view(np.uint64).tolist() == np.log2(x[4:]).view(np.uint64).tolist()
    assert E.UNARY["log2"](np.float64(10.0)) == math.log2(10.0)


def test_staging_constant_arrays_problem_locals_and_known(tmp_path):
    configs = [e["config"] for e in gemm_entries(tmp_path)]
    table = KernelTable.of(configs)
    tile = E.kernel("tile_m")
    shared = E.ceil(E.problem("M") / tile)
    trees = [tile * 2, E.hw("num_cus") + 1, E.log2(E.problem("M")), shared + shared * E.problem("N"), shared]
    lowered = lower_features(trees, table, hw_columns(HW), problem=n.ident("p"), kernel=n.ident("k"), prefix="s")
    assert lowered.staged == ("kernel", "const", "problem", "mixed", "mixed")
    assert len(lowered.decls) == 2  # tile_m * 2, and tile_m itself for M / tile_m
    assert np.array_equal(lowered.known[:, 0], table.numeric("tile_m") * 2)
    assert lowered.known[0, 1] == HW.num_cus + 1 and lowered.known_mask[:, :2].all()
    assert not lowered.known_mask[:, 2:].any() and np.isnan(lowered.known[:, 2:]).all()
    assert len(lowered.per_problem) == 1  # log2(M), once per problem
    # `shared` is computed once per kernel, and its product with N kept out of the sum
    text = n.to_source(n.Namespace("x", [n.FunctionDef("f", n.Builtin("void"), [], [*lowered.per_kernel])]))
    assert text.count("std::ceil") == 1 and lowered.values[4] in {n.ident(f"s_m{i}") for i in range(3)}
