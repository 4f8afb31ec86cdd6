"""Choosing kernels: rank a generated library's kernels for problems (`select_kernels`, `ckast select`), read
timing tables of its kernels (`read_timings`), train a LightGBM model on them (`train_model`, `select train`),
measure how well a predictor chooses (`evaluate_model`, `select eval`) and write the library's selector as C++
(`emit_selector`, `select emit`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ckast.arguments import argument, checked

from .paths import PathLike, path_list


def _layers(kernel_only: bool) -> tuple[str, ...]:
    """The applicability layers: the kernel's own checks, and unless `kernel_only` CK's dispatcher's too."""
    from ckast.select.serving.applicability import KERNEL_ONLY, LAYERS

    return tuple(KERNEL_ONLY if kernel_only else LAYERS)


@attrs.frozen
class RankedKernel:
    """One kernel of a problem's ranking (or one asked about with `why_not`)."""

    name: str
    rank: int | None
    """1 for the best predicted; None when the kernel is not applicable to the problem."""
    applicable: bool
    predicted_tflops: float | None
    """Predicted TFLOPS (an estimate); None when not applicable."""
    predicted_time_us: float | None
    """Predicted time in microseconds (an estimate); None when not applicable."""
    features: Mapping[str, float] | None = None
    """The kernel's named feature vector for the problem, when asked for (`features=True`)."""
    reason: str | None = None
    """For a kernel asked about with `why_not`: the condition that refuses it (None: it is applicable)."""

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> RankedKernel:
        """An entry of `ckast select --json`'s `top` or `why_not` list."""
        return cls(entry["name"], entry["rank"], entry["applicable"], entry["predicted_tflops"],
                   entry["predicted_time_us"], entry.get("features"), entry.get("reason"))


@attrs.frozen
class ProblemChoice:
    """The kernels chosen for one problem, best predicted first."""

    problem: str
    """The problem as given (or `FILE: row N` of a problems file)."""
    fields: Mapping[str, Any]
    """The problem's fields as read (`kind`, then GEMM `M`, `N`, `K`, ... or the convolution's)."""
    arch: str
    datatype: str
    kernels: int
    """Kernels of the library's part the problem belongs to (its kind, direction, datatype, layout)."""
    applicable: int
    """How many of them are applicable to the problem."""
    refused: Mapping[str, int]
    """Kernels refused per condition (the first condition refusing each)."""
    top: tuple[RankedKernel, ...]
    """The best applicable kernels (at most `top` of them), best first."""
    why_not: tuple[RankedKernel, ...]
    """The kernels asked about with `why_not`, in the order asked."""
    _json: Mapping[str, Any] = attrs.field(repr=False, eq=False)

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> ProblemChoice:
        """An item of `ckast select --json`'s `problems` list."""
        return cls(entry["problem"], entry["fields"], entry["arch"], entry["datatype"], entry["kernels"],
                   entry["applicable"], entry["refused"], tuple(map(RankedKernel.from_json, entry["top"])),
                   tuple(map(RankedKernel.from_json, entry["why_not"])), entry)

    @property
    def best(self) -> RankedKernel | None:
        """The best predicted applicable kernel, or None when no kernel is applicable."""
        return self.top[0] if self.top else None

    def as_dict(self) -> dict[str, Any]:
        """The problem as `ckast select --json` prints it."""
        return dict(self._json)


@attrs.frozen
class Choices:
    """What `select_kernels` returns: the run's predictor and applicability layers, and per problem a
    `ProblemChoice`, ranked when an iteration first reaches it and kept, so every iteration gives them all."""

    library: Path
    predictor: Mapping[str, Any]
    """`name` (`analytic` or `lightgbm`), the `model` directory and its `trees`, `estimated`: true."""
    layers: tuple[str, ...]
    """The applicability layers checked: the kernel's own (`kernel`), and CK's dispatcher's (`dispatcher`)."""
    _problems: Iterator[ProblemChoice] = attrs.field(repr=False, eq=False)
    _ranked: list[ProblemChoice] = attrs.field(factory=list, init=False, repr=False, eq=False)

    def __iter__(self) -> Iterator[ProblemChoice]:
        index = 0  # by index: another iteration may rank more problems between two steps of this one
        while True:
            if index < len(self._ranked):
                yield self._ranked[index]
            else:
                choice = next(self._problems, None)
                if choice is None:
                    return
                self._ranked.append(choice)
                yield choice
            index += 1

    def stream(self) -> Iterator[ProblemChoice]:
        """The problems no iteration has reached yet, each ranked and not kept: one pass over a problems file
        too large to hold its answers (what `ckast select` prints from)."""
        return self._problems

    def head(self) -> dict[str, Any]:
        """The run's description as `ckast select --json` prints it (before its `problems`)."""
        return {"library": str(self.library), "predictor": dict(self.predictor), "layers": list(self.layers)}


@checked(library="path", problems="problems", problems_file="optional path", model="optional path", top="count",
         datatype="optional name", layout="optional name", features="flag", why_not="names", kernel_only="flag")
def select_kernels(library: PathLike, problems: str | Mapping[str, Any] | Iterable[str | Mapping[str, Any]] = (), *,
                   problems_file: PathLike | None = None, model: PathLike | None = None, top: int = 5,
                   datatype: str | None = None, layout: str | None = None, features: bool = False,
                   why_not: str | Sequence[str] = (), kernel_only: bool = False) -> Choices:
    """Rank a generated library's applicable kernels for problems, best predicted first.

    Predictions come from the analytic model or, with `model`, from a LightGBM model directory (CK's
    layout); both are estimates. Ties are broken by kernel name.

    Args:
        library: a generated library (the directory of its `manifest.json`).
        problems: problems as `"M=4096,N=4096,K=4096"` or `{"M": 4096, "N": 4096, "K": 4096}` (GEMM; add
            `variant`, and for multi_d its D fields), or in CK's conv spellings (`G`, `N`, `C`, `K`, `Hi`,
            `Wi`, `Y`, `X`, `pad_h`, ..., `direction`).
        problems_file: more problems: a CSV with a header row, or JSON (a list of objects or
            `{"problems": [...]}`); its rows are read as the iteration reaches them.
        model: a LightGBM model directory; default: the analytic model.
        top: kernels kept per problem (at least 1).
        datatype: the kernels' datatype, when the library holds several.
        layout: the GEMM kernels' layout, when the library holds several.
        features: add each kept kernel's named feature vector.
        why_not: kernel names to say about, per problem, whether they are applicable and if not why.
        kernel_only: apply the kernels' own checks only (what a launcher called directly accepts); default:
            CK's dispatcher's check too.

    Raises:
        LibraryError: the library cannot be read, or holds no kernel of a problem's kind.
        ProblemError: a problem is malformed or one ckast cannot serve (for a row of `problems_file`: when
            the iteration reaches it).
        ModelError: the model cannot be read.
    """
    from ckast.select.problem import ProblemError
    from ckast.select.reports.report import selection

    given = [problems] if isinstance(problems, (str, Mapping)) else list(problems)
    why_not = (why_not,) if isinstance(why_not, str) else tuple(why_not)
    texts = [p if isinstance(p, str) else ",".join(f"{k}={v}" for k, v in p.items()) for p in given]
    if not texts and problems_file is None:
        raise ProblemError("problems", "none given (give problems or a problems_file)")
    layers = _layers(kernel_only)
    head, rows = selection(Path(library), texts, None if problems_file is None else Path(problems_file),
                           None if model is None else Path(model), top, datatype, layout, features, why_not, layers)
    return Choices(Path(library), head["predictor"], layers, map(ProblemChoice.from_json, rows))


@attrs.frozen
class TimingRuns:
    """Measured runs of a library's kernels, read from timing tables (`read_timings`)."""

    library_dir: Path
    library: Any
    """The library's kernels, as read from its manifest (`ckast.select.serving.library.Library`)."""
    timings: Any
    """The runs (`ckast.select.tables.timings.Timings`: `runs` of kernels applicable to their problem, `bad` rows
    skipped, `failed` runs dropped, runs `outside` their kernels' applicability, set apart)."""
    layers: tuple[str, ...]
    """The applicability layers the runs were checked under."""


@checked(data="paths", library="path", kernels="optional path", skip_bad="flag", kernel_only="flag")
def read_timings(data: PathLike | Iterable[PathLike], library: PathLike, *, kernels: PathLike | None = None,
                 skip_bad: bool = False, kernel_only: bool = False) -> TimingRuns:
    """The runs of timing tables of a library's kernels.

    A table (`.csv`, `.parquet` or `.json`) has a kernel column (`kernel` or `kernel_name`), the problem's
    fields, `tflops` or `time_ms`, and optionally `arch` and `is_valid`; CK's benchmark result JSON is read as
    well. Runs of kernels not applicable to their problem (under the kernels' own checks, and unless
    `kernel_only` CK's dispatcher's) are set apart. `ckast select train` reads with `kernel_only=True`.

    Args:
        data: the timing tables.
        library: the generated library the runs are of.
        kernels: CK's kernel table (CSV) naming the config each CK kernel name of the tables was built as.
        skip_bad: count and list bad rows instead of refusing the table.
        kernel_only: check the kernels' own applicability only.

    Raises:
        LibraryError: the library cannot be read.
        TimingError: a table or row cannot be used (naming the file, row and column), or no run is usable.
        MissingPackage: a Parquet table needs pyarrow.
    """
    from ckast.select.tables.kernel_table import read_kernel_table
    from ckast.select.serving.library import load_library
    from ckast.select.tables.timings import read_timings as read

    paths = path_list(data)
    if not paths:
        from ckast.arguments import ArgumentError

        raise ArgumentError("data", "no timing table given")
    layers = _layers(kernel_only)
    loaded = load_library(Path(library))
    table = None if kernels is None else read_kernel_table(Path(kernels), loaded)
    return TimingRuns(Path(library), loaded, read(paths, loaded, skip_bad, table, layers), layers)


@attrs.frozen
class TrainResult:
    """A model `train_model` wrote: `feature_spec.json`, `cv_metrics.json` and, for a LightGBM model,
    `model_tflops.lgbm`."""

    output: Path
    runs: int
    """Runs trained on."""
    pairs: int
    """(problem, kernel) pairs (the training rows)."""
    problems: int
    spec: Mapping[str, Any]
    """The feature spec (`feature_spec.json`): op_type, dtype, arch, feature names, parameters, ...; an analytic
    model's names `predictor` (analytic) and has no features."""
    cv: Mapping[str, Any]
    """The cross-validation metrics (`cv_metrics.json`): `folds` (0: none), the written predictor's `rmse_log1p`
    and `efficiency` on the random folds, `model` (the predictor written) and `chosen` (`basis`, `why`),
    `predictors` (each one's `random`, `families` and `shift` figures), the `families` held out and those
    `skipped`."""


@checked(timings="ckast.workflow.choosing:TimingRuns", output="path", trees="count", folds="natural", seed="natural",
         jobs="optional count", progress="optional callable", predictor="name")
def train_model(timings: TimingRuns, output: PathLike, *, trees: int = 400, folds: int = 5, seed: int = 0,
                jobs: int | None = None, progress: Callable[[str, int], None] | None = None,
                predictor: str = "best") -> TrainResult:
    """Train the predictors on measured runs, choose the one that does best under shift and write it into the
    directory `output`.

    The predictors are the analytic model (it learns nothing), `lightgbm` (LightGBM on log1p TFLOPS, as CK's
    models) and `residual` (LightGBM on what the analytic model gets wrong, log of measured over analytic TFLOPS:
    it predicts the analytic model's TFLOPS times exp of half the trees' output, and the analytic model's alone for
    a problem choosing among kernels outside what it was trained on). One model is one kind, conv direction,
    datatype and arch. Each is scored on `folds` GroupKFold folds (grouped by problem shape) and on folds that hold
    out a whole family of problems (conv stride, batch, filter, image size; GEMM M, N, K ranges), trained on the
    others (the analytic constants refitted on each fold's training problems when the shipped ones were fitted on
    some of the table's). `predictor`
    `best` writes the one with the highest worst-family P10 (ties: the mean over families), a learned one only
    when it is below the analytic model on neither (without a family held out: on the random folds; without
    folds: residual, fitted alone); or a predictor by name (`analytic`, `lightgbm`, `residual`). The spec names
    the predictor written (`predictor`); an analytic model directory holds no forest: `select --model` ranks with
    the analytic model. The fits run `jobs` at a time (default: the cores ckast may run on); the model is the
    same for any `jobs`. `progress(fit, trees_done)` is called with 0 for every fit (a name: `lightgbm final
    model`, `residual fold 1 of 5`, `lightgbm stride 1`) before any starts, then after each tree.

    Raises:
        TrainError: the runs cannot make one model, `folds` is 1, or `predictor` is unknown.
        MissingPackage: lightgbm is not installed.
        OutputError: the model directory cannot be written (it is left as it was); `PlaceError` when it is
            no place for a model (`ckast.output.places`: the library's directory, another command's output).
    """
    from ckast.arch.hardware import hardware
    from ckast.output.places import check_kind, check_place, refuse_inside
    from ckast.output.transaction import OutputError
    from ckast.cores import default_jobs
    from ckast.select.ranking.train import ONE_FOLD, TrainError, dataset, train, write_model

    if folds == 1:
        raise TrainError(f"{argument('folds')}: {ONE_FOLD}")
    check_place(output)  # before training, as the transaction that writes the model will
    refuse_inside(timings.library_dir, output, "the model")
    if Path(output).is_dir():
        check_kind(output, "model")
    rows = dataset(list(timings.timings.runs), timings.library, hardware)
    model, spec, cv = train(rows, trees, folds, seed, jobs or default_jobs(), progress, predictor)
    try:
        write_model(Path(output), model, spec, cv)
    except OutputError as exc:
        raise type(exc)(f"cannot write the model: {exc}") from None
    return TrainResult(Path(output), len(timings.timings.runs), len(rows.tflops), len(rows.problems), spec, cv)


@attrs.frozen
class Evaluation:
    """How well a predictor chooses, against the best measured kernel of each problem (`evaluate_model`)."""

    predictor: str
    """`analytic model`, or `LightGBM model DIR (N trees)`."""
    layers: tuple[str, ...]
    runs: int
    kernels: int
    problems: int
    bad_rows: int
    failed_runs: int
    not_applicable_runs: int
    not_applicable: tuple[Mapping[str, Any], ...]
    """The problems with runs of kernels not applicable to them: `problem`, `label`, `runs`, `kernels`."""
    report: Mapping[str, Mapping[str, Mapping[str, float]]]
    """Per group (`all`, per `variant`, per `shape` family): problems, mean, P10, P50 and min efficiency
    (measured TFLOPS of the pick over the best measured), top-1 and top-5 hit rates."""
    families: Mapping[str, Any]
    """The figures per family of problems (conv stride, batch, filter, image size; GEMM M, N, K), of the
    predictor and, beside a model, of the analytic model: `families` (name, axis, where, problems), `skipped`
    (too few problems), `predictors` (each one's `all`, `families` and `shift`: `worst` family and `mean` over
    families) and `best` (`name`, `basis`, `why`: the one that does best under shift)."""
    domain: Mapping[str, Any] | None = None
    """For a model that records its training domain: `line`, one line saying what of the runs lies outside it and
    what ckast did (None when nothing does), and `problems`, each problem outside or with a kernel outside."""
    scored: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    """(predictor as `predictor` names it, each problem's measured kernels with their measured and predicted TFLOPS
    and the predictor's order: `ckast.select.ranking.evaluate.Scored`): the evaluated predictor's and, beside a
    model, the analytic model's (`select eval --best-of` and `--plot` read them)."""

    @property
    def summary(self) -> Mapping[str, float]:
        """The figures over all problems."""
        return self.report["all"]["all"]

    def as_dict(self) -> dict[str, Any]:
        """The evaluation as `ckast select eval --json` prints it."""
        return {"predictor": self.predictor, "layers": list(self.layers), "runs": self.runs, "kernels": self.kernels,
                "bad_rows": self.bad_rows, "failed_runs": self.failed_runs,
                "not_applicable": {"runs": self.not_applicable_runs, "problems": list(self.not_applicable)},
                **self.report, "shift": dict(self.families),
                **({} if self.domain is None else {"domain": dict(self.domain)})}


@checked(timings="ckast.workflow.choosing:TimingRuns", model="optional path")
def evaluate_model(timings: TimingRuns, *, model: PathLike | None = None) -> Evaluation:
    """Selection quality of a predictor (the analytic model, or the LightGBM model directory `model`) on
    measured runs, as CK's compare_ml_vs_oracle.py gives it.

    Raises:
        ModelError: the model cannot be read.
        LibraryError: the runs of one problem are of kernels of several datatypes, layouts or directions.
    """
    from ckast.select.ranking.evaluate import report
    from ckast.select.reports.report import evaluation, set_apart
    from ckast.select.ranking.shift import ANALYTIC, family_report

    runs = timings.timings
    evaluated = evaluation(timings.library, runs, None if model is None else Path(model))
    outcomes = evaluated.outcomes
    compared = {evaluated.name: outcomes}
    scored = [(evaluated.described, tuple(evaluated.scored))]
    if evaluated.name != ANALYTIC and outcomes:
        analytic = evaluation(timings.library, runs, None)
        compared[ANALYTIC] = analytic.outcomes
        scored.append((analytic.described, tuple(analytic.scored)))
    families = family_report(compared) if outcomes else {}
    return Evaluation(evaluated.described, timings.layers, len(runs.runs), len({run.kernel for run in runs.runs}),
                      len(outcomes), len(runs.bad), runs.failed, len(runs.outside),
                      tuple(set_apart(timings.library, runs)), report(outcomes), families, evaluated.domain,
                      tuple(scored))


@attrs.frozen
class SelectorResult:
    """The selector `emit_selector` wrote."""

    output: Path
    kernels: int
    parts: int
    """Parts of the library (kind, direction, rank, datatype, layout), one selector each."""
    forests: int
    """Parts predicted by a LightGBM forest (the others by the analytic model)."""
    layers: tuple[str, ...]
    written: int
    unchanged: int


@checked(library="path", output="path", models="paths", kernel_only="flag")
def emit_selector(library: PathLike, output: PathLike, *, models: Iterable[PathLike] = (),
                  kernel_only: bool = False) -> SelectorResult:
    """Write a library's kernel selector as dependency-free C++ into the directory `output` (not the
    library's): `ckast_selector.hpp/.cpp` (problem structs, features, applicability, the analytic model or
    the LightGBM forests as constant arrays, rank and select), `ckast_selector_dispatcher.hpp` (CK's
    dispatcher hook and the library's registration) and `ckast_selector.cmake` (`ckast_add_selector(<target>)`:
    the selector as a static library to link).

    Args:
        library: the generated library.
        output: the selector's directory.
        models: LightGBM model directories, each for the part its spec names; parts without one use the
            analytic model.
        kernel_only: apply the kernels' own checks only; default: CK's dispatcher's check too.

    Raises:
        LibraryError: the library cannot be read, or `output` is inside it.
        ModelError: a model cannot be read or fits no part of the library.
        OutputError: the output directory cannot be written.
    """
    from ckast.select.cxx.selector import write_selector

    layers = _layers(kernel_only)
    counts = write_selector(Path(library), [Path(m) for m in models], Path(output), layers)
    return SelectorResult(Path(output), counts["kernels"], counts["parts"], counts["forests"], layers,
                          counts["written"], counts["unchanged"])
