"""Quantized GEMM variants aquant, rowcolquant and tensor_quant: CK's configs, rules, structure, host model, compiles
(the goldens and the tree comparison with CK's kernels of every quant family are in test_gemm_quant)."""

from __future__ import annotations

import copy
import json
import shutil

import pytest
from click.testing import CliRunner

from ckast import testing
from ckast.check import Toolchain, check_headers, find_ck_include
from ckast.cli import main
from ckast.config import ConfigError, load_data
from ckast.config.ck_quant_configs import expand
from ckast.emit import REGISTRATION, render, run_files, write_outputs
from ckast.output import entry_points_for

from .conftest import ROOT
from .goldens import QUANT_CASES, QUANT_HEADERS
from .kernels import config_of, header_of, squash

MANIFEST = ROOT / "tests" / "data" / "ck_quant_goldens" / "cases.json"
"""CK's golden manifest cases (unchanged), with CK's header names and hashes."""
CASES = {cid: case for cid, case in json.loads(MANIFEST.read_text())["cases"].items()
         if case["module"] in ("gemm_aquant_utils", "gemm_rowcolquant_utils", "gemm_tensor_quant_utils")}
"""The cases of the three families aquant, rowcolquant and tensor_quant."""


def config(case: str, profile: str, **extra):
    return config_of({k: v for k, (v, _) in QUANT_CASES.items()}, case, profile, **extra)


def refusal(**data) -> str:
    with pytest.raises(ConfigError) as caught:
        load_data(dict(kind="gemm", ck_api="ck-2026.06", **data))
    return str(caught.value)


# --- CK's configs, read as they are --------------------------------------------------------------

def test_every_manifest_case_of_the_families_emits_for_ck_2026_06():
    kernels = load_data({"cases": CASES}, {"ck_api": "ck-2026.06"})
    assert len(kernels) == len(CASES) == 24
    emitted = render(kernels)
    assert len({k.name for k in emitted}) == 24  # every case is its own kernel (CK: 24 headers)


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_each_case_is_the_kernel_ck_names(case_id):
    """CK's header name spells family, type, layout, pipeline, schedule, tile and group: ckast's config agrees."""
    case = CASES[case_id]
    [kernel] = load_data(case, {"ck_api": "ck-2026.06"})
    c = kernel.config
    tile = "_".join("x".join(str(getattr(c, f"{p}_{d}")) for d in "mnk") for p in ("tile", "warp", "warp_tile"))
    group = f"_qg1x1x{c.aquant_group_k}" if c.variant == "aquant" else ""
    suffix = "_preshufflequant" if c.preshuffle_aquant else ""
    assert case["config_name"] == (f"gemm_{c.variant}_{c.datatype}_{c.layout}_{c.pipeline}_{c.epilogue}_{c.scheduler}_"
                                   f"{tile}{group}{suffix}")
    assert c.arch == case["arch"] and c.pad_k == (c.variant == "tensor_quant")


def test_a_bare_config_names_its_family_and_targets():
    rowcol = copy.deepcopy(CASES["gemm_rowcolquant_utils::default_fp8_config::gfx942"]["config"])
    bare = dict(rowcol, variant="tensor_quant", gpu_targets=["gfx942", "gfx950"],
                tile_configs=rowcol["tile_configs"] * 2)
    assert [(k["variant"], k["arch"]) for _, k in expand(bare)] == [("tensor_quant", a) for a in
                                                                     ("gfx942",) * 2 + ("gfx950",) * 2]
    assert all(k.config.pad_k for k in load_data(bare, {"ck_api": "ck-2026.06"}))  # CK's tensor quant pads K
    aquant = CASES["gemm_aquant_utils::default_fp8i4_config::gfx942"]["config"]
    [(_, kernel)] = expand(aquant)  # preshuffle_aquant says it is AQuant's
    assert kernel["variant"] == "aquant" and kernel["aquant_group_k"] == 128 and kernel["datatype"] == "fp8i4"


@pytest.mark.parametrize(("change", "path", "message"), [
    (lambda c: c["config"]["quant_groups"][0].update(quant_group_m=2), "config.quant_groups[0].quant_group_m",
     "groups of 1 x 1 x K"),
    (lambda c: c["config"]["quant_groups"][0].update(quant_group_n=2), "config.quant_groups[0].quant_group_n",
     "groups of 1 x 1 x K"),
    (lambda c: c["config"].update(pipelines=["mem"]), "config.pipelines", "unknown key of CK's aquant codegen config"),
    (lambda c: c["config"]["tile_configs"][0].pop("warp_k"), "config.tile_configs[0]", "expected tile_m"),
    (lambda c: c["config"].update(epilogues=[]), "config.epilogues", "expected a non-empty list"),
    (lambda c: c.update(module="gemm_fmha_utils"), "module", "ckast reads the quant families of"),
])
def test_bad_ck_configs_name_the_field(change, path, message):
    case = copy.deepcopy(CASES["gemm_aquant_utils::default_fp8_config::gfx942"])
    change(case)
    with pytest.raises(ConfigError) as caught:
        load_data(case)
    [issue] = caught.value.issues
    assert issue.path == path and message in issue.message


@pytest.mark.parametrize(("change", "path", "message"), [
    (dict(gpu_targets=[]), "gpu_targets", "expected a non-empty list of arch names"),
    (dict(gpu_targets="gfx942"), "gpu_targets", "expected a non-empty list of arch names"),
])
def test_bad_targets_of_a_bare_config_are_named(change, path, message):
    bare = dict(CASES["gemm_rowcolquant_utils::default_fp8_config::gfx942"]["config"], variant="rowcolquant", **change)
    with pytest.raises(ConfigError) as caught:
        load_data(bare)
    [issue] = caught.value.issues
    assert issue.path == path and message in issue.message


def test_an_unknown_key_of_a_manifest_case_is_named():
    case = dict(CASES["gemm_tensor_quant_utils::default_fp8_config::gfx942"], extra=1)
    with pytest.raises(ConfigError) as caught:
        load_data(case)
    [issue] = caught.value.issues
    assert issue.path == "extra" and "unknown key of a manifest case" in issue.message


def test_rowcol_or_tensor_without_its_family_is_refused_on_the_command_line(tmp_path):
    cfg = tmp_path / "ck.json"
    cfg.write_text(json.dumps(CASES["gemm_tensor_quant_utils::default_fp8_config::gfx950"]["config"]))
    run = CliRunner().invoke(main, ["emit", "--config", str(cfg), "-o", str(tmp_path / "out")])
    assert run.exit_code == 2 and not (tmp_path / "out").exists()
    assert run.output.strip() == (f"{cfg}: variant: missing: CK's row-col and tensor quant configs are alike, so "
                                  "name the family; allowed: bquant, abquant, aquant, rowcolquant, tensor_quant")


# --- rules ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("data", "rule"), [
    (dict(variant="aquant", pipeline="compv4"), None),
    (dict(variant="rowcolquant", pipeline="mem", scheduler="interwave"), None),
    (dict(variant="aquant", preshuffle_aquant=True, pipeline="mem"), "aquant.preshuffle_pipeline"),
    (dict(variant="aquant", aquant_group_k=96), "quant.group_divides"),
    (dict(variant="tensor_quant", layout="rrr"), "quant.layout"),
    (dict(variant="aquant", warp_tile_k=16), "quant.warp_tile"),
    (dict(variant="rowcolquant", epilogue="default"), "quant.epilogue"),
    (dict(variant="tensor_quant", persistent=True), "quant.persistent"),
    (dict(variant="aquant", split_k=True), "split_k.unsupported"),
    (dict(variant="aquant", ck_api="ck-2025.11"), "profile.aquant_mem"),
    (dict(variant="aquant", datatype="bf8i4", preshuffle_aquant=True, ck_api="ck-2025.11"), "profile.aquant_int4"),
])
def test_rules_of_the_families(data, rule):
    """Each family's rule by id; a pipeline the family lacks is not among the pipeline knob's choices (no rule)."""
    data = {"ck_api": "ck-2026.06", **data}
    with pytest.raises(ConfigError) as caught:
        load_data(dict(kind="gemm", **data))
    if rule is None:
        [issue] = caught.value.issues
        assert issue.path == "pipeline" and "allowed:" in issue.message
        return
    assert [i.rule for i in caught.value.issues] == [rule]


def test_an_int4_a_takes_the_quant_warp_tiles():
    [kernel] = load_data(dict(kind="gemm", variant="aquant", arch="gfx950", warp_tile_k=64, datatype="bf8i4",
                              ck_api="ck-2026.06"))
    assert kernel.config.warp_tile_k == 64


def test_a_group_beyond_index_t_is_refused_before_it_prints():
    assert "[rule int.index_t]" in refusal(variant="aquant", aquant_group_k=2**31)


def test_data_types_per_family():
    assert "allowed: fp8, bf8" in refusal(variant="rowcolquant", datatype="fp8i4")
    assert "allowed: fp8, bf8, fp8i4, bf8i4" in refusal(variant="aquant", datatype="fp16")
    assert "allowed: fp16" in refusal(variant="standard", datatype="fp8i4")


def test_defaults_are_cks_default_factory_per_arch():
    for arch, warp_tile_k in (("gfx942", 32), ("gfx950", 128)):
        [k] = load_data(dict(kind="gemm", variant="aquant", arch=arch, ck_api="ck-2026.06"))
        c = k.config
        assert (c.datatype, c.pipeline, c.scheduler, c.tile_m, c.tile_n, c.tile_k, c.warp_n, c.warp_tile_k,
                c.aquant_group_k) == ("fp8", "mem", "interwave", 16, 64, 256, 4, warp_tile_k, 128)


# --- structure of the kernel ---------------------------------------------------------------------

def test_kernel_types_follow_cks_headers():
    aquant = squash(header_of(config("aquant_bf8i4_preshufflequant", "ck-2026.06")))
    for text in ("usingADataType=ck_tile::pk_int4_t;", "usingBDataType=ck_tile::bf8_t;",
                 "usingQDataType=ck_tile::bf8_t;",
                 "ck_tile::QuantGroupShape<ck_tile::sequence<1,1,128>>", "ck_tile::AQuantGemmPipelineAgBgCrCompV3<",
                 "ck_tile::BaseGemmPipelineAgBgCrCompV3<BaseProblem>", "ck_tile::QuantType::AQuantGrouped>",
                 "GemmSpatiallyLocalTilePartitioner<TileShape,8,4>", "staticconstexprboolAPreshuffleQuant=true;"):
        assert text in aquant, text
    tensor = squash(header_of(config("tensor_quant", "ck-2026.06")))
    for text in ("ck_tile::GemmRowColTensorQuantPipelineProblem<ADataType,BDataType,AccDataType,AccDataType,TileShape,"
                 "Traits,TransposeC,ComputeDataType,", "usingComputeDataType=void;",
                 "usingAQLayout=ck_tile::tensor_layout::gemm::ColumnMajor;",
                 "ck_tile::GemmTile1DPartitioner<TileShape>", "ck_tile::BaseWeightPreshufflePipelineAGmemBGmemCRegV2<",
                 "staticconstexprboolkPadK=true;", "usingHostArgs=ck_tile::QuantGemmHostArgs;"):
        assert text in tensor, text
    # ck-2025.11: one scale-preshuffle switch, and the compute type spelled out (no void)
    old = squash(header_of(config("tensor_quant", "ck-2025.11")))
    assert "usingComputeDataType=ADataType;" in old and "APreshuffleQuant,PreshuffleB,ALayout" in old


def test_quant_kernels_have_no_dispatcher_wrapper_or_registration():
    kernels = render(load_data([dict(QUANT_CASES["rowcolquant"][0], ck_api="ck-2025.11"),
                                dict(kind="gemm", variant="standard", ck_api="ck-2025.11")]))
    quant = next(k for k in kernels if k.config["variant"] == "rowcolquant")
    assert [p for p, _ in quant.files] == [f"{quant.name}.hpp", f"{quant.name}.cpp"]
    [(path, registration)] = run_files(kernels)
    assert path == REGISTRATION and quant.name not in registration


# --- the host model ------------------------------------------------------------------------------

def test_aquant_launch_passes_its_scales_and_checks_whole_tiles():
    """The launcher builds QuantGemmKernel's arguments from QuantGemmHostArgs (the scale tensors), one launch over
    the output tiles; K not whole K tiles (no pad_k) and split K are refused."""
    u = testing.jit_header(QUANT_HEADERS["aquant", "ck-2026.06"])
    launch, = [e for e in u.launch_gemm(64, 128, 512) if e.kind == "launch"]
    assert (launch["kernel"], launch["quant"], launch["aq"], launch["grid"]) == (
        "QuantGemmKernel", "AQuantGrouped", "aq", (4 * 2, 1, 1))
    with pytest.raises(testing.LaunchError, match="arguments not supported"):
        u.launch_gemm(64, 128, 500)
    with pytest.raises(testing.LaunchError, match="k_batch must be 1"):
        u.launch_gemm(64, 128, 512, 2)


@pytest.mark.parametrize("profile", ["ck-2025.11", "ck-2026.06"])
def test_tensor_quant_launch_takes_both_scales_and_pads_k(profile):
    u = testing.jit_header(QUANT_HEADERS["tensor_quant", profile])
    launch, = [e for e in u.launch_gemm(64, 128, 500) if e.kind == "launch"]  # K padded: any K
    assert (launch["quant"], launch["aq"], launch["bq"], launch["tail"]) == ("TensorQuant", "aq", "bq", "Even")


# --- real CK Tile --------------------------------------------------------------------------------

@pytest.mark.ck_compile
def test_rowcol_and_tensor_quant_compile_against_the_wheel(tmp_path):
    """Row-col quant (gfx942, gfx950) and tensor quant against the wheel's CK Tile, device-only (~25 s)."""
    configs = [dict(QUANT_CASES[c][0], ck_api="ck-2025.11", **extra) for c, extra in
               (("rowcolquant", {}), ("rowcolquant", {"arch": "gfx950", "warp_tile_k": 128}), ("tensor_quant", {}))]
    kernels = render(load_data(configs))
    write_outputs(kernels, tmp_path)
    results = check_headers([tmp_path / k.header for k in kernels], Toolchain.discover(), entry_points_for, parallel=2)
    assert len(results) == 3 and all(r.passed for r in results), "\n".join(r.log for r in results if not r.passed)


HIP5_LINE = "decltype(threadIdx.x) pull_from_lane     = 0;"
"""The one line of the wheel's AQuant block GEMM that HIP 5.x headers reject (their threadIdx.x is a struct; ROCm 6's
is an unsigned property), replaced by the type it names under ROCm 6 for this compile."""


@pytest.mark.ck_compile
def test_aquant_compiles_against_the_wheel_with_rocm6s_thread_index(tmp_path):
    """AQuant on CompV3 (plain and preshuffled scales) against a copy of the wheel's CK Tile whose one HIP-5-only line
    reads as under ROCm 6 (~40 s)."""
    ck = tmp_path / "ck"
    shutil.copytree(find_ck_include(None), ck)
    block = ck / "ck_tile" / "ops" / "gemm_quant" / "block" / "block_universal_gemm_as_aquant_bs_cr.hpp"
    text = block.read_text()
    assert text.count(HIP5_LINE) == 1
    block.write_text(text.replace(HIP5_LINE, "std::uint32_t pull_from_lane = 0;"))
    configs = [dict(QUANT_CASES["aquant_compv3"][0], ck_api="ck-2025.11"),
               dict(kind="gemm", variant="aquant", datatype="bf8", preshuffle_aquant=True, warp_tile_k=64,
                    ck_api="ck-2025.11")]
    kernels = render(load_data(configs))
    write_outputs(kernels, tmp_path / "out")
    results = check_headers([tmp_path / "out" / k.header for k in kernels], Toolchain.discover(ck_include=ck),
                            entry_points_for, parallel=2)
    assert len(results) == 2 and all(r.passed for r in results), "\n".join(r.log for r in results if not r.passed)
