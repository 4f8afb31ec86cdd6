"""Selection on CK's real measurements (examples/ck-real): each predictor's pick scored against the best
measured kernel, the figures of `ckast select eval` (mean, P10, P50 and min efficiency, top-1, top-5) and the
median absolute relative error of the picked kernel's predicted TFLOPS (|err|).

- MI355X grouped-conv forward bf16 (185 shapes x 13 kernels), 5-fold GroupKFold by problem shape (the folds
  `ckast select train` makes): CK's LightGBM model (CK's published figures, measured on CK's own 231 held-out
  problems of the same pool, not these), `ckast select train --predictor residual` (a correction of the analytic
  model, 400 trees, seed 0, one thread) and `--predictor lightgbm` (log1p TFLOPS alone), trained on the train folds
  and scored on the held-out one, the analytic model calibrated on the
  train folds (`calibrate_analytic.fit`) and scored on the held-out one, and the shipped constants
  (in-sample: they were fitted on all 185 shapes).
- MI300X GEMM fp16 sweeps (4 shapes x 32 kernels, runs A and B): the analytic model with the shipped
  constants (in-sample), calibrated on one run and scored on the other, and calibrated on three shapes of
  both runs and scored on the fourth (leave-one-shape-out).
- The noise floor: how far repeated measurements of one kernel differ (the MI355X table's names CK built as
  one kernel and its shapes measured twice; the two MI300X runs), and the efficiency of picking by one repeat,
  scored on the other.

    python tools/bench_real_selection.py     # about a minute; deterministic
"""

from __future__ import annotations

import math
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibrate_analytic as cal_tool  # noqa: E402

from ckast.select.models import calibrate as calib  # noqa: E402
from ckast.arch.calibration import calibration  # noqa: E402
from ckast.select.models.analytic import gemm_view  # noqa: E402
from ckast.select.ranking.evaluate import outcome, summary  # noqa: E402

FOLDS = 5
SEED = 0
CK_LIGHTGBM = {"problems": 231, "mean": 0.9305, "p10": 0.7921, "p50": 0.9680, "min": 0.6306, "top1": 0.216,
               "top5": 0.706}
"""CK's model for this table on 231 other problems of the pool (tile_engine/ops/grouped_conv/
comparison_summary_300.csv)."""


FAMILIES = (
    ("1x1", lambda p: p.filter == (1, 1)), ("3x3", lambda p: p.filter == (3, 3)),
    ("other filters", lambda p: p.filter not in ((1, 1), (3, 3))),
    ("small N x output (GEMM M < 2048)", lambda p: gemm_view(p)[1] < 2048),
    ("small C x filter (GEMM K <= 256)", lambda p: gemm_view(p)[3] <= 256),
)
"""Shape families the CV figures are broken down by."""


class _Scored:
    def __init__(self, efficiency: float, top1: bool, top5: bool) -> None:
        self.efficiency, self.top1, self.top5 = efficiency, top1, top5


def figures(data: calib.Measured, predicted: np.ndarray, problems: np.ndarray | None = None) -> dict[str, float]:
    """`ckast select eval`'s figures of `predicted` (one per row of `data`) over `problems` (default all), and
    the median |predicted / measured - 1| of the picked kernels."""
    problems = np.arange(len(data.problems)) if problems is None else problems
    order = data.part.name_order[data.rows]
    scored, errors = [], []
    for p in problems:
        rows = slice(data.starts[p], data.starts[p + 1])
        eff, top1, top5, chosen, _ = outcome(data.tflops[rows], predicted[rows], order[rows])
        scored.append(_Scored(eff, top1, top5))
        errors.append(abs(predicted[rows][chosen] / data.tflops[rows][chosen] - 1))
    return {**summary(scored), "err": float(np.median(errors))}


def line(label: str, f: dict[str, float | None]) -> str:
    err = "n/a" if f.get("err") is None else f"{f['err']:.1%}"
    return (f"{label:<58}{f['problems']:>4}{f['mean']:>8.1%}{f['p10']:>8.1%}{f['p50']:>8.1%}{f['min']:>8.1%}"
            f"{f['top1']:>8.1%}{f['top5']:>8.1%}{err:>8}")


HEADER = f"{'predictor':<58}{'n':>4}{'mean':>8}{'P10':>8}{'P50':>8}{'min':>8}{'top-1':>8}{'top-5':>8}{'|err|':>8}"


def problem_folds(data: calib.Measured) -> np.ndarray:
    """Each problem's fold: `ckast select train`'s GroupKFold assignment of the rows."""
    from ckast.select.ranking.train import group_folds

    return group_folds(data.group, FOLDS)[data.starts[:-1]]


def analytic_cv(data: calib.Measured, folds: np.ndarray) -> np.ndarray:
    """Predictions of every row by the analytic model calibrated on the other folds' problems."""
    predicted = np.empty(len(data.tflops))
    start = calib.start_calibration(data.hw.arch)
    for f in range(FOLDS):
        train = calib.fit(data.subset(np.flatnonzero(folds != f)), start, calib.CONV_FITTED, True)
        held = np.flatnonzero(folds == f)
        predicted[data.rows_of(held)] = calib.predict(data.subset(held), train)
    return predicted


def lightgbm_cv(data: calib.Measured, library, folds: np.ndarray, base: str) -> np.ndarray:
    """Predictions of every row by `ckast select train`'s defaults on `base` trained on the other folds."""
    from ckast.arch.hardware import hardware
    from ckast.select.tables.timings import read_timings
    from ckast.select.tables.kernel_table import read_kernel_table
    from ckast.select.serving.applicability import LAYERS
    from ckast.select.ranking.train import dataset, train_predictor

    timings = read_timings([cal_tool.REAL / t for t in cal_tool.CONV_TABLES], library,
                           kernels=read_kernel_table(cal_tool.REAL / cal_tool.CONV[1], library), layers=LAYERS)
    rows = dataset(list(timings.runs), library, hardware)
    assert rows.problems == data.problems and np.allclose(rows.tflops, data.tflops)
    row_fold = folds[rows.group]
    predicted = np.empty(len(rows.tflops))
    for f in range(FOLDS):
        held = np.flatnonzero(row_fold == f)
        predicted[held] = train_predictor(rows, np.flatnonzero(row_fold != f), base, 400, SEED)(held)
    return predicted


def repeats(tables: Sequence[str], library) -> dict:
    """(problem, kernel) -> the TFLOPS of each run, in table order."""
    from ckast.select.serving.applicability import LAYERS
    from ckast.select.tables.kernel_table import read_kernel_table
    from ckast.select.tables.timings import read_timings

    out: dict = defaultdict(list)
    kernels_file = cal_tool.CONV[1] if "conv" in tables[0] else cal_tool.GEMM[1]
    for table in tables:
        timings = read_timings([cal_tool.REAL / table], library,
                               kernels=read_kernel_table(cal_tool.REAL / kernels_file, library), layers=LAYERS)
        for run in timings.runs:
            out[(run.problem, run.kernel)].append(run.tflops)
    return out


def noise_floor(runs: dict) -> tuple[float, list[float], int]:
    """(median |log ratio| of two runs of one kernel on one problem, the efficiency of picking by the first
    run scored on the second and the reverse, over each problem's kernels measured twice, kernel count)."""
    ratios = [abs(math.log(v[0] / v[1])) for v in runs.values() if len(v) >= 2]
    by_problem: dict = defaultdict(dict)
    for (problem, kernel), v in runs.items():
        if len(v) >= 2:
            by_problem[problem][kernel] = v
    eff = []
    for kernels in by_problem.values():
        if len(kernels) < 2:
            continue
        ks = sorted(kernels)
        first, second = (np.array([kernels[k][i] for k in ks]) for i in (0, 1))
        eff += [second[first.argmax()] / second.max(), first[second.argmax()] / first.max()]
    sizes = {len(kernels) for kernels in by_problem.values()}
    return float(np.median(ratios)), eff, max(sizes)


def efficiency_line(label: str, eff: list[float]) -> str:
    e = np.sort(eff)
    return f"{label:<58}{len(e):>4}{e.mean():>8.1%}{e[len(e) // 10]:>8.1%}{e[len(e) // 2]:>8.1%}{e[0]:>8.1%}"


def main() -> int:
    start = time.perf_counter()
    conv = cal_tool.conv_gfx950()
    conv_library = cal_tool.library_of(cal_tool.CONV[0])
    folds = problem_folds(conv)
    print(f"MI355X grouped-conv forward bf16: {len(conv.problems)} shapes x {len(conv.part)} kernels, "
          f"{FOLDS}-fold GroupKFold by shape (ckast select train's folds)")
    print(HEADER)
    print(line("CK LightGBM (published; CK's 231 held-out problems)", {**CK_LIGHTGBM, "err": None}))
    try:
        print(line("ckast select train --predictor residual (CV)",
                   figures(conv, lightgbm_cv(conv, conv_library, folds, "analytic"))))
        print(line("ckast select train --predictor lightgbm (CV)",
                   figures(conv, lightgbm_cv(conv, conv_library, folds, "none"))))
    except ImportError:
        print("ckast select train: lightgbm is not installed (pip install ckast[select])")
    cv = analytic_cv(conv, folds)
    print(line("analytic, calibrated on the train folds (CV)", figures(conv, cv)))
    shipped = calib.predict(conv, calibration("gfx950"))
    print(line("analytic, shipped constants (in-sample)", figures(conv, shipped)))
    for family, keep in FAMILIES:
        chosen = np.array([i for i, p in enumerate(conv.problems) if keep(p)])
        print(line(f"  analytic CV, {family}", figures(conv, cv, chosen)))

    gemm = cal_tool.gemm_gfx942()
    run_a, run_b = (cal_tool.gemm_gfx942((t,)) for t in cal_tool.GEMM_TABLES)
    print(f"\nMI300X GEMM fp16 sweeps: {len(gemm.problems)} shapes x {len(gemm.part)} kernels, runs A and B")
    print(HEADER)
    shipped_cal = calibration("gfx942")
    for label, data in (("A", run_a), ("B", run_b)):
        print(line(f"analytic, shipped constants (in-sample), run {label}",
                   figures(data, calib.predict(data, shipped_cal))))
    base = calib.mi300x_start(calibration("gfx950"))
    for train, test, label in ((run_a, run_b, "A -> B"), (run_b, run_a, "B -> A")):
        fitted = calib.fit(train, base, calib.GEMM_FITTED, False)
        print(line(f"analytic, calibrated on run {label}", figures(test, calib.predict(test, fitted))))
    loso = np.empty(len(gemm.tflops))
    for s in range(len(gemm.problems)):
        others = np.array([p for p in range(len(gemm.problems)) if p != s])
        fitted = calib.fit(gemm.subset(others), base, calib.GEMM_FITTED, False)
        loso[gemm.rows_of(np.array([s]))] = calib.predict(gemm.subset(np.array([s])), fitted)
    print(line("analytic, leave-one-shape-out (runs combined)", figures(gemm, loso)))
    for p, problem in enumerate(gemm.problems):
        rows = slice(gemm.starts[p], gemm.starts[p + 1])
        pick = int(np.lexsort((gemm.part.name_order[gemm.rows[rows]], -loso[rows]))[0])
        print(f"  M={problem.M},N={problem.N},K={problem.K}: leave-one-shape-out pick predicted "
              f"{loso[rows][pick]:.0f} TFLOPS, measured {gemm.tflops[rows][pick]:.0f} (best measured "
              f"{gemm.tflops[rows].max():.0f})")

    print("\nnoise floor: repeated measurements of one kernel on one problem")
    spread, eff, kernels = noise_floor(repeats(cal_tool.CONV_TABLES, conv_library))
    print(f"MI355X: median |log ratio| of two runs {spread:.2%}; picking by one run among a problem's kernels "
          f"measured twice (names CK built as one kernel; all {kernels} on the shapes measured twice), scored on the "
          "other:")
    print(efficiency_line("  pick by one repeat", eff))
    spread, eff, kernels = noise_floor(repeats(cal_tool.GEMM_TABLES, cal_tool.library_of(cal_tool.GEMM[0])))
    print(f"MI300X: median |log ratio| of runs A and B {spread:.2%}; picking by one run among {kernels} kernels, "
          "scored on the other:")
    print(efficiency_line("  pick by one run", eff))
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
