"""Feature sets: ordered, named feature expressions, evaluated for one problem over a kernel table (or for
many problems of one kind at once, `FeatureSet.matrix_many`).

A feature is a float tree of the selection language (`select.expr`; a bool tree reads 1.0 / 0.0). The
columns a feature may read, each as a float (`problem`, `kernel`, `Hw`):
- problem (`problem_columns`): GEMM `M, N, K, k_batch, batch, groups` (`batch` GEMMs of the shape, 1 but for a
  batched problem; `groups` of them in one grouped launch, 1 but for a grouped problem); grouped conv
  `G, N, C, K` (C and K per
  group, as `ConvProblem` holds them), `Di Hi Wi`, `Z Y X`, `stride_*`, `dilation_*`,
  `left_pad_*`, `right_pad_*` for the axes d, h, w (an axis the problem lacks reads as size 1,
  stride 1, dilation 1, pad 0: a 2-D problem is a 3-D one of depth 1); ints, read as floats;
- kernel: every knob of the configs (`KernelTable`) and `dtype_bytes`, NaN where a kernel lacks the
  knob (a string knob is compared or looked up as a `Col`);
- hw (`HW_COLUMNS`): the scalar figures of a `Hardware` profile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ckast.arch.hardware import Hardware
from ckast.select.problem import AXES, ConvProblem, GemmProblem, ProblemError, problem_label

from ckast.select.expr import Col, Expr, Field, Hw, ProblemsScope, Scope, lookup, problems_values, walk

from .table import KernelTable

GEMM_PROBLEM_COLUMNS = ("M", "N", "K", "k_batch", "batch", "groups")
_SPATIAL = {"input": ("Di", "Hi", "Wi"), "filter": ("Z", "Y", "X")}
_PER_AXIS = ("stride", "dilation", "left_pad", "right_pad")
CONV_PROBLEM_COLUMNS = (
    "G", "N", "C", "K", *_SPATIAL["input"], *_SPATIAL["filter"],
    *(f"{field}_{axis}" for field in _PER_AXIS for axis in AXES),
)
PROBLEM_COLUMNS = {"gemm": GEMM_PROBLEM_COLUMNS, "grouped_conv": CONV_PROBLEM_COLUMNS}
HW_COLUMNS = (
    "num_cus", "simds_per_cu", "shader_engines", "max_clock_mhz", "max_waves_per_cu", "wavefront_size",
    "lds_bytes", "l1_cache_kb", "l2_cache_kb", "l3_cache_kb", "num_xcd",
)


def problem(name: str) -> Expr:
    """Problem column `name` as a feature reads it: a float."""
    return Field(name).as_float()


def kernel(name: str) -> Col:
    """Kernel column `name` as a feature reads it: a float, NaN where a kernel lacks the knob."""
    return Col(name, float)


def problem_columns(problem: GemmProblem | ConvProblem) -> dict[str, int]:
    """The problem's columns (see the module docstring)."""
    if isinstance(problem, GemmProblem):
        return {"M": problem.M, "N": problem.N, "K": problem.K, "k_batch": problem.k_batch, "batch": problem.batch,
                "groups": problem.groups}
    out = {name: getattr(problem, name) for name in ("G", "N", "C", "K")}
    missing = len(AXES) - problem.ndim
    defaults = {"input": 1, "filter": 1, "stride": 1, "dilation": 1, "left_pad": 0, "right_pad": 0}
    for field in ("input", "filter", *_PER_AXIS):
        values = (defaults[field],) * missing + tuple(getattr(problem, field))
        names = _SPATIAL.get(field) or tuple(f"{field}_{a}" for a in AXES)
        out.update(zip(names, values))
    return out


def _one_shape(problems: Sequence[GemmProblem | ConvProblem]) -> None:
    """Refuse a grouped problem of per-group shapes: the features read one shape per problem."""
    for problem in problems:
        if problem.group_shapes:
            raise ProblemError("group_shapes", f"{problem_label(problem)}: the features (a LightGBM model's, "
                               "training's) read one shape per problem; rank per-group shapes with the analytic model")


def hw_columns(hw: Hardware) -> dict[str, float]:
    return {name: float(getattr(hw, name)) for name in HW_COLUMNS}


def _float(expr: Expr) -> Expr:
    """A feature's tree: a float, or a bool as a float."""
    if expr.type is bool:
        return expr.as_float()
    if expr.type is not float:
        raise TypeError(f"a feature is a float or a bool, not {expr.type.__name__}")
    return expr


@attrs.frozen
class Feature:
    """One named feature. `encoding` (categorical features only): CK's code of each kernel value."""

    name: str
    expr: Expr = attrs.field(converter=_float)
    encoding: Mapping[str, int] | None = None

    @property
    def kind(self) -> str:
        return "numeric" if self.encoding is None else "categorical"


def categorical(name: str, column: str, encoding: Mapping[str, int], default: int = 0) -> Feature:
    """A categorical feature: kernel column `column` encoded by `encoding`, `default` for other values."""
    return Feature(name, lookup(column, encoding, Col(column), default).as_float(), dict(encoding))


@attrs.frozen
class FeatureSet:
    """An ordered feature table for problems of `kind` ("gemm" or "grouped_conv")."""

    kind: str
    features: tuple[Feature, ...]

    def __attrs_post_init__(self) -> None:
        names = [f.name for f in self.features]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.kind}: duplicate feature names")
        allowed = {Field: set(PROBLEM_COLUMNS[self.kind]), Hw: set(HW_COLUMNS)}
        for f in self.features:
            for node in walk(f.expr):
                if type(node) in allowed and node.name not in allowed[type(node)]:
                    source = "problem" if type(node) is Field else "hw"
                    raise ValueError(f"{self.kind} feature {f.name}: no {source} column {node.name!r}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.features)

    @property
    def categorical(self) -> dict[str, dict[str, int]]:
        """Categorical feature name -> {kernel value: code}, in feature order."""
        return {f.name: dict(f.encoding) for f in self.features if f.encoding is not None}

    def kernel_columns(self) -> tuple[str, ...]:
        """The kernel columns the features read (knob names and derived columns)."""
        used = (n.name for f in self.features for n in walk(f.expr) if isinstance(n, Col))
        return tuple(dict.fromkeys(used))

    def matrix(self, problem: GemmProblem | ConvProblem, kernels: KernelTable, hw: Hardware) -> np.ndarray:
        """float64 (len(kernels), len(names)): one row per kernel, columns in `names` order."""
        if problem.kind != self.kind:
            raise ValueError(f"a {problem.kind} problem given to the {self.kind} feature set")
        _one_shape([problem])
        scope = Scope(kernels, problem_columns(problem), hw_columns(hw))
        out = np.empty((len(kernels), len(self.features)), dtype=np.float64)
        with np.errstate(all="ignore"):  # CK's guards are where(...) over both branches, as numpy computes them
            for j, f in enumerate(self.features):
                out[:, j] = scope.value(f.expr)
        return out

    def matrix_many(self, problems: Sequence[GemmProblem | ConvProblem], kernels: KernelTable, hw: Hardware,
                    mask: np.ndarray) -> np.ndarray:
        """The rows of `matrix` of problems (of this kind) at once, of the kernels where `mask` (problems x kernels)
        holds, problem by problem: float64 (mask.sum(), len(names)), each row the one `matrix` gives its problem
        and kernel (each tree evaluated once for all the problems, `ProblemsScope`)."""
        if problems[0].kind != self.kind:
            raise ValueError(f"a {problems[0].kind} problem given to the {self.kind} feature set")
        _one_shape(problems)
        scope = ProblemsScope(kernels, problems_values([problem_columns(p) for p in problems]), hw_columns(hw))
        out = np.empty((int(np.count_nonzero(mask)), len(self.features)), dtype=np.float64)
        with np.errstate(all="ignore"):
            for j, f in enumerate(self.features):
                out[:, j] = np.broadcast_to(scope.value(f.expr), mask.shape)[mask]
        return out

    def vector(self, problem: GemmProblem | ConvProblem, config: Mapping[str, Any], hw: Hardware) -> np.ndarray:
        """The features of one kernel config: the row `matrix` gives for it."""
        return self.matrix(problem, KernelTable.of([config]), hw)[0]

