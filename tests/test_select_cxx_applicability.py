"""C++ applicability (ckast/select/cxx/lower_predicate) equals `applicable` per kernel: the conditions of
every conv direction (with depthwise kernels) and GEMM (each variant, with CK's dispatcher's layer and
without) over random problems through cppyy, operators the conditions do not use yet (gcd, min/max,
indexed and reduced spatial fields, problem-side lookups, a float sum), and the emit-time folding (what
the kernel decides leaves no code)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ckast import nodes as n
from ckast.library.selection import Selection
from ckast.select import expr as P
from ckast.select.serving.applicability import KERNEL_ONLY, LAYERS, applicable, conditions, problem_fields
from ckast.select.cxx import numeric as num
from ckast.select.cxx.lower_predicate import lower_applicability, lower_predicate
from ckast.select.cxx.problem_struct import problem_struct
from ckast.select.features import KernelTable
from ckast.select.serving.problem_read import gemm_problem

from .select_helpers import ROOT, conv_entries, entries, gemm_entries
from .test_select_cxx_features import X

pytest.importorskip("cppyy")
_UNITS = itertools.count()


def _jit(kind, trees, table):
    import cppyy

    from ckast.hostmodel.jit import session

    struct = problem_struct(kind)
    p, k = n.ident("p"), n.ident("k")
    low = lower_predicate(trees, table, struct, problem=p, kernel=k, prefix="a")
    out = n.ident("out")
    fn = n.FunctionDef("check", n.Builtin("void"), [n.FuncParam(n.Ptr(n.Const(num.INT64)), "row"),
                                                     n.FuncParam(n.Ptr(X.U8), "out")], [
        n.VarDecl(n.Const(struct.type), "p", n.call("read_problem", n.ident("row"))), *low.per_problem,
        X._for("k", n.IntLit(len(table)), [n.ExprStmt(n.BinOp("=", n.Index(out, k), n.StaticCast(X.U8, low.value)))])])
    name = f"s1_app_{next(_UNITS)}"
    session().cppdef(n.to_source(n.File([n.Namespace(name, [*num.DEFINITIONS, struct.decl(), struct.reader(
        "read_problem"), *low.decls, fn])], includes=num.HEADERS, pragma_once=False)))
    return getattr(cppyy.gbl, name).check, low


def _agree(kind, trees, table, problems) -> int:
    """Problems on which some kernel's C++ answer differs from the Python evaluation of the conjunction."""
    check, _ = _jit(kind, trees, table)
    struct = problem_struct(kind)
    out, wrong = np.empty(len(table), dtype=np.uint8), 0
    for problem in problems:
        want = np.ones(len(table), dtype=bool)
        scope = P.Scope(table, problem_fields(problem))
        for t in trees:
            want &= scope.value(t)
        check(np.array(struct.values(problem), dtype=np.int64), out)
        wrong += int(np.any(out.astype(bool) != want))
    return wrong


def test_conv_applicability_every_direction():
    table = KernelTable.of([e["config"] for e in conv_entries()][::4])
    rng = np.random.default_rng(5)
    problems = [X.draw_conv(rng) for _ in range(300)]
    from ckast.select.serving.applicability import CONDITIONS

    assert _agree("grouped_conv", [c.holds for c in CONDITIONS["grouped_conv"]], table, problems) == 0


def _gemm_draw(rng) -> dict:
    fields = {"M": int(rng.choice([64, 128, 257, 1000, 1024])), "N": int(rng.choice([64, 1000, 1024, 2048])),
              "K": int(rng.choice([64, 100, 512, 1024])), "k_batch": int(rng.choice([1, 1, 2]))}
    variant = str(rng.choice(["standard", "preshuffle", "multi_d"]))
    if variant == "multi_d":
        fields |= {"num_d_tensors": int(rng.choice([1, 2])), "elementwise_op": str(rng.choice(["MultiDAdd",
                                                                                                "MultiDMultiply"]))}
    return gemm_problem({**fields, "variant": variant})


def test_gemm_applicability_of_each_layer_and_variant():
    """CK's unpadded sweep kernels and a kernel of each variant: the dispatcher's whole tiles and a problem's
    variant and D tensors, in C++ as in Python, with the dispatcher's layer and without."""
    paths = (ROOT / "examples" / "ck-real" / "gemm_fp16_rcr_gfx942_sweep.json",
             *(ROOT / "examples" / f"gemm_{v}.json" for v in ("standard", "preshuffle", "multi_d")))
    table = KernelTable.of([e["config"] for e in entries(Selection("", "", "ck-2026.06", (), (), (), None, paths))])
    rng = np.random.default_rng(4)
    problems = [_gemm_draw(rng) for _ in range(200)]
    for layers in (LAYERS, KERNEL_ONLY):
        assert _agree("gemm", [c.holds for c in conditions("gemm", layers)], table, problems) == 0
    both, kernel = (np.array([applicable(p, table, layers) for p in problems]) for layers in (LAYERS, KERNEL_ONLY))
    assert both.any() and (kernel & ~both).any() and not (both & ~kernel).any()  # the dispatcher only refuses more


def test_operators_conditions_do_not_use_yet(tmp_path):
    table = KernelTable.of([e["config"] for e in conv_entries("forward")][::20])
    tile_k = P.Col("tile_k")
    trees = [
        (P.gcd(P.Field("G"), tile_k) <= P.minimum(P.Field("C"), tile_k)) | P.Op("max", (P.Field("K"), tile_k)).eq(64),
        ((P.Field("input", -3) + P.Field("filter", -1) + P.Field("stride", -2)) % 3).ne(P.Field("N") % 2),
        P.Over("any", P.Field("output") > 7) & (tile_k > 32) | P.Over("prod", P.Field("dilation")).eq(1),
        P.lookup("direction_code", {"forward": 1, "bwd_data": 2}, P.Field("direction"), 3) >= 2,
        P.where(P.Field("ndim").eq(2), P.ceil_div(P.Field("N"), 3) > 1, P.Field("k_batch") > 1),
        P.Field("N").as_float() * 0.5 + P.Field("C").as_float() / tile_k.as_float() > 3.0,  # a product kept from a sum
    ]
    rng = np.random.default_rng(9)
    assert _agree("grouped_conv", trees, table, [X.draw_conv(rng) for _ in range(300)]) == 0


def test_what_kernels_decide_leaves_no_code(tmp_path):
    table = KernelTable.of([e["config"] for e in gemm_entries(tmp_path)])
    low = lower_applicability(table, "gemm", problem=n.ident("p"), kernel=n.ident("k"), prefix="a")
    text = n.to_source(n.FunctionDef("f", n.Builtin("void"), [], low.per_problem))
    # padded kernels: no tile divisibility; the GEMM direction and strings are folded away
    assert "% " not in text and "direction" not in text and "remainder_i64(p.M" not in text
    assert not low.known_mask.any()  # every kernel still reads k_batch and the load vectors
    never = P.Col("pipeline").eq("mem") & P.Field("M").eq(P.Field("M"))
    low = lower_predicate([~never | P.FALSE], table, problem_struct("gemm"), problem=n.ident("p"),
                          kernel=n.ident("k"), prefix="b")
    mem = np.array([label == "mem" for label in table.labels("pipeline")])
    assert mem.any() and (~mem).any()
    assert low.known_mask[~mem].all() and low.known[~mem].all()  # the guard decides: always
    assert not low.known_mask[mem].any()  # the problem decides
