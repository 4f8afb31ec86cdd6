"""The analytic performance model: predicted TFLOPS of every kernel of a part for one problem, from
the kernels' knobs and the arch's published figures alone (no timing data).

The problem is seen as the GEMM its kernels run (`gemm_view`): for a conv problem per direction,
forward (M, N, K) = (N x output, K, C x filter), bwd_data (N x input, C, K x filter) and bwd_weight
(K, C x filter, N x output), G of them. A kernel of tile (tm, tn, tk), w warps, on a GPU of `num_cus`
CUs with peak P (dense matrix FLOP/s of the datatype) and HBM bandwidth B:

- **Tiles and padding**: ceil(G / merged groups) x ceil(M / tm) x ceil(N x merged / tn) x k_batch
  output tiles, each running ceil((K / k_batch) / tk) k-steps of the full tile: the padded work is
  computed, so a tile that overhangs the problem wastes its overhang.
- **Occupancy**: blocks per CU = the LDS (A and B tiles, doubled for two-buffer pipelines) that fits
  in the CU's LDS, at most 8 / w; the CU's 4 SIMDs are shared by the resident blocks' warps.
- **A k-step** takes the longer of its matrix work (2 tm tn tk at the block's share of P / num_cus,
  times the pipeline's and the MFMA shape's efficiency) and its feed ((tm + tn) tk elements from L2 at
  64 B per clock per CU, times the pipeline's feed and the vector width's efficiency). A tile adds the
  pipeline's prologue k-steps and writes its output tile.
- **Waves**: tiles run in ceil(tiles / (CUs x blocks per CU)) waves (stream-K balances them exactly
  and pays a reduction of its partial tiles).
- **Memory floor**: the problem's tensors (operands re-read once per tile row/column at a 5% L2 miss
  rate) cross HBM at B; split-K adds its atomic partial outputs and the zeroing, two-stage its fp32
  workspace and a second launch. Time = max(waves, memory) / gain + launch overhead, where the gain
  rewards explicit GEMM and the filter specializations (less index arithmetic) and charges split-image.
- **Depthwise** kernels (one 64-thread wave per block, no MFMA) are bound by HBM and the vector unit:
  their output tiles (tile_h x tile_w) quantize the output plane, and the input vector width scales
  the memory efficiency.

The figures are the public ones of `ckast/arch/hardware.toml`; the efficiencies below are modelling
assumptions, stated once here. The model ranks; its absolute TFLOPS are estimates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np

from .problem import ConvProblem, Problem

PIPELINE_EFFICIENCY: Mapping[str, tuple[float, float, int]] = {
    # pipeline: (matrix efficiency, feed efficiency, prologue k-steps)
    "mem": (0.72, 1.00, 1),
    "compv1": (0.60, 0.80, 1),
    "compv2": (0.65, 0.85, 1),
    "basic_v1": (0.60, 0.80, 1),
    "basic_v2": (0.65, 0.85, 1),
    "basic_async_v1": (0.70, 0.90, 1),
    "compv3": (0.86, 0.90, 2),
    "compv4": (0.92, 0.92, 3),
    "compv5": (0.88, 0.90, 2),
    "compv6": (0.90, 0.92, 3),
    "comp_async": (0.93, 0.95, 3),
    "wavelet": (0.80, 0.95, 2),
    "preshufflev2": (0.94, 0.95, 3),
}
SCHEDULER_EFFICIENCY: Mapping[str, tuple[float, float]] = {
    # scheduler: (matrix, feed); interwave interleaves loads between the MFMAs of other waves
    "intrawave": (1.00, 1.00), "interwave": (0.97, 1.04), "default": (1.00, 1.00),
}
L2_BYTES_PER_CLOCK_PER_CU = 64
L2_MISS_RATE = 0.05
LAUNCH_SECONDS = 4e-6
SECOND_LAUNCH_SECONDS = 3e-6
STREAMK_OVERHEAD = 1.04
EXPLICIT_GEMM_GAIN = 1.05
SPLIT_IMAGE_COST = 0.98
SPECIALIZATION_GAIN: Mapping[str, float] = {
    # a specialized conv kernel skips the general im2col index arithmetic its problem does not need
    "default": 1.0, "filter3x3": 1.02, "filter1x1_pad0": 1.03, "filter1x1_stride1_pad0": 1.06,
}
SIMDS_PER_CU = 4
MAX_WARPS_RESIDENT = 8
DEPTHWISE_SLOTS_PER_CU = 8
DEPTHWISE_VECTOR_SHARE = 0.25
"""Depthwise kernels compute on the vector unit: this share of the datatype's matrix peak."""


@attrs.frozen
class Terms:
    """What the model needs of each kernel of a part, as columns (built once per part)."""

    depthwise: np.ndarray
    tm: np.ndarray
    tn: np.ndarray
    tk: np.ndarray
    warps: np.ndarray
    occupancy: np.ndarray
    matrix_eff: np.ndarray
    feed_eff: np.ndarray
    prologue: np.ndarray
    merge: np.ndarray
    streamk: np.ndarray
    two_stage: np.ndarray
    gain: np.ndarray
    tile_h: np.ndarray
    tile_w: np.ndarray
    element_bytes: int
    output_bytes: int


def terms(configs: tuple[Mapping[str, Any], ...], lds_bytes: int) -> Terms:
    """The per-kernel columns of `configs` (one datatype) on an arch whose CU holds `lds_bytes` of LDS."""
    from ckast.arch import DTYPES, PIPELINES

    def col(f, dtype=np.float64) -> np.ndarray:
        return np.fromiter((f(c) for c in configs), dtype=dtype, count=len(configs))

    dw = col(lambda c: c["variant"] == "forward_depthwise", bool)
    tm, tn, tk = (col(lambda c, d=d: c.get(f"tile_{d}") or 1) for d in "mnk")
    warps = col(lambda c: (c.get("warp_m") or 1) * (c.get("warp_n") or 1) * (c.get("warp_k") or 1))
    size = DTYPES[configs[0]["datatype"]].size
    buffers = col(lambda c: 2 if c.get("double_smem_buffer") or PIPELINES.get(c.get("pipeline"), None) is not None
                  and PIPELINES[c["pipeline"]].lds == "double" else 1)
    lds_block = (tm + tn) * tk * size * buffers
    occupancy = np.clip(np.floor(lds_bytes / lds_block), 1, np.maximum(1, MAX_WARPS_RESIDENT // warps))
    pipe = [PIPELINE_EFFICIENCY.get(c.get("pipeline"), (0.7, 0.9, 1)) for c in configs]
    sched = [SCHEDULER_EFFICIENCY.get(c.get("scheduler"), (1.0, 1.0)) for c in configs]
    shape = col(lambda c: _mfma_efficiency(c.get("warp_tile_m") or 32, c.get("warp_tile_n") or 32,
                                           c.get("warp_tile_k") or 16))
    vector = col(lambda c: _vector_efficiency(c, size))
    gain = col(lambda c: (EXPLICIT_GEMM_GAIN if c.get("explicit_gemm") else 1.0)
               * (SPLIT_IMAGE_COST if c.get("split_image") else 1.0)
               * SPECIALIZATION_GAIN[c.get("specialization", "default")])
    return Terms(
        depthwise=dw, tm=tm, tn=tn, tk=tk, warps=warps, occupancy=occupancy,
        matrix_eff=np.array([p[0] * s[0] for p, s in zip(pipe, sched)]) * shape,
        feed_eff=np.array([p[1] * s[1] for p, s in zip(pipe, sched)]) * vector,
        prologue=np.array([p[2] for p in pipe], dtype=np.float64),
        merge=col(lambda c: c.get("num_groups_to_merge") or 1),
        streamk=col(lambda c: bool(c.get("streamk_enabled")), bool),
        two_stage=col(lambda c: bool(c.get("two_stage")), bool),
        gain=gain,
        tile_h=col(lambda c: c.get("tile_h") or 1), tile_w=col(lambda c: c.get("tile_w") or 1),
        element_bytes=size, output_bytes=DTYPES[DTYPES[configs[0]["datatype"]].output].size,
    )


def _mfma_efficiency(m: int, n: int, k: int) -> float:
    """Square 32x32 MFMAs issue the fewest instructions per FLOP; skinny 4x64 ones the most."""
    if min(m, n) < 16:
        return 0.85
    return (1.0 if min(m, n) >= 32 else 0.96) * (1.0 if k * min(m, n) >= 256 else 0.97)


def _vector_efficiency(config: Mapping[str, Any], size: int) -> float:
    """Global loads of 16 B per lane are full speed; narrower vectors scale the feed down (to a floor)."""
    if config["kind"] == "gemm":
        return 1.0
    if config["variant"] == "forward_depthwise":
        widths = (config["in_vec"], config["out_vec"])
    else:
        widths = (config["vector_size_a"], config["vector_size_b"], config["vector_size_c"])
    return float(np.mean([max(0.35, min(1.0, w * size / 16)) for w in widths]))


def gemm_view(problem: Problem) -> tuple[int, int, int, int]:
    """(batch, M, N, K) of the GEMM the problem's kernels run (see the module docstring)."""
    if not isinstance(problem, ConvProblem):
        return 1, problem.M, problem.N, problem.K
    p = problem
    out, inp, filt = math.prod(p.output), math.prod(p.input), math.prod(p.filter)
    m, n, k = {
        "forward": (p.N * out, p.K, p.C * filt),
        "bwd_data": (p.N * inp, p.C, p.K * filt),
        "bwd_weight": (p.K, p.C * filt, p.N * out),
    }[p.direction]
    return p.G, m, n, k


def tensor_elements(problem: Problem) -> tuple[int, int, int]:
    """Elements of the two operands and the result, as they lie in memory (no im2col)."""
    if not isinstance(problem, ConvProblem):
        return problem.M * problem.K, problem.K * problem.N, problem.M * problem.N
    p = problem
    x = p.G * p.N * p.C * math.prod(p.input)
    w = p.G * p.K * p.C * math.prod(p.filter)
    y = p.G * p.N * p.K * math.prod(p.output)
    return {"forward": (x, w, y), "bwd_data": (y, w, x), "bwd_weight": (y, x, w)}[p.direction]


class AnalyticPredictor:
    """The analytic model as a predictor (`predict_tflops(problem, part, hw)`)."""

    name = "analytic"

    def predict_tflops(self, problem: Problem, part, hw, rows: np.ndarray | None = None) -> np.ndarray:
        if part.datatype not in hw.peak_tflops or hw.hbm_gbps is None:
            from .library import LibraryError

            raise LibraryError(f"the analytic model needs {hw.arch}'s peak {part.datatype} matrix rate and HBM "
                               "bandwidth, which ckast/arch/hardware.toml does not hold; rank with --model")
        key = ("analytic", hw.lds_bytes)
        if key not in part.memo:
            part.memo[key] = terms(part.configs, hw.lds_bytes)
        tflops = predict(problem, part.memo[key], hw, part.datatype)
        return tflops if rows is None else tflops[rows]


def predict(problem: Problem, t: Terms, hw, datatype: str) -> np.ndarray:
    """Predicted TFLOPS of every kernel of `t` for `problem` on `hw`."""
    batch, m, n, k = gemm_view(problem)
    a, b, c = tensor_elements(problem)
    k_batch = max(problem.k_batch, 1)
    peak = hw.peak_tflops[datatype] * 1e12
    cus = hw.num_cus
    clock = hw.max_clock_mhz * 1e6
    hbm = hw.hbm_gbps * 1e9
    size, out_size = t.element_bytes, t.output_bytes

    # tiles and padding
    groups = np.ceil(batch / t.merge)
    tiles_m = np.ceil(m / t.tm)
    tiles_n = np.ceil(n * t.merge / t.tn)
    k_split = math.ceil(k / k_batch)
    steps = np.ceil(k_split / t.tk)
    tiles = groups * tiles_m * tiles_n * k_batch

    # one k-step of one block, at its share of the CU
    active_simds = np.minimum(SIMDS_PER_CU, t.warps * t.occupancy)
    block_rate = peak / cus * active_simds / SIMDS_PER_CU / t.occupancy
    matrix = 2 * t.tm * t.tn * t.tk / (block_rate * t.matrix_eff)
    feed = (t.tm + t.tn) * t.tk * size / (L2_BYTES_PER_CLOCK_PER_CU * clock / t.occupancy * t.feed_eff)
    step = np.maximum(matrix, feed)
    write = t.tm * t.tn * out_size / (L2_BYTES_PER_CLOCK_PER_CU * clock / t.occupancy)
    tile_time = (steps + t.prologue) * step + write

    slots = cus * t.occupancy
    waves = np.where(t.streamk, tiles / slots * STREAMK_OVERHEAD, np.ceil(tiles / slots))
    compute = waves * tile_time

    # memory floor and the extra traffic of split-K and two-stage
    traffic = (a * size * (1 + L2_MISS_RATE * (tiles_n - 1)) + b * size * (1 + L2_MISS_RATE * (tiles_m - 1))
               + c * out_size)
    traffic = traffic + np.where(k_batch > 1, c * 4.0 * (k_batch + 1), 0.0)
    traffic = traffic + np.where(t.two_stage, c * (4.0 * 2 + out_size), 0.0)
    memory = traffic / (hbm * np.minimum(t.feed_eff, 1.0))
    seconds = np.maximum(compute, memory) / t.gain + LAUNCH_SECONDS + np.where(t.two_stage, SECOND_LAUNCH_SECONDS, 0.0)

    if t.depthwise.any():
        seconds = np.where(t.depthwise, _depthwise_seconds(problem, t, hw, peak, hbm), seconds)
    return problem.flops / seconds / 1e12


def _depthwise_seconds(problem: Problem, t: Terms, hw, peak: float, hbm: float) -> np.ndarray:
    """Depthwise kernels: output tiles quantize the plane; HBM or the vector unit bounds them."""
    if not isinstance(problem, ConvProblem) or problem.ndim != 2:
        return np.full(len(t.tm), np.inf)
    ho, wo = problem.output
    plane = ho * wo
    tiled = np.ceil(ho / t.tile_h) * t.tile_h * np.ceil(wo / t.tile_w) * t.tile_w
    blocks = problem.N * problem.G * np.ceil(ho / t.tile_h) * np.ceil(wo / t.tile_w)
    slots = hw.num_cus * DEPTHWISE_SLOTS_PER_CU
    wave_eff = blocks / (np.ceil(blocks / slots) * slots)
    a, b, c = tensor_elements(problem)
    memory = (a + b + c) * t.element_bytes / (hbm * t.feed_eff)
    compute = problem.flops * tiled / plane / (peak * DEPTHWISE_VECTOR_SHARE)
    return np.maximum(memory, compute) / wave_eff + LAUNCH_SECONDS
