"""Fit the analytic model's per-arch constants (`ckast/arch/calibration.toml`) on CK's published measurements
(examples/ck-real), deterministically, and write the file.

- MI355X (gfx950): the grouped-conv forward bf16 table (185 shapes x 13 kernels). Fitted: the matrix
  fraction, the feed and LDS rates, the im2col cost of the gathered A, the step and tile latencies, the
  wave-issue factor, the registers a lane holds besides its tiles, the wave tail, the launch latency and
  compv4's k-step cost. The registers per lane are the arch's (LLVM's AMDGPU backend).
- MI300X (gfx942): the two GEMM sweeps (4 shapes x 32 kernels each, their runs combined). One tile shape
  cannot tell occupancy, latency structure or the conv-only im2col cost apart, so those are MI355X's;
  fitted: the feed and LDS rates, the step and tile latencies, the launch latency, the k-step cost of
  compv4 and mem, the interwave scheduler's and a persistent kernel's tile cost. What MI355X's table has
  no kernel for (mem, interwave, persistent) is MI300X's.

The fit, per arch: least squares of log(predicted / measured TFLOPS) over every run (soft-L1, from fixed
starting values, in log-parameter space within physical bounds), then for MI355X a Powell search that
maximizes the selection it gives (the expected efficiency of a softmax pick over each problem's kernels,
with the squared log error as a tie to the measured level). The model is `analytic_tree` itself, evaluated
over every (problem, kernel) row at once. scipy (which lightgbm installs) does the minimizing.

    python tools/calibrate_analytic.py            # fit, print the constants, write calibration.toml
    python tools/calibrate_analytic.py --dry-run  # fit and print only
    python tools/calibrate_analytic.py --check    # exit 1 unless the shipped file is what the fit writes

`bench_real_selection.py` imports the tables and the fit from here (cross-validated figures).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ckast.arch.calibration import CONSTANTS, PATH, Calibration, parse  # noqa: E402
from ckast.arch.hardware import Hardware, hardware  # noqa: E402
from ckast.config import as_dict, load_file  # noqa: E402
from ckast.lower.identity import kernel_name  # noqa: E402
from ckast.select.models.analytic import analytic_tree  # noqa: E402
from ckast.select.serving.applicability import LAYERS  # noqa: E402
from ckast.select.ranking.evaluate import group_runs  # noqa: E402
from ckast.select.expr import Scope  # noqa: E402
from ckast.select.features import KernelTable  # noqa: E402
from ckast.select.features.featureset import hw_columns  # noqa: E402
from ckast.select.tables.kernel_table import read_kernel_table  # noqa: E402
from ckast.select.serving.library import Library, Part  # noqa: E402
from ckast.select.problem import Problem  # noqa: E402
from ckast.select.tables.timings import read_timings  # noqa: E402
from ckast.select.serving.validity import problem_columns  # noqa: E402

REAL = ROOT / "examples" / "ck-real"
CONV = ("grouped_conv_fwd_bf16_gfx950.json", "grouped_conv_fwd_bf16_gfx950_kernels.csv")
CONV_TABLES = ("grouped_conv_fwd_bf16_gfx950_train.csv",)
GEMM = ("gemm_fp16_rcr_gfx942_sweep.json", "gemm_fp16_rcr_gfx942_kernels.csv")
GEMM_TABLES = ("gemm_fp16_rcr_gfx942_sweep_results.csv", "gemm_fp16_rcr_gfx942_sweep_results_b.csv")

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
SOFTMAX_BETA = 30.0
"""The selection objective's softmax sharpness over log TFLOPS (a kernel 3% slower: e^-0.9 the weight)."""
LEVEL_WEIGHT = 0.5
"""The selection objective's weight of the squared log error (each run's capped at 1)."""
SOURCES = {
    "ck_conv_gfx950": "fitted by tools/calibrate_analytic.py on examples/ck-real/"
                      "grouped_conv_fwd_bf16_gfx950_train.csv (CK's MI355X measurements: 185 shapes x 13 kernels, "
                      "grouped-conv forward bf16)",
    "ck_gemm_gfx942": "fitted by tools/calibrate_analytic.py on examples/ck-real/"
                      "gemm_fp16_rcr_gfx942_sweep_results.csv and _b.csv (CK's MI300X measurements: 4 shapes x 32 "
                      "GEMM kernels, fp16, two runs)",
    "llvm_amdgpu": "LLVM AMDGPU backend documentation (gfx90a and later: 512 VGPRs per lane, architectural and "
                   "accumulation registers in one file): https://llvm.org/docs/AMDGPUUsage.html",
}


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


def library_of(config_file: str) -> Library:
    """The library `ckast emit --config` makes of a config file of examples/ck-real (names, configs)."""
    kernels = load_file(REAL / config_file)
    return Library(REAL / config_file, tuple(kernel_name(k.config) for k in kernels),
                   tuple(as_dict(k.config) for k in kernels))


def measured(library: Library, kernels_file: str, tables: Sequence[str]) -> Measured:
    """The runs of `tables` (with CK's kernel table), combined per (problem, kernel) as `ckast select eval`
    combines them (the applicability layers of eval: the kernel's and the dispatcher's checks)."""
    timings = read_timings([REAL / t for t in tables], library, kernels=read_kernel_table(REAL / kernels_file, library),
                           layers=LAYERS)
    grouped = sorted(group_runs(timings.runs).items(), key=lambda item: repr(item[0]))
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


def conv_gfx950() -> Measured:
    """CK's MI355X grouped-conv forward table."""
    return measured(library_of(CONV[0]), CONV[1], CONV_TABLES)


def gemm_gfx942(tables: Sequence[str] = GEMM_TABLES) -> Measured:
    """CK's MI300X GEMM sweeps (both runs, combined per kernel and shape, or the runs of `tables`)."""
    return measured(library_of(GEMM[0]), GEMM[1], tables)


def predict(data: Measured, cal: Calibration) -> np.ndarray:
    """The analytic model's TFLOPS of every row of `data` under `cal` (the tree `ckast select` evaluates,
    over all rows at once: problem columns are arrays here)."""
    problem = data.problems[0]
    tree = analytic_tree(problem.kind, getattr(problem, "direction", "gemm"), data.part.datatype, data.hw,
                         getattr(problem, "ndim", None), cal)
    with np.errstate(all="ignore"):
        value = Scope(data.stacked, data.columns, hw_columns(data.hw)).value(tree)
    data.stacked.cache.clear()  # every candidate calibration is another tree
    return np.asarray(value, dtype=np.float64)


def with_values(cal: Calibration, values: Mapping[str, float]) -> Calibration:
    """`cal` with the constants `values` (`pipeline_step.<name>` for a pipeline's k-step cost)."""
    steps = dict(cal.pipeline_step)
    scalars = {}
    for name, value in values.items():
        if name.startswith("pipeline_step."):
            steps[name.split(".", 1)[1]] = float(value)
        else:
            scalars[name] = float(value)
    return attrs.evolve(cal, **scalars, pipeline_step=tuple(sorted(steps.items())))


def _selection_loss(data: Measured, predicted: np.ndarray) -> float:
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

    def cal_of(z: np.ndarray) -> Calibration:
        return with_values(base, dict(zip(names, np.exp(np.clip(z, lo, hi)))))

    def residuals(z: np.ndarray) -> np.ndarray:
        return np.log(predict(data, cal_of(z)) / data.tflops)

    z = least_squares(residuals, start, bounds=(lo, hi), loss="soft_l1", f_scale=0.1).x
    if select:
        z = minimize(lambda v: _selection_loss(data, predict(data, cal_of(v))), z, method="Powell",
                     options={"maxiter": 20000, "xtol": 1e-3, "ftol": 1e-6}).x
    return cal_of(z)


def _round(value: float) -> float:
    """Four significant digits (what the file keeps)."""
    return float(f"{value:.4g}")


def start_calibration(arch: str) -> Calibration:
    """The starting values (`BOUNDS`), the arch's registers per lane."""
    values = {name: BOUNDS[name][0] for name in CONSTANTS if name in BOUNDS}
    steps = tuple(sorted((n.split(".", 1)[1], BOUNDS[n][0]) for n in BOUNDS if n.startswith("pipeline_step.")))
    return Calibration(arch, **values, vgprs_per_lane=float(VGPRS_PER_LANE), pipeline_step=steps, sources={})


def mi300x_start(mi355x: Calibration) -> Calibration:
    """MI300X's starting calibration: MI355X's values of the constants the sweep cannot tell."""
    shared = {n: getattr(mi355x, n) for n in CONSTANTS if n not in GEMM_FITTED and n != "vgprs_per_lane"}
    return with_values(start_calibration("gfx942"), shared)


def calibrate(conv: Measured, gemm: Measured) -> dict[str, tuple[Calibration, dict[str, tuple[str, str]]]]:
    """Per arch: the fitted calibration (rounded as written) and each constant's source key and note."""
    mi355x = fit(conv, start_calibration("gfx950"), CONV_FITTED, select=True)
    mi300x = fit(gemm, mi300x_start(mi355x), GEMM_FITTED, select=False)
    borrowed = {n: getattr(mi300x, n) if "." not in n else dict(mi300x.pipeline_step)[n.split(".")[1]]
                for n in GEMM_FITTED if n not in CONV_FITTED}
    mi355x = with_values(mi355x, borrowed)
    out = {}
    notes = {"gfx950": "MI300X's: the MI355X table has no such kernel",
             "gfx942": "MI355X's: the sweep (one GEMM tile shape) cannot tell it"}
    for arch, cal, fitted, other in (("gfx950", mi355x, CONV_FITTED, "ck_gemm_gfx942"),
                                     ("gfx942", mi300x, GEMM_FITTED, "ck_conv_gfx950")):
        note = notes[arch]
        own = "ck_conv_gfx950" if arch == "gfx950" else "ck_gemm_gfx942"
        values = {n: _round(getattr(cal, n)) for n in CONSTANTS}
        values.update({f"pipeline_step.{p}": _round(v) for p, v in cal.pipeline_step})
        cites = {n: (own, "") if n in fitted else (other, note) for n in values}
        cites["vgprs_per_lane"] = ("llvm_amdgpu", "")
        out[arch] = (with_values(cal, values), cites)
    return out


def toml_text(fitted: Mapping[str, tuple[Calibration, Mapping[str, tuple[str, str]]]]) -> str:
    """calibration.toml's text."""
    lines = [
        "# The analytic model's calibrated constants per arch (ckast/select/models/analytic.py says what each means).",
        "# Written by tools/calibrate_analytic.py from CK's published measurements (examples/ck-real): do not",
        "# edit, rerun the tool. Every value is { value, source [, note] }; `source` names an entry of",
        "# [sources]. An arch without a table uses the table of `fallback`.",
        "",
        'fallback = "gfx942"',
        "",
        "[sources]",
        *(f'{key} = "{text}"' for key, text in SOURCES.items()),
    ]
    for arch, (cal, cites) in fitted.items():
        lines += ["", f"[archs.{arch}]"]
        entries = [(n, getattr(cal, n)) for n in CONSTANTS]
        steps = [(p, v) for p, v in cal.pipeline_step]
        for name, value in entries:
            lines.append(_entry(name, value, *cites[name]))
        lines += ["", f"[archs.{arch}.pipeline_step]"]
        lines += [_entry(p, v, *cites[f"pipeline_step.{p}"]) for p, v in steps]
    return "\n".join(lines) + "\n"


def _entry(name: str, value: float, source: str, note: str) -> str:
    shown = f"{value:.4g}" if not float(value).is_integer() else f"{value:.1f}"
    return f'{name} = {{ value = {shown}, source = "{source}"' + (f', note = "{note}" }}' if note else " }")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="Print the constants; write nothing.")
    parser.add_argument("--check", action="store_true", help="Exit 1 unless the shipped file is what the fit writes.")
    args = parser.parse_args(argv)
    conv, gemm = conv_gfx950(), gemm_gfx942()
    fitted = calibrate(conv, gemm)
    text = toml_text(fitted)
    import tomllib

    for arch, (cal, cites) in fitted.items():
        parsed = parse(tomllib.loads(text), arch)
        assert parsed == cal, arch  # the file reads back as fitted
        print(f"{arch}:")
        for name in (*CONSTANTS, *(f"pipeline_step.{p}" for p, _ in cal.pipeline_step)):
            value = getattr(cal, name) if "." not in name else dict(cal.pipeline_step)[name.split(".")[1]]
            source, note = cites[name]
            print(f"  {name:<22} {value:>9.4g}  {source}{f' ({note})' if note else ''}")
    if args.check:
        same = PATH.read_text() == text
        print(f"{PATH.relative_to(ROOT)}: {'as fitted' if same else 'differs from the fit'}")
        return 0 if same else 1
    if not args.dry_run:
        PATH.write_text(text)
        print(f"wrote {PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
