"""The best of the top K: what the short-benchmark loop gets (rank, measure each problem's K best predicted
kernels, keep the fastest), scored on timing tables (`ckast select eval --best-of K`).

Per problem, the measured kernels are ranked by the predictor as `select eval` ranks them (predicted TFLOPS,
ties by kernel name); the best of the top k is the fastest measured of the first k, its efficiency that
TFLOPS over the best measured. k = 1 is `select eval`'s pick; k at least the measured kernels is 100%.
Problems and kernels are `select eval`'s (`evaluate.group_runs`: names built as one kernel are one, repeated
runs averaged geometrically; runs set apart as not applicable are not read).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import attrs
import numpy as np

from .evaluate import efficiency_figures, group_runs, measured_predictions, name_order
from ckast.select.problem import Problem
from ckast.select.tables.timings import Run


@attrs.frozen(eq=False)
class Scored:
    """One problem's measured kernels: library indices (sorted), measured and predicted TFLOPS, and the
    predictor's order of them (positions in these arrays, best predicted first)."""

    problem: Problem
    kernels: tuple[int, ...]
    measured: np.ndarray
    predicted: np.ndarray
    order: np.ndarray

    def best_of(self, k: int) -> float:
        """The measured TFLOPS of the fastest of the `k` best predicted, over the best measured."""
        return float(self.measured[self.order[:k]].max() / self.measured.max())


def scored(runs: Iterable[Run], predict: Callable[[Problem, list[int]], np.ndarray],
           name_order: np.ndarray) -> list[Scored]:
    """Per problem (in `select eval`'s order), its measured kernels ranked by `predict(problem, kernels)`
    (`evaluate.measured_predictions`); `name_order[i]`: library kernel i's place in name order."""
    out = []
    for problem, kernels in sorted(group_runs(runs).items(), key=lambda item: repr(item[0])):
        indices = sorted(kernels)
        measured = np.array([kernels[i] for i in indices])
        predicted = np.asarray(predict(problem, indices), dtype=np.float64)
        order = np.lexsort((name_order[indices], -predicted))
        out.append(Scored(problem, tuple(indices), measured, predicted, order))
    return out


def best_of_figures(problems: Sequence[Scored], top: int) -> list[dict[str, float]]:
    """For k = 1 .. `top`: k and the `efficiency_figures` (problems, mean, P10, P50, min) of the best of the
    top k."""
    return [{"k": k, **efficiency_figures(np.array([p.best_of(k) for p in problems]))} for k in range(1, top + 1)]


def best_of_table(rows: Sequence[dict[str, float]]) -> list[str]:
    """`best_of_figures` as text: a heading, then one line per k."""
    lines = ["best of the top k predicted (the fastest measured of each problem's k best predicted kernels):",
             f"{'k':<22}{'problems':>9}{'mean':>8}{'P10':>8}{'P50':>8}{'min':>8}"]
    for s in rows:
        lines.append(f"{s['k']:<22}{s['problems']:>9}{s['mean']:>8.1%}{s['p10']:>8.1%}{s['p50']:>8.1%}"
                     f"{s['min']:>8.1%}")
    return lines


def score(library, runs: Iterable[Run], model_dir=None) -> list[Scored]:
    """`scored` by the LightGBM model `model_dir` or, when None, the analytic model (ModelError on a bad model
    directory; LibraryError when a problem's runs are of kernels of several parts)."""
    from .rank import load_predictor

    return scored(runs, measured_predictions(library, load_predictor(model_dir)), name_order(library))
