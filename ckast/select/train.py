"""Training a LightGBM model from a timing table, written as a model directory in CK's layout.

Target (`base`): by default the analytic model's error, log(measured / analytic TFLOPS); the model predicts
analytic x exp(RESIDUAL_SCALE x trees), and the analytic model's TFLOPS alone for a problem outside its training
domain (`model_domain`, recorded in the spec). With base "none", log1p(TFLOPS) (as CK's: TFLOPS spans orders of
magnitude). Features are ckast's feature set of the kind, computed from each run's problem and its kernel's config on the library's arch. Quality is
estimated by GroupKFold cross-validation, the runs of one problem shape never split between training
and validation folds; the final model is fitted on every run. The fits run side by side, one LightGBM
thread each. Training is deterministic for a seed, whatever the number of fits at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ckast.arguments import argument
from ckast.errors import CkastError
from ckast.json_out import dumps

from .evaluate import group_runs, outcome, summary
from .library import Library, direction_of
from .lightgbm_model import BASES
from .model_domain import Domain, training_domain
from .model_limits import MAX_TREES
from .problem import Problem
from .timings import Run

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
    problems: tuple[Problem, ...]
    kind: str
    identity: Mapping[str, str]
    """op_type, dtype, arch (and direction for conv): what the model is for."""
    hardware: Mapping[str, int]
    """The figures the features were computed with, recorded as CK records them (`lds_capacity`)."""
    analytic: np.ndarray
    """The analytic model's TFLOPS of every row (the arch's shipped calibration, the arch's hardware): what a
    residual model starts from."""


def dataset(runs: list[Run], library: Library, hw_of) -> Dataset:
    """Feature rows of `runs` (TrainError when they are of several kinds, directions, datatypes or archs)."""
    from .model_features import model_features

    by_problem = group_runs(runs)
    identity: dict[str, str] | None = None
    from .analytic import AnalyticPredictor

    analytic = AnalyticPredictor()
    xs, ys, groups, orders, problems, bases = [], [], [], [], [], []
    for number, (problem, kernels) in enumerate(sorted(by_problem.items(), key=lambda item: repr(item[0]))):
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
        problems.append(problem)
    from ckast.arch.hardware import CK_RECORDED, FIGURES

    hw = hw_of(identity["arch"])
    recorded = {next((ck for ck, ours in CK_RECORDED.items() if ours == name), name): getattr(hw, name)
                for name in FIGURES}
    return Dataset(np.vstack(xs), np.concatenate(ys), np.concatenate(groups), np.concatenate(orders),
                   tuple(problems), library.configs[runs[0].kernel]["kind"], identity, recorded,
                   np.concatenate(bases))


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
    from .lightgbm_model import lightgbm_module

    lightgbm = lightgbm_module()
    train_set = lightgbm.Dataset(data.x[rows], target(data, rows, base), feature_name=names,
                                 categorical_feature=categorical, params={"verbose": -1})
    return lightgbm.train(dict(params), train_set, num_boost_round=trees, callbacks=list(callbacks))


def predicted(data: Dataset, rows: np.ndarray, raw: np.ndarray, base: str, domain: Domain | None = None,
              scale: float = RESIDUAL_SCALE) -> np.ndarray:
    """TFLOPS of `rows` from the trees' output `raw` of a model on `base` trained on `domain` (as
    `LightGBMPredictor` predicts: a residual model answers the analytic model's TFLOPS for each problem outside
    its domain, or with a kernel outside it; `scale`: what its trees count for)."""
    from .lightgbm_model import residual_tflops

    if base == "none":
        return np.expm1(raw)
    tflops = residual_tflops(data.analytic[rows], scale * raw)
    if domain is not None:
        inside = domain.rows_inside(data.kind, data.x[rows])
        for g in np.unique(data.group[rows]):
            mine = data.group[rows] == g
            inside[mine] = inside[mine].all() and domain.problem_inside(data.problems[g])
        tflops = np.where(inside, tflops, data.analytic[rows])
    return tflops


def train_predictor(data: Dataset, rows: np.ndarray, base: str = DEFAULT_BASE, trees: int = 400, seed: int = 0,
                    gate: bool = True, scale: float = RESIDUAL_SCALE) -> Callable[[np.ndarray], np.ndarray]:
    """A model on `base` fitted on `rows` (one LightGBM thread) as a function: rows of `data` -> predicted TFLOPS
    (for validating predictors on chosen rows). `gate`: a residual model hands problems outside its training
    domain to the analytic model, as the models `select train` writes do; `scale`: what its trees count for."""
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
    from .model_features import model_features

    features = model_features(kind)
    names = list(features.names)
    return names, [i for i, name in enumerate(names) if name in features.categorical]


def cv_metrics(data: Dataset, predicted: np.ndarray, folds: int) -> dict[str, Any]:
    """Out-of-fold errors (log1p TFLOPS) and selection efficiency on the held-out problems (`predicted`: TFLOPS)."""
    err = np.log1p(predicted) - np.log1p(data.tflops)
    outcomes = []
    for g in np.unique(data.group):
        rows = data.group == g
        eff, top1, top5, *_ = outcome(data.tflops[rows], predicted[rows], data.name_order[rows])
        outcomes.append(_Scored(eff, top1, top5))
    return {"folds": folds, "rmse_log1p": float(np.sqrt(np.mean(err**2))), "mae_log1p": float(np.mean(np.abs(err))),
            "efficiency": summary(outcomes)}


@attrs.frozen
class _Scored:
    efficiency: float
    top1: bool
    top5: bool


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


def train(data: Dataset, trees: int, folds: int, seed: int, jobs: int,
          progress: Callable[[int, int], None] | None = None, base: str = DEFAULT_BASE
          ) -> tuple[Any, dict[str, Any], dict]:
    """(booster, feature spec, CV metrics) of a model of `trees` trees on every run, on `base` (BASES).

    The final model and the `folds` cross-validation fits run `jobs` at a time, each on one LightGBM
    thread, so fits x threads <= `jobs` and every fit is the same whatever `jobs` is. `progress(fit, trees
    done)` is called after each tree, from the fit's thread: fit 0 is the final model, fit f the f-th fold.
    """
    from .forest import ModelError, check_model_text
    from .model_features import model_features

    if not 1 <= trees <= MAX_TREES:
        raise TrainError(f"trees: {trees} is not within 1..{MAX_TREES:,} (the trees a model ckast reads may have)")
    if base not in BASES:
        raise TrainError(f"base: {base!r} is not one of {', '.join(BASES)}")
    features = model_features(data.kind)
    names, categorical = _features(data.kind)
    params = {**DEFAULT_PARAMS, "seed": seed}

    def task(number: int, rows: np.ndarray, held: np.ndarray | None) -> Callable[[list], Any]:
        def run(callbacks: list) -> Any:
            if progress is not None:
                callbacks = [*callbacks, lambda env: progress(number, env.iteration + 1 - env.begin_iteration)]
            booster = fit(data, rows, params, trees, names, categorical, callbacks, base)
            if held is None:
                return booster
            raw = booster.predict(data.x[held], num_threads=params["num_threads"])
            return predicted(data, held, raw, base, domain_of(data, rows))
        return run

    # the final model first: the largest fit, the folds fill the other cores around it
    tasks = [task(0, np.arange(len(data.tflops)), None)]
    fold = trainable_folds(data, folds)
    if fold is not None:
        tasks += [task(f + 1, np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(folds)]
    booster, *held_out = fit_all(tasks, jobs)
    try:  # ckast writes no model it would refuse to read (its size included)
        check_model_text(booster.model_to_string())
    except ModelError as exc:
        raise TrainError(f"the trained model is not one ckast reads ({exc}): train fewer trees (--trees)") from None
    cv = {"folds": 0}
    if fold is not None:
        out_of_fold = np.empty(len(data.tflops))
        for f, values in enumerate(held_out):
            out_of_fold[fold == f] = values
        cv = cv_metrics(data, out_of_fold, folds)
    spec = {
        **data.identity,
        "feature_names": names,
        "categorical_features": [names[i] for i in categorical],
        "categorical_encodings": {names[i]: dict(features.categorical[names[i]]) for i in categorical},
        "hardware": data.hardware,
        "targets": ["tflops"],
        "log_targets": ["tflops"],
        "params": {**params, "n_estimators": trees},
        "training": {"rows": int(len(data.tflops)), "problems": len(data.problems)},
        "base": base,
        **({"residual_scale": RESIDUAL_SCALE} if base == "analytic" else {}),
        "domain": domain_of(data, np.arange(len(data.tflops))).to_json(),
    }
    return booster, spec, {**cv, "rows": int(len(data.tflops)), "problems": len(data.problems), "trees": trees}


def write_model(out_dir: Path, booster, spec: Mapping[str, Any], cv: Mapping[str, Any]) -> None:
    """`model_tflops.lgbm`, `feature_spec.json` and `cv_metrics.json` into `out_dir`, as one step: the directory
    is built beside it and swapped in whole (`ckast.output.transaction`), so a failure leaves it as it was. A
    `model_tflops.lgbm.gz` there is removed (it would be an older model); other files are carried over.
    OutputError when the directory cannot be written."""
    from ckast.output.transaction import OutputError, Transaction

    from .lightgbm_model import MODEL_FILE, SPEC_FILE

    files = {MODEL_FILE: booster.model_to_string(), SPEC_FILE: dumps(spec, indent=2) + "\n",
             CV_FILE: dumps(cv, indent=2) + "\n"}
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{out_dir}: cannot create its parent directory: {exc.strerror or exc}") from None
    with Transaction(out_dir, owned=frozenset({*files, MODEL_FILE + ".gz"}), kind="model") as tx:
        for name, text in files.items():
            tx.stage.write(name, text)
        tx.commit(set(files))
