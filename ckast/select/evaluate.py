"""Selection quality against the oracle: for every measured problem, the kernel the predictor ranks
first among the measured ones, and how fast it ran against the fastest measured kernel.

Only the measured kernels that accept the problem under the applicability layers applied take part (CK's
dispatcher runs no other): a problem none of whose measured kernels applies is left out, and counted.
Per problem: efficiency = TFLOPS of the predicted best / TFLOPS of the measured best; a top-1 hit when
the predicted best is a measured best, a top-5 hit when a measured best is among the first five. The
report gives the mean, P10 and minimum efficiency and both hit rates over all problems, per variant
(GEMM, or the conv direction) and per shape family (`shape_family`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

import attrs
import numpy as np

from .library import problem_direction
from .problem import ConvProblem, Problem
from .timings import Run

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


def outcome(measured: np.ndarray, predicted: np.ndarray, name_order: np.ndarray) -> tuple[float, bool, bool, int, int]:
    """(efficiency, top-1, top-5, chosen, best) of one problem's measured kernels (positions in its arrays;
    predictions tied are ordered by name, as the ranking orders them)."""
    order = np.lexsort((name_order, -predicted))
    best = float(measured.max())
    winners = measured >= best
    return (float(measured[order[0]] / best), bool(winners[order[0]]), bool(winners[order[:5]].any()),
            int(order[0]), int(np.argmax(measured)))


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
    """Runs by problem, then kernel (library index); repeated runs averaged geometrically."""
    logs: dict[Problem, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        logs[run.problem][run.kernel].append(math.log(run.tflops))
    return {p: {k: math.exp(sum(v) / len(v)) for k, v in ks.items()} for p, ks in logs.items()}


def evaluate(runs: Iterable[Run], predict: Callable[[Problem, list[int]], tuple[np.ndarray, np.ndarray]],
             name_order: np.ndarray) -> tuple[list[Outcome], int]:
    """One outcome per problem, and the number of problems left out (no measured kernel applicable);
    `predict(problem, kernels)` gives whether each of those library kernels accepts the problem and the
    predicted TFLOPS of the ones that do, `name_order[i]` library kernel i's place in name order."""
    outcomes, left_out = [], 0
    for problem, kernels in sorted(group_runs(runs).items(), key=lambda item: repr(item[0])):
        indices = sorted(kernels)
        ok, predicted = predict(problem, indices)
        indices = [i for i, keep in zip(indices, ok) if keep]
        if not indices:
            left_out += 1
            continue
        measured = np.array([kernels[i] for i in indices])
        eff, top1, top5, chosen, best = outcome(measured, np.asarray(predicted, dtype=np.float64),
                                                name_order[indices])
        outcomes.append(Outcome(problem, eff, top1, top5, indices[chosen], indices[best]))
    return outcomes, left_out


def summary(outcomes: list[Outcome]) -> dict[str, float]:
    eff = np.array([o.efficiency for o in outcomes])
    return {"problems": len(outcomes), "mean": float(eff.mean()), "p10": float(np.percentile(eff, 10)),
            "min": float(eff.min()), "top1": float(np.mean([o.top1 for o in outcomes])),
            "top5": float(np.mean([o.top5 for o in outcomes]))}


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
    lines = [f"{'group':<22}{'problems':>9}{'mean':>8}{'P10':>8}{'min':>8}{'top-1':>8}{'top-5':>8}"]
    for key in ("all", "variant", "shape"):
        for name, s in result[key].items():
            label = "all" if key == "all" else f"{key} {name}"
            lines.append(f"{label:<22}{s['problems']:>9}{s['mean']:>8.1%}{s['p10']:>8.1%}{s['min']:>8.1%}"
                         f"{s['top1']:>8.1%}{s['top5']:>8.1%}")
    return lines
