"""Libraries for a workload: the kernels of a selection that its problems need.

A workload is a problems file in the formats `ckast select --problems` reads (`report.read_problems`), each
problem with an optional `weight` (default 1; e.g. its share of run time) and, for a library of several
datatypes or GEMM layouts, an optional `datatype` and `layout`. A scorer gives the TFLOPS of every (problem,
kernel) pair: predicted (the analytic model or a LightGBM model, under both applicability layers, as `ckast
select` ranks) or measured (the runs of timing tables; a pair without a run is not scored). A problem's
efficiency with a kernel is the kernel's TFLOPS over the best the whole selection offers for it (0 where the
kernel is not applicable or not scored); problems no kernel serves are listed and play no part.

Two choices, each deterministic (ties go to the kernel first by name):

- `within(P)`: greedy set cover. Every served problem needs a kept kernel within P% of its best
  (efficiency >= 1 - P/100); each step keeps the kernel that brings the most problems within P% (ties: the
  larger gain in weighted efficiency, computed for those kernels only). Greedy set cover is within a factor
  ln(problems) + 1 of the smallest set.
- `budget(N)`: greedy facility location, maximising the weighted mean efficiency, a monotone submodular
  function: the greedy set is within (1 - 1/e) of the best set of N. The gains of all kernels are computed
  at once per step (numpy over problems x kernels, 1,024 problems at a time). Coverage comes first when it
  must: if the greedy N leave a served problem without an applicable kernel, the choice starts again from a
  greedy cover of the applicability (most uncovered problems, then the larger weighted efficiency) and fills
  up to N by facility location; a cover larger than N is kept whole and the choice says by how much it
  exceeds N.

Rows of one problem (and part) are scored and chosen for once, as one problem weighing their weights together
and counting as many in a set cover. The choice holds one distinct problems x kernels matrix (the scorer's,
made the efficiencies in place; copied only to leave out the problems not served), so a workload is bounded:
`PROBLEMS_MAX` rows and `PAIRS_MAX` (distinct problem, kernel) pairs.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ckast.arguments import argument
from ckast.errors import CkastError
from ckast.wording import quantity

from ckast.select.ranking.evaluate import efficiency_figures
from ckast.select.serving.library import Library, LibraryError
from ckast.select.problem import Problem, ProblemError, problem_label
from .report import PROBLEMS_MAX, parse_row, read_problems

_TOLERANCE = 1e-9
PAIRS_MAX = 1 << 27
"""The most (distinct problem, kernel) pairs a workload's choice holds (a matrix of 8-byte efficiencies, and one
more when some problems are not served: about 1 GiB each at the limit)."""
_ROWS = 1024
"""Problems per step where a choice sums over problems (its temporaries are this many rows of the matrix)."""


class WorkloadError(CkastError, ValueError):
    """A workload request that cannot be served: a bad option, file or row, or no problem any kernel serves."""


@attrs.frozen
class Workload:
    """The problems of a workload file, in file order, with their labels (`FILE: row N`), weights and the
    datatype and layout a row names (None: the library's only one)."""

    labels: tuple[str, ...]
    problems: tuple[Problem, ...]
    weights: np.ndarray = attrs.field(eq=False)
    parts: tuple[tuple[str | None, str | None], ...]

    def distinct(self) -> tuple[Workload, np.ndarray]:
        """Its distinct rows (problem and part) in the order they first come, each labelled as its first row and
        weighing its rows' weights together; and per row, the index of its distinct row."""
        first: dict[tuple, int] = {}
        rows = np.array([first.setdefault(key, len(first)) for key in zip(self.problems, self.parts)], dtype=np.int64)
        heads = np.unique(rows, return_index=True)[1]  # each distinct row's first row
        weights = np.bincount(rows, weights=self.weights, minlength=len(first))
        return Workload(tuple(self.labels[i] for i in heads), tuple(self.problems[i] for i in heads), weights,
                        tuple(self.parts[i] for i in heads)), rows


def read_workload(path: Path, kinds: Sequence[str], kernels: int = 1) -> Workload:
    """The problems of the file at `path` (rows as `report.parse_row` reads them; a GEMM row names M, or the
    library holds GEMM kernels only) for a choice among `kernels` kernels; WorkloadError naming the file, the row
    and the field of the first bad one, or the row at which the weights' sum exceeds the largest float, or the
    row beyond PROBLEMS_MAX rows or beyond the distinct problems such a choice holds (PAIRS_MAX). Rows of one
    problem and part share one problem object."""
    labels, problems, weights, parts = [], [], [], []
    total, distinct, most = 0.0, {}, PAIRS_MAX // max(kernels, 1)
    try:
        for label, fields in read_problems((), Path(path)):
            if len(problems) == PROBLEMS_MAX:
                raise WorkloadError(f"{path}: more than {PROBLEMS_MAX:,} problems, the most a workload holds; "
                                    "merge repeated problems (a weight says how often one occurs) or split it")
            row = parse_row(fields, tuple(kinds), label)
            total += row.weight
            if not math.isfinite(total):
                raise ProblemError("weight", f"the weights up to this row sum beyond the largest number "
                                             f"({sys.float_info.max:.3g}); scale them down", label)
            part = (row.datatype, row.layout)
            problem = distinct.setdefault((row.problem, part), row.problem)
            if len(distinct) > most:
                raise WorkloadError(f"{label}: more than {most:,} distinct problem{'s' * (most != 1)}, the most a "
                                    f"choice among {quantity(kernels, 'kernel')} holds ({PAIRS_MAX:,} (problem, "
                                    "kernel) pairs); split the workload or narrow the selection")
            weights.append(row.weight)
            parts.append(part)
            problems.append(problem)
            labels.append(label)
    except ProblemError as exc:
        raise WorkloadError(str(exc)) from None
    return Workload(tuple(labels), tuple(problems), np.array(weights, dtype=np.float64), tuple(parts))


Scorer = Callable[[Library, Workload], tuple[np.ndarray, list[str | None]]]
"""TFLOPS of every (problem, kernel) pair (NaN: not applicable or not scored) and, per problem, why no kernel
of the library's can serve it (None: some may)."""


def predicted(predictor, layers: Sequence[str]) -> Scorer:
    """The scorer of `predictor` (`rank.load_predictor`) under the applicability `layers`, as `ckast select`
    ranks: problems of one part in batches (`batch.rank_many`). For a model that records its training domain,
    the scorer's `domain` lists, per problem scored, its part and `model_domain.domain_entry`."""
    from ckast.arch.hardware import hardware

    from ckast.select.ranking.batch import batch_size, rank_many
    from ckast.select.models.domain import domain_entry

    def score(library: Library, workload: Workload) -> tuple[np.ndarray, list[str | None]]:
        tflops = np.full((len(workload.problems), len(library.names)), np.nan)
        reasons: list[str | None] = [None] * len(workload.problems)
        rows: dict[int, tuple[Any, list[int]]] = {}
        for i, (problem, (datatype, layout)) in enumerate(zip(workload.problems, workload.parts)):
            try:
                given = {f: f for f, v in (("datatype", datatype), ("layout", layout)) if v is not None}
                part = library.part(problem, datatype, layout, given=given)  # the row's label precedes the reason
            except LibraryError as exc:
                reasons[i] = str(exc)
                continue
            rows.setdefault(id(part), (part, []))[1].append(i)
        for part, indices in rows.values():
            columns = np.array([library.index[name] for name in part.names])
            size = batch_size(part)
            for start in range(0, len(indices), size):
                chunk = indices[start:start + size]
                rankings = rank_many([workload.problems[i] for i in chunk], part, predictor, hardware(part.arch),
                                     layers)
                for i, ranking in zip(chunk, rankings):
                    tflops[i, columns] = ranking.tflops
                    entry = domain_entry(predictor, ranking.problem, part, np.flatnonzero(ranking.applicable))
                    if entry is not None:
                        score.domain.append((id(part), len(part), {"problem": workload.labels[i], **entry}))
                    if not ranking.applicable.any():
                        reasons[i] = "no kernel applicable (" + ", ".join(
                            f"{name} {count}" for name, count in ranking.refused.items()) + ")"
        return tflops, reasons

    score.domain = []
    return score


def measured(runs: Iterable) -> Scorer:
    """The scorer of timing runs (`timings.Timings.runs`, already checked for applicability): a pair's runs
    averaged geometrically (`evaluate.group_runs`); a pair without a run is not scored."""
    from ckast.select.ranking.evaluate import group_runs

    grouped = group_runs(runs)

    def score(library: Library, workload: Workload) -> tuple[np.ndarray, list[str | None]]:
        tflops = np.full((len(workload.problems), len(library.names)), np.nan)
        reasons: list[str | None] = [None] * len(workload.problems)
        for i, problem in enumerate(workload.problems):
            for kernel, value in grouped.get(problem, {}).items():
                tflops[i, kernel] = value
            if problem not in grouped:
                reasons[i] = "no run of it in the timing tables"
        return tflops, reasons

    return score


@attrs.frozen
class Scores:
    """Every (problem, kernel) pair of a workload and a library: `efficiency` (TFLOPS over the problem's best
    in the library, 0 where not scored), which problems any kernel serves, and why the others are not."""

    names: tuple[str, ...]
    efficiency: np.ndarray = attrs.field(eq=False)
    served: np.ndarray = attrs.field(eq=False)
    reasons: tuple[str | None, ...]

    @classmethod
    def of(cls, library: Library, workload: Workload, scorer: Scorer) -> Scores:
        """The scores of `scorer`; its matrix becomes the efficiency matrix in place (no copy of its size)."""
        efficiency, reasons = scorer(library, workload)
        efficiency[~(np.isfinite(efficiency) & (efficiency > 0))] = 0.0
        best = efficiency.max(axis=1, initial=0.0)
        served = best > 0
        np.divide(efficiency, best[:, None], out=efficiency, where=served[:, None])
        why = tuple(None if s else (r or "no kernel scored") for s, r in zip(served, reasons))
        return cls(library.names, efficiency, served, why)


@attrs.frozen
class Choice:
    """The kernels kept (indices into `Scores.names`, in the order chosen) and what they offer each problem."""

    mode: str
    """`within` or `budget`."""
    value: float
    kept: tuple[int, ...]
    efficiency: np.ndarray = attrs.field(eq=False)
    """Per problem: the best kept kernel's efficiency (NaN for a problem no kernel serves)."""
    weights: np.ndarray = attrs.field(eq=False)
    over_budget: int = 0
    """Kernels kept beyond the budget so that every served problem keeps an applicable kernel."""

    def summary(self) -> dict[str, float]:
        """Over the served problems: their count, mean, P10 and minimum efficiency as `select eval` gives them
        (`evaluate.efficiency_figures`), and the weighted mean."""
        served = np.isfinite(self.efficiency)
        eff, weights = self.efficiency[served], self.weights[served]
        figures = efficiency_figures(eff)
        return {k: figures[k] for k in ("problems", "mean", "p10", "min")} | {
            "weighted_mean": float(np.average(eff, weights=weights))}


def choose(scores: Scores, weights: np.ndarray, *, within: float | None = None, budget: int | None = None,
           counts: np.ndarray | None = None) -> Choice:
    """The kernels to keep: `within` P percent of every served problem's best, or at most `budget` kernels of
    the best weighted mean efficiency (see the module docstring); `counts`: how many problems each of `scores`'
    stands for (default 1 each; a distinct problem's rows, which set cover counts). WorkloadError when no
    problem is served."""
    if not scores.served.any():
        raise WorkloadError(f"no problem of the workload is served by any kernel of the selection "
                            f"({quantity(len(scores.served), 'problem')}; the first: {scores.reasons[0]})")
    all_served = bool(scores.served.all())  # then the matrix is used as it is, not copied
    eff = scores.efficiency if all_served else scores.efficiency[scores.served]
    w = np.asarray(weights, dtype=np.float64)
    w = w if all_served else w[scores.served]
    m = np.ones(len(scores.served), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    m = m if all_served else m[scores.served]
    order = _name_order(scores.names)
    over = 0
    if within is not None:
        kept = _cover(eff >= 1 - within / 100 - _TOLERANCE, eff, w, m, order, [])
    elif budget is not None:
        kept = _facility(eff, w, order, [], budget)
        if not (eff[:, kept] > 0).any(axis=1).all():
            seed = _cover(eff > 0, eff, w, m, order, [])
            over = max(0, len(seed) - budget)
            kept = _facility(eff, w, order, seed, max(budget, len(seed)))
    else:
        raise WorkloadError("give within or budget")
    per_problem = np.full(len(scores.served), np.nan)
    per_problem[scores.served] = eff[:, kept].max(axis=1)
    mode, value = ("within", within) if within is not None else ("budget", budget)
    return Choice(mode, float(value), tuple(kept), per_problem, np.asarray(weights, dtype=np.float64), over)


def _name_order(names: Sequence[str]) -> np.ndarray:
    order = np.empty(len(names), dtype=np.int64)
    order[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(len(names))
    return order


def _gains(eff: np.ndarray, w: np.ndarray, current: np.ndarray) -> np.ndarray:
    """Each kernel's gain in weighted efficiency were it kept next (summed `_ROWS` problems at a time)."""
    gains = np.zeros(eff.shape[1])
    for lo in range(0, len(eff), _ROWS):
        rows = slice(lo, lo + _ROWS)
        gains += (w[rows, None] * np.maximum(eff[rows] - current[rows, None], 0.0)).sum(axis=0)
    return gains


def _counts(good: np.ndarray, rows: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Per kernel, how many of the problems `rows` (a mask; problem i counting `m[i]`) it is `good` for (`_ROWS`
    problems at a time, as float32 products: exact, every count being at most `PROBLEMS_MAX` < 2**24)."""
    counts = np.zeros(good.shape[1], dtype=np.int64)
    for lo in range(0, len(good), _ROWS):
        chunk = slice(lo, lo + _ROWS)
        picked = rows[chunk]
        counts += np.rint(m[chunk][picked].astype(np.float32) @ good[chunk][picked].astype(np.float32)).astype(np.int64)
    return counts


def _cover(good: np.ndarray, eff: np.ndarray, w: np.ndarray, m: np.ndarray, order: np.ndarray,
           kept: list[int]) -> list[int]:
    """Greedy set cover: kernels added to `kept` until every problem (problem i counting `m[i]`) has a `good`
    one."""
    kept = list(kept)
    current = eff[:, kept].max(axis=1, initial=0.0)
    uncovered = ~good[:, kept].any(axis=1)
    while uncovered.any():
        counts = _counts(good, uncovered, m)
        best = np.flatnonzero(counts == counts.max())  # the gains break ties among these only
        gains = _gains(eff[:, best] if len(best) < eff.shape[1] else eff, w, current)
        pick = int(best[np.lexsort((order[best], -gains))[0]])
        kept.append(pick)
        uncovered &= ~good[:, pick]
        current = np.maximum(current, eff[:, pick])
    return kept


def _facility(eff: np.ndarray, w: np.ndarray, order: np.ndarray, kept: list[int], size: int) -> list[int]:
    """Greedy facility location: kernels added to `kept` while fewer than `size` and one still gains."""
    kept = list(kept)
    current = eff[:, kept].max(axis=1, initial=0.0)
    while len(kept) < size:
        gains = _gains(eff, w, current)
        gains[kept] = -1.0
        pick = int(np.lexsort((order, -gains))[0])
        if gains[pick] <= _TOLERANCE:
            break
        kept.append(pick)
        current = np.maximum(current, eff[:, pick])
    return kept


def library_of(names: Sequence[str], configs: Sequence[Mapping[str, Any]], where: str) -> Library:
    """A selection's accepted kernels as selection sees a generated library (`where` names it in messages)."""
    return Library(Path(where), tuple(names), tuple(configs))


@attrs.frozen
class Request:
    """What a library for a workload asks: the workload file, `within` P percent or a `budget` of N kernels
    (one of them), and the scorer: the analytic model, a LightGBM `model` directory or `timings` tables (with
    CK's kernel table `kernel_table` naming their kernels)."""

    workload: Path
    within: float | None = None
    budget: int | None = None
    model: Path | None = None
    timings: tuple[Path, ...] = ()
    kernel_table: Path | None = None

    def __attrs_post_init__(self) -> None:
        if (self.within is None) == (self.budget is None):
            raise WorkloadError(f"{argument('workload')}: give {argument('within')} P or {argument('budget')} N"
                                + (", not both" if self.within is not None else ""))
        if self.within is not None and not 0 <= self.within < 100:
            raise WorkloadError(f"{argument('within')}: {self.within:g} is not a percentage from 0 up to 100")
        if self.budget is not None and self.budget < 1:
            raise WorkloadError(f"{argument('budget')}: {self.budget} is not a positive number of kernels")
        if self.model is not None and self.timings:
            raise WorkloadError(f"{argument('workload')}: give {argument('model')} or {argument('timings')}, not both")
        if self.kernel_table is not None and not self.timings:
            raise WorkloadError(f"{argument('kernels')}: names the kernels of timing tables; give "
                                f"{argument('timings')} too")

    @property
    def scorer_name(self) -> str:
        if self.timings:
            return "measured TFLOPS of " + ", ".join(str(p) for p in self.timings)
        return "analytic model (estimates)" if self.model is None else f"LightGBM model {self.model} (estimates)"

    def as_dict(self) -> dict[str, Any]:
        """The request as a manifest records it: file names and the digests of their bytes."""
        from ckast.library.selection import file_record

        mode = {"within": self.within} if self.within is not None else {"budget": self.budget}
        scorer: dict[str, Any] = {"analytic": True}
        if self.model is not None:
            scorer = {"model": [file_record(p) for p in _model_files(self.model)]}
        elif self.timings:
            scorer = {"timings": [file_record(p) for p in self.timings],
                      "kernel_table": None if self.kernel_table is None else file_record(self.kernel_table)}
        return {"file": file_record(self.workload), **mode, **scorer}

    @staticmethod
    def described(record: Mapping[str, Any]) -> str:
        """A request as a manifest records it (`as_dict`), in words: `for FILE (sha256 ...), within P%, SCORER`;
        "" for a record of another shape (a manifest's `run` is the run's own, not checked field by field)."""
        file = record.get("file")
        name, digest = (file.get("file"), file.get("sha256")) if isinstance(file, dict) else (None, None)
        within, budget = record.get("within"), record.get("budget")
        mode = (f"within {within:g}%" if isinstance(within, (int, float)) and not isinstance(within, bool) else
                f"budget {budget}" if isinstance(budget, int) and not isinstance(budget, bool) else "")
        if not isinstance(name, str) or not mode:
            return ""
        scorer = "timings" if "timings" in record else "model" if "model" in record else "analytic model"
        return f"for {name}{f' (sha256 {digest[:12]})' if isinstance(digest, str) else ''}, {mode}, {scorer}"

    def input_files(self) -> tuple[Path, ...]:
        """The files the choice reads, for the run key."""
        table = () if self.kernel_table is None else (self.kernel_table,)
        model = () if self.model is None else tuple(_model_files(self.model))
        return (self.workload, *model, *self.timings, *table)


def _model_files(model: Path) -> list[Path]:
    return sorted(p for p in Path(model).rglob("*") if p.is_file()) if Path(model).is_dir() else [Path(model)]


@attrs.frozen
class WorkloadChoice:
    """A selection's kernels chosen for a workload: the scores, the choice and the problems not served."""

    request: Request
    workload: Workload
    scores: Scores
    """Of the workload's distinct problems (`Workload.distinct`)."""
    choice: Choice
    """Its efficiencies and weights per row of the workload."""
    rows: np.ndarray = attrs.field(eq=False)
    """Per row of the workload, its distinct problem in `scores`."""
    builds: tuple[tuple[str, str], ...] = ()
    """Every kernel's (arch, variant), in the order of `scores.names`: what its build cost is estimated by."""
    domain: Mapping[str, Any] | None = None
    """For a model that records its training domain: `line` (what of the workload lies outside it and what ckast
    did; None when nothing does) and `problems` (each problem outside or with a kernel outside)."""

    @property
    def unserved(self) -> int:
        """How many rows of the workload no kernel of the selection serves."""
        return int((~self.scores.served[self.rows]).sum())

    @property
    def kept_names(self) -> list[str]:
        """The kept kernels' names, sorted."""
        return sorted(self.scores.names[i] for i in self.choice.kept)

    def as_json(self) -> dict[str, Any]:
        """The choice as data (`ckast list --for --json` prints it; a generated library's stamp keeps it):
        the request, the kept kernels, the efficiency figures, every problem's efficiency and the best kept
        kernel for it (None where not served, with the reason), and the estimated build costs."""
        c, s = self.choice, self.choice.summary()
        kept = np.array(c.kept)
        best = kept[np.argmax(self.scores.efficiency[:, kept], axis=1)]
        scores = self.scores
        problems = [{"problem": label, "shape": problem_label(problem, *part), "weight": float(weight),
                     "efficiency": float(eff) if scores.served[r] else None,
                     "kernel": scores.names[int(best[r])] if scores.served[r] else None, "not_served": scores.reasons[r]}
                    for label, problem, part, weight, eff, r
                    in zip(self.workload.labels, self.workload.problems, self.workload.parts, self.workload.weights,
                           c.efficiency, self.rows)]
        doc: dict[str, Any] = {
            "workload": str(self.request.workload), "scorer": self.request.scorer_name, "mode": c.mode,
            "value": c.value, "over_budget": c.over_budget, "kernels": len(self.scores.names),
            "kept": self.kept_names, "efficiency": s, "problems": problems, "build": None,
            **({} if self.domain is None else {"domain": dict(self.domain)})}
        if self.builds:
            from ckast.library.build_cost import build_cost

            doc["build"] = {"kept": build_cost(self.builds[i] for i in c.kept).as_json(),
                            "whole": build_cost(self.builds).as_json()}
        return doc

    def lines(self) -> list[str]:
        """The choice as `ckast list --for` prints it."""
        return choice_lines(self.as_json())


LOWEST = 5
"""How many of the problems the kept kernels serve least well the text names."""


def choice_lines(doc: Mapping[str, Any]) -> list[str]:
    """The lines of a choice's document (`WorkloadChoice.as_json`): the request, the kept kernels, the
    efficiency figures, the problems served least well, the build estimates and the problems not served."""
    s, problems = doc["efficiency"], doc["problems"]
    value = doc["value"]
    over = f"; {doc['over_budget']} more to keep an applicable kernel for every problem" if doc["over_budget"] else ""
    how = (f"within {value:g}% of each problem's best (greedy set cover)" if doc["mode"] == "within" else
           f"budget {int(value)} (greedy facility location, weighted mean efficiency{over})")
    out = [f"workload {doc['workload']}: {quantity(len(problems), 'problem')}, {s['problems']} served by the "
           f"selection; scorer: {doc['scorer']}",
           *([doc["domain"]["line"]] if doc.get("domain") and doc["domain"]["line"] else []),
           f"kept {len(doc['kept'])} of {quantity(doc['kernels'], 'kernel')}, {how}",
           f"efficiency of the kept kernels against the whole selection's best, over "
           f"{quantity(s['problems'], 'problem')}: mean {s['mean']:.1%}, P10 {s['p10']:.1%}, min {s['min']:.1%}, "
           f"weighted mean {s['weighted_mean']:.1%}"]
    out += [f"  {name}" for name in doc["kept"]]
    served = sorted((p for p in problems if p["efficiency"] is not None), key=lambda p: p["efficiency"])
    lowest = [p for p in served[:LOWEST] if p["efficiency"] < 1 - _TOLERANCE]
    if lowest:
        out.append("served least well:")
        out += [f"  {p['efficiency']:.1%}  {p['problem']} ({p['shape']}) by {p['kernel']}" for p in lowest]
    if doc["build"] is not None:
        from ckast.library.build_cost import cost_text

        out.append(f"estimated build: kept {cost_text(doc['build']['kept'])}; whole selection "
                   f"{cost_text(doc['build']['whole'])}")
    out += [f"not served: {p['problem']} ({p['shape']}): {p['not_served'] or ''}" for p in problems
            if p["efficiency"] is None]
    return out


def choose_for(names: Sequence[str], configs: Sequence[Mapping[str, Any]], request: Request,
               where: str = "the selection") -> WorkloadChoice:
    """The kernels (`names`, `configs`: a selection's accepted kernels) kept for the request's workload
    (WorkloadError; LibraryError, ModelError, TimingError for a bad model or timing table)."""
    from ckast.select.serving.applicability import LAYERS

    library = library_of(names, configs, where)
    workload = read_workload(request.workload, library.kinds, len(library.names))
    distinct, rows = workload.distinct()  # scored and chosen for once each
    if request.timings:
        from ckast.select.tables.kernel_table import read_kernel_table
        from ckast.select.tables.timings import read_timings

        table = None if request.kernel_table is None else read_kernel_table(request.kernel_table, library)
        scorer = measured(read_timings(list(request.timings), library, kernels=table, layers=LAYERS).runs)
    else:
        from ckast.select.ranking.rank import load_predictor

        predictor = load_predictor(request.model)
        scorer = predicted(predictor, LAYERS)
    scores = Scores.of(library, distinct, scorer)
    domain = None
    if getattr(scorer, "domain", None):
        from ckast.select.models.domain import domain_line

        domain = {"line": domain_line(scorer.domain, predictor.base),
                  "problems": [e for _, _, e in scorer.domain if e["problem_outside"] or e["applicable_outside"]]}
    choice = choose(scores, distinct.weights, within=request.within, budget=request.budget,
                    counts=np.bincount(rows, minlength=len(distinct.problems)))
    per_row = attrs.evolve(choice, efficiency=choice.efficiency[rows], weights=workload.weights)
    return WorkloadChoice(request, workload, scores, per_row, rows,
                          tuple((str(c.get("arch")), str(c.get("variant"))) for c in configs), domain)
