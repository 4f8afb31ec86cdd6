"""The selection language (ckast/select/expr): types checked when a tree is built, where int, float and bool
meet (explicit conversions, literals), each type's semantics in the numpy evaluation, the kernel columns'
readings per type, and the text rendering."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ckast.select.expr import (
    TRUE,
    Col,
    Const,
    Field,
    Hw,
    Op,
    Over,
    ProblemsScope,
    Scope,
    ceil_div,
    log2,
    lookup,
    problem_values,
    problems_values,
    text,
    where,
)
from ckast.select.features import KernelTable
from ckast.select.features.featureset import Feature

M, N = Field("M"), Field("N")


def test_types_follow_the_operations():
    assert (M // N).type is int and (M % 3).type is int and ceil_div(M, 4).type is int
    assert (M < N).type is bool and M.eq(N).type is bool and (TRUE & (M > 1)).type is bool
    assert M.as_float().type is float and (M < N).as_float().type is float
    assert (M.as_float() / 2).type is float and log2(M.as_float()).type is float
    assert where(M > 1, M, 2).type is int and where(M > 1, "a", Col("pipeline")).type is str
    assert Over("prod", Field("stride")).type is int and Over("all", Field("stride").eq(1)).type is bool
    assert lookup("size", {"fp16": 2, "fp32": 4}, Col("datatype"), 1).type is int
    assert lookup("eff", {"mem": 0.7, "compv3": 1}, Col("pipeline"), 1).type is float  # ints beside floats
    # fields are ints, or strs where the problem classes say so; columns take their knob's type
    assert Field("direction").type is str and Field("input", -1).type is int
    assert (Col("tile_m").type, Col("pad_m").type, Col("pipeline").type) == (int, bool, str)
    assert Col("tile_m", float).type is float and Hw("num_cus").type is float


@pytest.mark.parametrize("build, message", [
    (lambda: Col("tile_m", float) + Col("tile_m"), r"\+ takes int or float operands of one type, not float, int"),
    (lambda: M / N, "/ takes float operands of one type, not int, int"),
    (lambda: M & N, "and takes bool operands of one type, not int, int"),
    (lambda: Col("pipeline") < "mem", "< takes int or float operands of one type, not str, str"),
    (lambda: log2(M), "log2 takes float operands, not int"),
    (lambda: M.as_float().as_float(), "float takes int or bool operands, not float"),
    (lambda: where(M, 1, 2), "where takes a bool and two values of one type, not int, int, int"),
    (lambda: where(M > 1, M, M.as_float()), "where takes a bool and two values of one type, not bool, int, float"),
    (lambda: M + 1.5, r"\+ takes int or float operands of one type, not int, float"),  # a float stays a float
    (lambda: Col("tile_m", float) + (2**53 + 1), "9007199254740993 is not exactly a float"),
    (lambda: Over("prod", Field("stride").eq(1)), "prod over the axes takes int, not bool"),
    (lambda: lookup("size", {"fp16": 2}, Col("tile_m")), "str keys for a key of type int"),
    (lambda: lookup("mixed", {"a": 1, "b": True}, Col("pipeline")), "values of one type"),
    (lambda: Col("dtype_bytes"), "no knob: give the type"),
    (lambda: Feature("M", M), "a feature is a float or a bool, not int"),
])
def test_ill_typed_trees_are_refused_when_built(build, message):
    with pytest.raises(TypeError, match=message):
        build()


def test_literals_take_the_other_operands_type_and_constants_keep_theirs():
    assert (Col("tile_m", float) + 1).args[1] == Const(1.0) and (Col("tile_m") + 1).args[1] == Const(1)
    assert (2 * M.as_float()).args[0] == Const(2.0)
    # equal Python values of other types are other constants (and other dictionary keys)
    assert Const(1) != Const(1.0) and Const(True) != Const(1) and len({Const(1), Const(1.0), Const(True)}) == 3
    assert Const(-0.0) != Const(0.0) and Const(math.nan) == Const(math.nan)  # floats by their bits


def test_ints_floor_divide_as_numpy_int64_and_floats_as_float64():
    table = KernelTable.of([{"x": a, "y": b} for a, b in ((7, 2), (-7, 2), (7, -2), (7, 0))])
    scope = Scope(table)
    x, y = Col("x", int), Col("y", int)
    for tree, want in ((x // y, [3, -4, -4, 0]), (x % y, [1, 1, -1, 0]), (ceil_div(x, y), [4, -3, -3, 0])):
        with np.errstate(all="ignore"):
            got = scope.value(tree)
        assert got.dtype == np.int64 and got.tolist() == want
    fx, fy = Col("x", float), Col("y", float)
    with np.errstate(all="ignore"):
        got = scope.value(fx // fy)
    assert got.dtype == np.float64 and got.tolist()[:3] == [3.0, -4.0, -4.0] and math.isinf(got[3])
    assert scope.value((x > y).as_float()).tolist() == [1.0, 0.0, 1.0, 1.0]


def test_a_float_values_nan_is_the_one_nan_whatever_numpy_gives():
    """log2(-1), 0/0, inf-inf, -NaN: numpy's sign of a NaN depends on the CPU and the operand; the language's
    NaN is the positive quiet one (the emitted C++ makes the same: test_select_cxx_features)."""
    x, y = Field("x", None, float), Field("y", None, float)
    one = np.float64(math.nan).view(np.uint64)
    scope = Scope(None, {"x": np.array([-1.0, 0.0, math.inf, -math.nan, 2.0]),
                         "y": np.array([1.0, 0.0, math.inf, math.nan, 1.0])})
    with np.errstate(all="ignore"):
        for tree in (log2(x), x / y, x - y, -x, (x - y) * 0.0, log2(-x)):
            got = scope.value(tree)
            assert got[np.isnan(got)].view(np.uint64).tolist() == [one] * int(np.isnan(got).sum()) != []
        assert Scope(None, {"x": -1.0}).value(log2(x)).view(np.uint64) == one
        assert scope.value(where(x.ne(7.0), x, y))[3].view(np.uint64) == one  # -NaN read as it came, too
        assert scope.value(x)[3].view(np.uint64) == one and np.signbit(scope.problem["x"][3])  # the input kept


def test_kernel_columns_read_by_type():
    table = KernelTable.of([{"tile_m": 64, "pad_m": True, "pipeline": "mem"}, {}])
    scope = Scope(table)
    assert scope.value(Col("tile_m")).tolist() == [64, 1]  # 1 where the kernel lacks the knob
    assert scope.value(Col("pad_m")).tolist() == [True, False]
    assert scope.value(Col("pipeline")).tolist() == ["mem", ""]
    as_float = scope.value(Col("pad_m", float))
    assert as_float[0] == 1.0 and math.isnan(as_float[1])  # NaN where it lacks it


def test_problem_fields_spatial_axes_and_hardware():
    scope = Scope(None, {"M": 5, "stride": np.array([2, 1])}, {"num_cus": 304.0})
    assert scope.value(Field("stride", -1)) == 1 and scope.value(Field("stride", -3)) == 0
    assert scope.value(Over("prod", Field("stride") + M)) == 42
    assert scope.value(Hw("num_cus") / M.as_float()) == 304.0 / 5
    with pytest.raises(KeyError, match="no problem field 'N'"):
        Scope(None, {}).value(N)


def test_many_problems_evaluate_as_each_one_alone():
    """`ProblemsScope`: a row per problem, a column per kernel; each entry is the value `Scope` gives."""
    table = KernelTable.of([{"tile_m": 64, "pipeline": "mem"}, {"tile_m": 256, "pipeline": "compv3"}])
    problems = [{"M": m, "direction": d, "stride": s} for m, d, s in
                ((5, "forward", (2, 1)), (300, "bwd_data", (1, 1)), (64, "forward", (3, 2)))]
    trees = [Over("prod", Field("stride") + M), Field("stride", -1) * 10 + Field("stride", 0) + Field("stride", -3),
             ceil_div(M, Col("tile_m")),
             where(Field("direction", type=str).eq("forward") & Over("all", Field("stride").eq(1)), M, -M),
             lookup("x", {64: 1.5, 300: 2.5}, M, 0.5) * Col("tile_m").as_float(),
             log2(M.as_float()) + Hw("num_cus"), Col("pipeline").eq("mem")]
    hw = {"num_cus": 304.0}
    many = ProblemsScope(table, problems_values([problem_values(p) for p in problems]), hw)
    for tree in trees:
        got = np.broadcast_to(many.value(tree), (len(problems), len(table)))
        expected = [np.broadcast_to(Scope(table, problem_values(p), hw).value(tree), len(table)) for p in problems]
        assert got.dtype == np.asarray(expected[0]).dtype and np.array_equal(got, expected), text(tree)


def test_text():
    assert text((Col("tile_m") > 1) & ~Field("direction").eq("gemm")) == "(tile_m > 1) and (not (direction == 'gemm'))"
    assert text(-M.as_float() / 2.0 + Hw("num_cus")) == "((-float(M)) / 2.0) + num_cus"
    assert text(where(Field("input", -2) >= 3, ceil_div(M, N), 0)) == "where(input[-2] >= 3, ceil_div(M, N), 0)"
    assert isinstance(M + 1, Op) and text(Over("all", Field("filter").eq(1))) == "all(filter == 1)"
