"""A model's training domain: what it was trained on, recorded in its spec (`domain`), so a prediction far from
it can be told apart and handed to the analytic model.

- `problems`: per problem column (`validity.problem_columns`), the least and greatest value of the training
  problems; a problem is inside where each of its columns lies within them (`problems_outside` names those that
  do not).
- `kernels`: per kernel feature of the model's set (a feature reading kernel columns only: tiles, warps,
  pipeline, vector widths, ...), the values its training kernels had (null: a knob the kernel lacks); a kernel
  is inside where each of its features holds one of them.

A residual model (spec `base` "analytic") ranks a problem by the analytic model alone when any kernel it chooses
from lies outside (the trees never saw such a kernel: its correction would be another kernel's). A problem outside
is ranked as one inside, the analytic model times the trees' correction: the trees count half (`residual_scale`),
so far from their data the analytic model still leads, and a shift of shapes keeps what the trees learnt of the
kernels. Both are reported (`domain_entry`, `domain_line`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ckast.config.errors import key_path, shown

from ckast.select.expr import Scope
from .forest import ModelError
from ckast.select.problem import Problem


@attrs.frozen
class Domain:
    """The training domain: `problems` column -> (min, max); `kernels` feature -> the values seen (None: NaN)."""

    problems: Mapping[str, tuple[float, float]]
    kernels: Mapping[str, tuple[float | None, ...]]

    def problems_outside(self, p: Problem) -> list[str]:
        """The columns of `p` outside the domain, as `name=value (trained lo..hi)`."""
        from ckast.select.serving.validity import problem_columns

        columns = problem_columns(p)
        return [f"{name}={columns[name]} (trained {_number(lo)}..{_number(hi)})"
                for name, (lo, hi) in self.problems.items() if not lo <= columns.get(name, math.nan) <= hi]

    def kernels_inside(self, kind: str, table) -> np.ndarray:
        """Per kernel of `table`: inside the domain."""
        inside = np.ones(len(table), dtype=bool)
        for name, values in self.kernel_values(kind, table).items():
            inside &= values
        return inside

    def kernel_values(self, kind: str, table) -> dict[str, np.ndarray]:
        """Per kernel feature of the domain: which kernels of `table` hold a value seen in training."""
        from .inputs import model_features

        features = {f.name: f for f in model_features(kind).features}
        scope = Scope(table)
        out = {}
        for name, seen in self.kernels.items():
            values = np.broadcast_to(np.asarray(scope.value(features[name].expr), dtype=np.float64), (len(table),))
            known = np.array([v for v in seen if v is not None], dtype=np.float64)
            out[name] = np.isin(values, known) | (np.isnan(values) & (None in seen))
        return out

    def rows_inside(self, kind: str, x: np.ndarray) -> np.ndarray:
        """Per row of model-feature rows `x` (every column of the kind's model features): its kernel is inside."""
        from .inputs import model_features

        index = {f.name: j for j, f in enumerate(model_features(kind).features)}
        inside = np.ones(len(x), dtype=bool)
        for name, seen in self.kernels.items():
            values = x[:, index[name]]
            known = np.array([v for v in seen if v is not None], dtype=np.float64)
            inside &= np.isin(values, known) | (np.isnan(values) & (None in seen))
        return inside

    def to_json(self) -> dict[str, Any]:
        return {"problems": {name: [_number(lo), _number(hi)] for name, (lo, hi) in self.problems.items()},
                "kernels": {name: [None if v is None else _number(v) for v in values]
                            for name, values in self.kernels.items()}}


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def training_domain(kind: str, problems: Sequence[Problem], x: np.ndarray) -> Domain:
    """The domain of `problems` and the model-feature rows `x` (every column of the kind's model features)."""
    from ckast.select.serving.validity import problem_columns
    from .inputs import model_features

    columns = [problem_columns(p) for p in problems]
    bounds = {name: (float(min(c[name] for c in columns)), float(max(c[name] for c in columns)))
              for name in columns[0]}
    kernels = {}
    for j, feature in enumerate(model_features(kind).features):
        if feature.expr.sources == frozenset(("kernel",)):
            seen = np.unique(x[:, j][~np.isnan(x[:, j])])
            kernels[feature.name] = (*(float(v) for v in seen), *((None,) if np.isnan(x[:, j]).any() else ()))
    return Domain(bounds, kernels)


def read_domain(value: Any, kind: str, where: str) -> Domain:
    """The spec's `domain` field (ModelError naming the bad field: a problem column or kernel feature ckast does
    not know, bounds that are not [min, max] numbers, values that are not a list of numbers and null)."""
    from ckast.select.features.featureset import PROBLEM_COLUMNS
    from .inputs import model_features

    if not isinstance(value, dict) or set(value) != {"problems", "kernels"}:
        raise ModelError(f"{where}: domain: expected {{\"problems\": ..., \"kernels\": ...}}, not {shown(value)}")
    known_columns = {*PROBLEM_COLUMNS[kind], "k_batch"}
    features = {f.name: f for f in model_features(kind).features}
    if not isinstance(value["problems"], dict):
        raise ModelError(f"{where}: domain.problems: expected an object, not {shown(value['problems'])}")
    problems = {}
    for name, bounds in value["problems"].items():
        field = key_path("domain.problems", name)
        if name not in known_columns:
            raise ModelError(f"{where}: {field}: not a {kind} problem column")
        if (not isinstance(bounds, list) or len(bounds) != 2 or not all(_finite(b) for b in bounds)
                or bounds[0] > bounds[1]):
            raise ModelError(f"{where}: {field}: expected [min, max] (finite numbers, min <= max), not {shown(bounds)}")
        problems[name] = (float(bounds[0]), float(bounds[1]))
    if not isinstance(value["kernels"], dict):
        raise ModelError(f"{where}: domain.kernels: expected an object, not {shown(value['kernels'])}")
    kernels = {}
    for name, seen in value["kernels"].items():
        field = key_path("domain.kernels", name)
        if name not in features or features[name].expr.sources != frozenset(("kernel",)):
            raise ModelError(f"{where}: {field}: not a kernel feature of ckast's {kind} set")
        if not isinstance(seen, list) or not seen or not all(v is None or _finite(v) for v in seen):
            raise ModelError(f"{where}: {field}: expected a list of the values seen (numbers, null), not {shown(seen)}")
        kernels[name] = tuple(None if v is None else float(v) for v in seen)
    return Domain(problems, kernels)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


ANALYTIC_ALONE = "analytic model"
"""`ranked_by` of a problem a residual model hands to the analytic model."""


def domain_entry(predictor, problem: Problem, part, rows: np.ndarray) -> dict[str, Any] | None:
    """What of one problem lies outside `predictor`'s training domain and what ranked it (None: the predictor records
    no domain): `problem_outside` (its columns outside, as text), `kernels_outside` (of the part's kernels),
    `applicable_outside` (of `rows`, the kernels it was ranked among) and `ranked_by` ("model", or "analytic model"
    where a residual model hands the problem to it: a kernel of `rows` outside)."""
    domain = getattr(predictor, "domain", None)
    if domain is None:
        return None
    kernels = predictor.kernels_inside(part)
    outside = domain.problems_outside(problem)
    applicable = int((~kernels[rows]).sum())
    fallback = predictor.base == "analytic" and applicable > 0
    return {"problem_outside": outside, "kernels_outside": int((~kernels).sum()), "applicable_outside": applicable,
            "ranked_by": ANALYTIC_ALONE if fallback else "model"}


def domain_line(entries: Sequence[tuple[Any, int, Mapping[str, Any]]], base: str) -> str | None:
    """One line summing up `domain_entry`s (each with its part's key and kernel count), None when every problem
    and kernel lies inside the domain."""
    parts: dict[Any, tuple[int, int]] = {}
    problems = 0
    fallback = corrected = 0
    for key, kernels, entry in entries:
        parts[key] = (kernels, entry["kernels_outside"])
        problems += bool(entry["problem_outside"])
        fallback += entry["ranked_by"] == ANALYTIC_ALONE
        corrected += bool(entry["problem_outside"]) and entry["ranked_by"] != ANALYTIC_ALONE
    kernels_outside = sum(out for _, out in parts.values())
    if not problems and not kernels_outside:
        return None
    from ckast.wording import quantity

    what = []
    if kernels_outside:
        what.append(f"{kernels_outside} of {quantity(sum(k for k, _ in parts.values()), 'kernel')}")
    if problems:
        what.append(f"{problems} of {quantity(len(entries), 'problem')}")
    if base == "analytic":
        did = f"{quantity(fallback, 'problem')} ranked by the analytic model alone"
        if corrected:
            did += (f", {quantity(corrected, 'problem')} outside ranked by the analytic model with the trees' "
                    "correction, as inside")
    else:
        did = "ranked by the model's trees regardless (a model without an analytic base has nothing to fall back on)"
    return f"{' and '.join(what)} outside the model's training domain: {did}"
