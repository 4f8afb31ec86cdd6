"""`ckast api`: a profile checked against a CK include tree, profiles diffed and drafted.

The check runs on a tiny CK-like tree (tests/data/api_demo: a few `ck_tile/...` headers and the profile
`ck-demo` that matches them), altered once per mismatch kind; each parse takes about a second. The real
tree (amd-aiter's CK Tile) is checked by the marked tests in test_api_ck.py. The diff of the packaged
profiles is checked against the drift notes D1-D10 (no parser needed).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckast import api as a
from ckast.api.compare import Row, compare_enums, compare_params
from ckast.api.diff import diff
from ckast.api.entries import absent_qualname
from ckast.api.model import EnumInfo, ParamInfo, Where, normalize
from ckast.catalog import names as catalog_names
from ckast.catalog import profile as catalog_profile
from ckast.catalog.names import PROFILES_DIR
from ckast.check.toolchain import ToolchainError, find_clang, find_hip
from ckast.cli import main

from .conftest import ROOT
from .test_environment import assert_one_line, ckast

DEMO = ROOT / "tests" / "data" / "api_demo"
PROBLEM = "ck_tile/ops/demo/problem.hpp"
KERNEL = "ck_tile/ops/demo/kernel.hpp"
NUMERIC = "ck_tile/core/numeric.hpp"


def _parser_missing() -> str | None:
    try:
        find_clang()
        find_hip()
    except ToolchainError as exc:
        return str(exc)
    return None if importlib.util.find_spec("clang") else "pip install libclang"


needs_parser = pytest.mark.skipif(_parser_missing() is not None, reason=f"no libclang parse: {_parser_missing()}")


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of the demo tree and profile, to alter."""
    shutil.copytree(DEMO, tmp_path / "demo")
    return tmp_path / "demo"


def edit(root: Path, header: str, old: str, new: str) -> None:
    path = root / "include" / header
    text = path.read_text()
    assert old in text, (header, old)
    path.write_text(text.replace(old, new, 1))


def rows(root: Path) -> list[Row]:
    catalog = a.load_catalog(root / "ck-demo.toml")
    return a.report(catalog, a.declarations(root / "include", [catalog]).declarations).rows


def only(found: list, **fields: str) -> Row:
    """The one row whose fields start with the given values."""
    hits = [r for r in found if all(getattr(r, k).startswith(v) for k, v in fields.items())]
    assert len(hits) == 1, (fields, found)
    return hits[0]


# --------------------------------------------------------------------------- the check, on the demo tree


@needs_parser
def test_demo_profile_matches_its_tree(demo):
    assert rows(demo) == []


@needs_parser
@pytest.mark.parametrize("case", ["added", "removed", "reordered", "kind", "default", "enumerator", "template removed"])
def test_each_alteration_is_found_naming_template_and_parameter(demo, case):
    if case == "added":
        edit(demo, PROBLEM, "bool Pad_ = false,", "bool Pad_ = false,\n          bool Fast_ = true,")
        found = rows(demo)
        only(found, entity="ck_tile::Problem", what="count", a="7", b="8")
        only(found, entity="ck_tile::Problem", item="Fast_ #5", what="parameter", a="-", b="bool = true")
    elif case == "removed":
        edit(demo, PROBLEM, "          bool Pad_ = false,\n", "")
        only(rows(demo), entity="ck_tile::Problem", item="Pad_ #4", what="parameter", a="bool = false", b="-")
    elif case == "reordered":
        edit(demo, PROBLEM, "index_t VectorSize_ = 1,\n          bool Pad_ = false,",
             "bool Pad_ = false,\n          index_t VectorSize_ = 1,")
        row = only(rows(demo), entity="ck_tile::Problem", what="order")
        assert (row.item, row.a, row.b) in (("Pad_ #3", "#4", "#3"), ("VectorSize_ #4", "#3", "#4"))
    elif case == "kind":
        edit(demo, PROBLEM, "index_t VectorSize_ = 1", "unsigned VectorSize_ = 1")
        row = only(rows(demo), entity="ck_tile::Problem", item="VectorSize_ #3", what="kind")
        assert (row.a, row.b) == ("ck_tile::index_t", "unsigned (unsigned int)")
        assert row.note == f"{PROBLEM}:17"
    elif case == "default":
        edit(demo, PROBLEM, "bool Pad_ = false", "bool Pad_ = true")
        only(rows(demo), entity="ck_tile::Problem", item="Pad_ #4", what="default", a="false", b="true")
    elif case == "enumerator":
        edit(demo, NUMERIC, "Interwave", "InterWave")
        only(rows(demo), entity="ck_tile::Scheduler", item="Interwave #3", what="enumerator", a="Interwave", b="InterWave")
    else:
        edit(demo, KERNEL, "template <typename Problem_, typename Policy_>\nstruct Kernel {};\n", "")
        edit(demo, KERNEL, "template <typename Problem_, typename Policy_ = void>\nstruct Kernel;\n", "")
        only(rows(demo), entity="ck_tile::Kernel", what="missing", b="not declared")


@needs_parser
def test_kind_changes_between_type_bool_and_enum(demo):
    edit(demo, PROBLEM, "typename Op_ = PassThrough", "bool Op_ = true")
    edit(demo, PROBLEM, "Scheduler Scheduler_ = Scheduler::Intrawave", "Strategy Scheduler_ = Atomic")
    found = rows(demo)
    only(found, item="Op_ #6", what="kind", a="typename", b="bool")
    only(found, item="Op_ #6", what="default", a="ck_tile::element_wise::PassThrough", b="true")
    only(found, item="Scheduler_ #5", what="kind", a="enum ck_tile::Scheduler", b="enum ck_tile::Strategy")
    only(found, item="Scheduler_ #5", what="default", a="ck_tile::Scheduler::Intrawave", b="ck_tile::Strategy::Atomic")


@needs_parser
def test_renamed_parameter_and_renamed_pack(demo):
    edit(demo, PROBLEM, "CDataType_ = ADataType_", "EDataType_ = ADataType_")
    edit(demo, PROBLEM, "template <index_t... Is>\nstruct seq {};", "template <index_t... Ns>\nstruct seq {};")
    found = rows(demo)
    only(found, entity="ck_tile::Problem", item="CDataType_ #7", what="name", a="CDataType_", b="EDataType_")
    only(found, entity="ck_tile::seq", item="Is #1", what="name", a="Is", b="Ns")


@needs_parser
def test_absent_entries_must_be_absent(demo):
    edit(demo, KERNEL, "struct Kernel {};", "struct Kernel {};\nstruct Gone {};")
    edit(demo, PROBLEM, "bool Pad_ = false,", "bool Pad_ = false,\n          bool Extra_ = false,")
    found = rows(demo)
    only(found, entity="ck_tile::Gone", what="absent", a="marked absent: no Gone in this CK", b="declared (type)")
    only(found, entity="ck_tile::Problem", item="Extra_ #5", what="absent", a="marked absent", b="bool = false")


@needs_parser
def test_header_reachable_through_the_named_include_and_source(demo):
    # core.hpp no longer reaches numeric.hpp (demo.hpp includes it directly); Kernel moves to problem.hpp.
    edit(demo, "ck_tile/core.hpp", '#include "ck_tile/core/numeric.hpp"', "")
    edit(demo, "ck_tile/ops/demo.hpp", '#include "ck_tile/core.hpp"', '#include "ck_tile/core/numeric.hpp"')
    edit(demo, KERNEL, "template <typename Problem_, typename Policy_>\nstruct Kernel {};\n", "")
    edit(demo, PROBLEM, "} // namespace ck_tile", "template <typename Problem_, typename Policy_>\nstruct Kernel {};\n}")
    found = rows(demo)
    for entity in ("ck_tile::index_t", "ck_tile::Scheduler", "ck_tile::Strategy"):
        row = only(found, entity=entity, what="include")
        assert (row.a, row.b) == ("ck_tile/core.hpp", f"declared in {NUMERIC}, which it does not include")
    only(found, entity="ck_tile::Kernel", what="source", a=KERNEL, b=PROBLEM)  # where the definition is


@needs_parser
def test_missing_umbrella_and_parse_errors_are_mismatches(demo):
    edit(demo, KERNEL, "struct Kernel {};", "struct Kernel {")
    assert any(r.what == "parse" and r.note.startswith(KERNEL) for r in rows(demo))
    (demo / "include" / "ck_tile" / "ops" / "demo.hpp").unlink()
    only(rows(demo), entity="ck_tile::Problem", what="include", a="ck_tile/ops/demo.hpp", b="no such header in the tree")


@needs_parser
def test_parse_is_cached_until_a_header_changes(demo):
    catalog = a.load_catalog(demo / "ck-demo.toml")
    assert not a.declarations(demo / "include", [catalog]).cached
    assert a.declarations(demo / "include", [catalog]).cached
    edit(demo, KERNEL, "struct Kernel {};", "struct Kernel { };")
    assert not a.declarations(demo / "include", [catalog]).cached


@needs_parser
def test_check_command_prints_the_table_and_exits_1(demo):
    run = CliRunner().invoke(main, ["api", "check", "--ck-include", str(demo / "include"), "--ck-api",
                                    str(demo / "ck-demo.toml")])
    assert run.exit_code == 0, run.output
    assert "ck-demo against" in run.output
    assert "9 entries checked (9 CK Tile, 0 dispatcher; 1 not from a CK tree: standard library, HIP), matches" in run.output
    edit(demo, PROBLEM, "bool Pad_ = false", "bool Pad_ = true")
    run = CliRunner().invoke(main, ["api", "check", "--ck-include", str(demo / "include"), "--ck-api",
                                    str(demo / "ck-demo.toml")])
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    assert lines[1].split() == ["profile", "template", "parameter", "what", "catalog", "header", "where"]
    assert lines[3].split() == ["ck-demo", "ck_tile::Problem", "Pad_", "#4", "default", "false", "true", f"{PROBLEM}:17"]


@needs_parser
def test_emit_refuses_a_tree_no_profile_matches(demo, tmp_path):
    run = CliRunner().invoke(main, ["emit", "--config", str(ROOT / "examples" / "gemm_standard.json"), "-o",
                                    str(tmp_path / "out"), "--ck-include", str(demo / "include")])
    assert run.exit_code == 2
    assert run.stderr.startswith(f"no CK API profile matches {demo / 'include'}; the closest:")
    assert "ck_tile::GemmKernel" in run.stderr and not (tmp_path / "out").exists()
    run = CliRunner().invoke(main, ["generate", "--config", str(ROOT / "examples" / "gemm_standard.json"), "-o",
                                    str(tmp_path / "out"), "--ck-api", "ck-2026.06", "--ck-include", str(demo / "include")])
    assert run.exit_code == 2 and run.stderr.splitlines()[0] == (f"no CK API profile matches {demo / 'include'}; "
                                                                 "the mismatches of --ck-api ck-2026.06:")
    assert run.stderr.splitlines()[1].startswith(f"ck-2026.06 against {demo / 'include'}: ")


@pytest.fixture
def demo_packaged(demo, tmp_path, monkeypatch) -> Path:
    """The demo profile as a packaged one (next to copies of the real ones), so a draft can be based on it."""
    profiles = tmp_path / "profiles"
    shutil.copytree(PROFILES_DIR, profiles)
    shutil.copy(demo / "ck-demo.toml", profiles)
    for module in (catalog_names, catalog_profile):
        monkeypatch.setattr(module, "PROFILES_DIR", profiles)
    caches = (catalog_names.profile_names, catalog_profile.load_profile, absent_qualname)
    for cached in caches:
        cached.cache_clear()
    yield demo
    for cached in caches:
        cached.cache_clear()


@needs_parser
def test_ck_include_names_the_profile_the_tree_matches(demo_packaged, tmp_path):
    include = demo_packaged / "include"
    config = str(ROOT / "examples" / "gemm_standard.json")
    run = CliRunner().invoke(main, ["generate", "--config", config, "-o", str(tmp_path / "out"), "--ck-api",
                                    "ck-2026.06", "--ck-include", str(include)])
    assert run.exit_code == 2 and not (tmp_path / "out").exists()
    assert run.stderr.splitlines()[:2] == [
        f"--ck-api ck-2026.06 does not match {include}, which matches ck-demo: leave out --ck-api (--ck-include picks "
        "ck-demo) or pass --ck-api ck-demo; ck-2026.06's mismatches:",
        f"ck-2026.06 against {include}: 153 entries checked (153 CK Tile, 0 dispatcher; 17 not from a CK tree: "
        "standard library, HIP; 31 dispatcher entries not checked (no ck_tile/dispatcher/)), 153 mismatches"]
    run = CliRunner().invoke(main, ["emit", "--config", config, "-o", str(tmp_path / "out"), "--ck-include",
                                    str(include)])
    assert run.stderr.splitlines()[0] == f"ckast: {include} matches CK API ck-demo"  # the default ck_api it takes


@needs_parser
def test_draft_from_an_altered_tree_matches_it(demo_packaged, tmp_path):
    demo = demo_packaged
    edit(demo, PROBLEM, "bool Pad_ = false,", "bool Pad_ = true,\n          bool Fast_ = false,")
    edit(demo, NUMERIC, "Interwave", "InterWave")
    edit(demo, NUMERIC, "enum Strategy", "enum struct Mode { Slow, Quick };\nenum Strategy")
    edit(demo, PROBLEM, "typename Op_ = PassThrough", "Mode Op_ = Mode::Quick")
    edit(demo, KERNEL, "struct Kernel {};", "struct Kernel {};\nstruct Gone {};")
    (demo / "include" / KERNEL).write_text((demo / "include" / KERNEL).read_text().replace("struct Kernel", "struct Kern"))
    out = tmp_path / "ck-next.toml"
    run = CliRunner().invoke(main, ["api", "new", "ck-next", "--ck-include", str(demo / "include"), "--from",
                                    "ck-demo", "-o", str(out)])
    assert run.exit_code == 0, run.output
    assert run.stdout.splitlines() == [
        f"{out}: draft profile; 7 entries inherited from ck-demo unchanged",
        "written from the tree's declarations (4; review):",
        "  enums.Mode: an enum new parameters use",
        "  enums.Scheduler: enumerator",
        "  templates.Problem: count, parameter, default, kind",
        "  types.Gone: marked absent in the base profile, but declared",
        "marked absent (2):",
        f"  Kernel: not declared in {demo / 'include'} (missing); to review (drafted by ckast api new)",
        "  Problem.Extra_: no Extra_ in this CK",
    ]
    text = out.read_text()
    assert 'base = "ck-demo"' in text
    assert '{ name = "Op_", kind = "enum", enum = "Mode", default = "Quick" },' in text
    assert '{ name = "Pad_", kind = "bool", default = true },' in text
    assert a.report(a.load_catalog(out), a.declarations(demo / "include", [a.load_catalog(out)]).declarations).rows == []
    run = CliRunner().invoke(main, ["api", "new", "ck-next", "--ck-include", str(demo / "include"), "--from",
                                    "ck-demo", "-o", str(out)])
    assert run.exit_code == 2 and "exists" in run.stderr


def test_api_check_without_clang_or_libclang_is_one_line_exit_1(tmp_path):
    (tmp_path / "bin").mkdir()
    result = ckast(tmp_path, "api", "check", "--ck-include", str(DEMO / "include"), PATH=str(tmp_path / "bin"))
    assert_one_line(result, "no clang++-19 or clang++ on PATH")
    if _parser_missing() is None:
        (tmp_path / "fake" / "clang").mkdir(parents=True)
        (tmp_path / "fake" / "clang" / "__init__.py").write_text("")
        result = ckast(tmp_path, "api", "check", "--ck-include", str(DEMO / "include"), PYTHONPATH=str(tmp_path / "fake"))
        assert_one_line(result, "libclang's Python bindings are not installed", "pip install libclang")


# --------------------------------------------------------------------------- comparisons without a parser


def test_normalize_keeps_one_space_between_words_only():
    assert normalize(" unsigned  long\tint ") == "unsigned long int"
    assert normalize("ck_tile :: sequence < 1 , 2 >") == "ck_tile::sequence<1,2>"


def test_compare_params_aligns_by_name():
    def p(name, kind="type", default=None):
        return ParamInfo(name, kind, default=default)

    a_ = [p("A"), p("B"), p("C"), p("D", "bool", "false")]
    assert compare_params(a_, a_) == []
    assert compare_params(a_, [p("A"), p("C"), p("B"), p("D", "bool", "false")]) == [("C #2", "order", "#3", "#2")]
    assert compare_params(a_, [p("A"), p("X"), p("C"), p("D", "bool", "true")]) == [
        ("B #2", "name", "B", "X"), ("D #4", "default", "false", "true")]
    assert compare_params(a_, [p("A"), p("C"), p("D", "bool", "false")]) == [
        ("", "count", "4", "3"), ("B #2", "parameter", "typename", "-")]
    ints = [ParamInfo("N", "int", "ck_tile::index_t")]
    assert compare_params(ints, [ParamInfo("N", "int", "int32_t", "int")], canon={"ck_tile::index_t": "int"}.get) == []
    assert compare_params(ints, [ParamInfo("N", "int", "uint32_t", "unsigned int")], canon={"ck_tile::index_t": "int"}.get) == [
        ("N #1", "kind", "ck_tile::index_t", "uint32_t (unsigned int)")]


def test_compare_enums_pairs_renamed_enumerators():
    old = EnumInfo("E", False, ("Atomic", "Reduction"), Where("f"))
    assert compare_enums(old, EnumInfo("E", False, ("Atomic", "Linear"), Where("f"))) == [
        ("Reduction #2", "enumerator", "Reduction", "Linear")]
    assert compare_enums(old, EnumInfo("E", True, ("Atomic",), Where("f"))) == [
        ("", "scoped", "enum", "enum class"), ("Reduction #2", "enumerator", "Reduction", "-")]


# --------------------------------------------------------------------------- diff: the drift notes D1-D10


@pytest.fixture(scope="module")
def drift() -> list[tuple[str, str, str, str, str]]:
    rows = diff(a.load_catalog("ck-2025.11"), a.load_catalog("ck-2026.06"))
    return [(r.entity, r.item, r.what, r.a, r.b) for r in rows]


def test_diff_shows_d1_grouped_conv_traits_and_depthwise(drift):
    assert {("GroupedConvTraits", "", "count", "11", "13"),
            ("GroupedConvTraits", "ExplicitGemm_ #12", "parameter", "-", "bool = false"),
            ("GroupedConvTraits", "DepthwiseTraitsType_ #13", "parameter", "-", "typename = void"),
            ("DepthwiseConvFwdTraits", "", "added", "absent", "template ck_tile::DepthwiseConvFwdTraits"),
            ("DepthwiseConvFwdPipeline", "", "added", "absent", "template ck_tile::DepthwiseConvFwdPipeline"),
            ("GroupedConvDirection", "", "added", "absent", "enum ck_tile::GroupedConvDirection"),
            ("GroupedConvolutionForwardKernel", "GemmPipeline_ #3", "name", "GemmPipeline_", "Pipeline_"),
            ("features", "explicit_gemm", "feature", "false", "true"),
            ("features", "depthwise_conv", "feature", "false", "true")} <= set(drift)


def test_diff_shows_d2_conv_lds_policy(drift):
    assert {("GroupedConvUniversalPipelineAgBgCrPolicy", "", "added", "absent",
             "type ck_tile::GroupedConvUniversalPipelineAgBgCrPolicy"),
            ("features", "conv_lds_policy", "feature", "false", "true")} <= set(drift)


@pytest.mark.parametrize("template", ["GemmPipelineProblem", "GemmPipelineProblemBase"])
def test_diff_shows_d3_split_compute_type_before_the_element_wise_ops(drift, template):
    old_at = "#8" if template == "GemmPipelineProblem" else "#6"
    assert {(template, "", "count", "11", "12"),
            (template, f"ComputeDataType_ {old_at}", "parameter", "typename = AsDataType_", "-"),
            (template, "AComputeDataType_ #6", "parameter", "-", "typename = AsDataType_"),
            (template, "BComputeDataType_ #7", "parameter", "-", "typename = BsDataType_")} <= set(drift)
    assert ("features", "split_compute_type", "feature", "false", "true") in drift


def test_diff_shows_d4_hot_loop_and_tail_number_removed(drift):
    t = "UniversalGemmPipelineProblem"
    assert {(t, "", "count", "14", "13"),
            (t, "HasHotLoop_ #7", "parameter", "bool = true", "-"),
            (t, "TailNum_ #8", "parameter", "enum ck_tile::TailNumber = ck_tile::TailNumber::Full", "-"),
            (t, "AComputeDataType_ #9", "parameter", "-", "typename = AsDataType_"),
            ("features", "runtime_hot_loop", "feature", "false", "true")} <= set(drift)


def test_diff_shows_d5_cshuffle_epilogue_problem(drift):
    t = "CShuffleEpilogueProblem"
    assert {(t, "", "count", "22", "24"),
            (t, "MemoryOperation_ #17", "parameter", "enum ck_tile::memory_operation_enum", "-"),
            (t, "TiledMMAPermuteN_ #21", "parameter", "bool = false", "-"),
            (t, "DoubleSmemBuffer_ #21", "parameter", "-", "bool = false"),
            (t, "AComputeDataType_ #22", "parameter", "-", "typename = void"),
            (t, "BComputeDataType_ #23", "parameter", "-", "typename = void"),
            (t, "TilesPacked_ #24", "parameter", "-", "bool = false"),
            ("features", "runtime_memory_operation", "feature", "false", "true")} <= set(drift)


def test_diff_shows_d6_d7_stream_k_moved_and_renamed(drift):
    old, new = "ck_tile/ops/gemm/kernel/", "ck_tile/ops/gemm/kernel/streamk_gemm/"
    assert {("StreamKTilePartitioner", "", "source", f"{old}streamk_gemm_tile_partitioner.hpp",
             f"{new}streamk_gemm_tile_partitioner.hpp"),  # D6
            ("StreamKKernel", "", "source", f"{old}streamk_gemm_kernel.hpp", f"{new}streamk_gemm_kernel.hpp"),
            ("StreamKTilePartitioner", "", "qualname", "ck_tile::StreamKTilePartitioner_v2",
             "ck_tile::StreamKTilePartitioner"),  # D7
            ("StreamKKernel", "", "qualname", "ck_tile::reboot::StreamKKernel", "ck_tile::StreamKKernel"),
            ("StreamKHostArgs", "", "qualname", "ck_tile::reboot::StreamKHostArgs", "ck_tile::StreamKHostArgs")} <= set(drift)


def test_diff_shows_d8_reduction_strategy(drift):
    e = "StreamKReductionStrategy"
    assert {(e, "Reduction #2", "enumerator", "Reduction", "-"),
            (e, "Linear #2", "enumerator", "-", "Linear"),
            (e, "Tree #3", "enumerator", "-", "Tree"),
            ("features", "streamk_tree_reduction", "feature", "false", "true")} <= set(drift)


def test_diff_shows_d9_tdm_pipelines_and_epilogue(drift):
    assert {("GemmPipeline", "COMPUTE_TDM_V1 #11", "enumerator", "-", "COMPUTE_TDM_V1"),
            ("GemmPipeline", "COMPUTE_TDM_V2 #12", "enumerator", "-", "COMPUTE_TDM_V2"),
            ("GemmPipeline", "WAVELET #18", "enumerator", "-", "WAVELET"),
            ("GemmPipeline", "BASIC_ASYNC_V1 #10", "enumerator", "-", "BASIC_ASYNC_V1"),
            ("TdmEpilogue", "", "added", "absent", "template ck_tile::TdmEpilogue"),
            ("features", "tdm_epilogue", "feature", "false", "true")} <= set(drift)


def test_diff_shows_d10_as_a_feature_only(drift):
    # D10 is behaviour: the bwd-weight kernel keeps its four parameters.
    assert ("features", "streamk_conv", "feature", "false", "true") in drift
    assert not [r for r in drift if r[0] == "GroupedConvolutionBackwardWeightKernel"]


def test_diff_command_and_a_profile_against_itself():
    run = CliRunner().invoke(main, ["api", "diff", "ck-2025.11", "ck-2026.06"])
    assert run.exit_code == 0
    lines = run.stdout.splitlines()
    assert lines[0] == f"ck-2025.11 -> ck-2026.06: {len(lines) - 3} differences"
    assert lines[1].split() == ["entry", "parameter", "what", "ck-2025.11", "ck-2026.06", "note"]
    assert diff(a.load_catalog("ck-2026.06"), a.load_catalog("ck-2026.06")) == []
    run = CliRunner().invoke(main, ["api", "diff", "ck-2025.11", "ck-1999.01"])
    assert run.exit_code == 2 and "unknown CK API profile 'ck-1999.01'" in run.stderr
