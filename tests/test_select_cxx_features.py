"""The C++ features (ckast/select/cxx) equal the Python table bit for bit: every feature of
`model_features` for GEMM and conv (each direction, 1-3-D) over small libraries and random problems
JIT'd with cppyy (uint64 bit patterns, NaN included); every op of the selection language on floats over
edge values (negative, zero divisors, NaN, infinities, huge) and on ints (negative, zero divisors) through
each stage (kernel-only, problem-only, mixed); the staging itself (constant arrays, per-problem locals,
`known`)."""

from __future__ import annotations

import itertools
import math
import sys

import numpy as np
import pytest

from ckast import nodes as n
from ckast.arch.hardware import hardware
from ckast.select.cxx import numeric as num
from ckast.select import expr as E
from ckast.select.cxx.lower_expr import lower_features
from ckast.select.expr.evaluate import FUNCTIONS
from ckast.select.expr.nodes import ARITY, OPS, SIGNATURES
from ckast.select.features import KernelTable, hw_columns
from ckast.select.features.featureset import kernel, problem

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


INT_EDGES = (0, 1, -1, 2, -2, 3, -3, 7, -7, 2**31 - 1, -(2**31))
"""Int values (their products stay within int64, whose overflow C++ leaves undefined)."""


def _tables(edges: tuple) -> tuple[KernelTable, list[tuple]]:
    """Every pair of edge values, as kernel columns x and y (kernel k holds pair k)."""
    pairs = list(itertools.product(edges, repeat=2))
    return KernelTable.of([{"x": a, "y": b} for a, b in pairs]), pairs


def _trees(a: E.Expr, b: E.Expr) -> list[E.Expr]:
    """Every operation on operands of `a`'s type (those on bools on a != 0 and b != 0), as floats."""
    out = []
    for op in OPS:
        args = (a, b)[:ARITY.get(op, 2)]
        if op == "where":
            continue
        if a.type in SIGNATURES[op][0]:
            tree = E.Op(op, args)
        elif bool in SIGNATURES[op][0]:
            tree = E.Op(op, tuple(x.ne(0) for x in args))
        else:
            continue
        out.append(tree)
    out += [E.where(a.ne(0), b, a), E.where(b.ne(0), a, -b), a * b + b]
    return [t if t.type is float else t.as_float() for t in out]


def test_the_edge_trees_cover_every_operation():
    ops = {node.op for kind in (float, int) for t in _trees(E.Col("x", kind), E.Col("y", kind)) for node in E.walk(t)
           if isinstance(node, E.Op)}
    assert ops == set(OPS) == set(FUNCTIONS)


def _edge_unit(trees, table, name, kind=float):
    import cppyy

    from ckast.hostmodel.jit import session

    p, k = n.ident("p"), n.ident("k")
    lowered = lower_features(trees, table, {}, problem=p, kernel=k, prefix="e")
    ctype = num.DOUBLE if kind is float else num.INT64
    struct = n.Struct("Edge", [n.VarDecl(ctype, "x"), n.VarDecl(ctype, "y")])
    out = n.ident("out")
    stores = [n.ExprStmt(n.BinOp("=", n.Index(out, n.IntLit(j)), v)) for j, v in enumerate(lowered.values)]
    fn = n.FunctionDef("eval", n.Builtin("void"), [n.FuncParam(ctype, "x"), n.FuncParam(ctype, "y"),
                                                    n.FuncParam(num.INT64, "k"), n.FuncParam(n.Ptr(num.DOUBLE), "out")],
                       [n.VarDecl(n.TypeName(n.Name(("Edge",))), "p", n.BraceInit(None, [n.ident("x"), n.ident("y")])),
                        *lowered.per_problem, *lowered.per_kernel, *stores])
    session().cppdef(n.to_source(n.File([n.Namespace(name, [*num.DEFINITIONS, struct, *lowered.decls, fn])],
                                        includes=num.HEADERS, pragma_once=False)))
    return getattr(cppyy.gbl, name).eval, lowered


def _numpy(trees, problem, table) -> np.ndarray:
    """The Python side: each tree by `FeatureSet.matrix`'s evaluation."""
    scope = E.Scope(table, problem)
    with np.errstate(all="ignore"):
        return np.stack([np.broadcast_to(scope.value(t), (len(table),)) for t in trees], axis=1)


@pytest.mark.parametrize("kind", [float, int])
@pytest.mark.parametrize("stage", ["kernel", "problem", "mixed"])
def test_every_op_matches_numpy_on_edge_values(stage, kind):
    table, pairs = _tables(EDGES if kind is float else INT_EDGES)
    x, y = E.Field("x", None, kind), E.Field("y", None, kind)
    a, b = {"kernel": (E.Col("x", kind), E.Col("y", kind)), "problem": (x, y), "mixed": (x, E.Col("y", kind))}[stage]
    trees = _trees(a, b)
    run, lowered = _edge_unit(trees, table, f"s1_edges_{stage}_{kind.__name__}", kind)
    assert set(lowered.staged) == {"kernel": {"kernel"}, "problem": {"problem"}, "mixed": {"problem", "mixed"}}[stage]
    out = np.empty(len(trees))
    bad, nans = [], set()
    for k, (x, y) in enumerate(pairs):
        px, py = (x, y) if stage == "problem" else (x, kind(0))
        want = _numpy(trees, {"x": px, "y": py}, table)[k]
        run(px, py, k, out)
        nans.update(want[np.isnan(want)].view(np.uint64).tolist())
        differ = out.view(np.uint64) != want.view(np.uint64)  # NaN included: the language has one
        for j in np.flatnonzero(differ):
            bad.append((str(trees[j])[:60], x, y, out[j], want[j]))
    assert not bad, bad[:10]
    assert nans == ({CANONICAL} if kind is float else set())  # an operation yields the one NaN; so does C++


CANONICAL = np.float64(math.nan).view(np.uint64)
"""The bits of the language's one NaN: the positive quiet NaN."""


def test_log2_is_glibcs_in_python_and_cxx():
    """The language's log2 is glibc's: math.log2 elementwise, numpy's zero and infinity, the one NaN."""
    x = np.array([3.0, 10.0, 1e-7, 123456789.0, 0.0, math.inf, -1.0, -math.inf, math.nan, -math.nan])
    with np.errstate(all="ignore"):
        got = E.Scope(None, {"x": x}).value(E.log2(E.Field("x", None, float)))
        assert got[4:6].tolist() == np.log2(x[4:6]).tolist() == [-math.inf, math.inf]
    assert [v.hex() for v in got[:4]] == [math.log2(v).hex() for v in x[:4]]
    assert got[6:].view(np.uint64).tolist() == [CANONICAL] * 4
    assert FUNCTIONS["log2"](np.float64(10.0)) == math.log2(10.0)


def test_staging_constant_arrays_problem_locals_and_known(tmp_path):
    configs = [e["config"] for e in gemm_entries(tmp_path)]
    table = KernelTable.of(configs)
    tile = kernel("tile_m")
    shared = E.ceil(problem("M") / tile)
    trees = [tile * 2, E.Hw("num_cus") + 1, E.log2(problem("M")), shared + shared * problem("N"), shared]
    lowered = lower_features(trees, table, hw_columns(HW), problem=n.ident("p"), kernel=n.ident("k"), prefix="s")
    assert lowered.staged == ("kernel", "const", "problem", "mixed", "mixed")
    assert len(lowered.decls) == 2  # tile_m * 2, and tile_m itself for M / tile_m
    assert np.array_equal(lowered.known[:, 0], table.numeric("tile_m") * 2)
    assert lowered.known[0, 1] == HW.num_cus + 1 and lowered.known_mask[:, :2].all()
    assert not lowered.known_mask[:, 2:].any() and np.isnan(lowered.known[:, 2:]).all()
    assert len(lowered.per_problem) == 1  # log2(M), once per problem
    # `shared` is computed once per kernel, and its product with N kept out of the sum
    text = n.to_source(n.Namespace("x", [n.FunctionDef("f", n.Builtin("void"), [], [*lowered.per_kernel])]))
    shared_local = {num.call(num.CANONICAL_NAN, n.ident(f"s_m{i}")) for i in range(3)}  # a float: the one NaN
    assert text.count("std::ceil") == 1 and lowered.values[4] in shared_local
