"""The picture `ckast select eval --plot FILE.svg` writes: two panels of one SVG (`plot_svg`).

- Left: measured against predicted TFLOPS of every measured (problem, kernel) pair, by the evaluated
  predictor, on log axes with the diagonal (a prediction on it is exact; a model whose points lie along a
  line parallel to it is off by a constant factor, which does not change its ranking).
- Right: each predictor's efficiency over the problems (its pick's measured TFLOPS over the best measured),
  sorted, as a curve: the share of problems at or below an efficiency; the mean and P10 in the legend. With
  `best_of` K, also the best of the evaluated predictor's top 2 .. K.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ckast.select.ranking.evaluate import Scored, efficiency_figures
from .plot_svg import Box, Figure, curves, scatter

WIDTH, HEIGHT = 980, 440


def points(problems: Sequence[Scored]) -> list[tuple[float, float]]:
    """(predicted, measured) TFLOPS of every measured pair with a positive prediction (log axes show no other)."""
    return [(float(x), float(y)) for p in problems for x, y in zip(p.predicted, p.measured) if x > 0]


def _label(name: str, efficiency: Sequence[float]) -> str:
    figures = efficiency_figures(np.array(efficiency))
    return f"{name}: mean {figures['mean']:.1%}, P10 {figures['p10']:.1%}"


def evaluation_svg(predictors: Sequence[tuple[str, Sequence[Scored]]], best_of: int = 1, title: str = "") -> str:
    """The SVG text for `predictors` (name, its scored problems; the first is the evaluated one)."""
    name, first = predictors[0]
    fig = Figure(WIDTH, HEIGHT)
    if title:
        fig.text(WIDTH / 2, 20, title, size=14)
    kernels = len({k for p in first for k in p.kernels})
    scatter(fig, Box(80, 60, 360, 300), points(first), "predicted TFLOPS", "measured TFLOPS",
            f"{name}: {len(first)} problems x their {kernels} measured kernels")
    series = [(_label(n, [p.best_of(1) for p in scored]), [p.best_of(1) for p in scored]) for n, scored in predictors]
    series += [(_label(f"best of its top {k}", [p.best_of(k) for p in first]), [p.best_of(k) for p in first])
               for k in range(2, best_of + 1)]
    curves(fig, Box(580, 60, 360, 300), series, "share of problems (sorted by efficiency)",
           "efficiency (pick / best measured)", "efficiency over the problems")
    return fig.svg()


def write_svg(path: Path, text: str) -> bool:
    """Write `text` to `path` in one rename, unless the file holds it already; whether it was written
    (OSError when it cannot be)."""
    import os

    data = text.encode()
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return True
