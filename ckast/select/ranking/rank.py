"""Ranking: the applicable kernels of a part for a problem, best predicted first.

Every kernel's prediction comes from one vectorized call of the predictor; the applicable ones are
ordered by predicted TFLOPS, descending, ties broken by kernel name, so a ranking is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import attrs
import numpy as np

from ckast.select.serving.library import Part
from ckast.select.problem import Problem


class Predictor(Protocol):
    """Predicted TFLOPS of the kernels of a part for one problem, on hardware `hw`: of every kernel, or of
    the kernels at positions `rows` only (a model's cost grows with the kernels it scores)."""

    name: str

    def predict_tflops(self, problem: Problem, part: Part, hw, rows: np.ndarray | None = None) -> np.ndarray: ...


def load_predictor(model_dir: Path | None) -> Predictor:
    """The LightGBM model of `model_dir`, or the analytic model when none is given (ModelError on a bad
    model directory)."""
    if model_dir is None:
        from ckast.select.models.analytic import AnalyticPredictor

        return AnalyticPredictor()
    from ckast.select.models.lightgbm_model import load_model

    return load_model(model_dir)


@attrs.frozen
class Ranking:
    """A part's kernels for one problem: `tflops` (NaN where not applicable: those are not scored) and
    `applicable` per kernel (part order) under the applicability `layers`, `order` the applicable kernels'
    indices, best first, and `refused` the kernels each condition refuses first."""

    problem: Problem
    part: Part
    tflops: np.ndarray
    applicable: np.ndarray
    order: np.ndarray
    layers: tuple[str, ...]
    refused: Mapping[str, int]

    def seconds(self, index: int) -> float:
        """Predicted run time of kernel `index`."""
        tflops = float(self.tflops[index])
        return self.problem.flops / (tflops * 1e12) if tflops > 0 else float("inf")


def rank(problem: Problem, part: Part, predictor: Predictor, hw, layers: Sequence[str] | None = None) -> Ranking:
    """The ranking under the applicability `layers` (default: every layer, what CK's dispatcher runs)."""
    from ckast.select.serving.applicability import LAYERS, checked

    layers = tuple(LAYERS if layers is None else layers)
    mask, refused = checked(problem, part.table, layers)
    candidates = np.flatnonzero(mask)
    tflops = np.full(len(part), np.nan)
    if len(candidates):
        tflops[candidates] = predictor.predict_tflops(problem, part, hw, candidates)
    return Ranking(problem, part, tflops, mask, ordered(part, candidates, tflops), layers, refused)


def ordered(part: Part, candidates: np.ndarray, tflops: np.ndarray) -> np.ndarray:
    """The kernels `candidates` (indices into `part`), highest `tflops` first, ties broken by kernel name."""
    return candidates[np.lexsort((part.name_order[candidates], -tflops[candidates]))]
