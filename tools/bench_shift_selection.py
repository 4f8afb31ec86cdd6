"""Selection under shift on CK's MI355X grouped-conv forward bf16 table (examples/ck-real): each predictor trained
on one family of the table's shapes and scored on another it never saw (stride 2 -> stride 1, batch >= 5 ->
batch <= 4, images Hi >= 128 -> Hi < 128, the rest -> stride 1 with a batch other than 2), beside 5-fold
GroupKFold by shape. Predictors: the analytic model (shipped constants: calibrated on the whole table, so
in-sample for every split), `ckast select train --predictor lightgbm` (LightGBM on log1p TFLOPS) and `--predictor
residual` (the analytic model times exp of half a LightGBM residual, the analytic model alone for a problem
choosing among kernels outside the training domain), each with its defaults (400 trees, seed 0), and the
residual model whole (its trees' full output) and/or applied everywhere (no kernel domain). Figures as
`ckast select eval`'s: mean, P10, P50, min efficiency of the pick against the best measured kernel.

    python tools/bench_shift_selection.py                 # about 20 s on one core; deterministic
    python tools/bench_shift_selection.py --recalibrate   # the analytic model fitted on each split's training
                                                          # shapes only (out of sample too); about 30 s
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibrate_analytic as cal_tool  # noqa: E402

from ckast.select.models import calibrate as calib  # noqa: E402
from ckast.select.ranking.evaluate import outcome, summary  # noqa: E402

SHIFTS = (
    ("stride 2 -> stride 1", lambda p: p.stride[0] == 2, lambda p: p.stride[0] == 1),
    ("batch >= 5 -> batch <= 4", lambda p: p.N >= 5, lambda p: p.N <= 4),
    ("Hi >= 128 -> Hi < 128", lambda p: p.input[0] >= 128, lambda p: p.input[0] < 128),
    ("the rest -> stride 1 and batch other than 2", lambda p: p.stride[0] == 2 or p.N == 2,
     lambda p: p.stride[0] == 1 and p.N != 2),
)
"""(label, trained on, scored on). The last is shaped like CK's held-out problems of this pool (not published:
mostly stride 1, batch 1 and 4, smaller images) against the table's (mostly batch 2)."""
FOLDS = 5


class _Scored:
    def __init__(self, efficiency: float, top1: bool, top5: bool) -> None:
        self.efficiency, self.top1, self.top5 = efficiency, top1, top5


def dataset():
    from ckast.arch.hardware import hardware
    from ckast.select.serving.applicability import LAYERS
    from ckast.select.tables.kernel_table import read_kernel_table
    from ckast.select.tables.timings import read_timings
    from ckast.select.ranking.train import dataset as make

    library = cal_tool.library_of(cal_tool.CONV[0])
    timings = read_timings([cal_tool.REAL / t for t in cal_tool.CONV_TABLES], library,
                           kernels=read_kernel_table(cal_tool.REAL / cal_tool.CONV[1], library), layers=LAYERS)
    return make(list(timings.runs), library, hardware)


def figures(data, predicted: np.ndarray, problems: np.ndarray) -> dict[str, float]:
    scored = []
    for g in problems:
        rows = data.group == g
        eff, top1, top5, *_ = outcome(data.tflops[rows], predicted[rows], data.name_order[rows])
        scored.append(_Scored(eff, top1, top5))
    return summary(scored)


def line(label: str, f: dict[str, float]) -> str:
    return f"{label:<44}{f['problems']:>4}{f['mean']:>8.1%}{f['p10']:>8.1%}{f['p50']:>8.1%}{f['min']:>8.1%}"


HEADER = f"{'split / predictor':<44}{'n':>4}{'mean':>8}{'P10':>8}{'P50':>8}{'min':>8}"


def predictors(data, train_rows: np.ndarray, held_rows: np.ndarray) -> dict[str, np.ndarray]:
    """Each predictor's TFLOPS of `held_rows`, trained on `train_rows`."""
    from ckast.select.ranking.train import train_predictor

    return {"analytic": data.analytic[held_rows],
            "select train --predictor lightgbm": train_predictor(data, train_rows, "none")(held_rows),
            "residual, whole, everywhere": train_predictor(data, train_rows, "analytic", gate=False, scale=1.0)(held_rows),
            "residual, halved, everywhere": train_predictor(data, train_rows, "analytic", gate=False)(held_rows),
            "residual, whole, kernels in the domain": train_predictor(data, train_rows, "analytic", scale=1.0)(held_rows),
            "select train --predictor residual": train_predictor(data, train_rows, "analytic")(held_rows)}


def recalibrated(data, measured, train_p: np.ndarray):
    """`data` with the analytic model calibrated on the problems `train_p` alone (as `calibrate_analytic` fits the
    shipped constants on the whole table): what each predictor starts from when the analytic model has not seen
    the scored shapes either."""
    import attrs

    cal = calib.fit(measured.subset(train_p), calib.start_calibration(measured.hw.arch), calib.CONV_FITTED,
                       True)
    return attrs.evolve(data, analytic=calib.predict(measured, cal))


def splits(data, every: np.ndarray):
    """(label, training problems, scored problems) of each shift, then of each random fold."""
    from ckast.select.ranking.train import group_folds

    for label, train_on, score_on in SHIFTS:
        yield (label, np.array([g for g in every if train_on(data.problems[g])]),
               np.array([g for g in every if score_on(data.problems[g])]))
    fold = group_folds(data.group, FOLDS)
    for f in range(FOLDS):
        yield f"fold {f + 1}", np.unique(data.group[fold != f]), np.unique(data.group[fold == f])


def main() -> int:
    start = time.perf_counter()
    data = dataset()
    every = np.unique(data.group)
    recalibrate = "--recalibrate" in sys.argv[1:]
    measured = cal_tool.conv_gfx950() if recalibrate else None
    if recalibrate:
        assert measured.problems == data.problems and np.allclose(measured.tflops, data.tflops)
    print(f"MI355X grouped-conv forward bf16: {len(data.problems)} shapes, {len(data.tflops)} runs"
          + ("; the analytic model calibrated on each split's training shapes" if recalibrate else ""))
    print(HEADER)
    folds: dict[str, np.ndarray] = {}
    for label, train_p, held_p in splits(data, every):
        mine = recalibrated(data, measured, train_p) if recalibrate else data
        train_rows, held_rows = (np.flatnonzero(np.isin(data.group, ps)) for ps in (train_p, held_p))
        if not label.startswith("fold "):
            print(f"{label} (train {len(train_p)} shapes, score {len(held_p)})")
        for name, values in predictors(mine, train_rows, held_rows).items():
            full = folds.setdefault(name, np.full(len(data.tflops), np.nan)) if label.startswith("fold ") else \
                np.full(len(data.tflops), np.nan)
            full[held_rows] = values
            if not label.startswith("fold "):
                print(line(f"  {name}", figures(data, full, held_p)))
    print(f"{FOLDS}-fold GroupKFold by shape")
    for name, values in folds.items():
        print(line(f"  {name}", figures(data, values, every)))
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
