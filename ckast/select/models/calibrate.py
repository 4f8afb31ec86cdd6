"""Fitting the analytic model's per-arch constants on measured runs: what `tools/calibrate_analytic.py` fits the
shipped constants (`ckast/arch/calibration.toml`) with, and what `select train` refits them with on each fold's
training problems when its table holds problems the shipped constants were fitted on (`fitted_on`).

The fit: least squares of log(predicted / measured TFLOPS) over every run (soft-L1, from fixed starting values,
in log-parameter space within physical bounds, `BOUNDS`), then, `select`, a Powell search that maximizes the
selection it gives (the expected efficiency of a softmax pick over each problem's kernels, with the squared log
error as a tie to the measured level). The model is `analytic_tree` itself, evaluated over every (problem,
kernel) row at once. scipy (which lightgbm installs) does the minimizing. Deterministic.

Which constants are fitted on which arch (`FITTED`): MI355X (gfx950) fits on a grouped-conv table the matrix
fraction, the feed and LDS rates, the im2col cost, the step and tile latencies, the wave-issue factor, the
registers a lane holds besides its tiles, the wave tail, the launch latency and compv4's k-step cost (`select`);
MI300X (gfx942) fits on GEMM sweeps of one tile shape the feed and LDS rates, the step and tile latencies, the
launch latency, the k-step cost of compv4 and mem, the interwave scheduler's and a persistent kernel's tile cost.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

import attrs
import numpy as np

from ckast.arch.calibration import CONSTANTS, Calibration
from ckast.arch.hardware import Hardware, hardware
from ckast.select.expr import Scope
from ckast.select.expr.nodes import Expr, Hw
from ckast.select.features import KernelTable
from ckast.select.features.featureset import hw_columns
from ckast.select.problem import Problem
from ckast.select.serving.library import Library, Part
from ckast.select.serving.validity import problem_columns

from .analytic import analytic_tree

BOUNDS: Mapping[str, tuple[float, float, float]] = {
    # constant: (starting value, lower, upper bound)
    "matrix_fraction": (0.5, 0.05, 1.0),
    "feed_bytes_per_clock": (32.0, 4.0, 512.0),
    "im2col_feed_cost": (2.0, 1.0, 16.0),
    "lds_bytes_per_clock": (128.0, 16.0, 256.0),
    "wave_issue": (5.0, 0.5, 50.0),
    "tile_latency_us": (1.0, 0.01, 20.0),
    "base_vgprs": (64.0, 8.0, 256.0),
    "wave_tail": (0.5, 0.05, 1.0),
    "launch_us": (2.0, 0.1, 10.0),
    "persistent_tile_us": (0.1, 0.0001, 10.0),
    "interwave_step": (1.0, 0.5, 2.0),
    "pipeline_step.compv4": (1.0, 0.5, 2.0),
    "pipeline_step.mem": (1.0, 0.5, 2.0),
}
VGPRS_PER_LANE = 512
CONV_FITTED = ("matrix_fraction", "feed_bytes_per_clock", "im2col_feed_cost", "lds_bytes_per_clock", "wave_issue",
               "tile_latency_us", "base_vgprs", "wave_tail", "launch_us", "pipeline_step.compv4")
GEMM_FITTED = ("feed_bytes_per_clock", "lds_bytes_per_clock", "wave_issue", "tile_latency_us", "launch_us",
               "pipeline_step.compv4", "pipeline_step.mem", "interwave_step", "persistent_tile_us")
FITTED: Mapping[str, tuple[tuple[str, ...], bool]] = {"gfx950": (CONV_FITTED, True), "gfx942": (GEMM_FITTED, False)}
"""Per arch with its own table: the constants fitted on its measurements, and whether the selection search runs."""
SOFTMAX_BETA = 30.0
"""The selection objective's softmax sharpness over log TFLOPS (a kernel 3% slower: e^-0.9 the weight)."""
LEVEL_WEIGHT = 0.5
"""The selection objective's weight of the squared log error (each run's capped at 1)."""


@attrs.frozen(eq=False)
class Measured:
    """One table's runs as rows, problem by problem (evaluate's order), and what predicting them needs."""

    hw: Hardware
    part: Part
    problems: tuple[Problem, ...]
    starts: np.ndarray
    """The first row of each problem (its rows are contiguous), then the row count."""
    rows: np.ndarray
    """Each row's kernel: its index in the part."""
    tflops: np.ndarray
    stacked: KernelTable
    columns: Mapping[str, np.ndarray]

    @property
    def group(self) -> np.ndarray:
        """Each row's problem (index)."""
        return np.repeat(np.arange(len(self.problems)), np.diff(self.starts))

    def rows_of(self, problems: np.ndarray) -> np.ndarray:
        """The rows of the problems `problems` (indices), in order."""
        return np.concatenate([np.arange(self.starts[p], self.starts[p + 1]) for p in problems])

    def subset(self, problems: np.ndarray) -> Measured:
        """The runs of the problems `problems` (indices)."""
        rows = self.rows_of(problems)
        counts = np.diff(self.starts)[problems]
        return Measured(self.hw, self.part, tuple(self.problems[p] for p in problems),
                        np.concatenate([[0], np.cumsum(counts)]), self.rows[rows], self.tflops[rows],
                        KernelTable.of([self.part.configs[i] for i in self.rows[rows]]),
                        {k: v[rows] for k, v in self.columns.items()})


def measured_of(library: Library, grouped: Sequence[tuple[Problem, Mapping[int, float]]]) -> Measured:
    """The runs `grouped` ((problem, {library index of a kernel: TFLOPS}) in order; every problem of one part, none
    of per-group shapes) as rows, each problem's kernels in library order."""
    first = library.configs[min(grouped[0][1])]
    part = library.part(grouped[0][0], first["datatype"], first.get("layout") if first["kind"] == "gemm" else None)
    problems, rows, tflops, columns, starts = [], [], [], [], [0]
    for problem, kernels in grouped:
        indices = sorted(kernels)
        problems.append(problem)
        rows += [part.index[library.names[i]] for i in indices]
        tflops += [kernels[i] for i in indices]
        columns += [problem_columns(problem)] * len(indices)
        starts.append(len(rows))
    rows_ = np.array(rows)
    stacked = {name: np.array([c[name] for c in columns]) for name in columns[0]}
    return Measured(hardware(part.arch), part, tuple(problems), np.array(starts), rows_, np.array(tflops),
                    KernelTable.of([part.configs[i] for i in rows_]), stacked)


def _tree(data: Measured, cal: Calibration) -> Expr:
    problem = data.problems[0]
    return analytic_tree(problem.kind, getattr(problem, "direction", "gemm"), data.part.datatype, data.hw,
                         getattr(problem, "ndim", None), cal)


def _evaluate(data: Measured, tree: Expr, constants: Mapping[str, float]) -> np.ndarray:
    with np.errstate(all="ignore"):
        value = Scope(data.stacked, data.columns, {**hw_columns(data.hw), **constants}).value(tree)
    return np.asarray(value, dtype=np.float64)


def predict(data: Measured, cal: Calibration) -> np.ndarray:
    """The analytic model's TFLOPS of every row of `data` under `cal` (the tree `ckast select` evaluates,
    over all rows at once: problem columns are arrays here)."""
    return _evaluate(data, _tree(data, cal), {})


SYMBOL = "calibration."
"""The prefix of the hardware figures that stand for the constants being fitted (`symbolic`)."""


def symbolic(cal: Calibration, names: Sequence[str]) -> Calibration:
    """`cal` with the constants `names` as symbols (hardware figures `calibration.<name>`), so that one tree,
    built once, is evaluated for every candidate value of a fit."""
    return with_values(cal, {name: Hw(SYMBOL + name) for name in names})


def with_values(cal: Calibration, values: Mapping[str, float | Expr]) -> Calibration:
    """`cal` with the constants `values` (`pipeline_step.<name>` for a pipeline's k-step cost; a symbol stays one)."""
    steps = dict(cal.pipeline_step)
    scalars = {}
    for name, value in values.items():
        value = value if isinstance(value, Expr) else float(value)
        if name.startswith("pipeline_step."):
            steps[name.split(".", 1)[1]] = value
        else:
            scalars[name] = value
    return attrs.evolve(cal, **scalars, pipeline_step=tuple(sorted(steps.items())))


def selection_loss(data: Measured, predicted: np.ndarray) -> float:
    """Minus the mean expected efficiency of a softmax pick (over log TFLOPS) per problem, plus the capped
    squared log error."""
    logs = np.log(predicted)
    group = data.group
    top = np.maximum.reduceat(logs, data.starts[:-1])
    weight = np.exp(SOFTMAX_BETA * (logs - top[group]))
    best = np.maximum.reduceat(data.tflops, data.starts[:-1])
    expected = np.add.reduceat(weight * data.tflops / best[group], data.starts[:-1]) / np.add.reduceat(
        weight, data.starts[:-1])
    error = np.log(predicted / data.tflops)
    return float(-expected.mean() + LEVEL_WEIGHT * np.mean(np.minimum(error**2, 1.0)))


def fit(data: Measured, base: Calibration, names: Sequence[str], select: bool) -> Calibration:
    """`base` with the constants `names` fitted on `data` (deterministic): least squares of the log error,
    then, with `select`, a Powell search on the selection objective."""
    from scipy.optimize import least_squares, minimize

    lo = np.log([BOUNDS[n][1] for n in names])
    hi = np.log([BOUNDS[n][2] for n in names])
    start = np.clip(np.log([BOUNDS[n][0] for n in names]), lo + 1e-9, hi - 1e-9)

    tree = _tree(data, symbolic(base, names))

    def values(z: np.ndarray) -> dict[str, float]:
        return dict(zip(names, (float(v) for v in np.exp(np.clip(z, lo, hi)))))

    def predicted(z: np.ndarray) -> np.ndarray:
        return _evaluate(data, tree, {SYMBOL + name: value for name, value in values(z).items()})

    z = least_squares(lambda v: np.log(predicted(v) / data.tflops), start, bounds=(lo, hi), loss="soft_l1",
                      f_scale=0.1).x
    if select:
        z = minimize(lambda v: selection_loss(data, predicted(v)), z, method="Powell",
                     options={"maxiter": 20000, "xtol": 1e-3, "ftol": 1e-6}).x
    return with_values(base, values(z))


def start_calibration(arch: str) -> Calibration:
    """The starting values (`BOUNDS`), the arch's registers per lane."""
    values = {name: BOUNDS[name][0] for name in CONSTANTS if name in BOUNDS}
    steps = tuple(sorted((n.split(".", 1)[1], BOUNDS[n][0]) for n in BOUNDS if n.startswith("pipeline_step.")))
    return Calibration(arch, **values, vgprs_per_lane=float(VGPRS_PER_LANE), pipeline_step=steps, sources={})


def mi300x_start(mi355x: Calibration) -> Calibration:
    """MI300X's starting calibration: MI355X's values of the constants the sweep cannot tell."""
    shared = {n: getattr(mi355x, n) for n in CONSTANTS if n not in GEMM_FITTED and n != "vgprs_per_lane"}
    return with_values(start_calibration("gfx942"), shared)


def problem_digest(problem: Problem, arch: str, datatype: str) -> str:
    """A short digest of a measured problem (its arch, datatype, kind, conv direction and ndim, and the problem
    columns the model reads): what `fitted_on` records of the problems a calibration was fitted on."""
    key = {"arch": arch, "datatype": datatype, "kind": problem.kind,
           "direction": getattr(problem, "direction", None), "ndim": getattr(problem, "ndim", None),
           "columns": {k: int(v) for k, v in problem_columns(problem).items()}}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def fitted_on(problems: Sequence[Problem], arch: str, datatype: str) -> int:
    """How many of `problems` (of `arch` and `datatype`) the shipped constants of `arch` were fitted on."""
    from ckast.arch.calibration import fitted_problems

    seen = fitted_problems(arch)
    return sum(problem_digest(p, arch, datatype) in seen for p in problems) if seen else 0
