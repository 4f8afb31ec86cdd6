"""CK's own config formats: expanded as CK forms its products, then validated by ckast like any config."""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.config import ConfigError, kernel_objects, load_data
from ckast.config.ck_formats import MAX_KERNELS, CKFormatWarning, expand
from ckast.lower.identity import kernel_name

from .conftest import EXAMPLES

TILE = {"tile_m": [128], "tile_n": [128], "tile_k": [32, 64], "warp_m": [2], "warp_n": [2], "warp_k": [1],
        "warp_tile_m": [32], "warp_tile_n": [32], "warp_tile_k": [16]}
GENERATOR = {  # shaped like CK's default_config.json
    "tile_config": TILE,
    "trait_config": {"pipeline": ["compv3"], "epilogue": ["cshuffle"], "scheduler": ["intrawave"],
                     "pad_m": [False], "pad_n": [False], "pad_k": [False], "persistent": [False, True]},
    "multi_d_config": {"elementwise_ops": ["MultiDAdd", "MultiDMultiply"], "num_d_tensors": [1, 2]},
}
KERNEL_SET = {  # shaped like CK's sample_kernel_config.json
    "_comment": "Sample kernel configuration file for dispatcher",
    "kernel_set_name": "inference_optimized",
    "datatype": {"a": "fp16", "b": "fp16", "c": "fp16", "acc": "fp32"},
    "layout": "rcr",
    "tile_config": {"tile_m": {"values": [64, 128]}, "warp_tile_m": {"values": [32]}},
    "trait_config": {"scheduler": {"values": ["intrawave"]}, "pad_m": {"values": [False, True]}},
    "gpu_targets": ["gfx942", "gfx90a"],
}
CONV_EXAMPLE = EXAMPLES / "ck" / "conv_loader.json"
GEMM_EXAMPLE = EXAMPLES / "ck" / "gemm_default_config.json"


def with_(base: dict, **changes) -> dict:
    data = copy.deepcopy(base)
    data.update(changes)
    return data


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def emit(tmp_path, data: dict):
    cfg = tmp_path / "ck.json"
    cfg.write_text(json.dumps(data))
    out = tmp_path / "out"
    return cfg, out, run("emit", "--config", str(cfg), "-o", str(out))


def test_generator_forms_cks_product_per_variant():
    kernels = [obj for _, obj in expand(with_(GENERATOR, variants=["standard", "multi_d"], layout="rcrr"))]
    standard = [k for k in kernels if k["variant"] == "standard"]
    multi_d = [k for k in kernels if k["variant"] == "multi_d"]
    assert len(standard) == 2 * 2 and len(multi_d) == 2 * 2 * 2 * 2  # tile_k x persistent (x ops x num_d)
    assert all("elementwise_op" not in k and "d_layout" not in k and k["layout"] == "rcr" for k in standard)
    assert {(k["elementwise_op"], k["num_d_tensors"]) for k in multi_d} == {
        (op, n) for op in ("MultiDAdd", "MultiDMultiply") for n in (1, 2)}
    assert all(k["layout"] == "rcr" and k["d_layout"] == "r" for k in multi_d)
    # CK's command-line defaults: the standard variant only (multi_d_config unused), fp16 rcr gfx942 from ckast
    alone = expand(GENERATOR)
    assert len(alone) == 4 and {k["variant"] for _, k in alone} == {"standard"}
    assert not {"datatype", "layout", "arch"} & alone[0][1].keys()


def test_generator_preshuffle_turns_compv3_intrawave_into_preshufflev2():
    trait = {**GENERATOR["trait_config"], "pipeline": ["compv3", "compv4"]}
    pairs = expand(with_(GENERATOR, variants=["preshuffle"], trait_config=trait))
    assert len(pairs) == 4  # the compv4 half is not a preshuffle kernel in CK's generator
    assert all("trait_config.pipeline=compv3" in path for path, _ in pairs)
    traits = {(k["pipeline"], k["scheduler"], k["epilogue"]) for _, k in pairs}
    assert traits == {("preshufflev2", "default", "cshuffle")}
    with pytest.raises(ConfigError, match="expands to no kernels"):
        expand(with_(GENERATOR, variants=["preshuffle"], trait_config={**trait, "pipeline": ["compv4"]}))


def test_kernel_set_format_one_kernel_per_target_with_cks_defaults():
    pairs = kernel_objects(KERNEL_SET)
    assert len(pairs) == 2 * 2 * 2  # targets x tile_m x pad_m
    kernels = [k for _, k in pairs]
    assert {k["arch"] for k in kernels} == {"gfx942", "gfx90a"}
    assert all(k["datatype"] == "fp16" and k["layout"] == "rcr" and k["variant"] == "standard" for k in kernels)
    # omitted leaves take CK's loader defaults, which differ from ckast's (tile_k 64, compv3)
    assert {(k["tile_k"], k["pipeline"]) for k in kernels} == {(32, "compv4")}
    assert not any(key.startswith("_") or key == "kernel_set_name" for k in kernels for key in k)
    assert pairs[0][0] == "product[0] (gpu_targets=gfx942, tile_config.tile_m=64, trait_config.pad_m=false)"


def test_min_max_step_ranges():
    tile = {"tile_m": {"min": 64, "max": 256, "step": 64}, "tile_n": {"min": 1, "max": 3}}
    kernels = [k for _, k in expand(with_(KERNEL_SET, tile_config=tile, gpu_targets=["gfx942"]))]
    assert sorted({k["tile_m"] for k in kernels}) == [64, 128, 192, 256]
    assert sorted({k["tile_n"] for k in kernels}) == [1, 2, 3]
    assert len(kernels) == 4 * 3 * 2  # x pad_m


@pytest.mark.parametrize(("layout", "variant", "expected"), [
    ("rcrr", "multi_d", {"layout": "rcr", "d_layout": "r"}),
    ("rrrc", "multi_d", {"layout": "rrr", "d_layout": "c"}),
    ("rcrc", "standard", {"layout": "rcr"}),  # CK uses the 4th letter for D tensors only
])
def test_four_letter_layout(layout, variant, expected):
    kernel = expand(with_(KERNEL_SET, layout=layout, variant=variant))[0][1]
    assert {k: kernel[k] for k in ("layout", "d_layout") if k in kernel} == expected


@pytest.mark.parametrize(("datatype", "expected"), [
    ({"a": "fp8", "b": "fp8", "c": "fp16", "acc": "fp32"}, "fp8"),
    ({"a": "int8", "b": "int8", "c": "int32", "acc": "int32"}, "int8"),
    ({"a": "bf16", "b": "bf16", "c": "bf16"}, "bf16"),  # acc omitted: CK's fp32
    ("bf16", "bf16"),
])
def test_gemm_datatype_objects(datatype, expected):
    assert {k["datatype"] for _, k in expand(with_(KERNEL_SET, datatype=datatype))} == {expected}


def test_datatype_object_without_a_ckast_datatype_is_refused(tmp_path):
    cfg, out, result = emit(tmp_path, with_(KERNEL_SET, datatype={"a": "fp16", "b": "fp16", "c": "fp32"}))
    assert result.exit_code == 2
    assert f"{cfg}: datatype: fp16/fp16/fp32/fp32 (a/b/c/acc) is no ckast datatype; ckast's: fp16 = " in result.output
    assert not out.exists()


def test_conv_kernel_set_maps_to_conv_knobs():
    with pytest.warns(CKFormatWarning, match=r"occupancy_config\.block_per_cu: not used"):
        pairs = expand(json.loads(CONV_EXAMPLE.read_text()))
    kernels = [k for _, k in pairs]
    assert len(kernels) == 2 * 2 * 2  # tile_k range 32..64 step 32 x warp_tile_k x pipeline
    assert {k["tile_k"] for k in kernels} == {32, 64}
    assert all(k["kind"] == "grouped_conv" and k["variant"] == "forward" and k["ndim_spatial"] == 2
               and k["datatype"] == "fp16" and k["vector_size_a"] == 4 for k in kernels)
    assert not any(key.startswith("_") or key in ("block_per_cu", "ndim") for k in kernels for key in k)
    # CK's conv pads are always true, as ckast's conv kernels pad: the loaded configs hold no pad knob
    assert all(k["pad_m"] is True for k in kernels)
    with pytest.warns(CKFormatWarning):
        assert all(loaded.config.pad_m is None for loaded in load_data(json.loads(CONV_EXAMPLE.read_text())))
    data = with_(json.loads(CONV_EXAMPLE.read_text()), ndim=3, datatype={"input": "bf16", "weight": "bf16",
                                                                          "output": "bf16", "acc": "fp32"})
    del data["occupancy_config"]
    kernel = expand(data)[0][1]
    assert (kernel["ndim_spatial"], kernel["datatype"]) == (3, "bf16")


def test_conv_pad_false_is_refused_by_ckast(tmp_path):
    data = json.loads(CONV_EXAMPLE.read_text())
    data["trait_config"]["pad_m"] = {"values": [False]}
    del data["occupancy_config"]
    cfg, out, result = emit(tmp_path, data)
    assert result.exit_code == 2
    assert ").pad_m: false: CK's conv traits fix kPadM/N/K = true and ckast's conv kernels always pad" in result.output
    assert not out.exists()


@pytest.mark.filterwarnings("ignore::ckast.config.ck_formats.CKFormatWarning")
@pytest.mark.parametrize(("example", "count"), [(GEMM_EXAMPLE, 12), (CONV_EXAMPLE, 8)])
def test_examples_emit_and_generate(tmp_path, example, count):
    for command in (("emit",), ("generate", "-j", "1")):
        out = tmp_path / command[0]
        result = run(*command, "--config", str(example), "-o", str(out))
        assert result.exit_code == 0, result.output
        assert len(json.loads((out / "manifest.json").read_text())["kernels"]) == count


@pytest.mark.parametrize(("section", "key", "leaf", "where"), [
    ("tile_config", "tile_m", {"min": 64, "max": 256, "step": 0}, "tile_config.tile_m.step: 0 must be positive"),
    ("tile_config", "tile_m", {"min": 64, "max": "256"}, 'tile_config.tile_m.max: "256" is not an integer'),
    ("tile_config", "tile_m", 128, "tile_config.tile_m: expected a list"),
    ("tile_config", "tile_m", {"value": [128]}, "tile_config.tile_m: expected a list"),
    ("tile_config", "tile_m", {"values": 128}, "tile_config.tile_m.values: must be a list"),
    ("tile_config", "tile_m", {"values": []}, "tile_config.tile_m: has no values"),
    ("tile_config", "tile_q", {"values": [1]}, "tile_config.tile_q: unknown key"),
    ("trait_config", "pipeline", {"min": 9, "max": 1}, "trait_config.pipeline: has no values"),
])
def test_bad_leaf_exits_2_with_its_path(tmp_path, section, key, leaf, where):
    data = copy.deepcopy(KERNEL_SET)
    data[section][key] = leaf
    cfg, out, result = emit(tmp_path, data)
    assert result.exit_code == 2 and f"{cfg}: {where}" in result.output
    assert not out.exists()


@pytest.mark.parametrize(("changes", "where"), [
    ({"gpu_arch": "gfx942"}, "gpu_arch: unknown top-level key of CK's GEMM kernel-set config"),
    ({"gpu_target": "gfx942"}, "gpu_target: give gpu_targets or gpu_target, not both"),
    ({"datatype": {"a": "fp16", "d": "fp16"}}, "datatype.d: unknown key; allowed: a, b, c, acc"),
    ({"tile_config": [128]}, "tile_config: must be an object"),
])
def test_bad_structure_exits_2_with_its_path(tmp_path, changes, where):
    cfg, out, result = emit(tmp_path, with_(KERNEL_SET, **changes))
    assert result.exit_code == 2 and f"{cfg}: {where}" in result.output
    assert not out.exists()


def test_refused_product_element_names_rule_and_values(tmp_path):
    tile = {**TILE, "tile_m": [128, 96]}  # 96 is no multiple of warp_m x warp_tile_m = 64
    cfg, out, result = emit(tmp_path, with_(GENERATOR, tile_config=tile))
    refusals = [line for line in result.output.splitlines() if "[rule tile.divisible]" in line]
    assert result.exit_code == 2 and len(refusals) == 4  # every tile_k x persistent with tile_m 96
    assert all(line.startswith(f"{cfg}: product[") and "tile_config.tile_m=96," in line for line in refusals)
    assert "tile_m: 96 is not a multiple of warp_m x warp_tile_m = 2 x 32" in refusals[0]
    assert not out.exists()


def test_over_large_product_is_refused_before_expanding(tmp_path):
    tile = {"tile_m": {"min": 1, "max": 10**12}, "tile_n": {"values": [64, 128]}}
    with pytest.raises(ConfigError) as caught:
        expand(with_(KERNEL_SET, tile_config=tile))
    message = str(caught.value)
    assert f"expands to {2 * 10**12 * 2 * 2} kernels" in message and f"limit of {MAX_KERNELS}" in message
    assert "tile_config.tile_m 1000000000000 x tile_config.tile_n 2" in message
    cfg, out, result = emit(tmp_path, with_(KERNEL_SET, tile_config=tile))
    assert result.exit_code == 2 and not out.exists()


def test_cks_unary_elementwise_op_is_refused_by_the_knob_table(tmp_path):
    multi_d = {"elementwise_ops": ["MultiDAdd", "Relu"], "num_d_tensors": [1]}
    cfg, out, result = emit(tmp_path, with_(GENERATOR, variants=["multi_d"], multi_d_config=multi_d))
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 4  # the Relu half of the product, nothing else
    assert all(line.startswith(f"{cfg}: product[") and line.endswith("[rule multi_d.binary_op]")
               and "multi_d_config.elementwise_ops=Relu).elementwise_op: Relu is unary" in line for line in lines)
    assert not out.exists()


@pytest.mark.parametrize("data", [{"kind": "gemm"}, [{"kind": "gemm"}], {"kernels": [{"kind": "gemm"}]}, 3])
def test_ckast_configs_are_not_ck_configs(data):
    assert expand(data) is None


def test_cks_value_spellings_in_leaves_are_read_by_the_shared_table(tmp_path):
    """Leaves in CK's enumerator spellings give the kernels (and names) of ckast's spellings; an ambiguous one is
    refused at its product element, naming what to write."""
    def names(trait: dict) -> list[str]:
        data = with_(KERNEL_SET, trait_config=trait, gpu_targets=["gfx942"])
        return [kernel_name(k.config) for k in load_data(data)]

    ckast = {"pipeline": {"values": ["compv3", "mem"]}, "scheduler": {"values": ["intrawave"]},
             "epilogue": {"values": ["cshuffle"]}}
    ck = {"pipeline": {"values": ["COMPUTE_V3", "Mem"]}, "scheduler": {"values": ["Intrawave"]},
          "epilogue": {"values": ["CShuffle"]}}
    assert names(ck) == names(ckast) and len(names(ck)) == 2 * 2  # x tile_m
    cfg, out, result = emit(tmp_path, with_(KERNEL_SET, trait_config={"pipeline": {"values": ["CompV1"]}}))
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 2 * 2  # targets x tile_m: one line each
    assert all(line.startswith(f"{cfg}: product[") and ').pipeline: "CompV1" is CK\'s dispatcher Pipeline enumerator '
               'for ckast\'s basic_v1 and compv1 alike: write "basic_v1" or "compv1" [rule ck.spelling]' in line
               for line in lines)
    assert not out.exists()


def test_cks_batched_variant_in_both_gemm_formats(tmp_path):
    """CK spells the variant `batched` in its generator's `variants` and a kernel set's `variant`; its trait_config's
    `persistent` true is refused for it by rule, naming the product element."""
    traits = {**GENERATOR["trait_config"], "persistent": [False]}
    pairs = expand(with_(GENERATOR, variants=["batched"], trait_config=traits))
    assert len(pairs) == 2 and {k["variant"] for _, k in pairs} == {"batched"}
    assert {k["variant"] for _, k in kernel_objects(with_(KERNEL_SET, variant="batched"))} == {"batched"}
    cfg, out, result = emit(tmp_path, with_(GENERATOR, variants=["batched"]))
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 2 and not out.exists()  # the persistent half, per tile_k
    assert all(line.startswith(f"{cfg}: product[") and "trait_config.persistent=true).persistent:" in line
               and line.endswith("[rule batched.persistent]") for line in lines)


def test_cks_grouped_variant_in_both_gemm_formats(tmp_path):
    """CK spells the variant `grouped` in its generator's `variants` (GemmVariant.GROUPED) and a kernel set's
    `variant`; persistent and non-persistent both build (CK's grouped kernel has both paths)."""
    pairs = expand(with_(GENERATOR, variants=["grouped"]))
    assert len(pairs) == 4 and {k["variant"] for _, k in pairs} == {"grouped"}
    assert {k["persistent"] for _, k in pairs} == {False, True}
    assert {k["variant"] for _, k in kernel_objects(with_(KERNEL_SET, variant="grouped"))} == {"grouped"}
    _, out, result = emit(tmp_path, with_(GENERATOR, variants=["grouped"]))
    assert result.exit_code == 0, result.output
    assert len(list(out.glob("gemm_fp16_rcr_grouped_*.hpp"))) == 4
