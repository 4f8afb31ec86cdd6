"""The analytic performance model: predicted TFLOPS of every kernel of a part for one problem, from
the kernels' knobs, the arch's published figures and a few physical constants calibrated once per arch
on CK's published measurements (no timing data at run time).

The problem is seen as the GEMM its kernels run (`view`): a GEMM problem's `batch` x `groups` GEMMs of (M, N, K)
(1 but for a batched or grouped problem: a grouped launch's tiles are all its groups' tiles, its last wave the
last across all groups; a grouped problem of per-group shapes sums each non-empty group's tiles, tiles x
k-steps, bytes and FLOPs, `group_trees`, and prices the one launch of those tiles, each of the tile-averaged
k-steps); for a conv problem per direction, forward (M, N, K) = (N x output, K, C x
filter), bwd_data (N x input, C, K x filter) and bwd_weight (K, C x filter, N x output), G of them. A kernel
of tile (tm, tn, tk) and w warps (wm x wn x wk), on a GPU of `num_cus` CUs of peak matrix rate P (dense, of
the datatype, a quantized one's at the rate of the type its warp GEMM computes in, `rate_datatype`;
`ckast/arch/hardware.toml`):

- **Tiles and padding**: ceil(batch / merged groups) x ceil(M / tm) x ceil(N x merged / tn) x k_batch
  output tiles (batch: a GEMM's batch or a conv's G), each running S = ceil((K / k_batch) / tk) k-steps of
  the full tile: the padded work is computed, so a tile that overhangs the problem wastes its overhang. This
  is what M-padded small tiles are for: at M = 1 to 32 (an LLM's decode) a 256-row tile computes 256 rows
  for the few it keeps, a 16- or 32-row one 16 or 32, so the model ranks the small padded tile first.
- **Occupancy** B, the blocks resident on a CU: as many as the LDS holds (A and B tiles, doubled for
  two-buffer pipelines) and the registers allow: a lane holds `base_vgprs` + its share of the fp32
  accumulators (tm tn / threads) + its share of the prefetched A and B tiles, of the arch's
  `vgprs_per_lane` (at most max_waves_per_cu / simds_per_cu waves per SIMD); at least one.
- **The busiest CU's tiles** n = tiles / num_cus, a partial last wave costing `wave_tail` of a full
  one (its blocks share the L2 and memory with fewer others); they run in n / B rounds of B resident
  blocks (the same quantization). A Stream-K kernel (a GEMM of the `stream_k` variant, a conv bwd_weight
  kernel with `streamk_enabled`) splits the K loops of the last wave's tiles over every CU: its n of
  k-steps is tiles / num_cus exactly, without the tail's quantization (in rounds as well), times
  `STREAMK_OVERHEAD` for its partial tiles' reduction; but each of the ceil(tiles / num_cus) tiles a CU
  touches is written whole and pays a tile's latency (in ceil(those / B) rounds). So where the last wave is
  ragged (tiles a little above a multiple of num_cus) it beats the same tile without Stream-K; where the
  tiles fill whole waves it loses its overhead.
- **Throughput**: the resident blocks share the CU. A k-step of a tile takes its matrix work
  (2 tm tn tk at `matrix_fraction` x P / num_cus, slower for an MFMA shape below the family's
  full-rate K and when the resident warps leave SIMDs idle), its feed ((tm x `im2col_feed_cost` for a
  conv's gathered A + tn) tk elements at `feed_bytes_per_clock` per CU, scaled by the vector widths)
  and its LDS reads ((tm wn + tn wm) tk elements at `lds_bytes_per_clock`), one after the other; a
  tile adds its output tile at the feed rate. A quantized kernel's k-step also feeds its scales: B's
  tn / bquant_group_n x tk / bquant_group_k and A's tm x tk / aquant_group_k, 4 bytes each (float) or 1 (fp8 /
  e8m0 scales), which the memory floor counts too (all of B's and A's scale groups once). A small term for
  1 x 128 / 128 x 128 groups (under 1% of the fp8 operands' bytes); it grows as the groups shrink.
- **Latency**: a block's k-step lasts at least `wave_issue` times one wave's MFMA time at its SIMD's
  peak (the loads, LDS reads and waits a wave issues around its MFMAs; the waves of a 1024-thread block
  each do a quarter of a 256-thread block's); a tile adds `tile_latency_us` (prologue loads, epilogue;
  `persistent_tile_us` more for a persistent kernel, which loops over its tiles).
- A pipeline's k-step (throughput and latency) costs its `pipeline_step` relative to compv3 (calibrated
  where measured, else `PIPELINE_STEP`), an interwave scheduler's `interwave_step` more.
- **Time**: the CU's throughput (n x (S x step + output)) plus its latency (rounds x (tile + S x step));
  a memory floor (the tensors across HBM, all of a batched GEMM's, operands re-read once per tile row/column
  at a 5% L2 miss rate; split-K adds its atomic partial outputs and the zeroing, two-stage its fp32 workspace) bounds it
  from below; divided by the gain that rewards explicit GEMM and the filter specializations (less index
  arithmetic) and charges split-image; plus `launch_us` (twice for two-stage).
- **Depthwise** kernels (one 64-thread wave per block, no MFMA) are bound by HBM and the vector unit:
  their output tiles (tile_h x tile_w) quantize the output plane, and the input vector width scales
  the memory efficiency. The model covers 2-D depthwise problems only (other ranks: 0 TFLOPS).

The constants in `code font` are the arch's calibration (`ckast/arch/calibration.toml`, each with its
source; `tools/calibrate_analytic.py` fits them on examples/ck-real and writes the file): MI355X's from
CK's grouped-conv forward table, MI300X's from CK's GEMM sweeps (what one tile shape cannot tell, the
MI355X value), other archs the fallback's. The remaining factors below (pipelines not measured,
skinny MFMAs, gains, the L2 miss rate, depthwise) are uncalibrated modelling assumptions. The model
ranks; its TFLOPS are estimates (the picked kernel's median error: 9% cross-validated on the MI355X
table, 17% leaving one MI300X sweep shape out; tools/bench_real_selection.py).

The model is data: `analytic_tree(kind, direction, datatype, hw, ndim)` is one float tree of the
selection language (`select.expr`) giving the predicted TFLOPS from problem columns (`validity.problem_columns`),
kernel columns and the hardware columns of `featureset.HW_COLUMNS`, read as the features read them;
the peak rate, HBM bandwidth and calibrated constants enter as constants. Python evaluates it with
`expr.Scope` (`AnalyticPredictor`), the C++ selector lowers the same tree. Its kernel-side terms
(`kernel_terms`: per-step and per-tile times, occupancy, gains) read no problem column, so they fold to
per-kernel constants; a knob a kernel lacks (a NaN column) reads as its default, as does a zero or false
one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import attrs
import numpy as np

from ckast.arch import DTYPES, PIPELINES
from ckast.arch.calibration import Calibration, calibration
from ckast.arch.hardware import Hardware

from ckast.select.expr import (
    Col,
    Const,
    Expr,
    Field,
    Hw,
    ProblemsScope,
    Scope,
    ceil,
    floor,
    interned,
    lookup,
    maximum,
    minimum,
    problems_values,
    where,
)
from ckast.select.features.featureset import hw_columns, kernel, problem
from ckast.select.problem import STREAM_K, Problem, per_shape
from ckast.select.serving.applicability import SCALE_BYTES
from ckast.variants.gemm_quant import TYPES as QUANT_TYPES
from ckast.select.serving.validity import problem_columns

PIPELINE_STEP: Mapping[str, float] = {
    # pipeline: k-step cost relative to compv3 where no calibration measured it (the ratio of the matrix
    # efficiencies the uncalibrated model assumed: 0.86 for compv3 over the pipeline's)
    "mem": 1.19, "compv1": 1.43, "compv2": 1.32, "basic_v1": 1.43, "basic_v2": 1.32, "basic_async_v1": 1.23,
    "compv3": 1.0, "compv4": 0.93, "compv5": 0.98, "compv6": 0.96, "comp_async": 0.92, "wavelet": 1.08,
    "preshufflev2": 0.91,
}
OTHER_PIPELINE_STEP = 1.23
"""The k-step cost of a pipeline neither the calibration nor `PIPELINE_STEP` holds."""
SKINNY_MFMA_RATE = 0.85
"""The matrix rate of MFMA shapes narrower than 16 (4x64, 64x4): more instructions per FLOP."""
L2_MISS_RATE = 0.05
STREAMK_OVERHEAD = 1.04
EXPLICIT_GEMM_GAIN = 1.05
SPLIT_IMAGE_COST = 0.98
SPECIALIZATION_GAIN: Mapping[str, float] = {
    # a specialized conv kernel skips the general im2col index arithmetic its problem does not need
    "default": 1.0, "filter3x3": 1.02, "filter1x1_pad0": 1.03, "filter1x1_stride1_pad0": 1.06,
}
MAX_WARPS_RESIDENT = 8
"""The derived features' convention (`features.derived`): at most this many warps of one CU's blocks."""
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
        return View(problem("batch") * problem("groups"), problem("M"), problem("N"), problem("K"))
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
        batch, m, n, k = problem("batch") * problem("groups"), problem("M"), problem("N"), problem("K")
        return batch * m * k, batch * k * n, batch * m * n
    inputs, filt, output = conv_volumes()
    g, n, c, k = (problem(name) for name in ("G", "N", "C", "K"))
    x, w, y = g * n * c * inputs, g * k * c * filt, g * n * k * output
    return {"forward": (x, w, y), "bwd_data": (y, w, x), "bwd_weight": (y, x, w)}[direction]


def flops(kind: str) -> Expr:
    """The problem's FLOPs (a conv problem's are its forward GEMM's, whatever the direction; a GEMM's all its
    batch's)."""
    fwd = view(kind, "forward" if kind == "grouped_conv" else "gemm")
    return 2 * fwd.batch * fwd.m * fwd.n * fwd.k


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
    """What the model needs of each kernel, as expressions over kernel and hardware columns (seconds where
    a time): the k-step's share of the CU (`step_work`) and its latency (`step_latency`), the output
    tile's share (`output_work`) and the tile's latency (`tile_latency`), per tile."""

    depthwise: Expr
    tm: Expr
    tn: Expr
    tk: Expr
    occupancy: Expr
    step_work: Expr
    step_latency: Expr
    output_work: Expr
    tile_latency: Expr
    memory_eff: Expr
    scale_b: Expr
    scale_a: Expr
    merge: Expr
    streamk: Expr
    two_stage: Expr
    gain: Expr
    tile_h: Expr
    tile_w: Expr


def kernel_terms(kind: str, datatype: str, peak_tflops: float, full_rate_k: int | None,
                 cal: Calibration) -> KernelTerms:
    """The kernel-side terms of the kernels of `kind` and `datatype` on a GPU of that peak rate (and MFMA
    `full_rate_k`, `Hardware.mfma_full_rate_k`) with the arch's calibration `cal` (the module docstring)."""
    size, out_size = DTYPES[datatype].size, DTYPES[DTYPES[datatype].output].size
    tm, tn, tk = (_knob(f"tile_{d}", 1) for d in "mnk")
    wm, wn = _knob("warp_m", 1), _knob("warp_n", 1)
    warps = wm * wn * _knob("warp_k", 1)
    simds, clock = Hw("simds_per_cu"), Hw("max_clock_mhz") * 1e6
    cu_peak = peak_tflops * 1e12 / Hw("num_cus")

    # occupancy: the LDS and the registers of the resident blocks
    buffers = where(_truthy(kernel("double_smem_buffer")) | Col("pipeline").isin(DOUBLE_LDS_PIPELINES), 2.0, 1.0)
    by_lds = floor(Hw("lds_bytes") / ((tm + tn) * tk * size * buffers))
    threads = warps * Hw("wavefront_size")
    vgprs = cal.base_vgprs + tm * tn / threads + (tm + tn) * tk * size / 4 / threads
    waves_per_simd = minimum(Hw("max_waves_per_cu") / simds, floor(cal.vgprs_per_lane / vgprs))
    occupancy = maximum(minimum(by_lds, floor(waves_per_simd * simds / warps)), 1.0)

    # the MFMA's rate: below the family's full-rate K (x the shorter side), a slower instruction
    short = minimum(_knob("warp_tile_m", 32), _knob("warp_tile_n", 32))
    rate = where(short < 16, SKINNY_MFMA_RATE,
                 1.0 if full_rate_k is None else minimum(1.0, _knob("warp_tile_k", 16) * short / (16 * full_rate_k)))
    depthwise = Col("variant").eq("forward_depthwise")
    if kind == "gemm":
        width_a = width_b = width_c = memory_eff = Const(1.0)
    else:
        width = functools.partial(_width_efficiency, size=size)
        width_a, width_b, width_c = width("vector_size_a"), width("vector_size_b"), width("vector_size_c")
        memory_eff = where(depthwise, (width("in_vec") + width("out_vec")) / 2, (width_a + width_b + width_c) / 3)
    gathered = cal.im2col_feed_cost if kind == "grouped_conv" else 1.0

    feed = cal.feed_bytes_per_clock * clock
    # a quantized kernel's scales: per k-step, B's of its tn / group_n x tk / group_k groups and A's of its tm x
    # tk / group_k, each `SCALE_BYTES` (none where the kernel has no such group)
    scale = SCALE_BYTES.get(datatype, 4)
    scale_b = where(_truthy(kernel("bquant_group_k")),
                    scale / (_knob("bquant_group_n", 1) * _knob("bquant_group_k", 1)), 0.0)
    scale_a = where(_truthy(kernel("aquant_group_k")), scale / _knob("aquant_group_k", 1), 0.0)
    matrix = 2 * tm * tn * tk / (cu_peak * cal.matrix_fraction * rate * minimum(1.0, warps * occupancy / simds))
    loads = ((tm * gathered / width_a + tn / width_b) * tk * size + (tn * scale_b + tm * scale_a) * tk) / feed
    lds_reads = (tm * wn + tn * wm) * tk * size / (cal.lds_bytes_per_clock * clock)
    wave_mfma = 2 * tm * tn * tk / warps / (cu_peak / simds * rate)
    step = (_pipeline_step(dict(PIPELINE_STEP, **dict(cal.pipeline_step)))
            * where(Col("scheduler").eq("interwave"), cal.interwave_step, 1.0))
    gain = (where(_truthy(kernel("explicit_gemm")), EXPLICIT_GEMM_GAIN, 1.0)
            * where(_truthy(kernel("split_image")), SPLIT_IMAGE_COST, 1.0)
            * lookup("specialization", SPECIALIZATION_GAIN, Col("specialization"), SPECIALIZATION_GAIN["default"]))
    return KernelTerms(
        depthwise=depthwise, tm=tm, tn=tn, tk=tk, occupancy=occupancy,
        step_work=(matrix + loads + lds_reads) * step,
        step_latency=cal.wave_issue * wave_mfma * step,
        output_work=tm * tn * out_size / (feed * width_c),
        tile_latency=cal.tile_latency_us * 1e-6 + where(_truthy(kernel("persistent")), cal.persistent_tile_us * 1e-6,
                                                        0.0),
        memory_eff=memory_eff, scale_b=scale_b, scale_a=scale_a, merge=_knob("num_groups_to_merge", 1),
        streamk=_truthy(kernel("streamk_enabled")) | Col("variant").eq(STREAM_K),
        two_stage=_truthy(kernel("two_stage")), gain=gain,
        tile_h=_knob("tile_h", 1), tile_w=_knob("tile_w", 1),
    )


def _pipeline_step(steps: dict[str, float | Expr]) -> Expr:
    """A kernel's k-step cost relative to compv3 by its pipeline: a lookup of the constants, or where the fit
    makes some of them symbolic (`calibrate.symbolic`), the same choice as a chain of `where`."""
    if all(isinstance(value, float) for value in steps.values()):
        return lookup("pipeline", steps, Col("pipeline"), OTHER_PIPELINE_STEP)
    chosen: Expr = Const(OTHER_PIPELINE_STEP)
    for name, value in sorted(steps.items(), reverse=True):
        chosen = where(Col("pipeline").eq(name), value, chosen)
    return chosen


# --- the model ----------------------------------------------------------------------------------------


_RATE_TYPES = {"fp8_t": "fp8", "bf8_t": "bf8", "bf16_t": "bf16", "pk_fp4_t": "fp8"}


def rate_datatype(datatype: str) -> str:
    """The datatype whose peak matrix rate kernels of `datatype` run at: their own, or a quantized datatype's A
    type (CK's quant warp GEMMs compute in it: int4 B converted to fp8/bf8, the microscale mixes in bf16); fp4 at
    fp8's rate (hardware.toml has no fp4 figure: a lower bound where the GPU has fp4 MFMAs)."""
    types = QUANT_TYPES.get(datatype)
    return datatype if types is None else _RATE_TYPES[types[0]]


def priced(hw: Hardware, datatype: str) -> bool:
    """Whether the analytic model prices `datatype`'s kernels on `hw` (a peak rate and the HBM bandwidth)."""
    return rate_datatype(datatype) in hw.peak_tflops and hw.hbm_gbps is not None


def analytic_tree(kind: str, direction: str, datatype: str, hw: Hardware, ndim: int | None = None,
                  cal: Calibration | None = None) -> Expr:
    """Predicted TFLOPS of a kernel of `datatype` for a problem of `kind` ("gemm" or "grouped_conv"),
    conv `direction` and spatial rank `ndim` (conv only), on hardware profile `hw` with calibration `cal`
    (default: the arch's, `ckast.arch.calibration`). The peak rate of `datatype`, the HBM bandwidth and
    the calibration become constants: KeyError / ValueError where `hw` has no peak or bandwidth."""
    if kind == "grouped_conv" and ndim is None:
        raise ValueError("a grouped-conv analytic tree needs the problem's spatial rank (ndim)")
    if hw.hbm_gbps is None:
        raise ValueError(f"{hw.arch} has no HBM bandwidth figure")
    rate = rate_datatype(datatype)
    return _tree(kind, direction if kind == "grouped_conv" else "gemm", datatype, hw.peak_tflops[rate],
                 hw.hbm_gbps, hw.mfma_full_rate_k.get(rate), ndim if kind == "grouped_conv" else None,
                 calibration(hw.arch) if cal is None else cal)


@functools.lru_cache(maxsize=64)
def _tree(kind: str, direction: str, datatype: str, peak_tflops: float, hbm_gbps: float, full_rate_k: int | None,
          ndim: int | None, cal: Calibration) -> Expr:
    t = kernel_terms(kind, datatype, peak_tflops, full_rate_k, cal)
    v = view(kind, direction)
    a, b, c = tensor_elements(kind, direction)
    k_batch = maximum(problem("k_batch"), 1)
    hbm = Const(hbm_gbps * 1e9)
    size = DTYPES[datatype].size
    launch = cal.launch_us * 1e-6

    # tiles and padding
    groups = ceil(v.batch / t.merge)
    tiles_m = ceil(v.m / t.tm)
    tiles_n = ceil(v.n * t.merge / t.tn)
    steps = ceil(ceil(v.k / k_batch) / t.tk)
    tiles = groups * tiles_m * tiles_n * k_batch
    traffic = _traffic(t, datatype, (a, b, c), tiles_m, tiles_n, k_batch)
    seconds = _seconds(t, tiles, steps, traffic, hbm, launch, cal)

    if kind == "grouped_conv" and direction == "forward":
        depthwise = _depthwise_seconds(t, Const(peak_tflops * 1e12), hbm, size, launch) if ndim == 2 else Const(np.inf)
        seconds = where(t.depthwise, depthwise, seconds)
    return interned(flops(kind) / seconds / 1e12)


def _traffic(t: KernelTerms, datatype: str, tensors: tuple[Expr, Expr, Expr], tiles_m: Expr, tiles_n: Expr,
             k_batch: Expr) -> Expr:
    """Bytes across HBM: the tensors (A and B re-read per tile row / column at the L2 miss rate), the scales, and
    the extra traffic of split-K and two-stage."""
    a, b, c = tensors
    size, out_size = DTYPES[datatype].size, DTYPES[DTYPES[datatype].output].size
    traffic = (a * size * (1 + L2_MISS_RATE * (tiles_n - 1)) + b * size * (1 + L2_MISS_RATE * (tiles_m - 1))
               + c * out_size + (b * t.scale_b + a * t.scale_a))
    traffic = traffic + where(k_batch > 1, c * 4.0 * (k_batch + 1), 0.0)
    return traffic + where(t.two_stage, c * (4.0 * 2 + out_size), 0.0)


def _seconds(t: KernelTerms, tiles: Expr, steps: Expr, traffic: Expr, hbm: Expr, launch: float,
             cal: Calibration) -> Expr:
    """The launch's time: `tiles` tiles of `steps` k-steps each (see the module docstring)."""
    # the busiest CU: its tiles (a partial wave at `wave_tail`), in rounds of the resident blocks
    per_cu = tiles / Hw("num_cus")
    n = where(t.streamk, per_cu * STREAMK_OVERHEAD, _tail(per_cu, cal.wave_tail))
    per_slot = n / t.occupancy
    rounds = where(t.streamk, per_slot, _tail(per_slot, cal.wave_tail))
    compute = n * (steps * t.step_work + t.output_work) + rounds * (t.tile_latency + steps * t.step_latency)
    # Stream-K: its K loops in fractions of tiles, but each tile a CU touches written whole and paying its latency
    pieces = ceil(per_cu)
    streamk = (n * steps * t.step_work + pieces * t.output_work
               + ceil(pieces / t.occupancy) * t.tile_latency + per_slot * steps * t.step_latency)
    compute = where(t.streamk, streamk, compute)
    memory = traffic / (hbm * t.memory_eff)
    return maximum(compute, memory) / t.gain + launch + where(t.two_stage, launch, 0.0)


GROUP_SUMS = ("group_tiles", "group_tile_steps", "group_traffic", "group_flops")
"""What a grouped launch of per-group shapes sums over its groups (`group_trees`)."""


def group_trees(datatype: str, hw: Hardware, cal: Calibration | None = None) -> tuple[tuple[Expr, ...], Expr]:
    """The analytic model of a grouped GEMM of per-group shapes, in two steps: per group (its M, N, K, the
    problem's batch and k_batch) its tiles, its tiles x k-steps, its bytes across HBM and its FLOPs (`GROUP_SUMS`,
    one float tree each); then from their sums over the non-empty groups (float problem fields of those names,
    one value per kernel) the predicted TFLOPS of the one launch: all groups' tiles, their last wave across all
    groups, each tile of the k-steps averaged over the tiles (each group's own K loop). Groups of one shape give
    the one-shape model's prediction up to rounding."""
    if hw.hbm_gbps is None:
        raise ValueError(f"{hw.arch} has no HBM bandwidth figure")
    rate = rate_datatype(datatype)
    return _group_trees(datatype, hw.peak_tflops[rate], hw.hbm_gbps, hw.mfma_full_rate_k.get(rate),
                        calibration(hw.arch) if cal is None else cal)


@functools.lru_cache(maxsize=16)
def _group_trees(datatype: str, peak_tflops: float, hbm_gbps: float, full_rate_k: int | None,
                 cal: Calibration) -> tuple[tuple[Expr, ...], Expr]:
    t = kernel_terms("gemm", datatype, peak_tflops, full_rate_k, cal)
    batch, m, n, k = problem("batch"), problem("M"), problem("N"), problem("K")
    k_batch = maximum(problem("k_batch"), 1)
    tiles_m, tiles_n = ceil(m / t.tm), ceil(n / t.tn)
    tiles = batch * tiles_m * tiles_n * k_batch
    steps = ceil(ceil(k / k_batch) / t.tk)
    traffic = _traffic(t, datatype, (batch * m * k, batch * k * n, batch * m * n), tiles_m, tiles_n, k_batch)
    per_group = tuple(interned(e) for e in (tiles, tiles * steps, traffic, 2 * batch * m * n * k))
    total_tiles, tile_steps, total_traffic, total_flops = (Field(name, type=float) for name in GROUP_SUMS)
    seconds = _seconds(t, total_tiles, tile_steps / total_tiles, total_traffic, Const(hbm_gbps * 1e9),
                       cal.launch_us * 1e-6, cal)
    return per_group, interned(total_flops / seconds / 1e12)


def group_sums(problem: Problem, part, hw, cal: Calibration | None = None) -> dict[str, np.ndarray]:
    """`GROUP_SUMS` of a problem of per-group shapes over `part`'s kernels: each group's trees (`group_trees`)
    evaluated and added up in group order, from 0 (what the C++ selector adds)."""
    trees, _ = group_trees(part.datatype, hw, cal)
    sums = [np.zeros(len(part)) for _ in trees]
    for _, group in problem.group_problems():
        scope = Scope(part.table, problem_columns(group), hw_columns(hw))
        with np.errstate(all="ignore"):
            sums = [s + scope.value(tree) for s, tree in zip(sums, trees)]
    return dict(zip(GROUP_SUMS, sums))


def _tail(x: Expr, tail: float) -> Expr:
    """`x` waves, the partial last one costing `tail` of a whole one."""
    return x + tail * (ceil(x) - x)


def _depthwise_seconds(t: KernelTerms, peak: Expr, hbm: Expr, size: int, launch: float) -> Expr:
    """Depthwise kernels (2-D forward): output tiles quantize the plane; HBM or the vector unit bounds them."""
    ho, wo = conv_output("h"), conv_output("w")
    tiled = ceil(ho / t.tile_h) * t.tile_h * ceil(wo / t.tile_w) * t.tile_w
    blocks = problem("N") * problem("G") * ceil(ho / t.tile_h) * ceil(wo / t.tile_w)
    slots = Hw("num_cus") * DEPTHWISE_SLOTS_PER_CU
    wave_eff = blocks / (ceil(blocks / slots) * slots)
    a, b, c = tensor_elements("grouped_conv", "forward")
    memory = (a + b + c) * size / (hbm * t.memory_eff)
    compute = flops("grouped_conv") * tiled / (ho * wo) / (peak * DEPTHWISE_VECTOR_SHARE)
    return maximum(memory, compute) / wave_eff + launch


class AnalyticPredictor:
    """The analytic model as a predictor (`predict_tflops(problem, part, hw)`, and `predict_many` for many
    problems, as `batch.rank_many` calls it): `analytic_tree` evaluated over the part's kernel table, with the
    arch's calibration or the one given (`cal`)."""

    name = "analytic"

    def __init__(self, cal: Calibration | None = None) -> None:
        self.cal = cal

    def predict_tflops(self, problem: Problem, part, hw, rows: np.ndarray | None = None) -> np.ndarray:
        tree = self._tree(problem, part, hw)
        if problem.group_shapes:  # per-group shapes: the groups' sums, then the launch
            tree = group_trees(part.datatype, hw, self.cal)[1]
            scope = Scope(part.table, group_sums(problem, part, hw, self.cal), hw_columns(hw))
        else:
            scope = Scope(part.table, problem_columns(problem), hw_columns(hw))
        with np.errstate(all="ignore"):  # where(...) computes both branches, as numpy does
            tflops = scope.value(tree)
        return tflops if rows is None else tflops[rows]

    def predict_many(self, problems: Sequence[Problem], part, hw, mask: np.ndarray) -> np.ndarray:
        """`predict_tflops` of problems of one part at once, of the kernels where `mask` (problems x kernels)
        holds: problems x kernels, each of those entries the one `predict_tflops` gives, NaN elsewhere (every
        entry is computed: the trees cost as much for some kernels as for all). Problems of per-group shapes are
        predicted one by one."""
        if any(p.group_shapes for p in problems):
            return np.array(per_shape(
                problems, lambda ids: self.predict_many([problems[i] for i in ids], part, hw, mask[ids]),
                lambda i: np.where(mask[i], self.predict_tflops(problems[i], part, hw), np.nan))).reshape(mask.shape)
        scope = ProblemsScope(part.table, problems_values([problem_columns(p) for p in problems]), hw_columns(hw))
        with np.errstate(all="ignore"):
            tflops = scope.value(self._tree(problems[0], part, hw))
        return np.where(mask, tflops, np.nan)

    def _tree(self, problem: Problem, part, hw) -> Expr:
        if not priced(hw, part.datatype):
            from ckast.arguments import argument

            from ckast.select.serving.library import LibraryError

            raise LibraryError(f"the analytic model needs {hw.arch}'s peak {part.datatype} matrix rate and HBM "
                               "bandwidth, which ckast/arch/hardware.toml does not hold; rank with "
                               f"{argument('model')}")
        return analytic_tree(problem.kind, getattr(problem, "direction", "gemm"), part.datatype, hw,
                             getattr(problem, "ndim", None), self.cal)
