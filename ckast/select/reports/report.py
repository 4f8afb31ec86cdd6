"""What `ckast select` and `ckast select eval` compute and print: rankings for problems (JSON-ready dicts, ranked
in batches and printed as they come, as JSON or text) and predictions for an evaluation."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ckast.arguments import argument
from ckast.config.errors import shorten
from ckast.json_out import dumps
from ckast.number_text import parse_float
from ckast.wording import quantity

from ckast.select.serving.library import Library, LibraryError, Part, direction_of, load_library
from ckast.select.problem import (
    ConvProblem,
    GemmProblem,
    Problem,
    ProblemError,
    problem_fields,
    problem_label,
)
from ckast.select.serving.problem_read import (
    conv_problem,
    gemm_problem,
    parse_pairs,
)
from ckast.select.ranking.rank import Predictor, Ranking, load_predictor


def read_problems(texts: Sequence[str], path: Path | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(label, fields) of every problem given: `--problem` texts, then the rows of a CSV or JSON file. The file is
    read and checked here (ProblemError); its rows are yielded one by one, so a large file is never held as
    problems."""
    problems = [(text, parse_pairs(text, argument("problems"))) for text in texts]
    if path is None:
        return iter(problems)
    rows = _json_rows(path) if path.suffix.lower() == ".json" else _csv_rows(path)
    return itertools.chain(problems, rows)


JSON_LIMIT = 32 << 20
"""The largest JSON problems file read (parsed whole, it takes about ten times its size in memory); a CSV one is
read row by row, up to `input_file.DEFAULT_LIMIT`."""


def _json_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    from ckast.config import ConfigError
    from ckast.config.json_file import parse_json
    from ckast.input_file import InputFileError, read_input

    try:
        data = parse_json(read_input(path, JSON_LIMIT), str(path))
    except InputFileError as exc:
        too_large = path.is_file() and path.stat().st_size > JSON_LIMIT
        raise ProblemError(argument("problems_file"), str(exc) + ("; a JSON problems file is read whole: give this many problems "
                                                     "as CSV, which is read row by row" if too_large else "")) from None
    except ConfigError as exc:
        raise ProblemError(argument("problems_file"), exc.lines()[0]) from None
    rows = data.get("problems") if isinstance(data, dict) else data
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ProblemError("problems", "expected a list of objects or {\"problems\": [...]}", str(path))
    if not rows:
        raise ProblemError("problems", "no problem given: the list is empty", str(path))
    return ((f"{path}: row {n}", row) for n, row in enumerate(rows, start=1))


def _csv_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    from ckast.select.tables.csv_table import CsvError, read_csv

    try:
        table = read_csv(path, "problem")
    except CsvError as exc:
        raise ProblemError(argument("problems_file"), str(exc)) from None
    return ((f"{path}: row {n}", {k: v for k, v in row.items() if v and v.strip()}) for n, row in table)


WEIGHT = "weight"
"""A problem's share of a workload (`ckast list --for`); a problems file may carry it wherever problems are read."""
PROBLEMS_MAX = 1 << 18
"""The most problems a command holds at once (each takes about 1 KiB): a workload (`list/generate --for`) or a
benchmark driver's plan; `select` ranks a problems file as it reads it and holds none."""
PART_FIELDS = ("datatype", "layout")
"""The fields of a row that choose the part of a library of several datatypes or GEMM layouts."""


@attrs.frozen
class ProblemRow:
    """A problem as a `--problem` text or a row of a problems file gives it: the problem, its `weight` (1 unless
    given) and the `datatype` and GEMM `layout` of the kernels it asks for (None: not given)."""

    problem: Problem
    weight: float = 1.0
    datatype: str | None = None
    layout: str | None = None


def parse_row(fields: Mapping[str, Any], kinds: Sequence[str], where: str, checked: bool = True) -> ProblemRow:
    """The row's problem (a GEMM one when the fields name M, or the library holds only GEMM kernels, else a conv
    one; `checked`: as `gemm_problem`'s), its `weight` (`problem_weight`) and its `datatype` and `layout`: a
    datatype ckast has for the problem's kind, a layout only for GEMM (a convolution's follows its rank).
    ProblemError naming `where` and the field. The one reader of problems: `ckast select`, `list/generate --for`
    and `bench emit` all read rows here."""
    from ckast.config.knobs import GEMM_LAYOUTS

    weight = problem_weight(fields, where)
    chosen = {f: fields.get(f) for f in PART_FIELDS}
    fields = {k: v for k, v in fields.items() if k != WEIGHT and k not in PART_FIELDS}
    gemm = "M" in fields or "m" in fields or tuple(kinds) == ("gemm",)
    problem = gemm_problem(fields, where, checked) if gemm else conv_problem(fields, where, checked)
    allowed = {"datatype": problem_datatypes(problem), "layout": GEMM_LAYOUTS if gemm else ()}
    part: dict[str, str | None] = {}
    for name, value in chosen.items():
        if value is None or value == "":
            part[name] = None
            continue
        text = value.strip() if isinstance(value, str) else value
        if not allowed[name]:
            raise ProblemError(name, "a convolution's layout follows its rank; only a GEMM problem names one", where)
        if text not in allowed[name]:
            raise ProblemError(name, f"{shorten(repr(value))} is not one of {', '.join(allowed[name])}", where)
        part[name] = text
    return ProblemRow(problem, weight, **part)


def problem_datatypes(problem: Problem) -> tuple[str, ...]:
    """The datatypes a problem may name: those of its kind's kernels, a quantized GEMM's those of its family
    (CK's variant keys: fp8, fp8i4, mx_bf16fp4, ...), as the `datatype` knob offers them."""
    from ckast.config.knobs import KNOBS

    knob = next(k for k in KNOBS if k.name == "datatype")
    variant = problem.variant if isinstance(problem, GemmProblem) else "forward"
    return tuple(knob.choices({"kind": problem.kind, "variant": variant}))


def problem_weight(fields: Mapping[str, Any], where: str) -> float:
    """The row's positive `weight` (1 when absent or blank); ProblemError naming the row otherwise."""
    value = fields.get(WEIGHT)
    if value is None or value == "":
        return 1.0
    try:  # text as number_text reads it (ASCII digits only)
        weight = parse_float(value) if isinstance(value, str) else float(value) if not isinstance(value, bool) else 0
    except (TypeError, ValueError, OverflowError):
        weight = math.nan
    if not math.isfinite(weight) or weight <= 0:
        raise ProblemError(WEIGHT, f"{value!r} is not a positive number", where)
    return weight


def describe(predictor: Predictor) -> dict[str, Any]:
    """The predictor as JSON shows it: its `name`, the `model` directory it was read from (a LightGBM model's, or one
    naming the analytic model) and a forest's `trees`; `estimated`: its TFLOPS and times are predictions, not
    measurements."""
    model = {} if not hasattr(predictor, "path") else {"model": str(predictor.path)}
    if predictor.name != "analytic":
        model["trees"] = predictor.trees
    return {"name": predictor.name, **model, "estimated": True}


def selection(library_dir: Path, texts: Sequence[str], problems_file: Path | None, model_dir: Path | None, top: int,
              datatype: str | None, layout: str | None, with_features: bool, why_not: Sequence[str],
              layers: Sequence[str]) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """What `ckast select` prints under the applicability `layers`: the run's description (library, predictor,
    layers) and the problems' rankings, each a JSON-ready dict, ranked as the iterator is advanced. The library,
    the model, the `--problem` texts and the problems file's table are read here (LibraryError, ProblemError,
    ModelError); a bad row of the file is refused when the iterator reaches it (the rules a row's reader does not
    decide are checked a batch at a time, `_rankings`)."""
    from ckast.select.serving.validity import check

    library = load_library(library_dir)
    for name in why_not:
        library.config(name)  # an unknown name is refused before any work
    predictor = load_predictor(model_dir)

    def resolved(label: str, fields: Mapping[str, Any], where: str, checked: bool) -> tuple[str, Problem, Part]:
        row = parse_row(fields, library.kinds, where, checked)
        problem = row.problem
        try:
            return label, problem, library.part(problem, row.datatype or datatype, row.layout or layout,
                                                given=_given(row, where))
        except LibraryError:
            check(problem, where)  # a problem that breaks a rule is refused for it, as when it is read checked
            raise

    given = [resolved(text, fields, argument("problems"), True) for text, fields in read_problems(texts, None)]
    rows = () if problems_file is None else read_problems((), problems_file)
    parts = itertools.chain(given, (resolved(label, fields, label, False) for label, fields in rows))
    head = {"library": str(library_dir), "predictor": describe(predictor), "layers": list(layers)}
    return head, _rankings(parts, library, predictor, top, with_features, why_not, tuple(layers))


def _given(row: ProblemRow, where: str) -> Mapping[str, str]:
    """How messages name the datatype and layout `row` gives (`where: datatype`), for `Library.part`."""
    return {f: f"{where}: {f}" for f in PART_FIELDS if getattr(row, f) is not None}


def _rankings(parts: Iterator[tuple[str, Problem, Part]], library: Library, predictor: Predictor, top: int,
              with_features: bool, why_not: Sequence[str], layers: Sequence[str]) -> Iterator[dict[str, Any]]:
    """The entries of `selection`, in order, ranked in batches of consecutive problems of one part. A batch's
    problems are checked together (`validity.first_broken`): the problems before the first that breaks a rule
    are ranked and yielded, then it is refused as `validity.check` refuses it (a file row's label is where it was
    read; the `--problem` texts are checked as they are read)."""
    from ckast.arch.hardware import hardware

    from ckast.select.ranking.batch import rank_many
    from ckast.select.serving.validity import first_broken, refusal

    for batch in _batches(parts):
        part = batch[0][2]
        hw = hardware(part.arch)
        problems = [p for _, p, _ in batch]
        broken = first_broken(problems)
        served = len(batch) if broken is None else broken[0]
        if served:
            for (label, _, _), ranking in zip(batch, rank_many(problems[:served], part, predictor, hw, layers)):
                yield _ranked(label, ranking, library, hw, top, with_features, why_not, predictor)
        if broken is not None:
            raise refusal(problems[served], broken[1], batch[served][0])


def _batches(parts: Iterator[tuple[str, Problem, Part]]) -> Iterator[list[tuple[str, Problem, Part]]]:
    """Consecutive problems of one part, at most `batch.batch_size` of them; a bad problem's error is raised
    once the problems before it are out."""
    from ckast.select.ranking.batch import batch_size

    batch: list[tuple[str, Problem, Part]] = []
    while True:
        try:
            item = next(parts)
        except StopIteration:
            break
        except (ProblemError, LibraryError):
            if batch:
                yield batch
            raise
        if batch and (item[2] is not batch[0][2] or len(batch) == batch_size(batch[0][2])):
            yield batch
            batch = []
        batch.append(item)
    if batch:
        yield batch


def _ranked(label: str, ranking: Ranking, library: Library, hw, top: int, with_features: bool,
            why_not: Sequence[str], predictor: Predictor | None = None) -> dict[str, Any]:
    """One problem's entry of `selection` (`domain`: what lies outside the model's training domain, for a model
    that records it)."""
    from ckast.select.models.domain import domain_entry

    problem, part = ranking.problem, ranking.part
    domain = None if predictor is None else domain_entry(predictor, problem, part, np.flatnonzero(ranking.applicable))
    shown = ranking.order[:top]
    entries = [_entry(ranking, i, r) for r, i in enumerate(shown, start=1)]
    if with_features:
        from ckast.select.models.inputs import model_features

        features = model_features(problem.kind)
        matrix = features.matrix(problem, part.table, hw)[shown]
        for entry, row in zip(entries, matrix):
            entry["features"] = {name: float(v) if math.isfinite(v) else None  # strict JSON: NaN is null
                                 for name, v in zip(features.names, row)}
    return {"problem": label, "shape": problem_label(problem), "fields": problem_fields(problem), "arch": part.arch,
            "datatype": part.datatype,
            "kernels": len(part), "applicable": int(ranking.applicable.sum()), "refused": dict(ranking.refused),
            "top": entries, "why_not": [_why_not(ranking, library, name) for name in why_not],
            **({} if domain is None else {"domain": domain})}


def json_chunks(head: Mapping[str, Any], problems: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """`dumps({**head, "problems": list(problems)}, indent=2)` (`head` not empty) in pieces, one per problem
    as it comes: the document is complete once the last piece is out."""
    yield dumps(head, indent=2)[:-len("\n}")] + ',\n  "problems": ['
    separator = "\n    "
    for problem in problems:
        yield separator + dumps(problem, indent=2).replace("\n", "\n    ")
        separator = ",\n    "
    yield "]\n}" if separator == "\n    " else "\n  ]\n}"


def _entry(ranking: Ranking, index: int, position: int | None) -> dict[str, Any]:
    scored = bool(ranking.applicable[index])
    return {"rank": position, "name": ranking.part.names[index], "applicable": scored,
            "predicted_tflops": round(float(ranking.tflops[index]), 4) if scored else None,
            "predicted_time_us": round(ranking.seconds(index) * 1e6, 4) if scored else None}


def _why_not(ranking: Ranking, library: Library, name: str) -> dict[str, Any]:
    config = library.config(name)
    part, problem = ranking.part, ranking.problem
    if name not in part.index:
        return {"name": name, "applicable": False, "rank": None, "predicted_tflops": None, "predicted_time_us": None,
                "reason": f"not one of the problem's kernels: it is {_kernel_kind(config)}, the problem needs "
                          f"{_problem_kind(problem, part)}"}
    i = part.index[name]
    entry = _entry(ranking, i, int(np.flatnonzero(ranking.order == i)[0]) + 1 if ranking.applicable[i] else None)
    if ranking.applicable[i]:
        entry["reason"] = None
    else:
        from ckast.select.serving.applicability import why_not

        entry["reason"] = why_not(problem, config, ranking.layers)
    return entry


def _kernel_kind(config: Mapping[str, Any]) -> str:
    if config["kind"] == "gemm":
        return f"a {config['datatype']} {config['layout']} GEMM kernel"
    return f"a {direction_of(config)} {config['ndim_spatial']}-D {config['datatype']} grouped-conv kernel"


def _problem_kind(problem: Problem, part: Part) -> str:
    if isinstance(problem, ConvProblem):
        return f"a {problem.direction} {problem.ndim}-D {part.datatype} kernel"
    return f"a {part.datatype} {part.configs[0]['layout']} GEMM kernel"


def _kind(fields: Mapping[str, Any]) -> str:
    if fields["kind"] != "gemm":
        return f"{fields['direction']} conv"
    plain = fields["variant"] == "standard" and fields.get("batch", 1) == 1 and fields.get("groups", 1) == 1
    return "GEMM" if plain else GemmProblem(**{k: v for k, v in fields.items() if k != "kind"}).label


def text(head: Mapping[str, Any], problem: Mapping[str, Any]) -> list[str]:
    """`ckast select`'s text output of one problem of `selection`; a problem no kernel accepts says which
    conditions refused how many."""
    from ckast.select.serving.applicability import describe_layers

    p = head["predictor"]
    model = predictor_name(p["name"], p.get("model"), p.get("trees"))
    shape = "" if problem["shape"] == problem["problem"] else f"{problem['shape']}; "  # a file row: its shape
    lines = [f"{problem['problem']} ({shape}{_kind(problem['fields'])}, {problem['datatype']}, {problem['arch']}): "
             f"{problem['applicable']} of {quantity(problem['kernels'], 'kernel')} applicable "
             f"({describe_layers(head['layers'])}); {model} (estimates)"]
    if not problem["applicable"]:
        refused = ", ".join(f"{name} {count}" for name, count in problem["refused"].items())
        lines.append(f"  no kernel applicable; kernels refused, by the first condition refusing each: {refused}")
    if problem["top"]:
        lines.append(f"  {'rank':>4}  {'TFLOPS':>8}  {'time (us)':>10}  kernel")
    for e in problem["top"]:
        lines.append(f"  {e['rank']:>4}  {e['predicted_tflops']:>8.1f}  {e['predicted_time_us']:>10.1f}  {e['name']}")
    for w in problem["why_not"]:
        verdict = f"applicable, ranked {w['rank']} of {problem['applicable']}" if w["applicable"] else w["reason"]
        lines.append(f"  why not {w['name']}: {verdict}")
    return lines


@attrs.frozen
class Evaluated:
    """What `ckast select eval` scores: the problems `scored` (each one's measured kernels, measured and predicted),
    their `outcomes`, the predictor's description (`described`) and `name`
    (`analytic`, `lightgbm`, `residual`), and, for a model that records its training domain, what of the runs lies
    outside it (`domain`: `line`, one line summing it up, None when nothing does; `problems`, per problem outside or
    with a measured kernel outside, its label and `model_domain.domain_entry`)."""

    scored: list
    outcomes: list
    described: str
    name: str
    domain: dict[str, Any] | None


def evaluation(library: Library, timings, model_dir: Path | None) -> Evaluated:
    """The outcomes of `ckast select eval` and what goes with them (`Evaluated`; the runs of kernels not applicable
    under the layers the timings were read with are set apart already)."""
    from ckast.select.ranking.evaluate import evaluate, measured_predictions, name_order, scored
    from ckast.select.models.domain import domain_entry, domain_line

    predictor = load_predictor(model_dir)
    domains: list[tuple[Any, int, Mapping[str, Any]]] = []
    outside: list[dict[str, Any]] = []

    def note(problem: Problem, part, rows: np.ndarray) -> None:
        entry = domain_entry(predictor, problem, part, rows)
        if entry is not None:
            domains.append((id(part), len(part), entry))
            if entry["problem_outside"] or entry["applicable_outside"]:
                outside.append({"problem": problem_label(problem), **entry})

    problems = scored(timings.runs, measured_predictions(library, predictor, note), name_order(library))
    domain = None
    if getattr(predictor, "domain", None) is not None:
        domain = {"line": domain_line(domains, predictor.base), "problems": outside}
    return Evaluated(problems, evaluate(problems),
                     predictor_name(predictor.name, model_dir, getattr(predictor, "trees", None)),
                     predictor.name, domain)


def predictor_name(name: str, model_dir: Path | str | None, trees: int | None) -> str:
    """How output names a predictor: `analytic model`, `analytic model (as DIR names it)`, `LightGBM model DIR
    (N trees)` or, for a model of the analytic model's residual, `residual model DIR (analytic model, N trees)`."""
    if name == "analytic":
        return "analytic model" if model_dir is None else f"analytic model (as {model_dir} names it)"
    from ckast.wording import quantity

    if name == "residual":
        return f"residual model {model_dir} (analytic model, {quantity(trees or 0, 'tree')})"
    return f"LightGBM model {model_dir} ({quantity(trees or 0, 'tree')})"


def set_apart(library: Library, timings) -> list[dict[str, Any]]:
    """The problems with runs of kernels not applicable to them: the problem, its label, those runs' count and
    their kernels (names sorted), in label order."""
    runs: dict[Problem, list[int]] = {}
    for run in timings.outside:
        runs.setdefault(run.problem, []).append(run.kernel)
    out = [{"problem": problem_fields(p), "label": problem_label(p), "runs": len(kernels),
            "kernels": sorted({library.names[k] for k in kernels})} for p, kernels in runs.items()]
    return sorted(out, key=lambda entry: entry["label"])
