"""Selection features: CK's names, order, encodings and formulas; batch == single; the evaluator.

The reference below is an independent scalar transcription of CK's vectorized feature engines
(`feature_engine.py` / `feature_engine_grouped_conv.py`, `extract_batch`), one kernel at a time in
numpy float64 scalars; the feature tables must match it bit for bit.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from ckast.arch import ARCH_NAMES, DTYPES
from ckast.arch.hardware import ck_engine_hardware, hardware
from ckast.config import as_dict
from ckast.library import Selection, build
from ckast.select import expr as E
from ckast.select.features import KernelTable, feature_set
from ckast.select.features.featureset import FeatureSet, kernel, problem, problem_columns
from ckast.select.problem import INT_MAX, GemmProblem
from ckast.select.serving.problem_read import conv_problem, gemm_problem, parse_pairs

# CK's lists, verbatim (models/gemm_universal_fp16_gfx950/feature_spec.json and
# models/grouped_conv_forward_2d3d_suffix_bf16_gfx950/feature_spec.json).
CK_GEMM_NAMES = [
    "M", "N", "K", "split_k", "log2_M", "log2_N", "log2_K", "log2_MNK", "arithmetic_intensity", "aspect_ratio_mn",
    "aspect_ratio_mk", "aspect_ratio_nk", "layout", "tile_m", "tile_n", "tile_k", "warp_m", "warp_n", "warp_k",
    "warp_tile_m", "warp_tile_n", "warp_tile_k", "pipeline", "scheduler", "epilogue", "pad_m", "pad_n", "pad_k",
    "persistent", "num_warps", "tile_volume", "tile_mn", "lds_usage_estimate", "lds_usage_ratio", "num_tiles_m",
    "num_tiles_n", "num_tiles_k", "total_output_tiles", "tile_eff_m", "tile_eff_n", "tile_eff_k",
    "overall_tile_efficiency", "cu_utilization", "ratio_M_to_tile_m", "ratio_N_to_tile_n", "ratio_K_to_tile_k",
    "problem_smaller_than_tile_m", "problem_smaller_than_tile_n", "problem_smaller_than_tile_k",
    "any_dim_too_small", "needs_padding_m", "needs_padding_n", "needs_padding_k", "has_padding_when_needed_m",
    "has_padding_when_needed_n", "has_padding_when_needed_k", "missing_required_padding_m",
    "missing_required_padding_n", "missing_required_padding_k", "missing_any_required_padding", "hw_num_cus",
    "hw_simds_per_cu", "hw_total_simds", "hw_shader_engines", "hw_max_clock_mhz", "hw_max_waves_per_cu",
    "hw_wavefront_size", "hw_lds_capacity", "hw_l1_cache_kb", "hw_l2_cache_kb", "hw_l3_cache_kb", "hw_num_xcd",
]
CK_CONV_NAMES = [
    "N", "C", "K", "G", "Hi", "Wi", "Y", "X", "stride_h", "stride_w", "pad_h", "pad_w", "Ho", "Wo", "log2_N",
    "log2_C", "log2_K", "log2_G", "log2_Hi", "log2_Wi", "log2_spatial", "log2_filter", "log2_output",
    "arithmetic_intensity", "filter_area", "is_1x1_conv", "is_3x3_conv", "channels_per_group", "aspect_ratio_hw",
    "aspect_ratio_filter", "is_3d", "Di", "Z", "Do", "stride_d", "pad_d", "dilation_h", "dilation_w",
    "log2_channels_per_group", "log2_output_channels_per_group", "is_depthwise", "group_density", "is_small_group",
    "channels_product_per_group", "batch_group_product", "is_small_batch_grouped", "block_size", "gemm_m_per_block",
    "gemm_n_per_block", "pipeline", "num_warps", "tile_volume", "tile_mn", "lds_usage_estimate", "lds_usage_ratio",
    "block_tile_ratio_m", "block_tile_ratio_n", "block_efficiency", "is_compv3", "is_compv4", "is_compv5",
    "is_intrawave", "has_dsb", "has_si", "is_basic", "is_compv6", "is_mem", "gemm_m_output", "gemm_n_output",
    "gemm_k_output", "num_tiles_m", "num_tiles_n", "num_tiles_k", "total_output_tiles", "tile_eff_m", "tile_eff_n",
    "tile_eff_k", "overall_tile_efficiency", "cu_utilization", "ratio_gemm_m_to_tile_m", "ratio_gemm_n_to_tile_n",
    "ratio_gemm_k_to_tile_k", "problem_smaller_than_tile_m", "problem_smaller_than_tile_n",
    "problem_smaller_than_tile_k", "hw_num_cus", "hw_simds_per_cu", "hw_total_simds", "hw_shader_engines",
    "hw_max_clock_mhz", "hw_max_waves_per_cu", "hw_wavefront_size", "hw_lds_capacity", "hw_l1_cache_kb",
    "hw_l2_cache_kb", "hw_l3_cache_kb", "hw_num_xcd",
]
CK_PIPELINE_MAP = {"compv3": 0, "compv4": 1, "compv5": 2, "mem": 3, "preshufflev2": 4, "basic_v1": 5, "compv6": 6}
F = np.float64


# --- an independent scalar transcription of CK's engines ------------------------------------------
def _hw(h) -> list[F]:
    return [F(v) for v in (h.num_cus, h.simds_per_cu, h.num_cus * h.simds_per_cu, h.shader_engines, h.max_clock_mhz,
                           h.max_waves_per_cu, h.wavefront_size, h.lds_bytes, h.l1_cache_kb, h.l2_cache_kb,
                           h.l3_cache_kb, h.num_xcd)]


def _eff(size: F, tile: F) -> F:
    rem = np.mod(size, max(tile, F(1)))
    return rem / tile if rem > 0 else F(1.0)


def ck_gemm_row(M: int, N: int, K: int, k_batch: int, c: dict, h) -> list[F]:
    M, N, K, bpe = F(M), F(N), F(K), F(DTYPES[c["datatype"]].size)
    tm, tn, tk = (F(c[f"tile_{d}"]) for d in "mnk")
    mem = (M * K + K * N + M * N) * bpe
    lds = (tm * tk + tn * tk) * bpe
    cap = F(32768) if c["pipeline"].startswith("compv4") else F(h.lds_bytes)
    nt = [np.ceil(d / max(t, F(1))) for d, t in ((M, tm), (N, tn), (K, tk))]
    eff = [_eff(d, t) for d, t in ((M, tm), (N, tn), (K, tk))]
    small = [F(d < t) for d, t in ((M, tm), (N, tn), (K, tk))]
    need = [np.mod(d, max(t, F(1))) != 0 for d, t in ((M, tm), (N, tn), (K, tk))]
    pad = [bool(c[f"pad_{d}"]) for d in "mnk"]
    miss = [F(n and not p) for n, p in zip(need, pad)]
    return [
        M, N, K, F(k_batch), np.log2(max(M, F(1))), np.log2(max(N, F(1))), np.log2(max(K, F(1))),
        np.log2(max(M * N * K, F(1))), 2.0 * M * N * K / max(mem, F(1)),
        M / max(N, F(1)), M / max(K, F(1)), N / max(K, F(1)),
        F({"rcr": 0, "rrr": 1, "crr": 2, "ccr": 3}.get(c["layout"], 0)),
        tm, tn, tk, *(F(c[k]) for k in ("warp_m", "warp_n", "warp_k", "warp_tile_m", "warp_tile_n", "warp_tile_k")),
        F(CK_PIPELINE_MAP.get(c["pipeline"], 0)), F({"intrawave": 0, "interwave": 1}.get(c["scheduler"], 0)),
        F({"default": 0, "cshuffle": 1}.get(c["epilogue"], 0)), *(F(p) for p in pad), F(c["persistent"]),
        F(c["warp_m"]) * F(c["warp_n"]) * F(c["warp_k"]), tm * tn * tk, tm * tn, lds, lds / max(cap, F(1)),
        *nt, nt[0] * nt[1], *eff, eff[0] * eff[1] * eff[2], nt[0] * nt[1] / max(F(h.num_cus), F(1)),
        M / max(tm, F(1)), N / max(tn, F(1)), K / max(tk, F(1)), *small, F(any(small)),
        *(F(n) for n in need), *(F(n and p) for n, p in zip(need, pad)), *miss, F(any(miss)), *_hw(h),
    ]


def ck_conv_row(p, c: dict, h) -> list[F]:
    """CK's conv features: ckast's per-group C and K are CK's totals over G; pads are the left pads."""
    cols = problem_columns(p)
    N, G = F(p.N), F(p.G)
    C, K = G * F(p.C), G * F(p.K)
    Di, Hi, Wi, Z, Y, X = (F(cols[k]) for k in ("Di", "Hi", "Wi", "Z", "Y", "X"))
    sd, sh, sw = (F(cols[f"stride_{a}"]) for a in "dhw")
    pd, ph, pw = (F(cols[f"left_pad_{a}"]) for a in "dhw")
    dd, dh, dw = (F(cols[f"dilation_{a}"]) for a in "dhw")
    is3 = F(Di > 1 or Z > 1 or pd > 0)
    Ho = np.floor_divide(Hi + 2 * ph - ((Y - 1) * dh + 1), sh) + 1
    Wo = np.floor_divide(Wi + 2 * pw - ((X - 1) * dw + 1), sw) + 1
    Do = np.floor_divide(Di + 2 * pd - ((Z - 1) * dd + 1), sd) + 1 if is3 else F(1.0)
    spatial, fv, ov = (Di * Hi * Wi, Z * Y * X, Do * Ho * Wo) if is3 else (Hi * Wi, Y * X, Ho * Wo)
    bpe = F(DTYPES[c["datatype"]].size)
    cpg, opg = C / max(G, F(1)), K / max(G, F(1))
    flops = N * K * ov * (C / max(G, F(1))) * fv * 2
    moved = N * C * spatial * bpe + K * (C / max(G, F(1))) * fv * bpe + N * K * ov * bpe
    one_by_one = (Y == 1 and X == 1 and Z == 1) if is3 else (Y == 1 and X == 1)
    three = (Y == 3 and X == 3 and Z == 3) if is3 else (Y == 3 and X == 3)
    bs, gm, gn = F(c["tile_m"]), F(c["tile_n"]), F(c["tile_k"])  # CK's name tokens, in order
    pipe = c["pipeline"]
    lds = (gm * bs + gn * bs) * bpe
    cap = F(32768) if pipe == "compv4" else F(h.lds_bytes)
    gemm = [N * ov, K, F(int(cpg * fv))]
    tiles = [gm, gn, bs]
    nt = [np.ceil(s / max(t, F(1))) for s, t in zip(gemm, tiles)]
    eff = []
    for s, t in zip(gemm, tiles):
        rem = np.mod(s, t) if t > 0 else F(0)
        eff.append(rem / t if rem > 0 else F(1.0))
    return [
        N, C, K, G, Hi, Wi, Y, X, sh, sw, ph, pw, Ho, Wo,
        *(np.log2(max(v, F(1))) for v in (N, C, K, G, Hi, Wi, spatial, fv, ov)),
        flops / max(moved, F(1)), fv, F(one_by_one), F(three), cpg, Hi / max(Wi, F(1)), Y / max(X, F(1)),
        is3, Di, Z, Do, sd, pd, dh, dw, np.log2(max(cpg, F(1))), np.log2(max(opg, F(1))),
        F(G == C and G == K), G / max(C, F(1)), F(cpg < 16 or opg < 16), cpg * opg, N * G, F(N < 8 and G > 1),
        bs, gm, gn, F(CK_PIPELINE_MAP.get(pipe, 0)), bs / 4.0, gm * gn * bs, gm * gn, lds, lds / max(cap, F(1)),
        gm / max(bs, F(1)), gn / max(bs, F(1)), min(gm, gn) / max(max(gm, gn), F(1)),
        F(pipe == "compv3"), F(pipe == "compv4"), F(pipe == "compv5"), F(c["scheduler"] == "intrawave"),
        F(c["double_smem_buffer"]), F(c["split_image"]), F(pipe.startswith("basic_v")), F(pipe == "compv6"),
        F(pipe == "mem"), *gemm, *nt, nt[0] * nt[1], *eff, eff[0] * eff[1] * eff[2],
        nt[0] * nt[1] / max(F(h.num_cus), F(1)), *(s / max(t, F(1)) for s, t in zip(gemm, tiles)),
        *(F(s < t) for s, t in zip(gemm, tiles)), *_hw(h),
    ]


# --- libraries and problems ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def gemm_configs() -> list[dict]:
    lib = build(Selection("gemm-default", "gfx942", "ck-2026.06", datatypes=("fp16",)))
    return [as_dict(e.config) for e in lib.accepted]


@pytest.fixture(scope="module")
def conv_configs() -> list[dict]:
    tiny = build(Selection("tiny", "gfx942", "ck-2026.06"))
    full = build(Selection("full", "gfx950", "ck-2026.06", datatypes=("bf16",), ndims=(2,)))
    return [as_dict(e.config) for e in (*tiny.accepted, *full.accepted) if e.config.tile_m is not None]


PRIMES = (2, 3, 7, 13, 31, 127, 251, 7919, 65537, 2147483647)


def gemm_problems(rng: random.Random, count: int) -> list:
    corners = [(1, 1, 1), (1, 4096, 4096), (4096, 1, 7919), (7919, 65537, 31), (INT_MAX, INT_MAX, INT_MAX),
               (INT_MAX, 1, 2), (46341, 46341, 46341), (2**20, 2**20, 2**11)]
    picks = [tuple(rng.choice((rng.choice(PRIMES), rng.randint(1, 8192), 2 ** rng.randint(0, 30))) for _ in "MNK")
             for _ in range(count)]
    # built, not read: the features' formulas hold for problems the reader refuses (INT_MAX cubed) too
    return [GemmProblem(M=m, N=n, K=k, k_batch=rng.choice((1, 1, 2, 7))) for m, n, k in corners + picks]


def conv_problems(rng: random.Random, count: int) -> list:
    corners = [
        "N=1 C=1 K=1 G=1 Hi=1 Wi=1 Y=1 X=1",
        "N=1 C=64 K=64 G=64 Hi=56 Wi=56 Y=3 X=3 pad_h=1 pad_w=1",  # depthwise (CK counts C, K over all groups)
        "N=7 C=15 K=9 G=3 Hi=31 Wi=13 Y=3 X=5 stride_h=2 stride_w=3 dilation_h=2 left_pad_h=2 right_pad_h=1",
        "N=2 C=8 K=16 G=1 Di=1 Hi=8 Wi=8 Z=1 Y=3 X=3 pad_d=1 pad_h=1 pad_w=1",  # CK: is_3d by pad_d
        "N=2 C=32 K=32 G=2 Di=9 Hi=9 Wi=9 Z=3 Y=3 X=3 stride_d=2",
        "N=3 C=35 K=55 G=5 Wi=101 X=7 pad_w=3",  # 1-D
        "N=65521 C=32768 K=1 G=1 Hi=1 Wi=1 Y=1 X=1",
        "N=1 C=1048576 K=1024 G=1 Hi=1 Wi=2047 Y=1 X=1",  # 2^30 weights (K x C within index_t)
    ]
    out = [conv_problem(parse_pairs(c.replace(" ", ","))) for c in corners]
    while len(out) < len(corners) + count:
        y, x = rng.choice((1, 3, 5, 7)), rng.choice((1, 3, 7))
        fields = {"N": rng.choice((1, 2, 8, 31, 128)), "C": rng.choice((*PRIMES[:7], 64, 256)),
                  "K": rng.choice((*PRIMES[:7], 64, 512)), "G": rng.choice((1, 2, 3, 32)),
                  "Hi": rng.randint(y, 300), "Wi": rng.randint(x, 300), "Y": y, "X": x,
                  "stride_h": rng.choice((1, 2)), "stride_w": rng.choice((1, 2)), "pad_h": rng.choice((0, y // 2)),
                  "pad_w": rng.choice((0, x // 2)), "dilation_h": rng.choice((1, 2))}
        fields["C"] *= fields["G"]  # per group as drawn; CK's spellings count all groups
        fields["K"] *= fields["G"]
        if rng.random() < 0.3:
            fields.update(Di=rng.randint(1, 17), Z=rng.choice((1, 3)), pad_d=rng.choice((0, 1)))
        try:
            out.append(conv_problem(fields))
        except ValueError:  # the filter with its dilation does not fit
            continue
    return out


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


# --- names, order, encodings ---------------------------------------------------------------------
def test_feature_names_and_order_are_cks():
    assert len(CK_GEMM_NAMES) == 72 and len(CK_CONV_NAMES) == 97
    assert feature_set("gemm").names == tuple(CK_GEMM_NAMES)
    assert feature_set("grouped_conv").names == tuple(CK_CONV_NAMES)


def test_categorical_encodings_are_cks():
    assert feature_set("gemm").categorical == {
        "layout": {"rcr": 0, "rrr": 1, "crr": 2, "ccr": 3}, "pipeline": CK_PIPELINE_MAP,
        "scheduler": {"intrawave": 0, "interwave": 1}, "epilogue": {"default": 0, "cshuffle": 1}}
    assert feature_set("grouped_conv").categorical == {"pipeline": CK_PIPELINE_MAP}


def test_features_read_only_knobs_and_derived_columns():
    from ckast.config.knobs import KNOB_NAMES

    for kind in ("gemm", "grouped_conv"):
        assert set(feature_set(kind).kernel_columns()) <= {*KNOB_NAMES, "dtype_bytes"}


def test_unknown_kind_and_mismatched_problem_are_refused():
    with pytest.raises(ValueError, match="no feature set for 'fmha'"):
        feature_set("fmha")
    kernels = KernelTable.of([{"datatype": "fp16", "tile_m": 16}])
    with pytest.raises(ValueError, match="grouped_conv problem given to the gemm"):
        feature_set("gemm").matrix(conv_problem(parse_pairs("N=1,C=1,K=1,G=1,Wi=1,X=1")), kernels, hardware("gfx942"))


def test_a_feature_reading_an_unknown_problem_column_is_refused():
    with pytest.raises(ValueError, match="no problem column 'Hi'"):
        FeatureSet("gemm", (feature_set("gemm").features[0].__class__("x", problem("Hi")),))


# --- CK's formulas, bit for bit --------------------------------------------------------------------
def test_gemm_features_equal_cks_formulas(gemm_configs):
    rng = random.Random(21)
    kernels = rng.sample(gemm_configs, 150)
    table = KernelTable.of(kernels)
    fs = feature_set("gemm")
    for arch in ("gfx942", "gfx950"):
        hw = hardware(arch)
        for p in gemm_problems(rng, 6):
            got = fs.matrix(p, table, hw)
            want = np.array([ck_gemm_row(p.M, p.N, p.K, p.k_batch, c, hw) for c in kernels])
            bad = np.argwhere(got != want)
            assert not len(bad), [(p, fs.names[j], got[i, j], want[i, j]) for i, j in bad[:5]]


def test_conv_features_equal_cks_formulas(conv_configs):
    rng = random.Random(97)
    kernels = rng.sample(conv_configs, 120)
    table = KernelTable.of(kernels)
    fs = feature_set("grouped_conv")
    for arch in ("gfx942", "gfx950"):
        hw = hardware(arch)
        for p in conv_problems(rng, 6):
            got = fs.matrix(p, table, hw)
            want = np.array([ck_conv_row(p, c, hw) for c in kernels])
            bad = np.argwhere(got != want)
            assert not len(bad), [(p, fs.names[j], got[i, j], want[i, j]) for i, j in bad[:5]]


# --- corner shapes, by hand ------------------------------------------------------------------------
GEMM_KERNEL = {"kind": "gemm", "variant": "standard", "datatype": "fp16", "layout": "crr", "tile_m": 256,
               "tile_n": 128, "tile_k": 64, "warp_m": 4, "warp_n": 1, "warp_k": 1, "warp_tile_m": 32,
               "warp_tile_n": 32, "warp_tile_k": 16, "pipeline": "compv4", "scheduler": "intrawave",
               "epilogue": "cshuffle", "pad_m": False, "pad_n": True, "pad_k": False, "persistent": True}


def _gemm(M, N, K, config=GEMM_KERNEL, arch="gfx942", k_batch=1) -> dict[str, float]:
    fs = feature_set("gemm")
    return dict(zip(fs.names, fs.vector(GemmProblem(M=M, N=N, K=K, k_batch=k_batch), config,
                                        hardware(arch)).tolist()))


def test_gemm_corner_1x1x1():
    f = _gemm(1, 1, 1)
    assert (f["log2_M"], f["log2_MNK"], f["arithmetic_intensity"]) == (0.0, 0.0, 2 / 6)
    assert (f["num_tiles_m"], f["total_output_tiles"], f["cu_utilization"]) == (1.0, 1.0, 1 / 304)
    assert (f["tile_eff_m"], f["tile_eff_n"], f["tile_eff_k"]) == (1 / 256, 1 / 128, 1 / 64)
    assert f["overall_tile_efficiency"] == 2.0 ** -21
    assert (f["ratio_M_to_tile_m"], f["any_dim_too_small"], f["problem_smaller_than_tile_k"]) == (1 / 256, 1.0, 1.0)
    assert [f[f"needs_padding_{d}"] for d in "mnk"] == [1.0, 1.0, 1.0]
    assert [f[f"has_padding_when_needed_{d}"] for d in "mnk"] == [0.0, 1.0, 0.0]  # only pad_n is set
    assert [f[f"missing_required_padding_{d}"] for d in "mnk"] == [1.0, 0.0, 1.0]
    assert f["missing_any_required_padding"] == 1.0
    # compv4: CK's LDS capacity is 32768 whatever the arch; (256*64 + 128*64) * 2 bytes
    assert (f["lds_usage_estimate"], f["lds_usage_ratio"]) == (49152.0, 1.5)
    assert (f["layout"], f["pipeline"], f["scheduler"], f["epilogue"], f["persistent"]) == (2.0, 1.0, 0.0, 1.0, 1.0)
    assert (f["num_warps"], f["tile_volume"], f["tile_mn"]) == (4.0, 256 * 128 * 64, 256 * 128)
    assert (f["hw_total_simds"], f["hw_lds_capacity"]) == (1216.0, 65536.0)


def test_gemm_corner_primes_and_index_limit():
    f = _gemm(7919, 65537, 31, k_batch=7)
    assert f["split_k"] == 7.0
    assert (f["num_tiles_m"], f["tile_eff_m"]) == (31.0, (7919 - 30 * 256) / 256)
    assert (f["num_tiles_n"], f["tile_eff_n"]) == (513.0, 1 / 128)
    assert (f["num_tiles_k"], f["tile_eff_k"], f["problem_smaller_than_tile_k"]) == (1.0, 31 / 64, 1.0)
    assert f["aspect_ratio_nk"] == 65537 / 31
    big = _gemm(INT_MAX, INT_MAX, INT_MAX)
    assert big["num_tiles_m"] == 2**23 and big["tile_eff_m"] == 255 / 256 and big["needs_padding_k"] == 1.0
    assert big["log2_M"] == pytest.approx(math.log2(INT_MAX), abs=1e-12)
    assert big["log2_MNK"] == pytest.approx(3 * math.log2(INT_MAX), abs=1e-12)  # a float64 product of 2^93
    assert big["arithmetic_intensity"] == pytest.approx(INT_MAX / 3, rel=1e-12)  # 2 x^3 / (3 x^2 * 2 bytes)
    assert big["total_output_tiles"] == 2.0**23 * 2.0**24


def test_gemm_lds_ratio_uses_the_profile_lds_except_for_compv4():
    mem = {**GEMM_KERNEL, "pipeline": "mem"}
    assert _gemm(64, 64, 64, mem, "gfx950")["lds_usage_ratio"] == 49152 / 163840
    assert _gemm(64, 64, 64, mem, "gfx942")["lds_usage_ratio"] == 49152 / 65536
    assert _gemm(64, 64, 64, GEMM_KERNEL, "gfx950")["lds_usage_ratio"] == 1.5


def test_values_ck_does_not_know_encode_as_cks_default():
    f = _gemm(8, 8, 8, {**GEMM_KERNEL, "scheduler": "default", "pipeline": "preshufflev2", "layout": "rcr"})
    assert (f["scheduler"], f["pipeline"], f["layout"]) == (0.0, 4.0, 0.0)


def _conv(config: dict, **fields) -> dict[str, float]:
    fs = feature_set("grouped_conv")
    return dict(zip(fs.names, fs.vector(conv_problem(fields), config, hardware("gfx942")).tolist()))


CONV_KERNEL = {"kind": "grouped_conv", "variant": "forward", "datatype": "bf16", "tile_m": 16, "tile_n": 64,
               "tile_k": 32, "pipeline": "basic_v2", "scheduler": "interwave", "double_smem_buffer": True,
               "split_image": False}


def test_conv_kernel_columns_are_cks_name_tokens():
    f = _conv(CONV_KERNEL, N=1, C=1, K=1, G=1, Hi=1, Wi=1, Y=1, X=1)
    assert (f["block_size"], f["gemm_m_per_block"], f["gemm_n_per_block"]) == (16.0, 64.0, 32.0)
    assert (f["num_warps"], f["tile_volume"], f["tile_mn"]) == (4.0, 64 * 32 * 16, 64 * 32)
    assert (f["lds_usage_estimate"], f["block_efficiency"], f["block_tile_ratio_n"]) == ((64 + 32) * 16 * 2, 0.5, 2.0)
    assert (f["pipeline"], f["is_basic"], f["is_intrawave"], f["has_dsb"], f["has_si"]) == (0.0, 1.0, 0.0, 1.0, 0.0)
    compv1 = _conv({**CONV_KERNEL, "pipeline": "compv1"}, N=1, C=1, K=1, G=1, Hi=1, Wi=1, Y=1, X=1)
    assert (compv1["pipeline"], compv1["is_basic"]) == (0.0, 0.0)  # CK's alias is neither basic_v1 nor basic_v*


def test_conv_corner_all_ones():
    f = _conv(CONV_KERNEL, N=1, C=1, K=1, G=1, Hi=1, Wi=1, Y=1, X=1)
    assert (f["Ho"], f["Wo"], f["Do"], f["is_3d"], f["is_1x1_conv"], f["is_depthwise"]) == (1, 1, 1, 0, 1, 1)
    assert (f["gemm_m_output"], f["gemm_n_output"], f["gemm_k_output"]) == (1.0, 1.0, 1.0)
    assert (f["tile_eff_m"], f["tile_eff_n"], f["tile_eff_k"]) == (1 / 64, 1 / 32, 1 / 16)
    assert (f["log2_spatial"], f["log2_channels_per_group"], f["is_small_group"]) == (0.0, 0.0, 1.0)
    assert f["arithmetic_intensity"] == 2 / (3 * 2)  # 2 flops over 3 bf16 elements


def test_conv_channels_are_cks_totals():
    f = _conv(CONV_KERNEL, N=7, C=15, K=9, G=3, Hi=31, Wi=13, Y=3, X=5)  # 5 and 3 per group
    assert (f["C"], f["K"], f["G"], f["channels_per_group"]) == (15.0, 9.0, 3.0, 5.0)
    assert (f["group_density"], f["channels_product_per_group"], f["batch_group_product"]) == (0.2, 15.0, 21.0)
    assert (f["gemm_n_output"], f["gemm_k_output"], f["is_depthwise"]) == (9.0, 5 * 3 * 5, 0.0)
    assert f["is_small_batch_grouped"] == 1.0
    depthwise = _conv(CONV_KERNEL, N=1, C=64, K=64, G=64, Hi=56, Wi=56, Y=3, X=3, pad_h=1, pad_w=1)
    assert (depthwise["is_depthwise"], depthwise["C"], depthwise["Ho"]) == (1.0, 64.0, 56.0)


def test_conv_output_sizes_follow_cks_formula():
    f = _conv(CONV_KERNEL, N=1, C=64, K=64, G=1, Hi=32, Wi=56, Y=3, X=3, pad_h=1, pad_w=1, dilation_h=2,
              stride_w=2)
    assert (f["Ho"], f["Wo"], f["dilation_h"], f["log2_output"]) == (30.0, 28.0, 2.0, math.log2(30 * 28))
    # CK has one pad per axis: the left pad is read (Ho = (Hi + 2 pad - eff) // stride + 1)
    g = _conv(CONV_KERNEL, N=1, C=8, K=8, G=1, Hi=10, Wi=10, Y=3, X=3, left_pad_h=2, right_pad_h=0)
    assert (g["pad_h"], g["Ho"]) == (2.0, 12.0)


def test_conv_is_3d_is_cks_value_test_not_the_rank():
    flat = _conv(CONV_KERNEL, N=2, C=8, K=16, G=1, Di=1, Hi=8, Wi=8, Z=1, Y=3, X=3, pad_h=1, pad_w=1)
    assert (flat["is_3d"], flat["Do"], flat["is_3x3_conv"], flat["log2_filter"]) == (0.0, 1.0, 1.0, math.log2(9))
    padded = _conv(CONV_KERNEL, N=2, C=8, K=16, G=1, Di=1, Hi=8, Wi=8, Z=1, Y=3, X=3, pad_d=1, pad_h=1, pad_w=1)
    assert (padded["is_3d"], padded["Do"], padded["pad_d"], padded["is_3x3_conv"]) == (1.0, 3.0, 1.0, 0.0)
    one_d = _conv(CONV_KERNEL, N=3, C=35, K=55, G=5, Wi=101, X=7, pad_w=3)
    assert (one_d["Hi"], one_d["Y"], one_d["Ho"], one_d["Wo"], one_d["aspect_ratio_filter"]) == (1, 1, 1, 101, 1 / 7)


def test_conv_kernels_outside_cks_tiling_read_nan():
    depthwise = {"kind": "grouped_conv", "variant": "forward_depthwise", "datatype": "fp16", "pipeline": "depthwise"}
    f = _conv(depthwise, N=1, C=8, K=8, G=8, Hi=8, Wi=8, Y=3, X=3)
    assert math.isnan(f["block_size"]) and math.isnan(f["num_tiles_k"]) and f["N"] == 1.0


# --- batch == single -------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["gemm", "grouped_conv"])
def test_batch_equals_single(kind, gemm_configs, conv_configs):
    rng = random.Random(1)
    configs = gemm_configs if kind == "gemm" else conv_configs
    problems = gemm_problems(rng, 4) if kind == "gemm" else conv_problems(rng, 4)
    fs, table = feature_set(kind), KernelTable.of(configs)
    for p in problems:
        hw = hardware(rng.choice(ARCH_NAMES))
        batch = fs.matrix(p, table, hw)
        assert batch.shape == (len(configs), len(fs.names)) and batch.dtype == np.float64
        for i in rng.sample(range(len(configs)), 25):
            assert _same(fs.vector(p, configs[i], hw), batch[i]), (p, configs[i])


def test_ck_engine_hardware_gives_cks_default_hardware_features():
    f = dict(zip(feature_set("gemm").names, feature_set("gemm").vector(
        gemm_problem({"M": 1, "N": 1, "K": 1}), GEMM_KERNEL, ck_engine_hardware())))
    assert [f[n] for n in CK_GEMM_NAMES[60:]] == [256, 4, 1024, 32, 2400, 32, 64, 65536, 32, 4096, 262144, 8]


# --- the kernel table and the evaluator ------------------------------------------------------------
def test_kernel_table_columns():
    t = KernelTable.of([{"datatype": "fp16", "tile_m": 64, "pad_m": True, "pipeline": "mem"},
                        {"datatype": "int8", "tile_m": 16, "pipeline": "compv3", "scheduler": "intrawave"}])
    assert len(t) == 2
    assert _same(t.numeric("pad_m"), np.array([1.0, np.nan])) and _same(t.numeric("tile_m"), np.array([64.0, 16.0]))
    assert _same(t.numeric("dtype_bytes"), np.array([2.0, 1.0]))
    assert t.labels("scheduler").tolist() == [None, "intrawave"]
    assert _same(t.numeric("split_k"), np.array([np.nan, np.nan]))  # no config has the knob
    assert t.labels("epilogue").tolist() == [None, None]
    with pytest.raises(KeyError, match="'pipeline' is categorical, not numeric"):
        t.numeric("pipeline")
    with pytest.raises(TypeError, match="mixes value types"):
        KernelTable.of([{"tile_m": 1}, {"tile_m": "a"}])


def _eval(node: E.Expr, **kernel_columns) -> np.ndarray:
    table = KernelTable.of([dict(zip(kernel_columns, values)) for values in zip(*kernel_columns.values())])
    with np.errstate(all="ignore"):
        return np.asarray(E.Scope(table, {"x": 7}).value(node))


def test_evaluator_semantics():
    a, b = kernel("a"), kernel("b")
    cols = {"a": [7, -7, 7, 0, 5], "b": [2, 2, -2, 3, 0]}
    assert _eval(a // b, **cols).tolist()[:4] == [3.0, -4.0, -4.0, 0.0]  # floor division
    assert _eval(a % b, **cols).tolist()[:4] == [1.0, 1.0, -1.0, 0.0]  # the divisor's sign
    assert _eval((a < b).as_float(), **cols).tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert _eval((a.ne(0) & b.ne(0)).as_float(), **cols).tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert _eval((~b.ne(0)).as_float(), **cols).tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert _eval(E.where(b.ne(0), a, -1), **cols).tolist() == [7.0, -7.0, 7.0, 0.0, -1.0]
    assert _eval(E.trunc(a / b), **cols).tolist()[:4] == [3.0, -3.0, -3.0, 0.0]
    assert _eval(E.ceil(a / 2) + problem("x"), **cols).tolist() == [11.0, 4.0, 11.0, 7.0, 10.0]  # ceil(-3.5) = -3
    p = E.lookup("p", {"mem": 3, "compv4": 1}, E.Col("p", str), -1).as_float()
    assert _eval(p, p=["compv4", "mem", "wavelet", None]).tolist() == [1.0, 3.0, -1.0, -1.0]


def test_nodes_are_immutable_data():
    e = E.maximum(problem("M"), 1) / kernel("tile_m")
    assert e == E.Op("/", (E.Op("max", (E.Op("float", (E.Field("M"),)), E.Const(1.0))), E.Col("tile_m", float)))
    assert hash(e) == hash(E.maximum(problem("M"), 1) / kernel("tile_m"))
    assert e.sources == {"problem", "kernel"}
    with pytest.raises(AttributeError):
        e.op = "mul"
    with pytest.raises(ValueError, match="no operation 'pow'"):
        E.Op("pow", (e, e))
    with pytest.raises(TypeError, match="not an expression operand"):
        kernel("a") + None
    with pytest.raises(TypeError, match=r"\+ takes int or float operands of one type, not float, str"):
        kernel("a") + "b"


def test_kernel_only_subtrees_are_cached_per_table():
    table = KernelTable.of([{"datatype": "fp16", "tile_m": 4}])
    node = kernel("tile_m") * 2
    E.Scope(table).value(node)
    assert table.cache[node].tolist() == [8.0]
