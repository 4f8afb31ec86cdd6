"""Ranking many problems of one part together: `ckast select` of a problems file.

Applicability (`applicability.checked_many`) and, where the predictor offers `predict_many` (the analytic
model and a LightGBM model do), the predictions are evaluated once for a batch of problems, over numpy arrays
of problems x kernels, so a problem costs its share of each array operation instead of a pass over the trees
(a LightGBM model: its feature rows go through the forest in one call). `predict_many(problems, part, hw,
mask)` gives problems x kernels, where `mask` (the applicable kernels) holds the entry `predict_tflops` gives.
Each ranking is the one `rank.rank` gives its problem, entry for entry.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ckast.select.serving.applicability import checked_many
from ckast.select.serving.library import Part
from ckast.select.problem import Problem
from .rank import Predictor, Ranking, ordered

BATCH_ENTRIES = 1 << 14
"""Problems x kernels ranked together at most: bounds a batch's arrays, one per node of its trees (measured on
`ckast select`: the fastest for a 675-kernel conv library, as fast as any larger for a 6-kernel GEMM one)."""


def batch_size(part: Part) -> int:
    """How many problems of `part` are ranked together."""
    return max(1, BATCH_ENTRIES // len(part))


def rank_many(problems: Sequence[Problem], part: Part, predictor: Predictor, hw,
              layers: Sequence[str]) -> list[Ranking]:
    """The ranking of each of `problems` (all of `part`) under the applicability `layers`, as `rank` gives it."""
    layers = tuple(layers)
    mask, refused = checked_many(problems, part.table, layers)
    many = getattr(predictor, "predict_many", None)
    predicted = many(problems, part, hw, mask) if many is not None and mask.any() else None
    rankings = []
    for i, problem in enumerate(problems):
        candidates = np.flatnonzero(mask[i])
        tflops = np.full(len(part), np.nan)
        if len(candidates):
            tflops[candidates] = (predictor.predict_tflops(problem, part, hw, candidates) if predicted is None
                                  else predicted[i, candidates])
        rankings.append(Ranking(problem, part, tflops, mask[i], ordered(part, candidates, tflops), layers,
                                refused[i]))
    return rankings
