"""The analytic performance model: predicted TFLOPS of every kernel of a part for one problem, from
the kernels' knobs and the arch's published figures alone (no timing data).

The problem is seen as the GEMM its kernels run (`view`): for a conv problem per direction,
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
  the memory efficiency. The model covers 2-D depthwise problems only (other ranks: 0 TFLOPS).

The figures are the public ones of `ckast/arch/hardware.toml`; the efficiencies below are modelling
assumptions, stated once here. The model ranks; its absolute TFLOPS are estimates.

The model is data: `analytic_tree(kind, direction, datatype, hw, ndim)` is one float tree of the
selection language (`select.expr`) giving the predicted TFLOPS from problem columns (`problem_columns`),
kernel columns and the hardware columns of `featureset.HW_COLUMNS`, read as the features read them;
the peak rate and HBM bandwidth enter as constants. Python evaluates it with `expr.Scope`
(`AnalyticPredictor`), the C++ selector lowers the same tree. Its kernel-side terms (`kernel_terms`:
efficiencies, occupancy, gains) read no problem column, so they fold to per-kernel constants; a knob a
kernel lacks (a NaN column) reads as its default, as does a zero or false one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import attrs
import numpy as np

from ckast.arch import DTYPES, PIPELINES
from ckast.arch.hardware import Hardware

from .expr import Col, Const, Expr, Hw, Lookup, Scope, ceil, floor, interned, lookup, maximum, minimum, where
from .features.featureset import hw_columns, kernel, problem
from .features.featureset import problem_columns as feature_problem_columns
from .problem import Problem

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
OTHER_PIPELINE = (0.7, 0.9, 1)
"""The efficiencies of a pipeline the table does not hold."""
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
DOUBLE_LDS_PIPELINES = tuple(name for name, p in PIPELINES.items() if p.lds == "double")
"""Pipelines that hold their A and B tiles twice in LDS."""
_AXES = {"d": ("Di", "Z"), "h": ("Hi", "Y"), "w": ("Wi", "X")}
"""Per spatial axis: its input and filter problem columns."""


# --- problem-side quantities: problem columns only ---------------------------------------------------


@attrs.frozen
class View:
    """The GEMM a problem's kernels run: `batch` GEMMs of (m, n, k), as expressions over problem columns."""

    batch: Expr
    m: Expr
    n: Expr
    k: Expr


def conv_output(axis: str) -> Expr:
    """The output length along `axis` ("d", "h" or "w"), as CK's ConvParam computes it."""
    i, f = _AXES[axis]
    span = (problem(f) - 1) * problem(f"dilation_{axis}") + 1
    padded = problem(i) + problem(f"left_pad_{axis}") + problem(f"right_pad_{axis}")
    return floor((padded - span) / problem(f"stride_{axis}")) + 1


def conv_volumes() -> tuple[Expr, Expr, Expr]:
    """(input, filter, output) volumes of a conv problem (an axis it lacks reads as 1)."""
    inputs = problem("Di") * problem("Hi") * problem("Wi")
    filt = problem("Z") * problem("Y") * problem("X")
    return inputs, filt, conv_output("d") * conv_output("h") * conv_output("w")


def view(kind: str, direction: str) -> View:
    """The GEMM of a problem of `kind` ("gemm" or "grouped_conv") and conv `direction` (see the module
    docstring; C and K are per group, as the problem columns hold them)."""
    if kind == "gemm":
        return View(Const(1.0), problem("M"), problem("N"), problem("K"))
    inputs, filt, output = conv_volumes()
    n, c, k = problem("N"), problem("C"), problem("K")
    m, gn, gk = {
        "forward": (n * output, k, c * filt),
        "bwd_data": (n * inputs, c, k * filt),
        "bwd_weight": (k, c * filt, n * output),
    }[direction]
    return View(problem("G"), m, gn, gk)


def tensor_elements(kind: str, direction: str) -> tuple[Expr, Expr, Expr]:
    """Elements of the two operands and the result, as they lie in memory (no im2col)."""
    if kind == "gemm":
        m, n, k = problem("M"), problem("N"), problem("K")
        return m * k, k * n, m * n
    inputs, filt, output = conv_volumes()
    g, n, c, k = (problem(name) for name in ("G", "N", "C", "K"))
    x, w, y = g * n * c * inputs, g * k * c * filt, g * n * k * output
    return {"forward": (x, w, y), "bwd_data": (y, w, x), "bwd_weight": (y, x, w)}[direction]


def flops(kind: str) -> Expr:
    """The problem's FLOPs (a conv problem's are its forward GEMM's, whatever the direction)."""
    fwd = view(kind, "forward")
    return 2 * fwd.batch * fwd.m * fwd.n * fwd.k if kind == "grouped_conv" else 2 * fwd.m * fwd.n * fwd.k


def problem_columns(problem: Problem) -> dict[str, int]:
    """The problem columns the trees read: the feature set's (`featureset.problem_columns`) and, for a
    conv problem, its `k_batch`."""
    columns = feature_problem_columns(problem)
    columns.setdefault("k_batch", problem.k_batch)
    return columns


def gemm_view(problem: Problem) -> tuple[int, int, int, int]:
    """(batch, M, N, K) of the GEMM `problem`'s kernels run (`view` evaluated)."""
    v = view(problem.kind, getattr(problem, "direction", "gemm"))
    scope = Scope(None, problem_columns(problem))
    return tuple(int(scope.value(e)) for e in (v.batch, v.m, v.n, v.k))


# --- kernel-side terms: kernel and hardware columns only ---------------------------------------------


def _truthy(x: Expr) -> Expr:
    """True where a kernel column holds a value that is not zero (NaN, a knob the kernel lacks: false)."""
    return x.eq(x) & x.ne(0.0)


def _knob(name: str, default: float) -> Expr:
    """Kernel column `name`, `default` where the kernel lacks the knob or it is zero."""
    x = kernel(name)
    return where(_truthy(x), x, default)


def _width_efficiency(name: str, size: int) -> Expr:
    """Global loads of 16 B per lane are full speed; narrower vectors scale the feed down (to a floor)."""
    return maximum(0.35, minimum(1.0, kernel(name) * size / 16))


@attrs.frozen
class KernelTerms:
    """What the model needs of each kernel, as expressions over kernel (and hardware) columns."""

    depthwise: Expr
    tm: Expr
    tn: Expr
    tk: Expr
    warps: Expr
    occupancy: Expr
    matrix_eff: Expr
    feed_eff: Expr
    prologue: Expr
    merge: Expr
    streamk: Expr
    two_stage: Expr
    gain: Expr
    tile_h: Expr
    tile_w: Expr


def kernel_terms(kind: str, datatype: str) -> KernelTerms:
    """The kernel-side terms of the kernels of `kind` and `datatype` (the CU's LDS is `Hw("lds_bytes")`)."""
    size = DTYPES[datatype].size
    tm, tn, tk = (_knob(f"tile_{d}", 1) for d in "mnk")
    warps = _knob("warp_m", 1) * _knob("warp_n", 1) * _knob("warp_k", 1)
    buffers = where(_truthy(kernel("double_smem_buffer")) | Col("pipeline").isin(DOUBLE_LDS_PIPELINES), 2.0, 1.0)
    lds_block = (tm + tn) * tk * size * buffers
    occupancy = minimum(maximum(floor(Hw("lds_bytes") / lds_block), 1), maximum(1, MAX_WARPS_RESIDENT // warps))

    def pipeline(i: int) -> Lookup:
        return lookup("pipeline", {p: e[i] for p, e in PIPELINE_EFFICIENCY.items()}, Col("pipeline"), OTHER_PIPELINE[i])

    def scheduler(i: int) -> Lookup:
        return lookup("scheduler", {s: e[i] for s, e in SCHEDULER_EFFICIENCY.items()}, Col("scheduler"), 1.0)

    # MFMA shape: square 32x32 MFMAs issue the fewest instructions per FLOP; skinny 4x64 ones the most
    short = minimum(_knob("warp_tile_m", 32), _knob("warp_tile_n", 32))
    shape = where(short < 16, 0.85,
                  where(short >= 32, 1.0, 0.96) * where(_knob("warp_tile_k", 16) * short >= 256, 1.0, 0.97))
    depthwise = Col("variant").eq("forward_depthwise")
    if kind == "gemm":
        vector: Expr = Const(1.0)
    else:
        width = functools.partial(_width_efficiency, size=size)
        vector = where(depthwise, (width("in_vec") + width("out_vec")) / 2,
                       (width("vector_size_a") + width("vector_size_b") + width("vector_size_c")) / 3)
    gain = (where(_truthy(kernel("explicit_gemm")), EXPLICIT_GEMM_GAIN, 1.0)
            * where(_truthy(kernel("split_image")), SPLIT_IMAGE_COST, 1.0)
            * lookup("specialization", SPECIALIZATION_GAIN, Col("specialization"), SPECIALIZATION_GAIN["default"]))
    return KernelTerms(
        depthwise=depthwise, tm=tm, tn=tn, tk=tk, warps=warps, occupancy=occupancy,
        matrix_eff=pipeline(0) * scheduler(0) * shape, feed_eff=pipeline(1) * scheduler(1) * vector,
        prologue=pipeline(2).as_float(), merge=_knob("num_groups_to_merge", 1),
        streamk=_truthy(kernel("streamk_enabled")), two_stage=_truthy(kernel("two_stage")), gain=gain,
        tile_h=_knob("tile_h", 1), tile_w=_knob("tile_w", 1),
    )


# --- the model ----------------------------------------------------------------------------------------


def analytic_tree(kind: str, direction: str, datatype: str, hw: Hardware, ndim: int | None = None) -> Expr:
    """Predicted TFLOPS of a kernel of `datatype` for a problem of `kind` ("gemm" or "grouped_conv"),
    conv `direction` and spatial rank `ndim` (conv only), on hardware profile `hw` (its peak rate of
    `datatype` and HBM bandwidth become constants: KeyError / ValueError where it has none)."""
    if kind == "grouped_conv" and ndim is None:
        raise ValueError("a grouped-conv analytic tree needs the problem's spatial rank (ndim)")
    if hw.hbm_gbps is None:
        raise ValueError(f"{hw.arch} has no HBM bandwidth figure")
    return _tree(kind, direction if kind == "grouped_conv" else "gemm", datatype, hw.peak_tflops[datatype],
                 hw.hbm_gbps, ndim if kind == "grouped_conv" else None)


@functools.lru_cache(maxsize=64)
def _tree(kind: str, direction: str, datatype: str, peak_tflops: float, hbm_gbps: float, ndim: int | None) -> Expr:
    t = kernel_terms(kind, datatype)
    v = view(kind, direction)
    a, b, c = tensor_elements(kind, direction)
    k_batch = maximum(problem("k_batch"), 1)
    peak, hbm = Const(peak_tflops * 1e12), Const(hbm_gbps * 1e9)
    size, out_size = DTYPES[datatype].size, DTYPES[DTYPES[datatype].output].size

    # tiles and padding
    groups = ceil(v.batch / t.merge)
    tiles_m = ceil(v.m / t.tm)
    tiles_n = ceil(v.n * t.merge / t.tn)
    steps = ceil(ceil(v.k / k_batch) / t.tk)
    tiles = groups * tiles_m * tiles_n * k_batch

    # one k-step of one block, at its share of the CU
    active_simds = minimum(SIMDS_PER_CU, t.warps * t.occupancy)
    block_rate = peak / Hw("num_cus") * active_simds / SIMDS_PER_CU / t.occupancy
    matrix = 2 * t.tm * t.tn * t.tk / (block_rate * t.matrix_eff)
    l2_share = L2_BYTES_PER_CLOCK_PER_CU * (Hw("max_clock_mhz") * 1e6) / t.occupancy
    feed = (t.tm + t.tn) * t.tk * size / (l2_share * t.feed_eff)
    write = t.tm * t.tn * out_size / l2_share
    tile_time = (steps + t.prologue) * maximum(matrix, feed) + write

    slots = Hw("num_cus") * t.occupancy
    waves = where(t.streamk, tiles / slots * STREAMK_OVERHEAD, ceil(tiles / slots))
    compute = waves * tile_time

    # memory floor and the extra traffic of split-K and two-stage
    traffic = (a * size * (1 + L2_MISS_RATE * (tiles_n - 1)) + b * size * (1 + L2_MISS_RATE * (tiles_m - 1))
               + c * out_size)
    traffic = traffic + where(k_batch > 1, c * 4.0 * (k_batch + 1), 0.0)
    traffic = traffic + where(t.two_stage, c * (4.0 * 2 + out_size), 0.0)
    memory = traffic / (hbm * minimum(t.feed_eff, 1.0))
    seconds = maximum(compute, memory) / t.gain + LAUNCH_SECONDS + where(t.two_stage, SECOND_LAUNCH_SECONDS, 0.0)

    if kind == "grouped_conv" and direction == "forward":
        depthwise = _depthwise_seconds(t, peak, hbm, size) if ndim == 2 else Const(np.inf)
        seconds = where(t.depthwise, depthwise, seconds)
    return interned(flops(kind) / seconds / 1e12)


def _depthwise_seconds(t: KernelTerms, peak: Expr, hbm: Expr, size: int) -> Expr:
    """Depthwise kernels (2-D forward): output tiles quantize the plane; HBM or the vector unit bounds them."""
    ho, wo = conv_output("h"), conv_output("w")
    tiled = ceil(ho / t.tile_h) * t.tile_h * ceil(wo / t.tile_w) * t.tile_w
    blocks = problem("N") * problem("G") * ceil(ho / t.tile_h) * ceil(wo / t.tile_w)
    slots = Hw("num_cus") * DEPTHWISE_SLOTS_PER_CU
    wave_eff = blocks / (ceil(blocks / slots) * slots)
    a, b, c = tensor_elements("grouped_conv", "forward")
    memory = (a + b + c) * size / (hbm * t.feed_eff)
    compute = flops("grouped_conv") * tiled / (ho * wo) / (peak * DEPTHWISE_VECTOR_SHARE)
    return maximum(memory, compute) / wave_eff + LAUNCH_SECONDS


class AnalyticPredictor:
    """The analytic model as a predictor (`predict_tflops(problem, part, hw)`): `analytic_tree` evaluated
    over the part's kernel table."""

    name = "analytic"

    def predict_tflops(self, problem: Problem, part, hw, rows: np.ndarray | None = None) -> np.ndarray:
        if part.datatype not in hw.peak_tflops or hw.hbm_gbps is None:
            from .library import LibraryError

            raise LibraryError(f"the analytic model needs {hw.arch}'s peak {part.datatype} matrix rate and HBM "
                               "bandwidth, which ckast/arch/hardware.toml does not hold; rank with --model")
        tree = analytic_tree(problem.kind, getattr(problem, "direction", "gemm"), part.datatype, hw,
                             getattr(problem, "ndim", None))
        scope = Scope(part.table, problem_columns(problem), hw_columns(hw))
        with np.errstate(all="ignore"):  # where(...) computes both branches, as numpy does
            tflops = scope.value(tree)
        return tflops if rows is None else tflops[rows]
