"""Selection features, declared once as data (`expr` nodes) and evaluated vectorized over kernels.

`feature_set("gemm")` and `feature_set("grouped_conv")` are CK's two feature engines (72 and 97
features, CK's names, order and formulas: `ck_gemm`, `ck_conv`). A `FeatureSet` gives
`matrix(problem, kernels, hw)` (one row per kernel of a `KernelTable`) and `vector(problem, config,
hw)` (one config; the same row). The trees are what the C++ feature code is generated from.
"""

from __future__ import annotations

from .featureset import Feature, FeatureSet, hw_columns, problem_columns
from .table import KernelTable

KINDS = ("gemm", "grouped_conv")

__all__ = ["KINDS", "Feature", "FeatureSet", "KernelTable", "feature_set", "hw_columns", "problem_columns"]


def feature_set(kind: str) -> FeatureSet:
    """CK's feature set for problems of `kind` ("gemm" or "grouped_conv")."""
    if kind == "gemm":
        from .ck_gemm import GEMM_FEATURES

        return GEMM_FEATURES
    if kind == "grouped_conv":
        from .ck_conv import CONV_FEATURES

        return CONV_FEATURES
    raise ValueError(f"no feature set for {kind!r}; known: {', '.join(KINDS)}")
