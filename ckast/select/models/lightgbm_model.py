"""LightGBM model directories in CK's layout: `model_tflops.lgbm` (or `model_tflops.lgbm.gz`) and
`feature_spec.json` (`feature_names`, `categorical_features`, `log_targets`, `op_type`, `dtype`,
`arch`, `hardware`; ckast adds `categorical_encodings` and, for conv, `direction`).

A model's columns are bound to ckast's feature set **by name**, so a model trained on an older,
smaller feature set still loads. The model file is read and checked completely by `forest.read_model` and
predicted with by ckast's own evaluator (`forest.Forest`): LightGBM never reads it, and is not needed to
select. A model naming a feature the set lacks, a categorical feature the set holds as a number, an encoding
(value -> code) the set does not share, a model file that is missing, corrupt or disagrees with its spec, a
spec field of the wrong type, leaves whose sum no TFLOPS figure can hold: `ModelError`, one line naming the
file and the field.

A spec whose `predictor` is `analytic` (what `select train` writes when the analytic model does best under
shift) names a model without a forest: the directory ranks with the analytic model (`AnalyticModel`), for the
op type, datatype, arch (and conv direction) the spec names. One whose `predictor` is `residual` holds a forest
that corrects the analytic model (see `LightGBMPredictor.predict_tflops`); `lightgbm` (or none named) a forest
predicting log1p(TFLOPS), as CK's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ckast.config import ConfigError
from ckast.config.errors import key_path, shown
from ckast.config.json_file import parse_json
from ckast.errors import CkastError
from ckast.input_file import InputFileError, read_input

from .forest import Forest, ModelError, read_model
from ckast.select.expr.libm import libm
from .domain import Domain, read_domain
from ckast.select.problem import Problem, problem_label

MODEL_FILE = "model_tflops.lgbm"
SPEC_FILE = "feature_spec.json"
SPEC_LIMIT = 16 << 20
"""Largest feature_spec.json read (CK's are a few KiB)."""
OP_TYPES = {"gemm_universal": "gemm", "gemm": "gemm", "grouped_conv": "grouped_conv"}
"""CK's op_type (and ckast's kind) -> ckast's feature-set kind."""
PREDICTORS = ("analytic", "lightgbm", "residual")
"""A spec's `predictor` (default: lightgbm, a forest in the model file predicting log1p TFLOPS, as CK's; residual:
a forest correcting the analytic model; analytic: no forest)."""


class MissingPackage(CkastError, RuntimeError):
    """An optional package selection needs is not installed (exit 1)."""


def lightgbm_module():
    """The lightgbm package, or MissingPackage saying how to install it."""
    try:
        import lightgbm
    except ImportError:
        raise MissingPackage("training a model needs the lightgbm package: pip install 'ckast[select]'") from None
    return lightgbm


@attrs.frozen(eq=False)
class LightGBMPredictor:
    """A loaded model bound to ckast's feature set: `columns[i]` is the feature-set column of the
    model's feature i."""

    path: Path
    file: Path
    """The model file of the directory `path` (plain or gzip'd)."""
    forest: Forest
    """The model's trees as data (`forest.py`), what predictions are computed with."""
    spec: Mapping[str, Any]
    kind: str
    columns: np.ndarray
    hw: Any
    """The hardware the model's features are computed with: the figures its spec records (`hardware`),
    CK's feature-engine defaults for the others, as CK's predictor does; not the target's."""
    domain: Domain | None = None
    """What the model was trained on (spec `domain`), if the spec records it."""

    @property
    def name(self) -> str:
        """The predictor (spec `predictor`): "lightgbm" (the trees predict log1p(TFLOPS) on their own, as CK's
        models) or "residual" (TFLOPS = analytic x exp(residual_scale x trees))."""
        return self.spec.get("predictor", "lightgbm")

    @property
    def base(self) -> str:
        """What the trees correct: "analytic" (a residual model) or "none"."""
        return "analytic" if self.name == "residual" else "none"

    @property
    def residual_scale(self) -> float:
        return float(self.spec.get("residual_scale", 1.0))

    def trusted(self, part, rows: np.ndarray | None = None) -> bool:
        """Every kernel of `rows` (default: all) lies inside the training domain (True without a recorded domain):
        a residual model's trees then correct the analytic model, whether or not the problem lies inside."""
        if self.domain is None:
            return True
        kernels = self.kernels_inside(part)
        return bool(kernels.all() if rows is None else kernels[rows].all())

    def kernels_inside(self, part) -> np.ndarray:
        """Per kernel of the part: inside the training domain (memoized per part)."""
        key = ("domain", self)
        if key not in part.memo:
            part.memo[key] = self.domain.kernels_inside(self.kind, part.table)
        return part.memo[key]

    @property
    def trees(self) -> int:
        return len(self.forest.roots)

    def check(self, part) -> None:
        """ModelError when the model was trained for another arch, datatype or conv direction."""
        check_part(self.path, self.spec, part)

    def predict_tflops(self, problem: Problem, part, hw, rows: np.ndarray | None = None) -> np.ndarray:
        """Predicted TFLOPS of the part's kernels (`hw`, the target's profile, is not used: see `self.hw`)."""
        from .inputs import model_features

        self._bound(part)
        x = model_features(self.kind).matrix(problem, part.table, self.hw)
        x = x[:, self.columns] if rows is None else x[np.ix_(rows, self.columns)]
        raw = self.forest.predict(x)
        if self.base == "analytic":
            from .analytic import AnalyticPredictor

            analytic = AnalyticPredictor().predict_tflops(problem, part, hw, rows)
            if not self.trusted(part, rows):
                return analytic
            tflops = residual_tflops(analytic, self.residual_scale * raw)
        else:
            tflops = self.transform(raw)
        self._finite(tflops, lambda _: problem)
        return tflops

    def predict_many(self, problems: Sequence[Problem], part, hw, mask: np.ndarray) -> np.ndarray:
        """`predict_tflops` of problems of one part at once, of the kernels where `mask` (problems x kernels)
        holds: problems x kernels, each of those entries the one `predict_tflops` gives, NaN elsewhere. Their
        feature rows go through the forest together; a sum that overflows is refused for the first problem
        whose kernels hold one, as `predict_tflops` of the problems one by one refuses it."""
        from .inputs import model_features

        self._bound(part)
        x = model_features(self.kind).matrix_many(problems, part.table, self.hw, mask)[:, self.columns]
        raw = self.forest.predict(x)
        if self.base == "analytic":
            from .analytic import AnalyticPredictor

            analytic = AnalyticPredictor().predict_many(problems, part, hw, mask)
            inside = np.array([self.trusted(part, np.flatnonzero(m)) for m in mask])
            tflops = residual_tflops(analytic[mask], self.residual_scale * raw)
            tflops = np.where(np.repeat(inside, mask.sum(axis=1)), tflops, analytic[mask])
        else:
            tflops = self.transform(raw)
        self._finite(tflops, lambda row: problems[np.nonzero(mask)[0][row]])
        out = np.full(mask.shape, np.nan)
        out[mask] = tflops
        return out

    def _bound(self, part) -> None:
        """`check` the part, once."""
        if ("lightgbm", self) not in part.memo:
            self.check(part)
            part.memo["lightgbm", self] = True

    def _finite(self, tflops: np.ndarray, problem_of: Callable[[int], Problem]) -> None:
        """ModelError naming the first prediction that is not finite (finite leaves whose sum overflows) and its
        problem (`problem_of(i)`: the problem of `tflops[i]`)."""
        bad = np.flatnonzero(~np.isfinite(tflops))
        if len(bad):
            raise ModelError(f"{self.file}: leaf_value: the trees' leaves add up to {tflops[bad[0]]} TFLOPS for "
                             f"{problem_label(problem_of(int(bad[0])))}; a model's predictions are finite")

    def transform(self, raw: np.ndarray) -> np.ndarray:
        """The model's output as TFLOPS (CK trains on log1p(TFLOPS) where `log_targets` names it)."""
        if "tflops" in self.spec.get("log_targets", ()):
            return libm(math.expm1, raw)
        return np.maximum(raw, 0.0)


def check_part(model_dir: Path, spec: Mapping[str, Any], part) -> None:
    """ModelError when the spec names another arch, datatype, conv direction or op type than the part's."""
    from ckast.select.serving.library import direction_of

    where = model_dir / SPEC_FILE
    direction = direction_of(part.configs[0])
    for field, held in (("arch", part.arch), ("dtype", part.datatype), ("direction", direction)):
        wanted = spec.get(field)
        if field == "direction" and OP_TYPES[spec["op_type"]] != "grouped_conv":
            continue
        if wanted is not None and wanted != held:
            raise ModelError(f"{where}: {field}: the model is for {wanted}, the kernels are {held}")
    if OP_TYPES[spec["op_type"]] != part.configs[0]["kind"]:
        raise ModelError(f"{where}: op_type: a {spec['op_type']} model cannot rank {part.configs[0]['kind']} kernels")


@attrs.frozen(eq=False)
class AnalyticModel:
    """A model directory whose spec names the analytic model: it ranks as `select` without a model does, for
    the parts its spec fits (`check`)."""

    path: Path
    spec: Mapping[str, Any]

    name = "analytic"
    trees = 0

    def check(self, part) -> None:
        check_part(self.path, self.spec, part)

    def predict_tflops(self, problem: Problem, part, hw, rows: np.ndarray | None = None) -> np.ndarray:
        self._bound(part)
        return self._analytic.predict_tflops(problem, part, hw, rows)

    def predict_many(self, problems: Sequence[Problem], part, hw, mask: np.ndarray) -> np.ndarray:
        self._bound(part)
        return self._analytic.predict_many(problems, part, hw, mask)

    @property
    def _analytic(self):
        from .analytic import AnalyticPredictor

        return AnalyticPredictor()

    def _bound(self, part) -> None:
        if ("analytic model", self) not in part.memo:
            self.check(part)
            part.memo["analytic model", self] = True


def load_model(model_dir: Path) -> LightGBMPredictor | AnalyticModel:
    """The model of a directory in CK's layout, bound to ckast's feature set, or the analytic model its spec
    names (ModelError if unusable)."""
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise ModelError(f"{model_dir}: not a model directory (expected {MODEL_FILE}[.gz] and {SPEC_FILE})")
    spec = _read_spec(model_dir / SPEC_FILE)
    if spec.get("predictor") == "analytic":
        return AnalyticModel(model_dir, spec)
    from .inputs import model_features

    kind = OP_TYPES[spec["op_type"]]
    columns = bind(spec, model_features(kind), model_dir / SPEC_FILE)
    path, forest = _read_forest(model_dir)
    names = list(forest.feature_names)
    if names == [f"Column_{i}" for i in range(len(names))]:  # trained on an unnamed matrix: the spec names them
        names = names if len(names) != len(spec["feature_names"]) else list(spec["feature_names"])
    if names != list(spec["feature_names"]):
        diff = next((i for i, (a, b) in enumerate(zip(names, spec["feature_names"])) if a != b),
                    min(len(names), len(spec["feature_names"])))
        raise ModelError(f"{model_dir / SPEC_FILE}: feature_names: the model has {len(names)} features, the spec "
                         f"{len(spec['feature_names'])}; they differ at #{diff} "
                         f"({_at(names, diff)} in the model, {_at(spec['feature_names'], diff)} in the spec)")
    from ckast.arch.hardware import ck_engine_hardware

    try:
        hw = ck_engine_hardware(spec.get("hardware"))
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{model_dir / SPEC_FILE}: hardware: {exc.args[0] if exc.args else exc}") from None
    domain = None if "domain" not in spec else read_domain(spec["domain"], kind, str(model_dir / SPEC_FILE))
    return LightGBMPredictor(model_dir, path, forest, spec, kind, columns, hw, domain)


def bind(spec: Mapping[str, Any], features, where: Path) -> np.ndarray:
    """Feature-set columns of the spec's features, in the model's order; ModelError naming the first
    feature, categorical feature or encoding the set cannot supply."""
    index = {name: i for i, name in enumerate(features.names)}
    for name in spec["feature_names"]:
        if name not in index:
            raise ModelError(f"{where}: feature_names: {name!r} is not a feature ckast computes "
                             f"(its {spec['op_type']} set has {len(index)})")
    for name in spec.get("categorical_features", ()):
        if name not in features.categorical:
            raise ModelError(f"{where}: categorical_features: {name!r} is not categorical in ckast's feature set")
    for name, codes in spec.get("categorical_encodings", {}).items():
        known = features.categorical.get(name)
        if known is None:
            raise ModelError(f"{where}: categorical_encodings: {name!r} is not categorical in ckast's feature set")
        for value, code in codes.items():
            if known.get(value) != code:
                ours = f"code {known[value]}" if value in known else "no code"
                raise ModelError(f"{where}: categorical_encodings.{name}: {value!r} is code {code} in the model, "
                                 f"{ours} in ckast's feature set")
    return np.array([index[name] for name in spec["feature_names"]], dtype=np.intp)


def _at(names: list[str], i: int) -> str:
    return repr(names[i]) if i < len(names) else "nothing"


_SPEC_NAMES = ("feature_names", "categorical_features", "log_targets", "targets")
"""Spec fields that are lists of names."""
_SPEC_TEXT = ("dtype", "arch", "direction")
_SPEC_OBJECTS = ("params", "training")
"""Spec fields ckast records from training and does not read, but which must be JSON objects."""


def _read_spec(path: Path) -> dict[str, Any]:
    """A model's feature_spec.json, read as strict JSON, every field ckast knows of the right type."""
    if not path.exists() and not path.is_symlink():
        raise ModelError(f"{path}: missing (a model directory holds {MODEL_FILE}[.gz] and {SPEC_FILE})")
    try:
        spec = parse_json(read_input(path, SPEC_LIMIT), str(path))
    except InputFileError as exc:
        raise ModelError(str(exc)) from None
    except ConfigError as exc:
        issue = exc.issues[0]
        raise ModelError(f"{path}: {issue.path + ': ' if issue.path else ''}{issue.message}") from None
    if not isinstance(spec, dict):
        raise ModelError(f"{path}: expected a JSON object, not {type(spec).__name__}")
    if not isinstance(spec.get("op_type"), str) or spec["op_type"] not in OP_TYPES:
        raise ModelError(f"{path}: op_type: {shown(spec.get('op_type'))} is not one of {', '.join(OP_TYPES)}")
    if spec.get("predictor", "lightgbm") not in PREDICTORS:
        raise ModelError(f"{path}: predictor: {shown(spec['predictor'])} is not one of {', '.join(PREDICTORS)}")
    for field in _SPEC_TEXT:
        if field in spec and not isinstance(spec[field], str):
            raise ModelError(f"{path}: {field}: expected a string, not {shown(spec[field])}")
    if spec.get("predictor") == "analytic":
        return spec  # no features, no forest
    for field in _SPEC_NAMES:
        value = spec.get(field, [] if field != "feature_names" else None)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ModelError(f"{path}: {field}: expected a list of names, not {shown(value)}")
        if len(set(value)) != len(value):
            raise ModelError(f"{path}: {field}: {shown(next(v for i, v in enumerate(value) if v in value[:i]))} "
                             "is listed twice")
    if not spec["feature_names"]:
        raise ModelError(f"{path}: feature_names: empty")
    scale = spec.get("residual_scale", 1.0)
    if "residual_scale" in spec and (spec.get("predictor") != "residual" or not isinstance(scale, (int, float))
                                     or isinstance(scale, bool) or not 0 < scale <= 1):
        raise ModelError(f"{path}: residual_scale: expected a number in (0, 1] beside predictor residual, not "
                         f"{shown(scale)}")
    for field in ("categorical_encodings", "hardware", *_SPEC_OBJECTS):
        if field in spec and not isinstance(spec[field], dict):
            raise ModelError(f"{path}: {field}: expected an object, not {shown(spec[field])}")
    for name, codes in spec.get("categorical_encodings", {}).items():
        if not isinstance(codes, dict) or not all(_integer(c) for c in codes.values()):
            raise ModelError(f"{path}: {key_path('categorical_encodings', name)}: expected {{value: integer code}}, "
                             f"not {shown(codes)}")
    for name, value in spec.get("hardware", {}).items():
        whole = _integer(value) or isinstance(value, float) and value.is_integer()
        if not whole or not 0 <= value < 2**31:
            raise ModelError(f"{path}: {key_path('hardware', name)}: expected a whole number in 0..2^31-1, not "
                             f"{shown(value)}")
    return spec


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _read_forest(model_dir: Path) -> tuple[Path, Forest]:
    """The model file of a directory (plain, else gzip'd) and its trees."""
    plain, packed = model_dir / MODEL_FILE, model_dir / (MODEL_FILE + ".gz")
    path = plain if plain.exists() or plain.is_symlink() else packed
    if not path.exists() and not path.is_symlink():
        raise ModelError(f"{plain}: missing (nor is there a {packed.name})")
    return path, read_model(path)


def residual_tflops(analytic: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """A residual model's TFLOPS: the analytic model's times exp of the trees' output (the C library's exp, then
    one product: what the C++ selector computes)."""
    return np.asarray(analytic, dtype=np.float64) * libm(math.exp, raw)
