"""CK's quant GEMM goldens (tests/ck_goldens.py, tests/data/ck_quant_goldens/): the 140 cases and 109 kernel
trees, the tool that extracts them, and ckast's standard GEMM against kernels of CK's own GEMM generator."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ckast.catalog import load_profile
from ckast.variants import lower_kernel

from .ck_goldens import DATA, compare_case, field_table, load_goldens, main
from .ck_trees import ProfileDifference, compare, tree_of_ast
from .goldens import GEMM_CASES
from .kernels import config_of

T = lambda name, *args: {"template": name, "args": list(args)}  # noqa: E731


TILE = dict(tile_m=128, tile_n=128, warp_m=2, warp_n=2, warp_k=1)
CK_GEMMS = {  # CK's GEMM generator (its tripwire goldens) -> ckast's standard GEMM config for the same kernel
    "gemm_fp8_rcr_compv4_cshuffle_intrawave_False_False_False_False_128x128x64_2x2x1_32x32x16":
        dict(GEMM_CASES["standard"], datatype="fp8", pipeline="compv4", tile_k=64, warp_tile_m=32, warp_tile_n=32,
             warp_tile_k=16, **TILE),
    "gemm_fp16_rcr_compv4_cshuffle_intrawave_False_False_False_False_128x128x32_2x2x1_16x16x16":
        dict(GEMM_CASES["standard"], datatype="fp16", pipeline="compv4", tile_k=32, warp_tile_m=16, warp_tile_n=16,
             warp_tile_k=16, **TILE),
    "gemm_bf16_rrr_compv4_cshuffle_intrawave_False_False_False_False_128x128x32_2x2x1_16x16x16":
        dict(GEMM_CASES["standard"], datatype="bf16", layout="rrr", pipeline="compv4", tile_k=32, warp_tile_m=16,
             warp_tile_n=16, warp_tile_k=16, **TILE),
}


@pytest.mark.parametrize("name", sorted(CK_GEMMS))
def test_standard_gemm_matches_ck_gemm_generator(name):
    """ckast's standard GEMM kernel type equals CK's generator's, argument for argument (it once left the
    epilogue's DoubleSmemBuffer_ at false where CK binds the pipeline's, true with compv4)."""
    profile = load_profile("ck-2026.06")
    ck = json.loads((DATA / "trees.json").read_text())["tripwire"][name]
    ours = tree_of_ast(lower_kernel(config_of(GEMM_CASES, CK_GEMMS[name], "ck-2026.06"), profile).header)
    result = compare(ck, ours, [], profile=profile)
    assert result.ok, result.report()


def test_a_changed_knob_shows_up_at_its_path():
    profile = load_profile("ck-2026.06")
    name = min(CK_GEMMS)
    ck = json.loads((DATA / "trees.json").read_text())["tripwire"][name]
    other = tree_of_ast(lower_kernel(config_of(GEMM_CASES, dict(CK_GEMMS[name], warp_tile_k=32), "ck-2026.06"),
                                     profile).header)
    paths = {d.path for d in compare(ck, other, [], profile=profile).unexplained}
    assert "ck_tile::GemmKernel/0/ck_tile::GemmSpatiallyLocalTilePartitioner/0/ck_tile::TileGemmShape/2/ck_tile::sequence/2" in paths
    assert "ck_tile::GemmKernel/2/ck_tile::CShuffleEpilogue/0/ck_tile::CShuffleEpilogueProblem/14" in paths


# --- CK's golden data ------------------------------------------------------------------------------

def test_goldens_hold_every_case_and_say_where_they_come_from():
    g = load_goldens()
    assert len(g.cases) == 140
    assert g.source["repo"] == "ROCm/rocm-libraries" and g.source["commit"] == "ea607ecdb59e970dc748d4848363b800334ba5c6"
    assert Counter(c.module for c in g.cases.values()) == {
        "gemm_abquant_utils": 16, "gemm_aquant_utils": 16, "gemm_bquant_utils": 38, "gemm_rowcolquant_utils": 4,
        "gemm_tensor_quant_utils": 4, "grouped_gemm_abquant_utils": 12, "grouped_gemm_aquant_utils": 12,
        "grouped_gemm_bquant_utils": 38}
    assert len({c.config_name for c in g.cases.values()}) == 109
    for cid, c in g.cases.items():
        assert cid == f"{c.module}::{c.factory}::{c.arch}"


QUANT_TYPES = {"abquant": "ABQuantGrouped", "aquant": "AQuantGrouped", "bquant": "BQuantGrouped",
               "rowcolquant": "RowColQuant", "tensor_quant": "TensorQuant"}


def test_every_golden_kernel_has_a_tree_that_agrees_with_its_config():
    g = load_goldens()
    assert set(g.trees) == {c.config_name for c in g.cases.values()}
    for c in g.cases.values():
        tree = g.trees[c.config_name]
        family = c.module.removeprefix("grouped_").removeprefix("gemm_").removesuffix("_utils")
        assert tree["template"] == "ck_tile::QuantGemmKernel", c.case_id
        assert tree["args"][3] == f"ck_tile::QuantType::{QUANT_TYPES[family]}", c.case_id
        t = c.config["tile_configs"][0]
        shape = tree["args"][0]["args"][0]
        assert shape == T("ck_tile::TileGemmShape", *(T("ck_tile::sequence", *(t[f"{p}_{d}"] for d in "mnk"))
                                                      for p in ("tile", "warp", "warp_tile"))), c.case_id


# --- the extraction tool -------------------------------------------------------------------------

def _tool():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "tools" / "ck_quant_goldens.py"
    spec = importlib.util.spec_from_file_location("ck_quant_goldens", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tool_extracts_only_headers_matching_the_manifest_sha(tmp_path):
    import hashlib

    tool = _tool()
    text = "struct S { using Kernel = ck_tile::QuantGemmKernel<int, 1>; };\n"
    (tmp_path / "good.hpp.golden").write_text(text)
    (tmp_path / "edited.hpp.golden").write_text(text.replace("1", "2"))
    sha = hashlib.sha256(text.encode()).hexdigest()
    trees, problems = tool.read_kernels(tmp_path, {"good": sha, "edited": sha}, ["good", "edited", "absent"])
    assert trees == {"good": T("ck_tile::QuantGemmKernel", "int", 1)}
    assert [p.split(":")[0] for p in problems] == ["edited", "absent"]
    assert "sha256 differs" in problems[0]


def test_the_data_readme_lists_every_config_field_and_value():
    assert field_table(load_goldens()) in (DATA / "README.md").read_text()


def test_compare_case_takes_a_case_id_and_ckast_text_ast_or_tree():
    g = load_goldens()
    case_id = "gemm_rowcolquant_utils::default_fp8_config::gfx942"
    tree = g.trees[g.cases[case_id].config_name]
    assert compare_case(case_id, tree).ok
    other = json.loads(json.dumps(tree).replace('"ck_tile::fp8_t"', '"ck_tile::bf8_t"'))
    result = compare_case(g.cases[case_id], other)
    assert not result.ok and all(d.ck == "ck_tile::fp8_t" and d.ckast == "ck_tile::bf8_t" for d in result.unexplained)
    text = "namespace ns { struct S { using Kernel = ck_tile::QuantGemmKernel<int>; }; }"
    assert [d.path for d in compare_case(case_id, text).unexplained][:2] == ["ck_tile::QuantGemmKernel/0",
                                                                              "ck_tile::QuantGemmKernel/1"]


def test_the_command_line_prints_a_case_tree_or_a_report(tmp_path, capsys):
    case_id = "gemm_tensor_quant_utils::default_bf8_config::gfx950"
    assert main([case_id]) == 0
    assert json.loads(capsys.readouterr().out)["template"] == "ck_tile::QuantGemmKernel"
    header = tmp_path / "k.hpp"
    header.write_text("struct S { using Kernel = ck_tile::QuantGemmKernel<int>; };")
    assert main([case_id, str(header)]) == 1
    assert "unexplained: ck_tile::QuantGemmKernel/0" in capsys.readouterr().out
    assert main(["no::such::case"]) == 2


def test_the_tool_writes_nothing_when_a_header_is_damaged(tmp_path, capsys):
    import hashlib

    tool = _tool()
    golden, out = tmp_path / "golden", tmp_path / "out"
    (golden / "hpp").mkdir(parents=True)
    text = "struct S { using Kernel = ck_tile::QuantGemmKernel<int, 1>; };\n"
    case = {"module": "m", "factory": "f", "arch": "gfx942", "config_name": "k", "config": {},
            "sha256": hashlib.sha256(text.encode()).hexdigest()}
    (golden / "manifest.json").write_text(json.dumps({"arches": ["gfx942"], "modules": ["m"], "cases": {"m::f::gfx942": case}}))
    (golden / "hpp" / "k.hpp.golden").write_text(text + " ")
    assert tool.main([str(golden), "--out", str(out)]) == 2
    assert "k: sha256 differs" in capsys.readouterr().out and not out.exists()
    (golden / "hpp" / "k.hpp.golden").write_text(text)
    assert tool.main([str(golden), "--out", str(out)]) == 0
    assert json.loads((out / "trees.json").read_text())["trees"] == {"k": T("ck_tile::QuantGemmKernel", "int", 1)}
    assert tool.main([str(tmp_path / "nowhere")]) == 2
