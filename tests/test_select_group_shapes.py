"""Grouped problems of per-group shapes: `group_m` (each group's M, N and K shared) or `group_shapes` (each group's
M x N x K), read from text, CSV cells and lists, shown back in the same spelling and refused by the path of the
bad field; a kernel serves such a problem when it serves every non-empty group (`why_not` names the group), and
the analytic model prices one launch of all the groups' tiles."""

from __future__ import annotations

import json
import re

import attrs
import numpy as np
import pytest

from ckast.library.selection import Selection
from ckast.select.problem import MAX_GROUPS, GemmProblem, ProblemError, problem_fields, problem_label
from ckast.select.serving.applicability import applicable, checked, checked_many, why_not
from ckast.select.serving.problem_read import gemm_problem, parse_pairs

from .select_helpers import ROOT, entries


def _problem(text: str) -> GemmProblem:
    return gemm_problem(parse_pairs(text))


@pytest.fixture(scope="module")
def grouped() -> list[dict]:
    """examples/gemm_grouped.json's two bf16 grouped kernels (128x128x64, M padded; one persistent), and the first
    padded in N and K as well."""
    path = ROOT / "examples" / "gemm_grouped.json"
    configs = [e["config"] for e in entries(Selection("", "", "ck-2026.06", (), (), (), None, (path,)))]
    return [*configs, {**configs[0], "pad_n": True, "pad_k": True}]


def test_each_group_gives_its_m_or_its_whole_shape():
    problem = _problem("group_m=64:128:0:256,N=4096,K=7168")
    assert problem.groups == 4 and problem.group_shapes == ((64, 4096, 7168), (128, 4096, 7168), (0, 4096, 7168),
                                                            (256, 4096, 7168))
    assert (problem.M, problem.N, problem.K) == (256, 4096, 7168)  # the largest group's
    assert problem.flops == 2 * (64 + 128 + 256) * 4096 * 7168
    assert [i for i, _ in problem.group_problems()] == [0, 1, 3]  # the empty group is skipped
    assert problem_label(problem) == "group_m=64:128:0:256,N=4096,K=7168"
    assert problem.label == "grouped standard GEMM (4 groups of their own shapes)"
    assert problem_fields(problem)["group_shapes"][1] == [128, 4096, 7168]
    assert "group_shapes" not in problem_fields(_problem("M=1,N=1,K=1,groups=4"))
    mixed = _problem("group_shapes=64x4096x7168:16x2048x512")
    assert problem_label(mixed) == "group_shapes=64x4096x7168:16x2048x512" and mixed.groups == 2
    for p in (problem, mixed):  # the label reads back as the problem
        assert _problem(problem_label(p)) == p
    assert gemm_problem({"group_m": [64, 128, 0, 256], "N": 4096, "K": 7168, "groups": 4}) == problem  # JSON, Python
    assert gemm_problem({"group_shapes": [[64, 4096, 7168], "16x2048x512"]}) == mixed
    assert _problem("group_m=64:128:0:256,N=4096,K=7168,group_count=4") == problem
    assert _problem("group_m=64,N=4096,K=7168") == _problem("group_shapes=64x4096x7168") == GemmProblem(64, 4096, 7168)


@pytest.mark.parametrize(("text", "field", "message"), [
    ("group_m=64:128,N=4096,K=7168,groups=3", "groups", "3 disagrees with the 2 groups of group_m"),
    ("group_m=64:-1,N=4096,K=7168", "group_m[1]", "-1 is out of range [0, 2147483647]"),
    ("group_m=64:3000000000,N=4096,K=7168", "group_m[1]", "is out of range"),
    ("group_m=64:x,N=4096,K=7168", "group_m[1]", "'x' is not an integer"),
    ("group_m=0:0,N=4096,K=7168", "group_m", "every group is empty"),
    ("group_m=64,M=64,N=4096,K=7168", "M", "give M (one shape for every group) or group_m, not both"),
    ("group_m=64,group_shapes=1x1x1,N=4096,K=7168", "group_shapes", "give group_m or group_shapes, not both"),
    ("group_shapes=1x1x1,K=7", "K", "give M, N and K (one shape for every group) or group_shapes, not both"),
    ("group_shapes=64x4096", "group_shapes[0]", "is not M x N x K"),
    ("group_shapes=64x4096x7168:1xax1", "group_shapes[1].N", "'a' is not an integer"),
    ("group_m=64", "N", "missing"),
    ("group_shapes=1x1x1:2000000x2000x4096", "group_shapes[1].A", "at most 2147483647 elements"),
    ("group_m=64,N=4096,K=7168,groups=2", "groups", "2 disagrees with the 1 groups of group_m"),
    (f"group_m={':'.join(['1'] * (MAX_GROUPS + 1))},N=1,K=1", "group_m", f"a grouped problem has 1 to {MAX_GROUPS}"),
])
def test_a_bad_per_group_problem_is_refused_by_the_path_of_its_field(text, field, message):
    with pytest.raises(ProblemError, match=re.escape(message)) as exc:
        _problem(text)
    assert exc.value.field == field


def test_the_command_line_refuses_a_bad_group_with_exit_2(tmp_path):
    from click.testing import CliRunner

    from ckast.cli import main as cli

    from .select_helpers import write_library

    path = ROOT / "examples" / "gemm_grouped.json"
    lib = write_library(tmp_path / "lib", entries(Selection("", "", "ck-2026.06", (), (), (), None, (path,))))
    result = CliRunner().invoke(cli, ["select", "--library", str(lib), "--problem", "group_m=4:-4,N=64,K=64"])
    assert result.exit_code == 2 and "group_m[1]: -4 is out of range" in result.output
    assert "Traceback" not in result.output
    result = CliRunner().invoke(cli, ["select", "--library", str(lib), "--problem", "group_m=4:0:12,N=4096,K=7168"])
    assert result.exit_code == 0 and "grouped standard GEMM (3 groups of their own shapes)" in result.output


def test_a_kernel_serves_every_non_empty_group_or_none(grouped):
    unpadded, _, padded = grouped
    problem = _problem("group_shapes=64x4096x7168:100x4096x7000:0x1x1")
    assert why_not(problem, padded) is None
    reason = why_not(problem, unpadded)
    assert reason.startswith("group 1 (M=100, N=4096, K=7000): dispatcher.pad_k") and "K=7000" in reason
    assert why_not(_problem("group_shapes=64x4096x7168:0x4096x7000"), unpadded) is None  # empty: never checked
    ok, refused = checked(problem, grouped)
    assert ok.tolist() == [False, False, True] and refused == {"dispatcher.pad_k": 2}
    standard = {**padded, "variant": "standard"}
    assert why_not(problem, standard).startswith("group 0 (M=64, N=4096, K=7168): gemm.groups")
    assert applicable(_problem("group_m=64,N=4096,K=7168"), [standard]).tolist() == [True]  # one group: one GEMM


def test_many_problems_are_checked_as_each_alone(grouped):
    from ckast.select.features import KernelTable

    problems = [_problem(t) for t in ("M=64,N=4096,K=7168,groups=2", "group_shapes=64x4096x7168:100x4096x7000",
                                      "M=64,N=4096,K=7000", "group_m=1:0:9,N=4096,K=7168")]
    table = KernelTable.of(grouped)
    ok, refused = checked_many(problems, table)
    for i, problem in enumerate(problems):
        alone = checked(problem, table)
        assert ok[i].tolist() == alone[0].tolist() and refused[i] == alone[1]


# --- the analytic model ---------------------------------------------------------------------------------------


def _predict(configs: list[dict], problem: GemmProblem, arch: str = "gfx942") -> np.ndarray:
    from ckast.arch.hardware import hardware
    from ckast.select.models.analytic import AnalyticPredictor
    from ckast.select.serving.library import Part

    part = Part(tuple(f"k{i}" for i in range(len(configs))), tuple(configs), arch, configs[0]["datatype"])
    return AnalyticPredictor().predict_tflops(problem, part, hardware(arch))


def test_groups_of_one_shape_cost_as_the_one_shape_problem(grouped):
    """8 groups given one by one of one shape: the prediction of `groups=8` (up to the rounding of summing the
    groups' bytes); an empty group adds nothing, bit for bit."""
    one = _predict(grouped, _problem("M=64,N=4096,K=7168,groups=8"))
    each = _predict(grouped, _problem("group_m=" + ":".join(["64"] * 8) + ",N=4096,K=7168"))
    assert np.allclose(each, one, rtol=1e-12, atol=0) and (one > 0).all()
    with_empty = _predict(grouped, _problem("group_m=64:0:32:0,N=4096,K=7168"))
    assert with_empty.tobytes() == _predict(grouped, _problem("group_m=64:32,N=4096,K=7168")).tobytes()


def test_a_grouped_launch_pays_each_groups_padded_tiles_once_across_all_groups(grouped):
    """Uneven loads: 8 experts of 1, 1, 1, 1, 1, 1, 1 and 249 tokens (256 in all) run 7 + 2 tile rows of 128 (each
    tiny group pads a whole tile) where 8 x 32 tokens run 8: slower than the even split, faster than 8 launches;
    and the K loops are each group's own (a group of half the K costs about half)."""
    uneven = _predict(grouped, _problem("group_m=1:1:1:1:1:1:1:249,N=4096,K=7168"))
    even = _predict(grouped, _problem("M=32,N=4096,K=7168,groups=8"))
    flops = 2 * 256 * 4096 * 7168
    assert (flops / uneven > flops / even).all() and (flops / uneven < 1.25 * 9 / 8 * flops / even).all()
    short = _predict(grouped, _problem("group_shapes=128x4096x7168:128x4096x3584"))
    full = _predict(grouped, _problem("M=128,N=4096,K=7168,groups=2"))
    seconds_short, seconds_full = 2 * 128 * 4096 * (7168 + 3584) / short, 2 * 2 * 128 * 4096 * 7168 / full
    assert (seconds_short < 0.85 * seconds_full).all()


def test_select_ranks_per_group_problems_one_by_one_or_in_a_batch(tmp_path, grouped):
    """`rank_many` (a problems file) gives each per-group problem the ranking `rank` gives it alone."""
    from ckast.arch.hardware import hardware
    from ckast.select.models.analytic import AnalyticPredictor
    from ckast.select.ranking.batch import rank_many
    from ckast.select.ranking.rank import rank
    from ckast.select.serving.library import Part

    part = Part(tuple(f"k{i}" for i in range(len(grouped))), tuple(grouped), "gfx942", "bf16")
    problems = [_problem(t) for t in ("group_m=3:0:200,N=4096,K=7168", "M=64,N=4096,K=7168,groups=2",
                                      "group_shapes=64x4096x7168:100x4096x7000", "M=100,N=4096,K=7168")]
    hw = hardware("gfx942")
    for ranking, problem in zip(rank_many(problems, part, AnalyticPredictor(), hw, ("kernel", "dispatcher")),
                                problems):
        alone = rank(problem, part, AnalyticPredictor(), hw)
        assert ranking.tflops.tobytes() == alone.tflops.tobytes() and ranking.order.tolist() == alone.order.tolist()


def test_a_problems_file_and_json_read_per_group_rows(tmp_path):
    from ckast.select.reports.report import parse_row

    row = parse_row({"group_m": "4:0:12", "N": "4096", "K": "7168", "datatype": "bf16", "layout": "rcr"}, ("gemm",),
                    "x.csv:2")
    assert row.problem.group_shapes == ((4, 4096, 7168), (0, 4096, 7168), (12, 4096, 7168))
    with pytest.raises(ProblemError, match=r"x.csv:3: group_m\[2\]"):
        parse_row({"group_m": "4:0:-1", "N": "4096", "K": "7168", "datatype": "bf16"}, ("gemm",), "x.csv:3")
    assert json.loads(json.dumps(problem_fields(row.problem)))["groups"] == 3


# --- the C++ selector -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def selector(tmp_path_factory):
    """A library of bf16 grouped kernels of several tiles (padded or not in N and K), one persistent, and a padded
    standard kernel, its selector compiled."""
    pytest.importorskip("cppyy")
    from ckast.select.cxx.selector import write_selector
    from ckast.select.serving.library import load_library

    from .select_helpers import GEMM_TILES, write_library
    from .test_select_cxx_selector import _jit

    root = tmp_path_factory.mktemp("groups")
    base = {"kind": "gemm", "variant": "grouped", "datatype": "bf16", "layout": "rcr", "arch": "gfx942",
            "ck_api": "ck-2026.06", "pipeline": "compv3", "pad_m": True}
    configs = [{**base, "tile_m": m, "tile_n": n, "tile_k": k, "warp_m": wm, "warp_n": wn, "warp_k": 1,
                "warp_tile_m": wt, "warp_tile_n": wt, "warp_tile_k": 16 if wt == 32 else 32, "pad_n": padded,
                "pad_k": padded} for (m, n, k, wm, wn, wt) in GEMM_TILES for padded in (False, True)]
    configs += [{**configs[4], "persistent": True}, {**configs[5], "variant": "standard"}]
    (root / "kernels.json").write_text(json.dumps({"kernels": configs}))
    lib = write_library(root / "lib", entries(Selection("", "", "ck-2026.06", (), (), (), None,
                                                         (root / "kernels.json",))))
    write_selector(lib, [], root / "selector")
    return load_library(lib), _jit(root / "selector")


def _groups(ns, shapes):
    import cppyy

    out = cppyy.gbl.std.vector[ns.GemmGroup]()
    for m, n, k in shapes:
        group = ns.GemmGroup()
        group.M, group.N, group.K = m, n, k
        out.push_back(group)
    return out


def test_the_cxx_selector_ranks_per_group_problems_as_python_bit_for_bit(selector):
    """Random MoE-like problems (1 to 9 groups, some empty, uneven M, shared or own N and K, split K): the emitted
    selector's `rank_groups(problem, groups, ...)` is Python's ranking, names and TFLOPS bit for bit."""
    import random

    from ckast.select.models.analytic import AnalyticPredictor

    from .select_helpers import bits, python_ranking
    from .test_select_cxx_selector import _struct

    library, ns = selector
    rng = random.Random(39)
    ranked = []
    for _ in range(40):
        count = rng.randint(1, 9)
        n, k = rng.choice((4096, 7168, 1000, 2048)), rng.choice((7168, 4096, 3584, 1000))
        own = rng.random() < 0.3
        shapes = [(rng.choice((0, 1, 3, 16, 64, 200, 1024)), rng.choice((n, 512)) if own else n,
                   rng.choice((k, 960)) if own else k) for _ in range(count)]
        if not any(m for m, _, _ in shapes):
            shapes[0] = (5, n, k)
        text = "group_shapes=" + ":".join("x".join(map(str, s)) for s in shapes) + f",k_batch={rng.choice((1, 1, 2))}"
        problem = _problem(text)
        expected = python_ranking(library, problem, AnalyticPredictor(), "bf16", "rcr")
        got = [(str(c.kernel), c.tflops)
               for c in ns.rank_groups(_struct(ns, problem), _groups(ns, shapes), "bf16", "rcr")]
        assert bits(got) == bits(expected), text
        ranked.append(len(got))
    assert 0 < min(ranked) < max(ranked)  # some groups refuse the unpadded kernels, the padded serve all


def test_the_cxx_selector_refuses_the_groups_python_refuses(selector):
    from .test_select_cxx_selector import _struct

    _, ns = selector
    struct = _struct(ns, _problem("M=1,N=1,K=1"))
    for shapes, rule in ((((64, 4096, 7168), (0, 4096, 7168)), None), (((0, 4096, 7168),), "every group is empty"),
                         ((), "1 to 4096 groups"), (((64, -1, 7168),), "must be in [0, 2147483647]"),
                         (((2000000, 2000, 4096),), "A: the A tensor")):
        found = ns.invalid_groups(struct, _groups(ns, shapes))
        assert (found == "") if rule is None else rule in str(found), (shapes, found)  # "": null
        if rule is not None:
            assert list(ns.rank_groups(struct, _groups(ns, shapes), "bf16", "rcr")) == []
    assert "1 to 4096 groups" in str(ns.invalid_groups(struct, _groups(ns, [(1, 1, 1)] * 4097)))
    named = ns.select_groups(struct, _groups(ns, [(64, 4096, 7168), (0, 1, 1), (16, 4096, 7168)]), "bf16", "rcr")
    assert len(named) > 0 and all("_grouped_" in str(name) for name in named)


def test_the_routed_workload_is_the_tools_output():
    """examples/workloads/moe_routed_gemm.csv is what tools/quant_moe_workloads.py writes; each row's experts hold
    its tokens x top_k routed tokens."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("quant_moe_workloads", ROOT / "tools" / "quant_moe_workloads.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    rows = tool.moe_routed_rows()
    text = (ROOT / "examples" / "workloads" / "moe_routed_gemm.csv").read_text().splitlines()
    assert len(text) == len(rows) + 1 and text[1].startswith(f"{rows[0]['group_m']},")
    top_k = {experts: k for _, _, _, experts, k, _ in tool.MOE_MODELS}
    tokens = [t for name, *_ in tool.MOE_MODELS for t in tool.ROUTED_TOKENS[name] for _ in range(2)]
    for row, t in zip(rows, tokens):
        counts = [int(c) for c in row["group_m"].split(":")]
        assert sum(counts) == t * top_k[len(counts)] and max(counts) <= t


def test_the_features_refuse_per_group_shapes_they_cannot_read(grouped):
    """A LightGBM model's features (and training's) read one shape: a problem of per-group shapes is refused by
    name, never priced as its largest group."""
    from ckast.arch.hardware import hardware
    from ckast.select.features import KernelTable
    from ckast.select.models.inputs import model_features

    problem = _problem("group_m=4:0:12,N=4096,K=7168")
    with pytest.raises(ProblemError, match="read one shape per problem") as exc:
        model_features("gemm").matrix(problem, KernelTable.of(grouped), hardware("gfx942"))
    assert exc.value.field == "group_shapes"
    mask = np.ones((2, len(grouped)), dtype=bool)
    with pytest.raises(ProblemError, match="group_m=4:0:12"):
        model_features("gemm").matrix_many([_problem("M=4,N=4096,K=7168"), problem], KernelTable.of(grouped),
                                           hardware("gfx942"), mask)


def test_a_part_ranked_by_a_lightgbm_model_throws_where_a_kernel_takes_every_group(selector):
    """Its features read one shape (as Python's refuse): the part's `rank_groups` checks the groups, then throws
    if a kernel accepts them all; a part of no grouped kernel ranks nothing for two groups or more."""
    from ckast import nodes as n
    from ckast.select.cxx.lower_predicate import lower_applicability
    from ckast.select.cxx.selector import PartPlan, _rank_groups

    library, _ = selector
    (key, part), = library.parts()
    plan = PartPlan(0, part, "gemm", "gemm", None, "bf16", "rcr", model=object())
    ok = lower_applicability(part.table, "gemm", problem=n.ident("problem"), kernel=n.ident("k"), prefix="ok")
    decls, function = _rank_groups(plan, ok)
    text = n.to_source(n.File([*decls, function]))
    assert "throw std::invalid_argument" in text and "ranked by a LightGBM model" in text and "accepts" in text
    standard = attrs.evolve(part, configs=tuple(c for c in part.configs if c["variant"] == "standard"))
    assert _rank_groups(attrs.evolve(plan, part=standard, model=None), ok)[1].body == ()
