"""Block-scale quantized GEMM (variants bquant, abquant): goldens, knobs, rules and CK's refusals."""

from __future__ import annotations

import pytest

from ckast.config import ConfigError, load_data

from .cpp_tools import reformat
from .goldens import QUANT_CASES, QUANT_HEADERS
from .kernels import header_of, squash


def config(case: str, profile: str, **extra):
    return load_data(dict(QUANT_CASES[case][0], ck_api=profile, **extra))[0].config


@pytest.mark.parametrize(("case", "profile"), sorted(QUANT_HEADERS))
def test_golden_header(case, profile, file_regression):
    source = header_of(config(case, profile))
    file_regression.check(source, fullpath=QUANT_HEADERS[case, profile])
    assert reformat(source) == source


def test_defaults_are_ck_factory_defaults():
    """bquant: CK's decode tile 16x64x256 on 1x4x1 waves, warp tile K 32 on gfx942 and 128 on gfx950, K padded,
    1x1x128 B groups; abquant: 128x128x128 with 1x128 A groups."""
    b = load_data({"kind": "gemm", "variant": "bquant"})[0].config
    assert (b.datatype, b.tile_m, b.tile_n, b.tile_k, b.warp_n, b.warp_tile_k) == ("fp8", 16, 64, 256, 4, 32)
    assert (b.pad_k, b.bquant_group_n, b.bquant_group_k, b.preshuffle_b, b.split_k) == (True, 1, 128, False, False)
    assert b.aquant_group_k is None and b.transpose_c is None
    b950 = load_data({"kind": "gemm", "variant": "bquant", "arch": "gfx950"})[0].config
    assert b950.warp_tile_k == 128
    ab = load_data({"kind": "gemm", "variant": "abquant", "ck_api": "ck-2026.06", "pipeline": "preshuffleb",
                    "warp_m": 2, "warp_n": 2, "warp_tile_k": 64})[0].config
    assert (ab.tile_k, ab.aquant_group_k, ab.preshuffle_b, ab.transpose_c, ab.pad_k) == (128, 128, True, True, False)


@pytest.mark.parametrize(("extra", "rule"), [
    (dict(variant="abquant", ck_api="ck-2025.11"), "profile.abquant"),
    (dict(variant="bquant", layout="rrr"), "quant.layout"),
    (dict(variant="bquant", datatype="mx_bf16bf16", arch="gfx942"), "quant.arch"),
    (dict(variant="abquant", datatype="bf8", pipeline="eightwaves", ck_api="ck-2026.06"), "quant.pipeline"),
    (dict(variant="bquant", datatype="fp8", pipeline="microscale"), "quant.pipeline"),
    (dict(variant="bquant", warp_tile_k=128), "quant.warp_tile"),
    (dict(variant="bquant", bquant_group_k=512), "quant.group_divides"),
    (dict(variant="bquant", bquant_group_n=128), "quant.group_divides"),
    (dict(variant="bquant", preshuffle_b=True), "quant.preshuffle_b"),
    (dict(variant="bquant", split_k=True), "split_k.unsupported"),
    (dict(variant="bquant", datatype="mx_bf16fp4", arch="gfx950", ck_api="ck-2025.11"), "profile.pipeline"),
])
def test_refusals_name_their_rule(extra, rule):
    with pytest.raises(ConfigError) as err:
        load_data(dict({"kind": "gemm"}, **extra))
    assert f"[rule {rule}]" in str(err.value)


@pytest.mark.parametrize(("extra", "message"), [
    (dict(variant="bquant", datatype="fp4"), 'datatype: "fp4" is not allowed; allowed: fp8, bf8, fp8i4, bf8i4, mx_'),
    (dict(variant="bquant", pipeline="eightwaves"), 'pipeline: "eightwaves" is not allowed; allowed: compv3, '
                                                    "preshuffleb, microscale"),
    (dict(variant="abquant", pipeline="microscale"), 'pipeline: "microscale" is not allowed; allowed: compv3, '
                                                     "preshuffleb, eightwaves"),
])
def test_family_choices(extra, message):
    """Each family's data types (CK's variant keys) and pipelines are the knobs' choices."""
    with pytest.raises(ConfigError, match=message):
        load_data(dict({"kind": "gemm"}, **extra))


def test_bquant_kernel_per_profile():
    """ck-2025.11 has one scale-preshuffle flag and no B cast policy; ck-2026.06 splits the flag and casts B before
    the LDS write when A and B share a type (CK's generator), after the read for int4 weights."""
    old = squash(header_of(config("bquant_fp8i4_preshuffleb", "ck-2025.11")))
    new = squash(header_of(config("bquant_fp8i4_preshuffleb", "ck-2026.06")))
    assert "TileGemmQuantTraits<kPadM,kPadN,kPadK,BPreshuffleQuant,PreshuffleB," in old and "CastPolicy" not in old
    assert "APreshuffleQuant,BPreshuffleQuant,PreshuffleB," in new and "CastPolicy::AfterLDSRead>" in new
    assert "WPQuantBPipelineAgBgCrV2<Problem<HasHotLoop,TailNum>>" in new
    fp8 = squash(header_of(config("bquant", "ck-2026.06")))
    assert "CastPolicy::BeforeLDSWrite>" in fp8 and "GemmTile1DPartitioner<TileShape>" in fp8
    assert "QuantGemmKernel<TilePartitioner,Pipeline<HasHotLoop,TailNum>,Epilogue,ck_tile::QuantType::BQuantGrouped>" in fp8


def test_abquant_kernel():
    src = squash(header_of(config("abquant_eightwaves", "ck-2026.06")))
    assert "ABQuantGemmPipelineAgBgCrEightWaves<Problem<HasHotLoop,TailNum>>" in src
    assert "usingAQuantGroupSize=ck_tile::QuantGroupShape<ck_tile::sequence<1,1,128>>;" in src
    assert "GemmSpatiallyLocalTilePartitioner<TileShape,8,4>" in src and "ck_tile::QuantType::ABQuantGrouped" in src
    assert "staticconstexprboolTransposeC=true;" in src and "staticconstexprboolPreshuffleB=true;" in src
