"""The best of the top K: what the short-benchmark loop gets (rank, measure each problem's K best predicted
kernels, keep the fastest), scored on timing tables (`ckast select eval --best-of K`).

Per problem, the measured kernels are ranked by the predictor as `select eval` ranks them (predicted TFLOPS,
ties by kernel name); the best of the top k is the fastest measured of the first k, its efficiency that
TFLOPS over the best measured. k = 1 is `select eval`'s pick; k at least the measured kernels is 100%.
Problems and kernels are `select eval`'s (`evaluate.scored`: names built as one kernel are one, repeated
runs averaged geometrically; runs set apart as not applicable are not read).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .evaluate import Scored, efficiency_figures


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
