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
    "split_k.unsupported": {"variant": "multi_d", "split_k": True},
    "split_k.epilogue": {"epilogue": "default", "split_k": True},
}


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


def test_every_rule_has_an_invalid_case_and_a_reason():
    assert sorted(r.id for r in RULES) == sorted(INVALID)
    assert all(r.reason and "\n" not in r.reason for r in RULES)


def test_the_default_configs_pass_every_rule():
    for variant in ("standard", "preshuffle", "multi_d"):
        assert load_data(dict(BASE, variant=variant))


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
