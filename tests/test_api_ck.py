"""`ckast api` against the real CK Tile of the amd-aiter wheel (marked ck_compile: each parse of the tree
takes 5-10 s): ck-2025.11 matches it with no mismatch, `detect` and `emit --ck-include` pick it, a draft
from ck-2026.06 matches it, a copy with one header altered in each way is caught, and the tree parses
with a dispatcher beside it (the wheel has no dispatcher/; tests/test_api_dispatcher.py checks that part)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckast import api as a
from ckast.api.compare import Row
from ckast.check.toolchain import find_ck_include
from ckast.cli import main

from .conftest import ROOT

pytestmark = pytest.mark.ck_compile


@pytest.fixture(scope="module")
def ck() -> Path:
    return find_ck_include()


def check(ck_include: Path, profile: str | Path = "ck-2025.11") -> list[Row]:
    catalog = a.load_catalog(profile)
    return a.report(catalog, a.declarations(ck_include, [catalog]).declarations).rows


def test_ck_2025_11_matches_the_wheels_ck_tile(ck):
    run = CliRunner().invoke(main, ["api", "check", "--ck-include", str(ck), "--ck-api", "ck-2025.11"])
    assert run.exit_code == 0, run.output
    assert run.stdout == (f"ck-2025.11 against {ck}: 136 entries checked (136 CK Tile, 0 dispatcher; 17 not from a CK "
                          "tree: standard library, HIP; 31 dispatcher entries not checked (no ck_tile/dispatcher/)), "
                          "matches\n")


def test_detect_and_emit_pick_ck_2025_11(ck, tmp_path):
    run = CliRunner().invoke(main, ["api", "detect", "--ck-include", str(ck)])
    assert (run.exit_code, run.stdout) == (0, f"{ck}: ck-2025.11\n")
    reports = a.detect(ck)
    assert [r.profile for r in reports] == ["ck-2025.11", "ck-2026.06"] and len(reports[1].rows) == 75
    config = str(ROOT / "examples" / "gemm_standard.json")
    for out, extra in (("plain", []), ("tree", ["--ck-include", str(ck)])):
        run = CliRunner().invoke(main, ["emit", "--config", config, "-o", str(tmp_path / out), *extra])
        assert run.exit_code == 0, run.output
        assert run.stderr == (f"ckast: {ck} matches CK API ck-2025.11\n" if extra else "")
    assert {p.name: p.read_bytes() for p in (tmp_path / "plain").rglob("*.hpp")} == \
        {p.name: p.read_bytes() for p in (tmp_path / "tree").rglob("*.hpp")}
    run = CliRunner().invoke(main, ["emit", "--config", config, "-o", str(tmp_path / "new"), "--ck-api", "ck-2026.06",
                                    "--ck-include", str(ck)])
    assert run.exit_code == 2 and run.stderr.splitlines()[:2] == [
        f"--ck-api ck-2026.06 does not match {ck}, which matches ck-2025.11: leave out --ck-api (--ck-include picks "
        "ck-2025.11) or pass --ck-api ck-2025.11; ck-2026.06's mismatches:",
        f"ck-2026.06 against {ck}: 153 entries checked (153 CK Tile, 0 dispatcher; 17 not from a CK tree: standard "
        "library, HIP; 31 dispatcher entries not checked (no ck_tile/dispatcher/)), 75 mismatches"]
    run = CliRunner().invoke(main, ["emit", "--config", str(ROOT / "examples" / "conv_ck2026.json"), "-o",
                                    str(tmp_path / "new"), "--ck-include", str(ck)])
    assert run.exit_code == 2
    assert run.stderr.splitlines()[0] == f"ckast: {ck} matches CK API ck-2025.11"
    assert run.stderr.splitlines()[1].endswith(f"kernels[0].ck_api: ck-2026.06 is not the API profile of --ck-include "
                                               f"{ck} (ck-2025.11)")
    run = CliRunner().invoke(main, ["generate", "--rule-set", "tiny", "--arch", "gfx942", "--datatype", "fp16",
                                    "--ndim", "2", "-o", str(tmp_path / "lib"), "--ck-include", str(ck)])
    assert run.exit_code == 0, run.output
    assert '"ck_api": "ck-2025.11"' in (tmp_path / "lib" / "manifest.json").read_text()


def test_draft_from_ck_2026_06_matches_the_wheels_ck_tile(ck, tmp_path):
    out = tmp_path / "ck-wheel.toml"
    run = CliRunner().invoke(main, ["api", "new", "ck-wheel", "--ck-include", str(ck), "--from", "ck-2026.06",
                                    "-o", str(out)])
    assert run.exit_code == 0, run.output
    assert "  templates.UniversalGemmPipelineProblem: count, parameter, absent" in run.stdout.splitlines()
    assert check(ck, out) == []


GEMM_PROBLEM = "ck_tile/ops/gemm/pipeline/gemm_pipeline_problem.hpp"
ALIAS_TAIL = """          bool FixedVectorSize_     = false,
          index_t VectorSizeA_      = 1,
          index_t VectorSizeB_      = 1>
using GemmPipelineProblem"""
ALTERATIONS = {
    "parameter added": [("ck_tile/ops/gemm/pipeline/tile_gemm_shape.hpp", "bool PermuteB_ = false>",
                         "bool PermuteB_ = false,\n          bool PermuteC_ = false>")],
    "parameter removed": [(GEMM_PROBLEM, ALIAS_TAIL, ALIAS_TAIL.replace("          bool FixedVectorSize_     = false,\n", "")),
                          (GEMM_PROBLEM, "BElementWise_,\n                                                    FixedVectorSize_,",
                           "BElementWise_,\n                                                    false,")],
    "parameters reordered": [(GEMM_PROBLEM, "          typename ComputeDataType_ = AsDataType_,\n" + ALIAS_TAIL,
                              ALIAS_TAIL.replace("          bool FixedVectorSize_     = false,\n",
                                                 "          bool FixedVectorSize_     = false,\n"
                                                 "          typename ComputeDataType_ = AsDataType_,\n"))],
    "kind changed": [("ck_tile/ops/grouped_convolution/utils/grouped_convolution_utils.hpp",
                      "index_t NumGroupsToMerge_ = 1,", "long_index_t NumGroupsToMerge_ = 1,")],
    "default changed": [("ck_tile/ops/epilogue/cshuffle_epilogue.hpp", "index_t BlockedXDLN_PerWarp_ = 1>",
                         "index_t BlockedXDLN_PerWarp_ = 2>")],
    "enumerator renamed": [("ck_tile/core/arch/arch.hpp", "    atomic_max,\n", "    atomic_maximum,\n"),
                           ("ck_tile/ops/common/utils.hpp", "memory_operation_enum::atomic_max>",
                            "memory_operation_enum::atomic_maximum>")],
    "template removed": [("ck_tile/ops/elementwise/unary_element_wise_operation.hpp", "struct Compose\n",
                          "struct Composite\n"),
                         ("ck_tile/ops/elementwise/unary_element_wise_operation.hpp", "CK_TILE_HOST_DEVICE Compose(",
                          "CK_TILE_HOST_DEVICE Composite(")],
}
EXPECTED = {
    "parameter added": [("ck_tile::TileGemmShape", "", "count", "5", "6"),
                        ("ck_tile::TileGemmShape", "PermuteC_ #6", "parameter", "-", "bool = false")],
    "parameter removed": [("ck_tile::GemmPipelineProblem", "", "count", "11", "10"),
                          ("ck_tile::GemmPipelineProblem", "FixedVectorSize_ #9", "parameter", "bool = false", "-")],
    "parameters reordered": [("ck_tile::GemmPipelineProblem", "FixedVectorSize_ #8", "order", "#9", "#8")],
    "kind changed": [("ck_tile::GroupedConvTraits", "NumGroupsToMerge_ #10", "kind", "ck_tile::index_t",
                      "ck_tile::long_index_t (long)")],
    "default changed": [("ck_tile::CShuffleEpilogueProblem", "BlockedXDLN_PerWarp_ #22", "default", "1", "2")],
    "enumerator renamed": [("ck_tile::memory_operation_enum", "atomic_max #3", "enumerator", "atomic_max",
                            "atomic_maximum")],
    "template removed": [("ck_tile::element_wise::Compose", "", "missing",
                          "class template in ck_tile/ops/elementwise.hpp", "not declared")],
}


@pytest.fixture(scope="module")
def ck_copy(ck, tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("ck") / "include"
    shutil.copytree(ck, copy)
    return copy


def test_ck_tile_and_a_dispatcher_parse_together(ck_copy):
    """The wheel's CK Tile with a dispatcher beside it, as in a CK checkout (rendered from the catalog: the
    wheel has none): one parse checks both parts, CK Tile first and as without the dispatcher."""
    from .test_api_dispatcher import dispatcher_catalog, render

    dispatcher = ck_copy.parent / "dispatcher" / "include"
    render(dispatcher_catalog("ck-2025.11"), dispatcher)
    try:
        found = a.report(a.load_catalog("ck-2025.11"),
                         a.declarations(ck_copy, [a.load_catalog("ck-2025.11")]).declarations)
    finally:
        shutil.rmtree(dispatcher.parent)
    assert (found.rows, found.tile, found.dispatcher, found.unchecked) == ([], 136, 31, 0)


@pytest.mark.parametrize("case", list(ALTERATIONS))
def test_an_altered_header_is_caught(ck_copy, case):
    originals = {}
    try:
        for header, old, new in ALTERATIONS[case]:
            path = ck_copy / header
            originals.setdefault(path, path.read_text())
            text = path.read_text()
            assert text.count(old) == 1, (header, old)
            path.write_text(text.replace(old, new))
        found = [(r.entity, r.item, r.what, r.a, r.b) for r in check(ck_copy)]
    finally:
        for path, text in originals.items():
            path.write_text(text)
    assert found == EXPECTED[case]
