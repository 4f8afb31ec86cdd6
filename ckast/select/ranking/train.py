"""Training LightGBM models from a timing table, written as a model directory in CK's layout.

Two LightGBM predictors (`BASE_OF`): `lightgbm`, on log1p(TFLOPS) (as CK's: TFLOPS spans orders of magnitude),
and `residual`, on the analytic model's error, log(measured / analytic TFLOPS): it predicts analytic x
exp(RESIDUAL_SCALE x trees), and the analytic model's TFLOPS alone for a problem with a kernel outside its
training domain (`model_domain`, recorded in the spec; a problem outside it is corrected as one inside: the trees
count half everywhere). Features are ckast's feature set of the kind, computed from each run's
problem and its kernel's config on the library's arch. Quality is estimated by GroupKFold cross-validation, the
runs of one problem shape never split between training and validation folds, and by folds that hold out whole
families of problems (`shift`); the final models are fitted on every run. When the arch's shipped analytic
constants were fitted on some of the table's problems (`calibrate.fitted_on`), each fold refits them on its
training problems first (`refitted`), so the analytic model and the residual model on top of it are scored on
problems their constants never saw. The predictors compared (the analytic model and both LightGBM ones) are
scored alike, and the model written is the one that does best under shift
(`shift.choose`); its spec names it (`predictor`). The fits run side by side, one LightGBM thread each.
Training is deterministic for a seed, whatever the number of fits at a time."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ckast.arguments import argument
from ckast.errors import CkastError
from ckast.json_out import dumps

from .evaluate import group_runs
from ckast.select.serving.library import Library, direction_of
from ckast.select.models.domain import Domain, training_domain
from ckast.select.models.limits import MAX_TREES
from ckast.select.problem import Problem
from .shift import Fold, Trainer
from ckast.select.tables.timings import Run

if TYPE_CHECKING:
    from ckast.select.models.calibrate import Measured

DEFAULT_PARAMS: Mapping[str, Any] = {
    "objective": "regression", "num_leaves": 63, "max_depth": 12, "learning_rate": 0.1, "min_data_in_leaf": 20,
    "max_bin": 63, "feature_fraction": 0.8, "bagging_fraction": 0.8, "bagging_freq": 1, "lambda_l2": 1.0,
    "verbose": -1, "deterministic": True, "force_row_wise": True, "num_threads": 1,
}
"""One LightGBM thread per fit: the fits (the final model and the CV folds) run side by side instead. Measured
on two cores: one row-wise thread is 1.6x faster than one col-wise; a second thread made a fit at most 1.4x
faster on an idle machine (two fits side by side: nearly 2x), several times slower on a loaded one (OpenMP
threads spin waiting for each other), and row-wise it changes the model (histograms summed in another order)."""
OP_TYPE = {"gemm": "gemm_universal", "grouped_conv": "grouped_conv"}
CV_FILE = "cv_metrics.json"


ONE_FOLD = "1 fold cannot cross-validate (give 0 or at least 2)"
"""Why `folds` 1 is refused (before any table is read)."""


class TrainError(CkastError, ValueError):
    """Runs that cannot make one model (bad input)."""


@attrs.frozen
class Dataset:
    """Feature rows of the runs (one per problem and kernel), their target and their problem's group."""

    x: np.ndarray
    tflops: np.ndarray
    group: np.ndarray
    name_order: np.ndarray
    kernels: np.ndarray
    """The library index of each row's kernel."""
    problems: tuple[Problem, ...]
    kind: str
    identity: Mapping[str, str]
    """op_type, dtype, arch (and direction for conv): what the model is for."""
    hardware: Mapping[str, int]
    """The figures the features were computed with, recorded as CK records them (`lds_capacity`)."""
    analytic: np.ndarray
    """The analytic model's TFLOPS of every row (the arch's shipped calibration, the arch's hardware): what a
    residual model starts from."""
    fitted_on: int = 0
    """How many of the problems the arch's shipped analytic constants were fitted on (`calibrate.fitted_on`)."""
    measured: Measured | None = None
    """The runs as the calibration fit reads them (`calibrate.measured_of`), when `fitted_on` and the problems
    allow a refit (one part, no per-group shapes)."""


def dataset(runs: list[Run], library: Library, hw_of) -> Dataset:
    """Feature rows of `runs` (TrainError when they are of several kinds, directions, datatypes or archs)."""
    from ckast.select.models.inputs import model_features

    by_problem = group_runs(runs)
    identity: dict[str, str] | None = None
    from ckast.select.models.analytic import AnalyticPredictor

    analytic = AnalyticPredictor()
    xs, ys, groups, orders, problems, indices, bases, parts = [], [], [], [], [], [], [], []
    for number, (problem, kernels) in enumerate(by_problem.items()):
        first = library.configs[min(kernels)]
        part = library.part(problem, first["datatype"], first["layout"] if first["kind"] == "gemm" else None)
        mine = {"op_type": OP_TYPE[first["kind"]], "dtype": part.datatype, "arch": part.arch}
        if first["kind"] == "grouped_conv":
            mine["direction"] = direction_of(first)
        if identity is None:
            identity = mine
        elif mine != identity:
            field = next(k for k in mine if mine[k] != identity[k])
            raise TrainError(f"the runs are of {identity[field]} and {mine[field]} kernels ({field}); "
                             "train one model per kind, direction, datatype and arch")
        rows = []
        for index in sorted(kernels):
            name = library.names[index]
            if name not in part.index:
                raise TrainError(f"{name}: not one of the kernels problem {problem} chooses from")
            rows.append(part.index[name])
        rows = np.array(rows)
        xs.append(model_features(first["kind"]).matrix(problem, part.table, hw_of(part.arch))[rows])
        bases.append(analytic.predict_tflops(problem, part, hw_of(part.arch), rows))
        ys.append([kernels[i] for i in sorted(kernels)])
        groups.append(np.full(len(rows), number))
        orders.append(part.name_order[rows])
        indices.append(sorted(kernels))
        problems.append(problem)
        parts.append(part)
    from ckast.arch.hardware import CK_RECORDED, FIGURES

    hw = hw_of(identity["arch"])
    recorded = {next((ck for ck, ours in CK_RECORDED.items() if ours == name), name): getattr(hw, name)
                for name in FIGURES}
    from ckast.select.models.calibrate import FITTED, fitted_on, measured_of

    overlap = fitted_on(problems, identity["arch"], identity["dtype"])
    measured = None
    if overlap and identity["arch"] in FITTED and len({id(p) for p in parts}) == 1 and not any(
            p.group_shapes for p in problems):
        measured = measured_of(library, list(by_problem.items()))
    return Dataset(np.vstack(xs), np.concatenate(ys), np.concatenate(groups), np.concatenate(orders),
                   np.concatenate(indices), tuple(problems), library.configs[runs[0].kernel]["kind"], identity,
                   recorded, np.concatenate(bases), overlap, measured)


def group_folds(group: np.ndarray, folds: int) -> np.ndarray:
    """Fold of every row: whole groups, largest first, each to the fold with the fewest rows so far (the
    assignment of scikit-learn's GroupKFold)."""
    ids, counts = np.unique(group, return_counts=True)
    if len(ids) < folds:
        raise TrainError(f"{argument('folds')} {folds}: the runs hold only {len(ids)} problem shapes")
    load = np.zeros(folds, dtype=np.int64)
    fold_of = np.empty(len(ids), dtype=np.int64)
    for g in np.argsort(-counts, kind="stable"):
        fold_of[g] = int(np.argmin(load))
        load[fold_of[g]] += counts[g]
    return fold_of[np.searchsorted(ids, group)]


def trainable_folds(data: Dataset, folds: int) -> np.ndarray | None:
    """The cross-validation fold of every (problem, kernel) pair (None for `folds` < 2), once the runs are seen
    to make a model: a model learns from runs of different speeds, the final model's and each fold's (TrainError
    otherwise)."""
    tflops = data.tflops
    if len(np.unique(tflops)) < 2:
        pairs = f"{len(tflops)} (problem, kernel) pair{'s, all' if len(tflops) > 1 else ','}"
        raise TrainError(f"the runs make {pairs} of {tflops[0]:g} TFLOPS: a model learns from runs of different "
                         "speeds (more problems or kernels)")
    if folds < 2:
        return None
    fold = group_folds(data.group, folds)
    for f in range(folds):
        rows = tflops[fold != f]
        if len(np.unique(rows)) < 2:
            raise TrainError(f"{argument('folds')} {folds}: fold {f + 1} would train on {len(rows)} (problem, kernel) "
                             f"pairs of one speed; give fewer folds (or {argument('folds')} 0) or more problems")
    return fold


DEFAULT_BASE = "analytic"
RESIDUAL_SCALE = 0.5
"""What a residual model's trees count for: TFLOPS = analytic x exp(RESIDUAL_SCALE x trees). Halving the learned
correction raised selection on shapes the trees never saw and in cross-validation alike; with it, DEFAULT_PARAMS'
trees did better than smaller, more regularised ones (`tools/bench_shift_selection.py`)."""
TINY_TFLOPS = 1e-6
"""The analytic TFLOPS a residual target is taken against at least (a kernel the model gives 0)."""


def target(data: Dataset, rows: np.ndarray, base: str) -> np.ndarray:
    """What the trees of a model on `base` learn for `rows`."""
    if base == "none":
        return np.log1p(data.tflops[rows])
    return np.log(data.tflops[rows]) - np.log(np.maximum(data.analytic[rows], TINY_TFLOPS))


def fit(data: Dataset, rows: np.ndarray, params: Mapping[str, Any], trees: int, names: list[str],
        categorical: list[int], callbacks: Sequence[Callable[[Any], None]] = (), base: str = "none"):
    from ckast.select.models.lightgbm_model import lightgbm_module

    lightgbm = lightgbm_module()
    train_set = lightgbm.Dataset(data.x[rows], target(data, rows, base), feature_name=names,
                                 categorical_feature=categorical, params={"verbose": -1})
    return lightgbm.train(dict(params), train_set, num_boost_round=trees, callbacks=list(callbacks))


def predicted(data: Dataset, rows: np.ndarray, raw: np.ndarray, base: str, domain: Domain | None = None,
              scale: float = RESIDUAL_SCALE) -> np.ndarray:
    """TFLOPS of `rows` from the trees' output `raw` of a model on `base` trained on `domain` (as
    `LightGBMPredictor` predicts: a residual model answers the analytic model's TFLOPS for each problem with a
    kernel outside its domain, and corrects it alike inside the domain and out for the others; `scale`: what its
    trees count for)."""
    from ckast.select.models.lightgbm_model import residual_tflops

    if base == "none":
        return np.expm1(raw)
    tflops = residual_tflops(data.analytic[rows], scale * raw)
    if domain is not None:
        inside = domain.rows_inside(data.kind, data.x[rows])
        for g in np.unique(data.group[rows]):
            mine = data.group[rows] == g
            inside[mine] = inside[mine].all()
        tflops = np.where(inside, tflops, data.analytic[rows])
    return tflops


def train_predictor(data: Dataset, rows: np.ndarray, base: str = DEFAULT_BASE, trees: int = 400, seed: int = 0,
                    gate: bool = True, scale: float = RESIDUAL_SCALE) -> Callable[[np.ndarray], np.ndarray]:
    """A model on `base` fitted on `rows` (one LightGBM thread) as a function: rows of `data` -> predicted TFLOPS
    (for validating predictors on chosen rows). `gate`: a residual model hands a problem with a kernel outside
    its training domain to the analytic model, as the models `select train` writes do; `scale`: what its trees count for."""
    features = _features(data.kind)
    booster = fit(data, rows, {**DEFAULT_PARAMS, "seed": seed}, trees, *features, base=base)
    domain = domain_of(data, rows)

    def predict(held: np.ndarray) -> np.ndarray:
        return predicted(data, held, booster.predict(data.x[held], num_threads=1), base, domain if gate else None,
                         scale)
    return predict


def domain_of(data: Dataset, rows: np.ndarray) -> Domain:
    """The training domain of `rows`: their problems and kernels."""
    return training_domain(data.kind, [data.problems[g] for g in np.unique(data.group[rows])], data.x[rows])


def _features(kind: str) -> tuple[list[str], list[int]]:
    """The feature names of `kind` and the positions of the categorical ones."""
    from ckast.select.models.inputs import model_features

    features = model_features(kind)
    names = list(features.names)
    return names, [i for i, name in enumerate(names) if name in features.categorical]


class _Stopped(Exception):
    """Raised in a fit's callback when another fit failed or the user interrupted."""


def fit_all(tasks: list[Callable[[list], Any]], jobs: int) -> list[Any]:
    """The results of `tasks` (each called with the LightGBM callbacks its fit must pass), `jobs` at a time
    in threads (LightGBM leaves Python's lock while it boosts). When one fails or the wait is interrupted,
    the others stop at their next tree and the error is raised."""
    stop = threading.Event()

    def check(env) -> None:
        if stop.is_set():
            raise _Stopped

    pool = ThreadPoolExecutor(max_workers=min(jobs, len(tasks)), thread_name_prefix="ckast-fit")
    try:
        futures = [pool.submit(task, [check]) for task in tasks]
        done, pending = wait(futures, return_when=FIRST_EXCEPTION)
        if pending:
            next(future for future in done if future.exception() is not None).result()
        return [future.result() for future in futures]
    except BaseException:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


LIGHTGBM, RESIDUAL = "lightgbm", "residual"
BASE_OF = {LIGHTGBM: "none", RESIDUAL: "analytic"}
"""What the trees of each LightGBM predictor learn on top of: nothing (log1p TFLOPS, as CK's models) or the
analytic model (its error)."""
BEST = "best"
"""`train`'s `predictor` that lets the figures choose (`shift.choose`)."""
UNVALIDATED = RESIDUAL
"""The predictor written when nothing is cross-validated (`folds` 0)."""


@attrs.frozen
class Forest:
    """A fitted LightGBM predictor (`name`: lightgbm or residual) of `data`, trained on `domain`: predicted
    log1p(TFLOPS) of rows of the data (a residual model's: the analytic model's outside its domain)."""

    name: str
    booster: Any
    data: Dataset
    domain: Domain

    def predict(self, rows: np.ndarray) -> np.ndarray:
        raw = self.booster.predict(self.data.x[rows], num_threads=1)
        base = BASE_OF[self.name]
        return raw if base == "none" else np.log1p(predicted(self.data, rows, raw, base, self.domain))


def train(data: Dataset, trees: int, folds: int, seed: int, jobs: int,
          progress: Callable[[str, int], None] | None = None, predictor: str = BEST
          ) -> tuple[Forest | None, dict[str, Any], dict]:
    """(the model chosen, feature spec, CV metrics): the predictors (the analytic model; LightGBM with `trees`
    trees on log1p TFLOPS, `lightgbm`; the same on the analytic model's error, `residual`) cross-validated on
    `folds` random group folds and on the families `shift` holds out, and the one chosen (`shift.choose`, or
    `predictor` by name; without folds: UNVALIDATED) fitted on every run. The model chosen is a `Forest`, or None
    for the analytic model.

    The fits run `jobs` at a time, each on one LightGBM thread, so fits x threads <= `jobs` and every fit is the
    same whatever `jobs` is. `progress(fit, trees done)` is called with 0 for every fit (named: `lightgbm final
    model`, `residual fold 2 of 5`, `lightgbm stride 1`) before any starts, then after each tree from the fit's
    thread.
    """
    from ckast.select.models.forest import ModelError, check_model_text
    from ckast.select.models.inputs import model_features
    from .shift import analytic_trainer, choose, family_folds, figures

    if not 1 <= trees <= MAX_TREES:
        raise TrainError(f"trees: {trees} is not within 1..{MAX_TREES:,} (the trees a model ckast reads may have)")
    features = model_features(data.kind)
    names, categorical = _features(data.kind)
    params = {**DEFAULT_PARAMS, "seed": seed}

    def forest(name: str, data: Dataset) -> Trainer:
        def fit_forest(rows: np.ndarray, callbacks: list) -> Forest:
            return Forest(name, fit(data, rows, params, trees, names, categorical, callbacks, BASE_OF[name]), data,
                          domain_of(data, rows))
        return Trainer(name, fit_forest)

    def trainers_of(data: Dataset) -> list[Trainer]:
        return [analytic_trainer(data), forest(LIGHTGBM, data), forest(RESIDUAL, data)]

    trainers = trainers_of(data)
    if predictor != BEST and predictor not in [t.name for t in trainers]:
        raise TrainError(f"{argument('predictor')}: {predictor!r} is not one of {BEST}, "
                         f"{', '.join(t.name for t in trainers)}")
    fold = trainable_folds(data, folds)
    plan, skipped = [], []
    if fold is not None:
        plan = [Fold(f"fold {f + 1} of {folds}", np.flatnonzero(fold == f)) for f in range(folds)]
        families, skipped = family_folds(data.problems, data.group, data.kind)
        for f in families:
            rest = np.setdiff1d(np.arange(len(data.tflops)), f.held)
            if len(np.unique(data.tflops[rest])) < 2:
                skipped.append({**f.family.as_dict(), "problems": len(np.unique(data.group[f.held])),
                                "reason": "the others are all of one speed"})
            else:
                plan.append(f)
    if fold is None:  # nothing to compare: only the predictor written is fitted
        trainers = [t for t in trainers if t.name == (UNVALIDATED if predictor == BEST else predictor)]
    refit = refitted(data, plan) if fold is not None else {}
    per_fold = {label: {t.name: t for t in trainers_of(mine)} for label, mine in refit.items()}
    fitted, held_out = fit_folds(trainers, data, plan, jobs, progress, per_fold)

    predictors = {t.name: figures(data, plan, {f.label: held_out[t.name, f.label] for f in plan})
                  for t in trainers} if fold is not None else {t.name: {} for t in trainers}
    ordered = [t.name for t in trainers]
    choice = choose(ordered, {n: e["random"]["efficiency"] for n, e in predictors.items()} if fold is not None
                    else None, {n: e["shift"] for n, e in predictors.items()} if len(plan) > folds else None,
                    ordered[0] if fold is None else UNVALIDATED)
    if predictor != BEST:
        choice = attrs.evolve(choice, name=predictor, basis="asked",
                              why=f"{predictor}, as {argument('predictor')} asks")
    model = fitted[choice.name]
    training = {"rows": int(len(data.tflops)), "problems": len(data.problems)}
    if isinstance(model, Forest):
        try:  # ckast writes no model it would refuse to read (its size included)
            check_model_text(model.booster.model_to_string())
        except ModelError as exc:
            raise TrainError(f"the trained model is not one ckast reads ({exc}): train fewer trees (--trees)") from None
        spec = {
            **data.identity,
            "predictor": choice.name,
            "feature_names": names,
            "categorical_features": [names[i] for i in categorical],
            "categorical_encodings": {names[i]: dict(features.categorical[names[i]]) for i in categorical},
            "hardware": data.hardware,
            "targets": ["tflops"],
            "log_targets": ["tflops"],
            "params": {**params, "n_estimators": trees},
            "training": training,
            **({"residual_scale": RESIDUAL_SCALE} if choice.name == RESIDUAL else {}),
            "domain": model.domain.to_json(),
        }
    else:
        model, spec = None, {**data.identity, "predictor": choice.name, "training": training}
    cv: dict[str, Any] = {"folds": folds if fold is not None else 0}
    if fold is not None:
        cv.update(predictors[choice.name]["random"])
    cv.update({**training, "trees": trees, "model": choice.name, "chosen": {"basis": choice.basis, "why": choice.why},
               "analytic_constants": constants_note(data, bool(refit)),
               "predictors": predictors,
               "families": [{**f.family.as_dict(), "problems": len(np.unique(data.group[f.held]))}
                            for f in plan[folds:]],
               "skipped": skipped})
    return model, spec, cv


def refitted(data: Dataset, plan: Sequence[Fold]) -> dict[str, Dataset]:
    """Per fold of `plan` (by label), `data` with the analytic model's constants refitted on the fold's training
    problems (`calibrate.fit`, as the shipped constants were fitted), when the shipped constants were fitted on
    some of the problems (`data.measured`): the analytic model, and the residual model on top of it, are then
    scored on problems their constants never saw. None refitted otherwise."""
    if data.measured is None:
        return {}
    from ckast.arch.calibration import calibration
    from ckast.select.models.calibrate import FITTED, fit as fit_constants, predict

    names, select = FITTED[data.identity["arch"]]
    base = calibration(data.identity["arch"])
    out = {}
    for f in plan:
        training = np.setdiff1d(np.arange(len(data.problems)), np.unique(data.group[f.held]))
        cal = fit_constants(data.measured.subset(training), base, names, select)
        out[f.label] = attrs.evolve(data, analytic=predict(data.measured, cal))
    return out


def constants_note(data: Dataset, refit: bool) -> dict[str, Any]:
    """What `cv_metrics.json` and train's report say of the analytic constants the folds were scored with."""
    if refit:
        why = (f"the shipped analytic constants were fitted on {data.fitted_on} of these {len(data.problems)} "
               "problems: refitted on each fold's training problems, so the analytic and residual models are "
               "scored on problems their constants never saw")
    elif data.fitted_on:
        why = (f"the shipped analytic constants were fitted on {data.fitted_on} of these {len(data.problems)} "
               "problems and could not be refitted per fold (problems of several kernel sets or of per-group "
               "shapes): the analytic model's figures are in-sample")
    else:
        why = "the shipped analytic constants were fitted on none of these problems"
    return {"fitted_on": data.fitted_on, "refitted": refit, "why": why}


def fit_folds(trainers: Sequence[Trainer], data: Dataset, plan: Sequence[Fold], jobs: int,
              progress: Callable[[str, int], None] | None,
              per_fold: Mapping[str, Mapping[str, Trainer]] | None = None
              ) -> tuple[dict[str, Any], dict[tuple[str, str], np.ndarray]]:
    """Each trainer's model fitted on every row, and its predictions of each fold's held-out rows, trained on the
    others ((trainer, fold label) -> predictions): the learning trainers' fits side by side (`fit_all`), final
    models first; a trainer that does not learn is fitted once (per fold when `per_fold`, by fold label and
    trainer name, gives the fold's own trainers: those of a dataset with refitted analytic constants)."""
    per_fold = per_fold or {}

    def own(f: Fold, t: Trainer) -> Trainer:
        return per_fold[f.label][t.name] if f.label in per_fold else t

    everything = np.arange(len(data.tflops))
    fitted: dict[str, Any] = {}
    held_out: dict[tuple[str, str], np.ndarray] = {}
    tasks, keys = [], []

    def task(trainer: Trainer, label: str, rows: np.ndarray, held: np.ndarray | None) -> Callable[[list], Any]:
        def run(callbacks: list) -> Any:
            if progress is not None:
                callbacks = [*callbacks, lambda env: progress(label, env.iteration + 1 - env.begin_iteration)]
            model = trainer.fit(rows, callbacks)
            return model if held is None else model.predict(held)
        return run

    learners = [t for t in trainers if t.learns]
    for t in trainers:
        if not t.learns:
            fitted[t.name] = t.fit(everything, [])
            held_out.update({(t.name, f.label): (own(f, t).fit(everything, []) if f.label in per_fold
                                                 else fitted[t.name]).predict(f.held) for f in plan})
    for t in learners:
        keys.append((t.name, None))
        tasks.append(task(t, f"{t.name} final model", everything, None))
    for f in plan:
        for t in learners:
            keys.append((t.name, f.label))
            tasks.append(task(own(f, t), f"{t.name} {f.label}", np.setdiff1d(everything, f.held), f.held))
    if progress is not None:
        for name, label in keys:
            progress(f"{name} {label or 'final model'}", 0)
    for (name, label), result in zip(keys, fit_all(tasks, jobs) if tasks else []):
        if label is None:
            fitted[name] = result
        else:
            held_out[name, label] = result
    return fitted, held_out


def write_model(out_dir: Path, model: Forest | None, spec: Mapping[str, Any], cv: Mapping[str, Any]) -> None:
    """`model_tflops.lgbm` (none for the analytic model), `feature_spec.json` and `cv_metrics.json` into `out_dir`,
    as one step: the directory is built beside it and swapped in whole (`ckast.output.transaction`), so a failure
    leaves it as it was. A `model_tflops.lgbm.gz` there is removed (it would be an older model), and so is a
    `model_tflops.lgbm` beside an analytic spec; other files are carried over. OutputError when the directory
    cannot be written."""
    from ckast.output.transaction import OutputError, Transaction

    from ckast.select.models.lightgbm_model import MODEL_FILE, SPEC_FILE

    files = {SPEC_FILE: dumps(spec, indent=2) + "\n", CV_FILE: dumps(cv, indent=2) + "\n"}
    if model is not None:
        files = {MODEL_FILE: model.booster.model_to_string(), **files}
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{out_dir}: cannot create its parent directory: {exc.strerror or exc}") from None
    with Transaction(out_dir, owned=frozenset({*files, MODEL_FILE, MODEL_FILE + ".gz"}), kind="model") as tx:
        for name, text in files.items():
            tx.stage.write(name, text)
        tx.commit(set(files))
