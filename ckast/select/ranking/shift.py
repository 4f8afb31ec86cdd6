"""Validation that sees shift: besides random folds of problem shapes, folds that hold out a whole family of
problems (stride 1, batch N <= 4, 1x1 filters, small images; GEMM M, N or K ranges) and train on the others,
so a predictor is scored on problems unlike those it learnt from; and the choice of the predictor that does
best there.

A family is data (`FAMILIES`): a name, the axis it splits problems along (conv stride, batch, filter, image;
GEMM M, N, K) and a predicate over the problem's fields in ckast's selection language (`select.expr`), which
is what reports show of it. The families of an axis part the problems, so each problem is held out once per
axis. A family of fewer than `MIN_PROBLEMS` problems, or that leaves fewer to train on, is skipped, and said so.

Predictors are trainers (`Trainer`): a name and a fit from training rows to a fitted model, which predicts
log1p(TFLOPS) of any rows. The analytic model learns nothing (`learns` false): it is fitted once.

Over the families a predictor's figures are the worst family's (each figure's lowest over the families) and
the mean over families. The predictor chosen (`choose`) has the highest worst-family P10, ties broken by the
mean over families of the mean efficiency, then by the trainers' order; a learned one only when it is below
the analytic model on neither. Without a family held out the same rule runs on the random folds' figures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import attrs
import numpy as np

from .evaluate import Outcome, outcome, summary
from ckast.select.expr import Expr, Field, Over, Scope, text
from ckast.select.problem import Problem

MIN_PROBLEMS = 10
"""The fewest problems a family held out, and the others trained on, may have (P10 is `sorted[n // 10]`)."""
ANALYTIC = "analytic"
FIGURES = ("mean", "p10", "p50", "min", "top1", "top5")


@attrs.frozen
class Family:
    """Problems of one kind alike along one axis: those for which `where` holds."""

    name: str
    axis: str
    kind: str
    """The problems' kind: `gemm` or `grouped_conv`."""
    where: Expr

    def holds(self, problem: Problem) -> bool:
        from ckast.select.serving.applicability import problem_fields

        return bool(Scope(problem=problem_fields(problem)).value(self.where))

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "axis": self.axis, "where": text(self.where)}


def _conv(name: str, axis: str, where: Expr) -> Family:
    return Family(name, axis, "grouped_conv", where)


def _gemm(name: str, axis: str, where: Expr) -> Family:
    return Family(name, axis, "gemm", where)


_ONE_BY_ONE, _THREE = Over("all", Field("filter").eq(1)), Over("all", Field("filter").eq(3))
_IMAGE = Over("prod", Field("input"))
SMALL_IMAGE = 56 * 56
FAMILIES: tuple[Family, ...] = (
    _conv("stride 1", "stride", Over("all", Field("stride").eq(1))),
    _conv("stride 2+", "stride", Over("any", Field("stride") > 1)),
    _conv("N <= 4", "batch", Field("N") <= 4),
    _conv("N > 4", "batch", Field("N") > 4),
    _conv("filter 1x1", "filter", _ONE_BY_ONE),
    _conv("filter 3x3", "filter", _THREE),
    _conv("other filters", "filter", ~(_ONE_BY_ONE | _THREE)),
    _conv("image <= 56x56", "image", _IMAGE <= SMALL_IMAGE),
    _conv("image > 56x56", "image", _IMAGE > SMALL_IMAGE),
    _gemm("M <= 64", "M", Field("M") <= 64),
    _gemm("M 65-1024", "M", (Field("M") > 64) & (Field("M") <= 1024)),
    _gemm("M > 1024", "M", Field("M") > 1024),
    _gemm("N <= 64", "N", Field("N") <= 64),
    _gemm("N 65-1024", "N", (Field("N") > 64) & (Field("N") <= 1024)),
    _gemm("N > 1024", "N", Field("N") > 1024),
    _gemm("K <= 1024", "K", Field("K") <= 1024),
    _gemm("K > 1024", "K", Field("K") > 1024),
)
"""The families held out, per kind; the image is the input's points (Hi x Wi, x Di in 3-D)."""


def families_of(problems: Sequence[Problem], kind: str, held_out: bool = True,
                families: Sequence[Family] = FAMILIES) -> tuple[list[tuple[Family, np.ndarray]], list[dict[str, Any]]]:
    """The families of `kind` among `problems`, each with its mask over them, and those skipped (the family,
    its problems and why): a family of fewer than MIN_PROBLEMS problems, or, `held_out`, leaving fewer to train
    on."""
    kept, skipped = [], []
    for family in (f for f in families if f.kind == kind):
        mask = np.array([family.holds(p) for p in problems], dtype=bool)
        held, rest = int(mask.sum()), int((~mask).sum())
        if held < MIN_PROBLEMS:
            reason = f"{held} problem{'s' * (held != 1)} (a family needs {MIN_PROBLEMS})"
        elif held_out and rest < MIN_PROBLEMS:
            reason = f"it leaves {rest} problem{'s' * (rest != 1)} to train on (fewer than {MIN_PROBLEMS})"
        else:
            kept.append((family, mask))
            continue
        skipped.append({**family.as_dict(), "problems": held, "reason": reason})
    return kept, skipped


class Fitted(Protocol):
    """A fitted predictor: predicted log1p(TFLOPS) of rows of the training data."""

    def predict(self, rows: np.ndarray) -> np.ndarray: ...


@attrs.frozen
class Trainer:
    """A predictor by name and how it is fitted: `fit(training rows, LightGBM callbacks)`."""

    name: str
    fit: Callable[[np.ndarray, list], Fitted]
    learns: bool = True
    """False: the fit is the same for any rows (the analytic model), made once."""


@attrs.frozen
class Analytic:
    """The analytic model's predicted log1p(TFLOPS) of every row of the training data."""

    values: np.ndarray

    def predict(self, rows: np.ndarray) -> np.ndarray:
        return self.values[rows]


def analytic_trainer(data) -> Trainer:
    """The analytic model as a trainer of `data` (`train.Dataset`): it learns nothing, its predictions are those
    of `select` without a model (`data.analytic`)."""

    def fit(rows: np.ndarray, callbacks: list) -> Analytic:
        return Analytic(np.log1p(data.analytic))

    return Trainer(ANALYTIC, fit, learns=False)


@attrs.frozen
class Fold:
    """Rows held out (the others trained on): one of the random group folds, or a family's problems."""

    label: str
    held: np.ndarray
    family: Family | None = None


def family_folds(problems: Sequence[Problem], group: np.ndarray, kind: str) -> tuple[list[Fold], list[dict]]:
    """A fold per family that can be held out (rows of its problems; `group[row]` is the row's problem), and
    the families skipped."""
    kept, skipped = families_of(problems, kind)
    return [Fold(family.name, np.flatnonzero(mask[group]), family) for family, mask in kept], skipped


def scored(tflops: np.ndarray, predicted: np.ndarray, group: np.ndarray, name_order: np.ndarray,
           rows: np.ndarray | None = None) -> list[Outcome]:
    """One outcome per problem of `rows` (default: all), picked by `predicted` (any monotone scale)."""
    rows = np.arange(len(tflops)) if rows is None else rows
    outcomes = []
    for g in np.unique(group[rows]):
        mine = rows[group[rows] == g]
        eff, top1, top5, chosen, best = outcome(tflops[mine], predicted[mine], name_order[mine])
        outcomes.append(Outcome(None, eff, top1, top5, chosen, best))
    return outcomes


def figures(data, plan: Sequence[Fold], predicted: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """A predictor's figures from its predictions of each fold's held-out rows (`predicted`, by fold label) of
    `data` (`train.Dataset`): on the random folds (`random`: the errors of log1p TFLOPS, `efficiency`), per
    family (`families`) and over them (`shift`, `over_families`)."""
    values = np.empty(len(data.tflops))
    random = [f for f in plan if f.family is None]
    for f in random:
        values[f.held] = predicted[f.label]
    err = values - np.log1p(data.tflops)
    out: dict[str, Any] = {"random": {
        "rmse_log1p": float(np.sqrt(np.mean(err**2))), "mae_log1p": float(np.mean(np.abs(err))),
        "efficiency": summary(scored(data.tflops, values, data.group, data.name_order))}}
    per = {}
    for f in plan:
        if f.family is not None:
            values[f.held] = predicted[f.label]
            per[f.label] = summary(scored(data.tflops, values, data.group, data.name_order, f.held))
    if per:
        out.update(families=per, shift=over_families(per))
    return out


def over_families(per_family: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """`worst` (each figure's lowest over the families) and `mean` (each figure's mean over them)."""
    values = {k: [s[k] for s in per_family.values()] for k in FIGURES}
    return {"worst": {k: float(min(v)) for k, v in values.items()},
            "mean": {k: float(np.mean(v)) for k, v in values.items()}}


@attrs.frozen
class Choice:
    """The predictor chosen, on what figures (`basis`: `families`, `random folds`, or why none) and why."""

    name: str
    basis: str
    why: str


def choose(names: Sequence[str], random: Mapping[str, Mapping[str, float]] | None,
           shift: Mapping[str, Mapping[str, Mapping[str, float]]] | None, fallback: str,
           overall: str = "random folds") -> Choice:
    """The predictor that does best under shift (the module's rule), from each predictor's efficiency summary on
    the random folds (`random`, None without folds; or on what `overall` names) and `over_families` figures
    (`shift`, None without a family held out); `fallback` when there is neither."""
    if shift:
        basis, key = "families", {n: (shift[n]["worst"]["p10"], shift[n]["mean"]["mean"]) for n in names}
        words = "worst-family P10 / mean over families"
    elif random:
        basis, key = overall, {n: (random[n]["p10"], random[n]["mean"]) for n in names}
        words = f"P10 / mean on the {overall} (no family held out)"
    else:
        return Choice(fallback, "none", f"{fallback}, not validated (no cross-validation)")
    floor = key.get(ANALYTIC)
    eligible = [n for n in names if floor is None or n == ANALYTIC or min(np.subtract(key[n], floor)) >= 0]
    best = max(eligible, key=lambda n: (key[n], -names.index(n)))
    figures = ", ".join(f"{n} {key[n][0]:.1%} / {key[n][1]:.1%}" for n in names)
    rule = "the highest " + ("worst-family P10" if basis == "families" else "P10")
    if floor is not None and len(names) > 1:
        rule += " and never below the analytic model"
    return Choice(best, basis, f"{best}, {rule} ({words}: {figures})")


def table(rows: Sequence[tuple[str, str, Mapping[str, Any]]], head: str = "held out") -> list[str]:
    """Rows (what was held out, predictor, summary) as text, the first column headed `head`; a summary without
    `problems` shows none."""
    lines = [f"{head:<22}{'predictor':<11}{'problems':>8}{'mean':>8}{'P10':>8}{'P50':>8}{'min':>8}"
             f"{'top-1':>8}{'top-5':>8}"]
    for label, name, s in rows:
        count = str(s["problems"]) if "problems" in s else ""
        lines.append(f"{label:<22}{name:<11}{count:>8}" + "".join(f"{s[k]:>8.1%}" for k in FIGURES))
    return lines


def report_rows(predictors: Mapping[str, Mapping[str, Any]], label: str | None,
                key: str = "random") -> list[tuple[str, str, Mapping]]:
    """The rows of `table` of `predictors` (name -> {key?, families?, shift?} as `cv_metrics.json` and `select
    eval --json` hold them): the random folds or all problems (`key`, shown as `label`), each family, the worst
    family and the mean over families, each predictor in turn."""
    rows = []
    names = list(predictors)
    if label is not None:
        rows += [(label, n, predictors[n][key].get("efficiency", predictors[n][key])) for n in names]
    families = list(predictors[names[0]].get("families", {}))
    for family in families:
        rows += [(family, n, predictors[n]["families"][family]) for n in names]
    if families:
        for which, label in (("worst", "worst family"), ("mean", "mean over families")):
            rows += [(label, n, predictors[n]["shift"][which]) for n in names]
    return rows


def family_report(outcomes: Mapping[str, Sequence[Outcome]]) -> dict[str, Any]:
    """`select eval`'s figures per family of the problems (each predictor of `outcomes`, whose problems are the
    same, in one order; the families of each kind among its problems), over the families, and the predictor that
    does best there (`choose`; without a family, on all problems)."""
    names = list(outcomes)
    problems = [o.problem for o in outcomes[names[0]]]
    families, skipped, masks = [], [], []
    for kind in sorted({p.kind for p in problems}):
        mine = np.array([p.kind == kind for p in problems])
        kept, passed = families_of([p for p in problems if p.kind == kind], kind, held_out=False)
        skipped += passed
        for family, mask in kept:
            full = np.zeros(len(problems), dtype=bool)
            full[mine] = mask
            families.append({**family.as_dict(), "problems": int(mask.sum())})
            masks.append(full)
    predictors: dict[str, dict[str, Any]] = {}
    for n in names:
        per = {f["name"]: summary([o for o, m in zip(outcomes[n], mask) if m]) for f, mask in zip(families, masks)}
        predictors[n] = {"all": summary(list(outcomes[n])), **({"families": per, "shift": over_families(per)}
                                                                if per else {})}
    choice = choose(names, {n: predictors[n]["all"] for n in names},
                    {n: predictors[n]["shift"] for n in names} if families else None, names[0], "all problems")
    return {"families": families, "skipped": skipped, "predictors": predictors,
            "best": {"name": choice.name, "basis": choice.basis, "why": choice.why}}
