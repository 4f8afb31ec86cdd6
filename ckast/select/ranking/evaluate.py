"""Selection quality against the oracle: for every measured problem, the kernel the predictor ranks
first among the measured ones, and how fast it ran against the fastest measured kernel.

The figures are those of CK's `compare_ml_vs_oracle.py` (dispatcher/heuristics/validation/grouped_conv and
tile_engine/ops/grouped_conv), with its definitions:

- per problem, the oracle orders the measured kernels by measured TFLOPS, fastest first; efficiency = TFLOPS
  of the pick / TFLOPS of the oracle's first;
- top-1: the pick is the oracle's first; top-5: the pick is among the oracle's first five;
- over the problems: mean efficiency, P10 = sorted[n // 10], P50 = sorted[n // 2] (the upper median for
  even n), the minimum, and the top-1 and top-5 hit rates.

Where ckast differs, it is in what a problem and a kernel are. A problem is a shape (CK's is a row index of
its table); a kernel is a library kernel, so names CK built as one kernel are one (a pick of any of them is
that kernel), their runs, and repeated runs of a shape, averaged geometrically (`group_runs`); runs of kernels
not applicable to their problem are set apart before (`timings.Timings.outside`), so they are neither the
oracle's best nor picked. The pick is made among the measured kernels, so it always has a measurement (CK
counts an unmeasured pick as 0%). Equal TFLOPS, measured or predicted, are ordered by kernel name (CK's oracle
keeps its table's order: its sort is stable).

The report gives these over all problems, per variant (GEMM, or the conv direction) and per shape family
(`shape_family`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs
import numpy as np

from ckast.select.serving.library import Library, LibraryError, problem_direction
from ckast.select.problem import ConvProblem, Problem, problem_fields
from .rank import Predictor
from ckast.select.tables.timings import Run

SKINNY = 64


@attrs.frozen
class Outcome:
    """One problem's result."""

    problem: Problem
    efficiency: float
    top1: bool
    top5: bool
    chosen: int
    best: int


@attrs.frozen(eq=False)
class Scored:
    """One problem's measured kernels: library indices (sorted), measured and predicted TFLOPS, and the
    predictor's order of them (positions in these arrays, best predicted first; ties by kernel name)."""

    problem: Problem
    kernels: tuple[int, ...]
    measured: np.ndarray
    predicted: np.ndarray
    order: np.ndarray
    oracle: np.ndarray
    """The measured order (positions, fastest first; ties by kernel name)."""

    def best_of(self, k: int) -> float:
        """The measured TFLOPS of the fastest of the `k` best predicted, over the best measured."""
        return float(self.measured[self.order[:k]].max() / self.measured[self.oracle[0]])

    def outcome(self) -> Outcome:
        """The pick (the best predicted) against the oracle."""
        eff, top1, top5, chosen, best = pick(self.measured, self.order, self.oracle)
        return Outcome(self.problem, eff, top1, top5, self.kernels[chosen], self.kernels[best])


def pick(measured: np.ndarray, order: np.ndarray, oracle: np.ndarray) -> tuple[float, bool, bool, int, int]:
    """(efficiency, top-1, top-5, chosen, best) of one problem's measured kernels, given the predicted `order` and
    the measured one (`oracle`), positions best first."""
    chosen, best = int(order[0]), int(oracle[0])
    return float(measured[chosen] / measured[best]), chosen == best, bool(chosen in oracle[:5]), chosen, best


def outcome(measured: np.ndarray, predicted: np.ndarray, name_order: np.ndarray) -> tuple[float, bool, bool, int, int]:
    """`pick` of one problem's measured kernels (positions in its arrays; ties, measured or predicted, ordered by
    name, as the ranking orders them)."""
    return pick(measured, np.lexsort((name_order, -predicted)), np.lexsort((name_order, -measured)))


def shape_family(problem: Problem) -> str:
    """GEMM: skinny (M or N <= 64), small (under 2^30 multiply-adds), large. Conv: depthwise (C = K = 1 per
    group), 1x1, 3x3, other filters."""
    if not isinstance(problem, ConvProblem):
        if min(problem.M, problem.N) <= SKINNY:
            return "skinny"
        return "small" if problem.M * problem.N * problem.K < 2**30 else "large"
    if problem.C == 1 and problem.K == 1:
        return "depthwise"
    if all(f == 1 for f in problem.filter):
        return "1x1"
    return "3x3" if all(f == 3 for f in problem.filter) else "other"


def group_runs(runs: Iterable[Run]) -> dict[Problem, dict[int, float]]:
    """Runs by problem, then kernel (library index); repeated runs (rows of one shape, names built as one
    kernel) averaged geometrically. Problems in one order (by their repr), which evaluation, training and the
    calibration fit share."""
    logs: dict[Problem, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        logs[run.problem][run.kernel].append(math.log(run.tflops))
    return {p: {k: math.exp(sum(v) / len(v)) for k, v in ks.items()}
            for p, ks in sorted(logs.items(), key=lambda item: repr(item[0]))}


def scored(runs: Iterable[Run], predict: Callable[[Problem, list[int]], np.ndarray],
           name_order: np.ndarray) -> list[Scored]:
    """Per problem (in label order), its measured kernels ranked by `predict(problem, kernels)`, the predicted
    TFLOPS of those library kernels; `name_order[i]`: library kernel i's place in name order."""
    out = []
    for problem, kernels in group_runs(runs).items():
        indices = sorted(kernels)
        measured = np.array([kernels[i] for i in indices])
        predicted = np.asarray(predict(problem, indices), dtype=np.float64)
        names = name_order[indices]
        out.append(Scored(problem, tuple(indices), measured, predicted, np.lexsort((names, -predicted)),
                          np.lexsort((names, -measured))))
    return out


def evaluate(problems: Iterable[Scored]) -> list[Outcome]:
    """One outcome per scored problem."""
    return [p.outcome() for p in problems]


def efficiency_figures(efficiency: np.ndarray) -> dict[str, float]:
    """Problems, mean, P10 (sorted[n // 10]), P50 (sorted[n // 2]) and minimum of per-problem efficiencies."""
    eff = np.sort(efficiency)
    n = len(eff)
    return {"problems": n, "mean": float(eff.mean()), "p10": float(eff[n // 10]), "p50": float(eff[n // 2]),
            "min": float(eff[0])}


def summary(outcomes: list[Outcome]) -> dict[str, float]:
    """`efficiency_figures` of the picks, then the top-1 and top-5 rates."""
    return {**efficiency_figures(np.array([o.efficiency for o in outcomes])),
            "top1": float(np.mean([o.top1 for o in outcomes])), "top5": float(np.mean([o.top5 for o in outcomes]))}


def report(outcomes: list[Outcome]) -> dict[str, dict[str, dict[str, float]]]:
    """Summaries over all problems, per variant and per shape family (names sorted)."""
    out: dict[str, dict[str, dict[str, float]]] = {"all": {"all": summary(outcomes)}, "variant": {}, "shape": {}}
    for key, of in (("variant", problem_direction), ("shape", shape_family)):
        groups: dict[str, list[Outcome]] = defaultdict(list)
        for o in outcomes:
            groups[of(o.problem)].append(o)
        out[key] = {name: summary(groups[name]) for name in sorted(groups)}
    return out


def table(result: Mapping[str, Mapping[str, Mapping[str, float]]]) -> list[str]:
    """The report as text: one line per group."""
    lines = [f"{'group':<22}{'problems':>9}{'mean':>8}{'P10':>8}{'P50':>8}{'min':>8}{'top-1':>8}{'top-5':>8}"]
    for key in ("all", "variant", "shape"):
        for name, s in result[key].items():
            label = "all" if key == "all" else f"{key} {name}"
            lines.append(f"{label:<22}{s['problems']:>9}{s['mean']:>8.1%}{s['p10']:>8.1%}{s['p50']:>8.1%}"
                         f"{s['min']:>8.1%}{s['top1']:>8.1%}{s['top5']:>8.1%}")
    return lines


def name_order(library: Library) -> np.ndarray:
    """Each library kernel's place in name order (ties of TFLOPS, measured or predicted, go by it)."""
    return np.argsort(np.argsort(np.array(library.names, dtype=object), kind="stable"), kind="stable")


def measured_predictions(library: Library, predictor: Predictor,
                         note: Callable[[Problem, Any, np.ndarray], None] | None = None
                         ) -> Callable[[Problem, list[int]], np.ndarray]:
    """`predict(problem, kernels)`: the predicted TFLOPS of those library kernels (the measured ones of a
    problem) on the problem, in their part (LibraryError when they are of several parts); `note(problem, part,
    rows)` is called with each before it is predicted."""
    from ckast.arch.hardware import hardware

    def predict(problem: Problem, indices: list[int]) -> np.ndarray:
        config = library.configs[indices[0]]
        part = library.part(problem, config["datatype"], config["layout"] if config["kind"] == "gemm" else None)
        rows = [part.index.get(library.names[i]) for i in indices]
        if None in rows:
            raise LibraryError(f"the runs of problem {problem_fields(problem)} are of kernels of several datatypes, "
                               "layouts or directions")
        if note is not None:
            note(problem, part, np.array(rows))
        return predictor.predict_tflops(problem, part, hardware(part.arch), np.array(rows))

    return predict
