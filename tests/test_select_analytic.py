"""The analytic model as an expression tree: its predictions pinned to those of the numpy model it replaced
(values computed by that model, bit for bit), missing knobs read as their defaults, and the staging the C++
selector relies on (kernel-side terms read no problem column, problem-side ones no kernel column)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ckast.arch.hardware import hardware
from ckast.library.selection import Selection
from ckast.select.analytic import (
    AnalyticPredictor,
    analytic_tree,
    flops,
    kernel_terms,
    problem_columns,
    tensor_elements,
    view,
)
from ckast.select.expr import Const, Field, Hw, walk
from ckast.select.features.featureset import HW_COLUMNS, PROBLEM_COLUMNS
from ckast.select.library import Library, Part
from ckast.select.problem import conv_problem, gemm_problem, parse_pairs

from .select_helpers import conv_entries, entries, gemm_entries

HW = hardware("gfx942")
FORWARD_2D = "G=2,N=8,C=256,K=512,Hi=28,Wi=28,Y=3,X=3,pad_h=1,pad_w=1"
PINNED = [  # (library, problem, datatype, {kernel: TFLOPS of the numpy model}, its argmax, its sum)
    ("gemm", "M=4096,N=4096,K=4097", "fp16", {
        "gemm_fp16_rcr_standard_gfx942_compv3_cshuffle_intrawave_256x256x64_2x2x1_32x32x16_padmnk_d16fae3314":
            876.0063933808977,
        "gemm_fp16_rcr_standard_gfx942_mem_cshuffle_intrawave_16x64x64_1x4x1_16x16x32_padmnk_9e90fa9e39":
            497.42967668513774}, 10, 14868.1310240487),
    ("gemm", "M=100,N=5000,K=1024,k_batch=3", "fp8", {
        "gemm_fp8_rcr_standard_gfx942_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16_padmnk_170ac7c91b":
            125.28887636308453,
        "gemm_fp8_rcr_standard_gfx942_mem_cshuffle_intrawave_64x16x64_4x1x1_16x16x32_padmnk_1aa2830325":
            145.5956458660623}, 9, 2436.9267616071584),
    ("conv2", FORWARD_2D, None, {
        "grouped_conv_fp16_nhwgc_forward_gfx942_compv4_cshuffle_intrawave_128x128x32_1x2x1_32x32x16_vec1_1_8_dsb_"
        "f501c603b0": 294.0864467694576,
        "grouped_conv_fp16_nhwgc_forward_gfx942_compv1_cshuffle_interwave_128x32x32_2x1x1_32x32x16_vec1_1_8_gm8_"
        "ce08b738da": 96.73695211096191,
        "grouped_conv_fp16_nhwgc_forward_gfx942_compv1_cshuffle_intrawave_64x64x32_1x1x1_32x32x16_vec1_1_1_large_"
        "tensor_36e1771910": 105.32338694370704,
        "grouped_conv_fp16_nhwgc_forward_gfx942_compv1_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec8_8_4_"
        "filter3x3_b9552e496b": 170.16000921770504,
        "grouped_conv_fp16_ngchw_forward_depthwise_gfx942_8x8_f3_s1x1_p1x1_nb8_sub2x2_vec2_2_dafc48f706":
            25.972511530129182}, 134, 170693.49121499754),
    ("conv2", "direction=bwd_data,G=1,N=4,C=64,K=96,Hi=30,Wi=17,Y=1,X=1", None, {
        "grouped_conv_fp16_nhwgc_bwd_data_gfx942_wavelet_cshuffle_intrawave_256x32x64_4x1x1_16x16x32_vec1_1_1_gm32_"
        "089eb37c99": 2.311826839460907,
        "grouped_conv_fp16_nhwgc_bwd_data_gfx942_compv1_cshuffle_intrawave_16x64x32_1x1x1_16x16x32_vec1_8_4_"
        "filter1x1_stride1_pad0_060c5a90ab": 3.88874233828072}, 27, 461.125391103646),
    ("conv2", "direction=bwd_weight,G=4,N=16,C=128,K=64,Hi=14,Wi=14,Y=3,X=3,stride_h=2,stride_w=2,k_batch=4", None, {
        "grouped_conv_fp16_nhwgc_bwd_weight_gfx942_compv1_cshuffle_intrawave_16x16x32_1x1x1_16x16x16_vec1_1_1_"
        "streamk_tree_a4d6653cb6": 4.327974599424056,
        "grouped_conv_fp16_nhwgc_bwd_weight_gfx942_compv1_cshuffle_intrawave_16x256x32_1x1x1_16x16x32_vec8_8_1_gm8_"
        "2stage_da19eee410": 1.9474669253671426,
        "grouped_conv_fp16_nhwgc_bwd_weight_gfx942_compv6_cshuffle_intrawave_32x64x32_1x1x1_32x32x16_vec8_8_8_"
        "d0c9412b71": 2.8601634554459863,
        "grouped_conv_fp16_nhwgc_bwd_weight_gfx942_basic_async_v1_cshuffle_intrawave_16x32x64_1x2x1_16x16x32_vec8_8_4_"
        "383cbaa7cf": 4.241884931506849}, 887, 4530.065251062261),
    ("conv3", "G=1,N=2,C=32,K=64,Di=8,Hi=16,Wi=16,Z=3,Y=3,X=3,pad_d=1,pad_h=1,pad_w=1", None, {
        "grouped_conv_fp16_ndhwgc_forward_gfx942_compv3_cshuffle_intrawave_64x64x64_2x2x1_16x16x32_vec8_8_1_"
        "89a62d601a": 46.91629522556959,
        "grouped_conv_fp16_ndhwgc_forward_gfx942_mem_cshuffle_interwave_16x16x64_1x1x1_16x16x32_vec8_8_4_"
        "698887829f": 54.9055458975634}, 98, 21254.159320225124),
    ("conv1", "G=8,N=4,C=8,K=8,Wi=100,X=3", None, {  # depthwise beyond 2-D: 0 TFLOPS (infinite time)
        "grouped_conv_fp16_ngchw_forward_depthwise_gfx942_8x8_f3_s1x1_p1x1_nb8_sub2x2_vec2_2_dafc48f706": 0.0,
        "grouped_conv_fp16_nhwgc_forward_gfx942_compv3_cshuffle_intrawave_64x64x64_2x2x1_16x16x32_vec8_8_1_"
        "c577b8aae4": 0.0036469412762748614}, 98, 2.2232770208342583),
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
def test_predictions_are_the_numpy_models(libs, lib, text, datatype, pinned, best, total):
    problem = _problem(text)
    part = libs[lib].part(problem, datatype)
    tflops = AnalyticPredictor().predict_tflops(problem, part, HW)
    assert {name: float(tflops[part.index[name]]) for name in pinned} == pinned
    assert int(np.argmax(tflops)) == best and float(np.sum(tflops)) == total
    rows = np.array([3, 1])
    assert np.array_equal(AnalyticPredictor().predict_tflops(problem, part, HW, rows), tflops[rows])


def _predict(configs: list[dict], text: str) -> np.ndarray:
    part = Part(tuple(f"k{i}" for i in range(len(configs))), tuple(configs), "gfx942", configs[0]["datatype"])
    return AnalyticPredictor().predict_tflops(_problem(text), part, HW)


def test_explicit_gemm_and_missing_knobs_read_as_the_numpy_model_did(libs):
    conv = libs["conv2"].config("grouped_conv_fp16_nhwgc_forward_gfx942_compv1_cshuffle_intrawave_64x64x32_1x1x1_"
                                "32x32x16_vec1_1_1_large_tensor_36e1771910")
    assert _predict([{**conv, "explicit_gemm": True, "split_image": False}], FORWARD_2D)[0] == 112.3893730502663
    gemm = libs["gemm"].configs[0]
    knobs = ("warp_tile_m", "warp_tile_n", "warp_tile_k", "scheduler", "pipeline", "warp_k")
    bare = {k: v for k, v in gemm.items() if k not in knobs}  # the numpy model's `config.get(knob) or default`
    assert _predict([bare], "M=4096,N=4096,K=4097")[0] == 727.8403664866796


@pytest.mark.parametrize(("knob", "default"), [("tile_m", 1), ("tile_k", 1), ("warp_m", 1), ("warp_n", 1)])
def test_a_missing_or_zero_knob_is_its_default(libs, knob, default):
    gemm = dict(libs["gemm"].configs[0])
    missing = {k: v for k, v in gemm.items() if k != knob}
    tflops = _predict([{**gemm, knob: default}, {**gemm, knob: 0}, missing, gemm], "M=512,N=384,K=4096")
    assert tflops[0] == tflops[1] == tflops[2] and not math.isnan(tflops[0])
    assert tflops[3] != tflops[0]  # the knob's own value counts


TREES = [("gemm", "gemm", None), *(("grouped_conv", d, n) for d in ("forward", "bwd_data", "bwd_weight")
                                   for n in (1, 2, 3))]


@pytest.mark.parametrize(("kind", "direction", "ndim"), TREES)
def test_the_tree_stages_into_kernel_and_problem_parts(kind, direction, ndim):
    tree = analytic_tree(kind, direction, "fp16", HW, ndim)
    nodes = set(walk(tree))
    terms = kernel_terms(kind, "fp16")
    for name in ("tm", "tn", "tk", "occupancy", "matrix_eff", "feed_eff", "prologue", "merge", "streamk", "gain"):
        term = getattr(terms, name)
        assert term in nodes and "problem" not in term.sources, name  # folded per kernel at emit time
    gemm = view(kind, direction)
    for side in (gemm.m, gemm.n, gemm.k, *tensor_elements(kind, direction), flops(kind)):
        assert side in nodes and side.sources == {"problem"}
    columns = {Field: set(PROBLEM_COLUMNS[kind]) | {"k_batch"}, Hw: set(HW_COLUMNS)}
    fields = {n for n in nodes if isinstance(n, (Field, Hw))}
    assert all(f.name in columns[type(f)] for f in fields)
    # the peak rate and the HBM bandwidth are constants of the profile's tree
    consts = {n.value for n in nodes if isinstance(n, Const)}
    assert HW.peak_tflops["fp16"] * 1e12 in consts and HW.hbm_gbps * 1e9 in consts
    assert analytic_tree(kind, direction, "fp16", hardware("gfx950"), ndim) != tree


def test_conv_trees_need_the_rank_and_read_k_batch():
    with pytest.raises(ValueError, match="ndim"):
        analytic_tree("grouped_conv", "forward", "fp16", HW)
    problem = _problem("direction=bwd_weight,G=1,N=2,C=8,K=8,Hi=9,Wi=9,Y=3,X=3,k_batch=4")
    assert problem_columns(problem)["k_batch"] == 4.0
