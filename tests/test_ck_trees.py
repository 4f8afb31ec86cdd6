"""Kernel types as trees (tests/ck_trees.py): reading headers and ckast's AST, alias resolution, comparison by
path and catalog defaults."""

from __future__ import annotations

import pytest

from ckast.catalog import load_profile
from ckast.variants import lower_kernel

from .ck_trees import (
    MISSING,
    ProfileDifference,
    TreeError,
    compare,
    differences,
    normalize,
    resolve,
    tree_of_ast,
    tree_of_header,
    tree_of_source,
)
from .goldens import GEMM_CASES
from .kernels import config_of

T = lambda name, *args: {"template": name, "args": list(args)}  # noqa: E731


# --- reading headers -------------------------------------------------------------------------------

HEADER = """
// a comment with using X = int; inside
#include "ck_tile/core.hpp"
namespace ns_k {
using ADataType = ck_tile::fp16_t;   /* folded to half_t */
struct Kernel_k {
    using A = ns_k::ADataType;
    static constexpr ck_tile::index_t TileM = 64;
    static constexpr ck_tile::index_t TileN = TileM * 2;
    static constexpr bool Pad = false;
    using Shape = ck_tile::TileGemmShape<ck_tile::sequence<TileM, TileN, 32>, ck_tile::sequence<2, 2, 1>,
                                         ck_tile::sequence<32, 32, 16>>;
    using Part = ck_tile::GemmSpatiallyLocalTilePartitioner<Shape, 8, 4>;
    static float launch(const Args& args) {
        const auto Run = [&](auto has_hot_loop_, auto tail_number_) {
            using Problem = ck_tile::Problem<A, Pad, has_hot_loop_.value, tail_number_.value>;
            using Kernel = ck_tile::K<Part::MPerBlock, Problem, typename Problem::Compute, Part>;
            return 0.0f;
        };
        return 0.0f;
    }
};
}
#ifdef SINGLE
using ADataType = float;
#endif
"""


def test_aliases_and_constants_resolve_through_scopes():
    tree = tree_of_header(HEADER)
    assert tree["template"] == "ck_tile::K"
    m_per_block, problem, compute, part = tree["args"]
    assert m_per_block == 64  # Part::MPerBlock read from the tile shape
    assert problem == T("ck_tile::Problem", "ck_tile::half_t", False, "$HasHotLoop", "$TailNum")
    assert compute == {"member": "Compute", "of": problem}
    assert part["args"][0]["args"][0] == T("ck_tile::sequence", 64, 128, 32)


def test_using_namespace_qualifies_and_alias_templates_bind():
    text = """
    using namespace ck_tile;
    struct L {
        template <bool HasHotLoop, TailNumber TailNum>
        using Problem = UniversalGemmPipelineProblem<fp8_t, HasHotLoop, TailNum>;
        template <bool HasHotLoop, TailNumber TailNum>
        using Kernel = GemmKernel<Problem<HasHotLoop, TailNum>, Problem<true, TailNumber::Full>>;
    };
    """
    tree = tree_of_header(text)
    assert tree == T("ck_tile::GemmKernel",
                     T("ck_tile::UniversalGemmPipelineProblem", "ck_tile::fp8_t", "$HasHotLoop", "$TailNum"),
                     T("ck_tile::UniversalGemmPipelineProblem", "ck_tile::fp8_t", True, "ck_tile::TailNumber::Full"))


def test_an_alias_named_like_its_template_is_not_recursion():
    text = "using namespace ck_tile; struct S { using GemmPipelineProblem = GemmPipelineProblem<int, 2>; };"
    assert resolve(text, "GemmPipelineProblem") == T("ck_tile::GemmPipelineProblem", "int", 2)


@pytest.mark.parametrize("text, message", [
    ("struct S { using A = B; using B = A; using Kernel = A; };", "refers to itself"),
    ("struct S { using Kernel = int; }; struct T { using Kernel = int; };", "2 declarations"),
    ("struct S { using X = int; };", "0 declarations"),
    ("struct S { using Kernel = ck_tile::X<1, >; };", "expected"),
    ("struct S { using Kernel = int; } }", "unbalanced"),
])
def test_unreadable_headers_are_refused_by_name(text, message):
    with pytest.raises(TreeError, match=message):
        tree_of_header(text)


# --- comparison ------------------------------------------------------------------------------------

def test_differences_name_their_path_and_both_values():
    ck = T("ck_tile::K", T("ck_tile::P", 1, True), "float", 7)
    ours = T("ck_tile::K", T("ck_tile::P", 2, True), "float")
    found = differences(ck, ours)
    assert [(d.path, d.ck, d.ckast) for d in found] == [
        ("ck_tile::K/0/ck_tile::P/0", 1, 2),
        ("ck_tile::K/2", 7, MISSING),
    ]
    assert str(found[0]) == "ck_tile::K/0/ck_tile::P/0: CK 1 / ckast 2"


def test_a_different_template_stops_the_descent():
    assert [d.path for d in differences(T("a::X", 1, 2), T("a::Y", 3, 4))] == ["/"]
    assert [d.path for d in differences(T("k", T("a::X", 1)), T("k", T("a::Y", 1)))] == ["k/0"]


def test_true_and_one_are_not_equal():
    assert differences(True, 1) and differences(0, False)


def test_allowances_explain_by_name_and_unused_ones_fail():
    ck, ours = T("k", 1, 2), T("k", 1, 3)
    allow = ProfileDifference("n-two", "CK spells 2 here", "k/1", ck=2, ckast=3)
    assert compare(ck, ours, [allow]).ok
    wrong_value = ProfileDifference("n-two", "", "k/1", ck=5)
    result = compare(ck, ours, [wrong_value])
    assert not result.ok and "unexplained: k/1" in result.report()
    stale = ProfileDifference("stale", "", "k/9")
    result = compare(ck, ck, [stale])
    assert not result.ok and result.unused == ["stale"]


def test_normalize_spells_catalog_defaults():
    profile = load_profile("ck-2026.06")
    seq = T("ck_tile::sequence", 1, 2, 3)
    short = T("ck_tile::TileGemmShape", seq, seq, seq)
    assert normalize(short, profile) == T("ck_tile::TileGemmShape", seq, seq, seq, False, False)
    assert compare(short, T("ck_tile::TileGemmShape", seq, seq, seq, False), profile=profile).ok
    assert not compare(short, T("ck_tile::TileGemmShape", seq, seq, seq, True), profile=profile).ok


# --- ckast's side ----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(GEMM_CASES))
@pytest.mark.parametrize("profile", ["ck-2025.11", "ck-2026.06"])
def test_ast_and_printed_header_give_one_tree(case, profile):
    header = lower_kernel(config_of(GEMM_CASES, case, profile), load_profile(profile)).header
    tree = tree_of_ast(header)
    assert tree["template"].startswith("ck_tile::") and tree == tree_of_source(header)


def test_the_ast_reader_finds_aliases_in_lambda_bodies_and_branches():
    from ckast import nodes as n

    kernel = n.UsingAlias("Kernel", n.type_of("Inner"))
    launch = n.FunctionDef("launch", n.Builtin("float"), body=[
        n.If(n.BoolLit(True), [n.UsingAlias("Unused", n.Builtin("int"))]),
        n.VarDecl(n.Builtin("auto"), "Run", n.Lambda(("&",), (), [
            n.UsingAlias("Inner", n.Builtin("float")), kernel, n.Return(n.IntLit(0))])),
    ])
    file = n.File([n.Namespace("ns", [n.Struct("S", [launch])])])
    assert tree_of_ast(file) == tree_of_source(file) == "float"


def test_a_member_of_a_differing_type_is_reported_inside_that_type():
    ck = T("k", {"member": "AComputeDataType", "of": T("p", "ck_tile::fp8_t")})
    ours = T("k", {"member": "AComputeDataType", "of": T("p", "ck_tile::bf8_t")})
    assert [d.path for d in differences(ck, ours)] == ["k/0/::AComputeDataType/p/0"]
    assert [d.path for d in differences(ck, T("k", {"member": "BComputeDataType", "of": T("p", 1)}))] == ["k/0"]


def test_a_member_of_an_alias_template_instance_equals_ck_spelling_of_it():
    ours = """struct L { template <bool HasHotLoop, ck_tile::TailNumber TailNum>
        using Problem = ck_tile::P<int, HasHotLoop, TailNum>;
        template <bool HasHotLoop, ck_tile::TailNumber TailNum>
        using Kernel = ck_tile::K<typename Problem<HasHotLoop, TailNum>::AComputeDataType>; };"""
    ck = """struct S { static float launch() { const auto Run = [&](auto has_hot_loop_, auto tail_number_) {
        using PipelineProblem = ck_tile::P<int, has_hot_loop_.value, tail_number_.value>;
        using Kernel = ck_tile::K<typename PipelineProblem::AComputeDataType>; }; } };"""
    assert tree_of_header(ours) == tree_of_header(ck) == T(
        "ck_tile::K", {"member": "AComputeDataType", "of": T("ck_tile::P", "int", "$HasHotLoop", "$TailNum")})
