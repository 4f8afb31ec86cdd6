"""The analytic model as an expression tree: its predictions under fixed constants pinned bit for bit, the
arch's calibration by default and the constants given reaching the tree, missing knobs read as their
defaults, the physics it models going the right way (MFMA rate, occupancy, pipelines, waves), and the
staging the C++ selector relies on (kernel-side terms read no problem column, problem-side ones no kernel
column)."""

from __future__ import annotations

import math
from pathlib import Path

import attrs
import numpy as np
import pytest

from ckast.arch.calibration import Calibration, calibration
from ckast.arch.hardware import hardware
from ckast.library.selection import Selection
from ckast.select.models.analytic import (
    PIPELINE_STEP,
    AnalyticPredictor,
    analytic_tree,
    flops,
    kernel_terms,
    tensor_elements,
    view,
)
from ckast.select.expr import Const, Field, Hw, Scope, walk
from ckast.select.features import KernelTable
from ckast.select.features.featureset import HW_COLUMNS, PROBLEM_COLUMNS, hw_columns
from ckast.select.serving.library import Library, Part
from ckast.select.serving.problem_read import conv_problem, gemm_problem, parse_pairs
from ckast.select.serving.validity import problem_columns

from .select_helpers import conv_entries, entries, gemm_entries

HW = hardware("gfx942")
CAL = Calibration("test", matrix_fraction=0.8, feed_bytes_per_clock=32.0, im2col_feed_cost=1.5,
                  lds_bytes_per_clock=128.0, wave_issue=4.0, tile_latency_us=2.0, base_vgprs=64.0,
                  vgprs_per_lane=512.0, wave_tail=0.75, launch_us=1.5, persistent_tile_us=0.5, interwave_step=1.05,
                  pipeline_step=(("compv4", 0.95),), sources={})
"""Fixed constants: the pinned values do not move when calibration.toml is refitted."""
FORWARD_2D = "G=2,N=8,C=256,K=512,Hi=28,Wi=28,Y=3,X=3,pad_h=1,pad_w=1"
PINNED = [  # (library, problem, datatype, {kernel: TFLOPS under CAL}, their argmax, their sum)
    ("gemm", "M=4096,N=4096,K=4097", "fp16", {
        "gemm_fp16_rcr_standard_gfx942_compv3_cshuffle_intrawave_256x256x64_2x2x1_32x32x16_padmnk_d16fae3314":
            183.04628762268703,
        "gemm_fp16_rcr_standard_gfx942_mem_cshuffle_intrawave_16x64x64_1x4x1_16x16x32_padmnk_9e90fa9e39":
            118.9541338961273}, 6, 3547.1587692901867),
    ("gemm", "M=100,N=5000,K=1024,k_batch=3", "fp8", {
        "gemm_fp8_rcr_standard_gfx942_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16_padmnk_170ac7c91b":
            92.35949303278946,
        "gemm_fp8_rcr_standard_gfx942_mem_cshuffle_intrawave_64x16x64_4x1x1_16x16x32_padmnk_1aa2830325":
            100.16582573362308}, 10, 1899.5366272219183),
    ("conv2", FORWARD_2D, None, {
        "grouped_conv_fp16_nhwgc_forward_gfx942_compv4_cshuffle_intrawave_128x128x32_1x2x1_32x32x16_vec1_1_8_dsb_"
        "f501c603b0": 73.41451129244284,
        "grouped_conv_fp16_nhwgc_forward_gfx942_compv1_cshuffle_interwave_128x32x32_2x1x1_32x32x16_vec1_1_8_gm8_"
        "ce08b738da": 15.214624726772719,
        "grouped_conv_fp16_nhwgc_forward_gfx942_compv1_cshuffle_intrawave_64x64x32_1x1x1_32x32x16_vec1_1_1_large_"
        "tensor_36e1771910": 57.03426897441508,
        "grouped_conv_fp16_nhwgc_forward_gfx942_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec8_8_4_"
        "filter3x3_b9552e496b": 57.33218288137269,
        "grouped_conv_fp16_ngchw_forward_depthwise_gfx942_8x8_f3_s1x1_p1x1_nb8_sub2x2_vec2_2_dafc48f706":
            26.202463746471178}, 248, 54247.8458346735),
    ("conv2", "direction=bwd_data,G=1,N=4,C=64,K=96,Hi=30,Wi=17,Y=1,X=1", None, {
        "grouped_conv_fp16_nhwgc_bwd_data_gfx942_wavelet_cshuffle_intrawave_256x32x64_4x1x1_16x16x32_vec1_1_1_gm32_"
        "089eb37c99": 1.1196992193711375,
        "grouped_conv_fp16_nhwgc_bwd_data_gfx942_compv1_cshuffle_intrawave_16x64x32_1x1x1_16x16x32_vec1_8_4_"
        "filter1x1_stride1_pad0_060c5a90ab": 5.796733625355221}, 27, 471.65246449996596),
    ("conv2", "direction=bwd_weight,G=4,N=16,C=128,K=64,Hi=14,Wi=14,Y=3,X=3,stride_h=2,stride_w=2,k_batch=4", None, {
        "grouped_conv_fp16_nhwgc_bwd_weight_gfx942_compv1_cshuffle_intrawave_16x16x32_1x1x1_16x16x16_vec1_1_1_"
        "streamk_tree_a4d6653cb6": 4.832816471905083,
        "grouped_conv_fp16_nhwgc_bwd_weight_gfx942_compv1_cshuffle_intrawave_16x256x32_1x1x1_16x16x32_vec8_8_1_gm8_"
        "2stage_da19eee410": 1.6336221086287646,
        "grouped_conv_fp16_nhwgc_bwd_weight_gfx942_compv6_cshuffle_intrawave_32x64x32_1x1x1_32x32x16_vec8_8_8_"
        "d0c9412b71": 3.8258587991485444,
        "grouped_conv_fp16_nhwgc_bwd_weight_gfx942_basic_async_v1_cshuffle_intrawave_16x32x64_1x2x1_16x16x32_vec8_8_4_"
        "383cbaa7cf": 5.420162221167733}, 765, 4730.237066939027),
    ("conv3", "G=1,N=2,C=32,K=64,Di=8,Hi=16,Wi=16,Z=3,Y=3,X=3,pad_d=1,pad_h=1,pad_w=1", None, {
        "grouped_conv_fp16_ndhwgc_forward_gfx942_compv3_cshuffle_intrawave_64x64x64_2x2x1_16x16x32_vec8_8_1_"
        "89a62d601a": 29.512320162744015,
        "grouped_conv_fp16_ndhwgc_forward_gfx942_mem_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec8_8_4_"
        "698887829f": 38.74647280760796}, 160, 12125.97172510745),
    ("conv1", "G=8,N=4,C=8,K=8,Wi=100,X=3", None, {  # depthwise beyond 2-D: 0 TFLOPS (infinite time)
        "grouped_conv_fp16_ngchw_forward_depthwise_gfx942_8x8_f3_s1x1_p1x1_nb8_sub2x2_vec2_2_dafc48f706": 0.0,
        "grouped_conv_fp16_nhwgc_forward_gfx942_compv3_cshuffle_intrawave_64x64x64_2x2x1_16x16x32_vec8_8_1_"
        "c577b8aae4": 0.004450648516342708}, 14, 2.7351683250922383),
]


def _library(kernels: list[dict]) -> Library:
    return Library(Path("test"), tuple(k["name"] for k in kernels), tuple(k["config"] for k in kernels))


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    conv2 = conv_entries("forward", "forward_depthwise", "bwd_data", "bwd_weight")
    conv3 = entries(Selection("full", "gfx942", "ck-2026.06", ("fp16",), (3,), ("forward",), None, ()))
    # no rule set has 1-D kernels: the 2-D forward ones relabelled (the model does not read the rank)
    conv1 = [{"name": k["name"], "config": {**k["config"], "ndim_spatial": 1}} for k in conv2
             if k["config"]["variant"] in ("forward", "forward_depthwise")]
    gemm = gemm_entries(tmp_path_factory.mktemp("gemm"), ("fp16", "fp8"))
    return {"conv1": _library(conv1), "conv2": _library(conv2), "conv3": _library(conv3), "gemm": _library(gemm)}


def _problem(text: str):
    fields = parse_pairs(text)
    return gemm_problem(fields) if "M" in fields else conv_problem(fields)


@pytest.mark.parametrize(("lib", "text", "datatype", "pinned", "best", "total"), PINNED, ids=[p[1] for p in PINNED])
def test_predictions_are_pinned(libs, lib, text, datatype, pinned, best, total):
    problem = _problem(text)
    part = libs[lib].part(problem, datatype)
    tflops = AnalyticPredictor(CAL).predict_tflops(problem, part, HW)
    assert {name: float(tflops[part.index[name]]) for name in pinned} == pinned
    assert int(np.argmax(tflops)) == best and float(np.sum(tflops)) == total
    rows = np.array([3, 1])
    assert np.array_equal(AnalyticPredictor(CAL).predict_tflops(problem, part, HW, rows), tflops[rows])


def _predict(configs: list[dict], text: str, hw=HW, cal=CAL) -> np.ndarray:
    part = Part(tuple(f"k{i}" for i in range(len(configs))), tuple(configs), hw.arch, configs[0]["datatype"])
    return AnalyticPredictor(cal).predict_tflops(_problem(text), part, hw)


def test_explicit_gemm_and_missing_knobs(libs):
    conv = libs["conv2"].config("grouped_conv_fp16_nhwgc_forward_gfx942_compv1_cshuffle_intrawave_64x64x32_1x1x1_"
                                "32x32x16_vec1_1_1_large_tensor_36e1771910")
    assert _predict([{**conv, "explicit_gemm": True, "split_image": False}], FORWARD_2D)[0] == 61.05771623482256
    gemm = libs["gemm"].configs[0]
    knobs = ("warp_tile_m", "warp_tile_n", "warp_tile_k", "scheduler", "pipeline", "warp_k")
    bare = {k: v for k, v in gemm.items() if k not in knobs}  # each knob its default
    assert _predict([bare], "M=4096,N=4096,K=4097")[0] == 149.01675728773282


@pytest.mark.parametrize(("knob", "default"), [("tile_m", 1), ("tile_k", 1), ("warp_m", 1), ("warp_n", 1)])
def test_a_missing_or_zero_knob_is_its_default(libs, knob, default):
    gemm = dict(libs["gemm"].configs[0])
    missing = {k: v for k, v in gemm.items() if k != knob}
    tflops = _predict([{**gemm, knob: default}, {**gemm, knob: 0}, missing, gemm], "M=512,N=384,K=4100")
    assert tflops[0] == tflops[1] == tflops[2] and not math.isnan(tflops[0])
    assert tflops[3] != tflops[0]  # the knob's own value counts


TREES = [("gemm", "gemm", None), *(("grouped_conv", d, n) for d in ("forward", "bwd_data", "bwd_weight")
                                   for n in (1, 2, 3))]


@pytest.mark.parametrize(("kind", "direction", "ndim"), TREES)
def test_the_tree_stages_into_kernel_and_problem_parts(kind, direction, ndim):
    tree = analytic_tree(kind, direction, "fp16", HW, ndim)
    nodes = set(walk(tree))
    terms = kernel_terms(kind, "fp16", HW.peak_tflops["fp16"], HW.mfma_full_rate_k["fp16"], calibration("gfx942"))
    for name in ("tm", "tn", "tk", "occupancy", "step_work", "step_latency", "output_work", "tile_latency", "merge",
                 "streamk", "gain"):
        term = getattr(terms, name)
        assert term in nodes and "problem" not in term.sources, name  # folded per kernel at emit time
    gemm = view(kind, direction)
    for side in (gemm.m, gemm.n, gemm.k, *tensor_elements(kind, direction), flops(kind)):
        assert side in nodes and side.sources == {"problem"}
    columns = {Field: set(PROBLEM_COLUMNS[kind]) | {"k_batch"}, Hw: set(HW_COLUMNS)}
    fields = {n for n in nodes if isinstance(n, (Field, Hw))}
    assert all(f.name in columns[type(f)] for f in fields)
    # the peak rate, the HBM bandwidth and the calibration are constants of the profile's tree
    consts = {n.value for n in nodes if isinstance(n, Const)}
    assert HW.peak_tflops["fp16"] * 1e12 in consts and HW.hbm_gbps * 1e9 in consts
    assert calibration("gfx942").launch_us * 1e-6 in consts
    assert analytic_tree(kind, direction, "fp16", hardware("gfx950"), ndim) != tree
    assert analytic_tree(kind, direction, "fp16", HW, ndim, CAL) != tree


def test_conv_trees_need_the_rank_and_read_k_batch():
    with pytest.raises(ValueError, match="ndim"):
        analytic_tree("grouped_conv", "forward", "fp16", HW)
    problem = _problem("direction=bwd_weight,G=1,N=2,C=8,K=8,Hi=9,Wi=9,Y=3,X=3,k_batch=4")
    assert problem_columns(problem)["k_batch"] == 4.0


def test_the_arch_calibration_is_the_default_and_the_one_given_is_used(libs):
    problem = _problem("M=1024,N=1024,K=1024")
    part = libs["gemm"].part(problem, "fp16")
    shipped = AnalyticPredictor().predict_tflops(problem, part, HW)
    assert np.array_equal(shipped, AnalyticPredictor(calibration("gfx942")).predict_tflops(problem, part, HW))
    seconds = [2 * 1024**3 / (AnalyticPredictor(c).predict_tflops(problem, part, HW) * 1e12)
               for c in (CAL, attrs.evolve(CAL, launch_us=CAL.launch_us + 1.0))]
    assert seconds[1] - seconds[0] == pytest.approx(np.full(len(part), 1e-6), rel=1e-6)  # one more microsecond


def _term(configs: list[dict], name: str, hw=HW, datatype: str = "fp16", cal=CAL) -> np.ndarray:
    """Kernel term `name` of each config."""
    terms = kernel_terms("gemm", datatype, hw.peak_tflops[datatype], hw.mfma_full_rate_k.get(datatype), cal)
    return Scope(KernelTable.of(configs), {}, hw_columns(hw)).value(getattr(terms, name))


def _gemm(libs, **knobs) -> dict:
    return {**libs["gemm"].configs[0], "tile_m": 64, "tile_n": 64, "tile_k": 64, "warp_m": 2, "warp_n": 2, "warp_k": 1,
            "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 16, "pipeline": "compv3", "scheduler": "intrawave",
            "double_smem_buffer": False, "persistent": False, **knobs}


def test_occupancy_is_bound_by_the_lds_and_the_registers(libs):
    # gfx942, 64 KiB LDS, 512 VGPRs per lane; a 64x64x64 fp16 block: 16 KiB of LDS, 64 + 16 + 16 VGPRs per lane
    configs = [_gemm(libs), _gemm(libs, pipeline="compv4", double_smem_buffer=True),  # LDS: 4, doubled: 2
               _gemm(libs, warp_m=4, warp_n=4),  # 1024 threads: 72 VGPRs, 7 waves per SIMD, one block of 16
               _gemm(libs, tile_m=256, tile_n=256)]  # 64 + 256 + 64 VGPRs: one wave per SIMD
    assert list(_term(configs, "occupancy")) == [4.0, 2.0, 1.0, 1.0]
    assert list(_term(configs[:1], "occupancy", cal=attrs.evolve(CAL, base_vgprs=200.0))) == [2.0]  # 232: 2 waves


def test_mfmas_below_the_full_rate_k_are_slower_on_cdna4(libs):
    configs = [_gemm(libs, warp_tile_k=16), _gemm(libs, warp_tile_k=32), _gemm(libs, warp_tile_m=32, warp_tile_n=32)]
    # CDNA4 bf16: 16x16x32 and 32x32x16 at the peak, 16x16x16 at half of it (a wave's MFMAs take twice as long)
    latency = _term(configs, "step_latency", hardware("gfx950"), "bf16")
    assert latency[0] == 2 * latency[1] == 2 * latency[2]
    assert len(set(_term(configs, "step_latency"))) == 1  # CDNA3 fp16: 16x16x16 is the full rate


def test_pipeline_scheduler_and_persistent_costs(libs):
    configs = [_gemm(libs), _gemm(libs, pipeline="compv4"), _gemm(libs, pipeline="mem"),
               _gemm(libs, scheduler="interwave"), _gemm(libs, persistent=True)]
    latency = _term(configs, "step_latency")
    assert list(latency[1:4] / latency[0]) == pytest.approx([0.95, PIPELINE_STEP["mem"], CAL.interwave_step])
    tile = _term(configs, "tile_latency")
    assert tile[4] - tile[0] == pytest.approx(CAL.persistent_tile_us * 1e-6) and len(set(tile[:4])) == 1


@pytest.mark.parametrize("tail", [0.0, 1.0])
def test_a_partial_wave_costs_its_tail(libs, tail):
    cal = attrs.evolve(CAL, wave_tail=tail)
    kernel = _gemm(libs, pad_m=True, pad_n=True, pad_k=True)
    cus = HW.num_cus
    # one tile more than a wave of one tile per CU, and two whole such waves
    over, twice = (_predict([kernel], f"M={64 * t},N=64,K=8192", cal=cal)[0] for t in (cus + 1, 2 * cus))
    seconds = [2 * 64 * t * 64 * 8192 / (tf * 1e12) for t, tf in ((cus + 1, over), (2 * cus, twice))]
    if tail == 1.0:
        assert seconds[0] == pytest.approx(seconds[1])  # the 305th tile costs a whole wave
    else:
        assert seconds[0] < 0.6 * seconds[1]  # balanced: barely more than one wave
