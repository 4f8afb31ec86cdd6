"""Arch data and validation rules: one invalid config per rule, each refused with that rule's id."""

from __future__ import annotations

import pytest

from ckast.arch import ARCH_NAMES, RULES, arch_spec
from ckast.config import ConfigError, load_data

BASE = {"kind": "gemm", "datatype": "fp16", "layout": "rcr"}
INVALID = {
    "tile.positive": {"tile_m": 0},
    "tile.minimum": {"tile_m": 8, "warp_m": 1, "warp_tile_m": 4, "warp_n": 1, "warp_tile_n": 64},
    "tile.divisible": {"tile_m": 96},
    "waves.supported": {"warp_m": 4, "warp_n": 4, "tile_m": 256, "tile_n": 256, "tile_k": 32},
    "waves.groups": {"layout": "rrr", "num_wave_groups": 2},
    "int.index_t": {"num_wave_groups": 2**31},
    "warp_tile.supported": {"warp_tile_k": 64},
    "lds.capacity": {"tile_k": 256},
    "trait.combination": {"scheduler": "interwave"},
    "preshuffle.pipeline": {"pipeline": "preshufflev2"},
    "preshuffle.vector_load": {"variant": "preshuffle", "tile_m": 64, "warp_tile_k": 8},
    "preshuffle.m_decomposition": {"variant": "preshuffle", "tile_k": 8},
    "wmma.warp_tile_mn": {"arch": "gfx1100", "warp_m": 2, "warp_n": 4, "tile_n": 256},
    "wmma.fp32": {"arch": "gfx1100", "datatype": "fp32", "warp_m": 2, "warp_n": 4, "warp_tile_m": 16,
                  "warp_tile_n": 16, "warp_tile_k": 16},
    "preshuffle.double_buffer": {"variant": "preshuffle", "double_smem_buffer": False},
    "preshuffle.layout": {"variant": "preshuffle", "layout": "rrr"},
    "preshuffle.warp_tile_n": {"variant": "preshuffle", "warp_tile_m": 64, "warp_tile_n": 4},
    "multi_d.d_layout": {"variant": "multi_d", "d_layout": "c"},
    "multi_d.binary_op": {"variant": "multi_d", "elementwise_op": "Relu"},
    "multi_d.epilogue": {"variant": "multi_d", "epilogue": "default"},
    "split_k.unsupported": {"variant": "multi_d", "split_k": True},
    "batched.persistent": {"variant": "batched", "persistent": True},
    "split_k.epilogue": {"epilogue": "default", "split_k": True},
    "pipeline.lds_buffering": {"pipeline": "compv4", "double_smem_buffer": False},
    "stream_k.epilogue": {"variant": "stream_k", "epilogue": "default"},
    "stream_k.pipeline": {"variant": "stream_k", "pipeline": "compv5"},
    "stream_k.arch": {"variant": "stream_k", "arch": "gfx908"},
    "profile.streamk_reduction": {"variant": "stream_k", "streamk_reduction": "tree", "ck_api": "ck-2025.11"},
    "quant.arch": {"variant": "bquant", "datatype": "mx_bf16bf8", "pipeline": "microscale", "arch": "gfx942"},
    "quant.layout": {"variant": "bquant", "datatype": "fp8", "layout": "rrr"},
    "quant.pipeline": {"variant": "bquant", "datatype": "fp8", "pipeline": "microscale"},
    "quant.warp_tile": {"variant": "bquant", "datatype": "fp8", "warp_tile_k": 16},
    "quant.group_divides": {"variant": "bquant", "datatype": "fp8", "bquant_group_n": 128},
    "quant.preshuffle_b": {"variant": "bquant", "datatype": "fp8", "preshuffle_b": True},
    "profile.abquant": {"variant": "abquant", "datatype": "fp8", "ck_api": "ck-2025.11"},
    "quant.permute_n": {"variant": "abquant", "datatype": "fp8", "ck_api": "ck-2026.06", "pipeline": "preshuffleb",
                        "warp_m": 2, "warp_n": 2, "warp_tile_k": 64, "permute_n": True},
    "profile.bq_layout": {"variant": "bquant", "datatype": "fp8", "ck_api": "ck-2025.11", "bq_layout": "r"},
    "profile.cast_policy": {"variant": "bquant", "datatype": "fp8", "ck_api": "ck-2025.11",
                            "b_cast_policy": "before_lds_write"},
    "quant.epilogue": {"variant": "tensor_quant", "datatype": "fp8", "epilogue": "default"},
    "quant.persistent": {"variant": "rowcolquant", "datatype": "fp8", "persistent": True},
    "aquant.schedule": {"variant": "aquant", "datatype": "fp8", "scheduler": "intrawave", "ck_api": "ck-2025.11"},
    "aquant.preshuffle_pipeline": {"variant": "aquant", "datatype": "fp8", "preshuffle_aquant": True,
                                   "pipeline": "mem", "scheduler": "interwave", "ck_api": "ck-2026.06"},
    "profile.aquant_mem": {"variant": "aquant", "datatype": "fp8", "ck_api": "ck-2025.11"},
    "profile.aquant_int4": {"variant": "aquant", "datatype": "fp8i4", "pipeline": "compv3", "scheduler": "intrawave",
                            "ck_api": "ck-2025.11"},
    "profile.grouped_quant_persistent": {"variant": "bquant", "datatype": "fp8", "grouped": True, "persistent": False,
                                         "ck_api": "ck-2025.11"},
    "profile.grouped_quant_type": {"variant": "aquant", "datatype": "fp8", "pipeline": "compv3", "grouped": True,
                                   "ck_api": "ck-2025.11"},
    "grouped_quant.double_smem_buffer": {"variant": "abquant", "datatype": "fp8", "pipeline": "preshuffleb",
                                         "grouped": True, "ck_api": "ck-2026.06"},
}
"""GEMM cases: changes to BASE."""

CONV = {"kind": "grouped_conv", "variant": "forward", "pipeline": "compv3"}
NEW = {"ck_api": "ck-2026.06"}
DW = {"kind": "grouped_conv", "variant": "forward_depthwise", **NEW}
CONV_INVALID = {
    "profile.pipeline": dict(CONV, pipeline="basic_v1"),
    "profile.explicit_gemm": dict(CONV, explicit_gemm=True, specialization="filter1x1_stride1_pad0"),
    "profile.conv_lds_policy": dict(CONV, lds_policy="conv"),
    "profile.streamk_conv": dict(CONV, variant="bwd_weight", streamk_enabled=True),
    "profile.depthwise": {"kind": "grouped_conv", "variant": "forward_depthwise"},
    "profile.backward_specialization": dict(CONV, variant="bwd_data", specialization="filter3x3"),
    "profile.warp_gemm": dict(CONV, datatype="fp32", tile_k=32, warp_tile_k=8),
    "profile.conv_pipeline": dict(CONV, pipeline="compv6"),
    "conv.lds_policy": dict(CONV, **NEW, pipeline="compv4", lds_policy="conv"),
    "conv.backward_pipeline": dict(CONV, variant="bwd_data", pipeline="compv5"),
    "conv.groups_to_merge": dict(CONV, num_groups_to_merge=256),
    "conv.vector_width": dict(CONV, vector_size_a=6),
    "conv.vector_c": dict(CONV, tile_m=64, tile_n=20, warp_m=1, warp_n=1, warp_tile_m=64, warp_tile_n=4),
    "conv.vector_per_thread": dict(CONV, tile_m=96, warp_m=1, warp_n=4, vector_size_a=16),
    "compv6.loads_per_thread": dict(CONV, pipeline="compv6", tile_m=16, tile_n=64, tile_k=16, warp_m=1, warp_n=4,
                                    warp_tile_m=16, warp_tile_n=16, warp_tile_k=16),
    "conv.transpose_vector": dict(CONV, variant="bwd_weight", vector_size_a=4),
    "atomic.vector_c": dict(CONV, variant="bwd_weight", vector_size_c=16),
    "explicit_gemm.requirements": dict(CONV, **NEW, explicit_gemm=True),
    "streamk.exclusive": dict(CONV, **NEW, variant="bwd_weight", streamk_enabled=True, two_stage=True),
    "streamk.arch": dict(CONV, **NEW, variant="bwd_weight", streamk_enabled=True, arch="gfx1100", warp_m=2,
                         warp_n=4, warp_tile_m=16, warp_tile_n=16, warp_tile_k=16),
    "depthwise.filter": dict(DW, filt=4),
    "depthwise.vectors": dict(DW, out_vec=3),
    "depthwise.sub_tile": dict(DW, sub_w=16),
    "depthwise.stride_w": dict(DW, str_w=3),
    "depthwise.pad_w": dict(DW, pad_w=0),
    "depthwise.sub_tiles": dict(DW, tile_h=16, tile_w=16),
    "depthwise.nbatch": dict(DW, sub_h=2, sub_w=2, nbatch=3),
    "depthwise.in_vector": dict(DW, in_vec=4, sub_w=2),
    "depthwise.lds_row": dict(DW, tile_h=4, tile_w=128, sub_w=16, pad_w=1),
    "depthwise.lds_capacity": dict(DW, datatype="fp32", tile_w=64, tile_h=64, sub_h=8, sub_w=8, str_h=2, str_w=2,
                                   in_vec=8),
}
"""Conv cases: whole configs (ck-2025.11 unless they set ck_api)."""
DEPTHWISE_VALID = [(8, 8, 3, 1, 1, 1, 1, 8, 2, 2, 2, 2), (16, 16, 3, 2, 2, 1, 1, 2, 1, 4, 8, 8),
                   (14, 28, 3, 2, 2, 1, 1, 1, 2, 4, 8, 8), (32, 32, 3, 2, 2, 1, 1, 1, 2, 8, 8, 8),
                   (8, 8, 5, 1, 1, 2, 2, 1, 1, 1, 1, 1), (32, 32, 5, 1, 1, 2, 2, 4, 4, 4, 8, 8)]
"""Some of the depthwise instances CK's profiler ships (tile_h, tile_w, filt, str_h, str_w, pad_h, pad_w, nbatch,
sub_h, sub_w, in_vec, out_vec): the depthwise rules must accept them, for fp16 and fp32."""


def refused_rules(change: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_data(dict(BASE, **change))
    return [issue.rule for issue in info.value.issues]


def error_lines(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_data(data)
    return info.value.lines()


@pytest.mark.parametrize("rule_id", sorted(INVALID))
def test_each_rule_refuses_its_config(rule_id):
    assert rule_id in refused_rules(INVALID[rule_id])


def refused_conv(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_data(data)
    return [issue.rule for issue in info.value.issues]


@pytest.mark.parametrize("rule_id", sorted(CONV_INVALID))
def test_each_conv_rule_refuses_its_config(rule_id):
    assert rule_id in refused_conv(CONV_INVALID[rule_id])


def test_every_rule_has_an_invalid_case_and_a_reason():
    assert sorted(r.id for r in RULES) == sorted({*INVALID, *CONV_INVALID})
    assert all(r.reason and "\n" not in r.reason for r in RULES)


COMPILE_FAILURES = [
    ("int.index_t", dict(CONV, num_groups_to_merge=2**31)),
    ("waves.groups", dict(BASE, num_wave_groups=3)),
    ("waves.groups", dict(BASE, layout="crr", num_wave_groups=2)),
    ("waves.groups", dict(CONV, variant="bwd_data", num_wave_groups=2)),
    ("pipeline.lds_buffering", dict(BASE, pipeline="compv5", double_smem_buffer=True)),
    ("pipeline.lds_buffering", dict(CONV, double_smem_buffer=True)),
    ("trait.combination", dict(BASE, scheduler="default")),
    ("trait.combination", dict(CONV, pipeline="mem", scheduler="default")),
    ("conv.backward_pipeline", dict(CONV, variant="bwd_data", pipeline="compv4")),
    ("conv.groups_to_merge", dict(CONV, num_groups_to_merge=256)),
]
"""Configs once accepted that failed to compile against the wheel's CK (found by tests/test_fuzz.py)."""


@pytest.mark.parametrize(("rule_id", "data"), COMPILE_FAILURES)
def test_configs_that_did_not_compile_are_refused_by_their_rule(rule_id, data):
    assert rule_id in refused_conv(data)


@pytest.mark.parametrize("profile", ["ck-2025.11", "ck-2026.06"])
def test_the_default_configs_pass_every_rule(profile):
    for variant in ("standard", "preshuffle", "multi_d"):
        assert load_data(dict(BASE, variant=variant, ck_api=profile))
    for variant in ("forward", "bwd_data", "bwd_weight"):
        assert load_data({"kind": "grouped_conv", "variant": variant, "ck_api": profile})
    if profile == "ck-2026.06":
        assert load_data([DW, {"kind": "grouped_conv", "variant": "bwd_weight", "streamk_enabled": True, **NEW}])


def test_c1_transpose_rule_matches_the_compiler_probes():
    """Probes compiled against the wheel's CK (bwd_weight, fp16, compv3): (tile, waves, vector_size_a) -> builds."""
    probes = [((128, 128, 32), (2, 2, 1), 4, False), ((128, 128, 32), (2, 2, 1), 8, True),
              ((16, 64, 64), (1, 4, 1), 2, False), ((16, 64, 64), (1, 4, 1), 8, True),
              ((16, 64, 32), (1, 4, 1), 4, False), ((16, 64, 32), (1, 4, 1), 1, True),
              ((128, 128, 8), (2, 2, 1), 4, True)]
    for (m, n, k), (wm, wn, wk), vec, builds in probes:
        warp_tile = (16, 16, 32) if wm == 1 else (32, 32, 8)
        config = dict(CONV, variant="bwd_weight", tile_m=m, tile_n=n, tile_k=k, warp_m=wm, warp_n=wn, warp_k=wk,
                      warp_tile_m=warp_tile[0], warp_tile_n=warp_tile[1], warp_tile_k=min(warp_tile[2], k),
                      vector_size_a=vec)
        try:
            load_data(config)
            refused = []
        except ConfigError as exc:
            refused = [i.rule for i in exc.issues]
        assert ("conv.transpose_vector" not in refused) == builds, (config, refused)


def test_split_k_defaults_follow_what_ck_supports():
    def split_k(**change):
        return load_data(dict(BASE, **change))[0].config.split_k

    assert split_k() is True and split_k(epilogue="default", datatype="fp32", warp_tile_m=16, warp_tile_n=16) is True
    assert split_k(epilogue="default") is False and split_k(variant="preshuffle") is False
    assert "split_k.unsupported" in refused_rules({"variant": "preshuffle", "split_k": True})


def test_lds_limit_is_the_configs_own_pipeline():
    big = {"tile_m": 256, "tile_n": 256, "tile_k": 64}  # 64 KiB of fp16 A+B
    assert load_data(dict(BASE, pipeline="compv3", **big))  # single LDS buffer: fits 64 KiB
    assert "lds.capacity" in refused_rules(dict(pipeline="compv4", **big))  # double-buffered: 32 KiB
    assert "lds.capacity" in refused_rules(dict(pipeline="compv3", double_smem_buffer=True, **big))
    assert load_data(dict(BASE, pipeline="compv4", arch="gfx950", **big))  # 160 KiB LDS


def test_missing_warp_tile_table_is_an_error():
    [line] = error_lines(dict(BASE, datatype="fp8", arch="gfx1100", warp_m=2, warp_n=4, warp_tile_m=16,
                                   warp_tile_n=16, warp_tile_k=16))
    assert "gfx1100 has no warp tile for fp8_fp8_fp32" in line and "[rule warp_tile.supported]" in line


def test_arch_data():
    assert ARCH_NAMES == ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1201", "gfx1250")
    assert arch_spec("gfx942").warp_size == 64 and arch_spec("gfx1250").warp_size == 32
    assert arch_spec("gfx942").lds_budget("compv4", False) == 32768
    assert arch_spec("gfx942").lds_budget("mem", False) == 65536
    assert (2, 2, 1) in arch_spec("gfx942").waves and (16, 16, 32) in arch_spec("gfx942").preshuffle_warp_tiles["fp16_fp16_fp32"]


@pytest.mark.parametrize("instance", DEPTHWISE_VALID)
@pytest.mark.parametrize("datatype", ["fp16", "fp32"])
def test_ck_depthwise_instances_pass_the_depthwise_rules(instance, datatype):
    knobs = ("tile_h", "tile_w", "filt", "str_h", "str_w", "pad_h", "pad_w", "nbatch", "sub_h", "sub_w", "in_vec", "out_vec")
    [loaded] = load_data(dict(DW, datatype=datatype, **dict(zip(knobs, instance))))
    assert loaded.config.tile_h == instance[0]


def test_stream_k_conv_runs_only_on_the_archs_ck_built_it_for():
    assert set(refused_conv(dict(CONV_INVALID["streamk.arch"], arch="gfx908", warp_m=2, warp_n=2,
                                                  warp_tile_m=32, warp_tile_n=32, warp_tile_k=8))) == {"streamk.arch"}
