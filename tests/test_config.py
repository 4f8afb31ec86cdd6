"""Config validation: JSON paths, allowed values, defaults, scope of knobs."""

from __future__ import annotations

import pytest

from ckast.config import ConfigError, as_dict, load_data


def issues(data):
    with pytest.raises(ConfigError) as info:
        load_data(data)
    return info.value.lines()


def test_gemm_defaults():
    cfg = as_dict(load_data({"kind": "gemm"})[0].config)
    assert cfg["pipeline"] == "compv3" and cfg["tile_k"] == 64 and cfg["pad_m"] is False
    assert "vector_size_a" not in cfg


def test_conv_defaults_follow_the_generator():
    cfg = load_data({"kind": "grouped_conv", "ndim_spatial": 3})[0].config
    assert (cfg.pipeline, cfg.double_smem_buffer, cfg.layout) == ("compv4", True, "ndhwgc")
    assert (cfg.vector_size_a, cfg.vector_size_b, cfg.vector_size_c) == (4, 8, 8)
    assert load_data({"kind": "grouped_conv", "pipeline": "compv3"})[0].config.double_smem_buffer is False


def test_three_file_shapes_and_paths():
    assert issues([{"kind": "gemm", "pipeline": "x"}]) == [
        '[0].pipeline: "x" is not allowed; allowed: mem, compv3, compv4, compv5, preshufflev2'
    ]
    assert issues({"kernels": [{"kind": "gemm"}, {"kind": "gemm", "tile_m": 0}]}) == [
        "kernels[1].tile_m: 0 must be at least 1 [rule tile.positive]"
    ]
    assert issues({"kind": "gemm", "pad_m": "False"}) == ['pad_m: "False" is not true or false']


def test_every_problem_is_reported():
    lines = issues({"kernels": [{"kind": "gemm", "tiel_m": 1, "scheduler": 3}, {"kind": "gemm", "vector_size_a": 4}, {}]})
    assert lines == [
        "kernels[0].tiel_m: unknown knob; did you mean 'tile_m'?",
        'kernels[0].scheduler: 3 is not a string',
        "kernels[1].vector_size_a: does not apply to gemm standard; only to forward/bwd_data/bwd_weight",
        "kernels[2].kind: is required; allowed: gemm, grouped_conv",
    ]


def test_conv_layout_must_match_ndim():
    assert issues({"kind": "grouped_conv", "ndim_spatial": 1, "layout": "nhwgc"}) == [
        'layout: "nhwgc" is not allowed; allowed: nwgc'
    ]


def test_cli_default_profile_is_overridable_but_explicit_wins():
    loaded = load_data([{"kind": "gemm"}, {"kind": "gemm", "ck_api": "ck-2025.11"}], {"ck_api": "ck-2026.06"})
    assert [k.config.ck_api for k in loaded] == ["ck-2026.06", "ck-2025.11"]


def test_empty_and_malformed():
    assert issues([]) == ["<root>: no kernels in the config"]
    assert issues(3) == ['<root>: expected a kernel object, a list of them, or {"kernels": [...]}']


def test_explicit_value_is_checked_even_when_its_default_depends_on_a_bad_field():
    assert issues({"kind": "gemm", "pipeline": "x", "double_smem_buffer": "yes"}) == [
        'pipeline: "x" is not allowed; allowed: mem, compv3, compv4, compv5, preshufflev2',
        'double_smem_buffer: "yes" is not true or false',
    ]


def test_batched_takes_the_gemm_knobs_but_not_persistent_nor_multi_d_ones():
    cfg = load_data({"kind": "gemm", "variant": "batched", "pad_m": True, "split_k": True})[0].config
    assert (cfg.variant, cfg.pad_m, cfg.split_k, cfg.persistent) == ("batched", True, True, False)
    assert issues({"kind": "gemm", "variant": "batched", "persistent": True}) == [
        "persistent: CK's BatchedGemmKernel launches one block per tile, batch and K split and has no persistent "
        "grid; set persistent to false [rule batched.persistent]"]
    assert issues({"kind": "gemm", "variant": "batched", "num_d_tensors": 2}) == [
        "num_d_tensors: does not apply to gemm batched; only to multi_d"]
    assert issues({"kind": "gemm", "variant": "batch"})[0].startswith(
        'variant: "batch" is not allowed; allowed: standard, preshuffle, multi_d, batched')


def test_batched_and_standard_kernels_of_one_config_share_cks_registry_key():
    """CK's KernelKey has no batched field, so a run cannot hold both (rule registry.key_unique)."""
    from ckast.emit import render

    with pytest.raises(ConfigError, match=r"split_k or batched.*\[rule registry.key_unique\]"):
        render(load_data([{"kind": "gemm", "variant": v} for v in ("standard", "batched")]))
    assert len(render(load_data([{"kind": "gemm", "variant": "batched"}, {"kind": "gemm", "tile_k": 32}]))) == 2


def test_grouped_takes_the_gemm_knobs_persistent_included_but_not_multi_d_ones():
    cfg = load_data({"kind": "gemm", "variant": "grouped", "pad_k": True, "split_k": True, "persistent": True})[0].config
    assert (cfg.variant, cfg.pad_k, cfg.split_k, cfg.persistent) == ("grouped", True, True, True)
    assert issues({"kind": "gemm", "variant": "grouped", "num_d_tensors": 2}) == [
        "num_d_tensors: does not apply to gemm grouped; only to multi_d"]
    assert issues({"kind": "gemm", "variant": "grouped", "streamk_reduction": "linear"})[0].startswith(
        "streamk_reduction: does not apply to gemm grouped")
    assert issues({"kind": "gemm", "variant": "groupped"})[0].startswith(
        'variant: "groupped" is not allowed; allowed: standard, preshuffle, multi_d, batched, stream_k, grouped')


def test_grouped_and_standard_kernels_of_one_config_have_distinct_registry_keys():
    """CK's KernelKey holds `signature.grouped`: a run may hold a grouped kernel beside its standard twin."""
    from ckast.emit import render

    kernels = render(load_data([{"kind": "gemm", "variant": v} for v in ("standard", "grouped")]))
    assert sorted(k.config["variant"] for k in kernels) == ["grouped", "standard"]
