"""LightGBM model directories in CK's layout: `model_tflops.lgbm` (or `model_tflops.lgbm.gz`) and
`feature_spec.json` (`feature_names`, `categorical_features`, `log_targets`, `op_type`, `dtype`,
`arch`, `hardware`; ckast adds `categorical_encodings` and, for conv, `direction`).

A model's columns are bound to ckast's feature set **by name**, so a model trained on an older,
smaller feature set still loads. A model naming a feature the set lacks, a categorical feature the set
holds as a number, an encoding (value -> code) the set does not share, a model file that is missing,
corrupt or disagrees with its spec: `ModelError`, one line naming the file and the field.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from .forest import Forest, ModelError, read_model_text
from .libm import libm
from .problem import Problem

MODEL_FILE = "model_tflops.lgbm"
SPEC_FILE = "feature_spec.json"
OP_TYPES = {"gemm_universal": "gemm", "gemm": "gemm", "grouped_conv": "grouped_conv"}
"""CK's op_type (and ckast's kind) -> ckast's feature-set kind."""


class MissingPackage(RuntimeError):
    """An optional package selection needs is not installed (exit 1)."""


def lightgbm_module():
    """The lightgbm package, or MissingPackage saying how to install it."""
    try:
        import lightgbm
    except ImportError:
        raise MissingPackage("LightGBM models need the lightgbm package: pip install 'ckast[select]'") from None
    return lightgbm


@attrs.frozen(eq=False)
class LightGBMPredictor:
    """A loaded model bound to ckast's feature set: `columns[i]` is the feature-set column of the
    model's feature i."""

    path: Path
    booster: Any
    forest: Forest
    """The model's trees as data (`forest.py`), parsed from the same text as `booster`."""
    spec: Mapping[str, Any]
    kind: str
    columns: np.ndarray
    hw: Any
    """The hardware the model's features are computed with: the figures its spec records (`hardware`),
    CK's feature-engine defaults for the others, as CK's predictor does; not the target's."""

    name = "lightgbm"

    @property
    def trees(self) -> int:
        return self.booster.num_trees()

    def check(self, part) -> None:
        """ModelError when the model was trained for another arch, datatype or conv direction."""
        from .library import direction_of

        where = self.path / SPEC_FILE
        direction = direction_of(part.configs[0])
        for field, held in (("arch", part.arch), ("dtype", part.datatype), ("direction", direction)):
            wanted = self.spec.get(field)
            if field == "direction" and self.kind != "grouped_conv":
                continue
            if wanted is not None and wanted != held:
                raise ModelError(f"{where}: {field}: the model is for {wanted}, the kernels are {held}")
        if OP_TYPES[self.spec["op_type"]] != part.configs[0]["kind"]:
            raise ModelError(f"{where}: op_type: a {self.spec['op_type']} model cannot rank "
                             f"{part.configs[0]['kind']} kernels")

    def predict_tflops(self, problem: Problem, part, hw, rows: np.ndarray | None = None) -> np.ndarray:
        """Predicted TFLOPS of the part's kernels (`hw`, the target's profile, is not used: see `self.hw`)."""
        from .model_features import model_features

        if ("lightgbm", id(self)) not in part.memo:
            self.check(part)
            part.memo["lightgbm", id(self)] = True
        x = model_features(self.kind).matrix(problem, part.table, self.hw)
        x = x[:, self.columns] if rows is None else x[np.ix_(rows, self.columns)]
        return self.transform(self.booster.predict(x))

    def transform(self, raw: np.ndarray) -> np.ndarray:
        """The model's output as TFLOPS (CK trains on log1p(TFLOPS) where `log_targets` names it)."""
        if "tflops" in self.spec.get("log_targets", ()):
            return libm(math.expm1, raw)
        return np.maximum(raw, 0.0)


def load_model(model_dir: Path) -> LightGBMPredictor:
    """The model of a directory in CK's layout, bound to ckast's feature set (ModelError if unusable)."""
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise ModelError(f"{model_dir}: not a model directory (expected {MODEL_FILE}[.gz] and {SPEC_FILE})")
    spec = _read_spec(model_dir / SPEC_FILE)
    from .model_features import model_features

    kind = OP_TYPES[spec["op_type"]]
    columns = bind(spec, model_features(kind), model_dir / SPEC_FILE)
    booster, forest = _read_booster(model_dir)
    names = booster.feature_name()
    if names == [f"Column_{i}" for i in range(len(names))]:  # trained on an unnamed matrix: the spec names them
        names = names if len(names) != len(spec["feature_names"]) else list(spec["feature_names"])
    if list(names) != list(spec["feature_names"]):
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
    return LightGBMPredictor(model_dir, booster, forest, spec, kind, columns, hw)


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


def _read_spec(path: Path) -> dict[str, Any]:
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelError(f"{path}: missing (a model directory holds {MODEL_FILE}[.gz] and {SPEC_FILE})") from None
    except OSError as exc:
        raise ModelError(f"{path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise ModelError(f"{path}: not JSON ({exc})") from None
    if not isinstance(spec, dict):
        raise ModelError(f"{path}: expected a JSON object")
    if spec.get("op_type") not in OP_TYPES:
        raise ModelError(f"{path}: op_type: {spec.get('op_type')!r} is not one of {', '.join(OP_TYPES)}")
    for field in ("feature_names", "categorical_features", "log_targets"):
        value = spec.get(field, [] if field != "feature_names" else None)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ModelError(f"{path}: {field}: expected a list of names")
    if not spec["feature_names"]:
        raise ModelError(f"{path}: feature_names: empty")
    encodings = spec.get("categorical_encodings", {})
    if not isinstance(encodings, dict) or not all(
            isinstance(codes, dict) and all(isinstance(c, int) for c in codes.values()) for codes in encodings.values()):
        raise ModelError(f"{path}: categorical_encodings: expected {{feature: {{value: code}}}}")
    return spec


def _read_booster(model_dir: Path) -> tuple[Any, Forest]:
    lightgbm = lightgbm_module()
    plain, packed = model_dir / MODEL_FILE, model_dir / (MODEL_FILE + ".gz")
    path = plain if plain.exists() else packed
    if not path.exists():
        raise ModelError(f"{plain}: missing (nor is there a {packed.name})")
    # Checked by ckast's own parse first: LightGBM parses trees on worker threads, where a malformed tree
    # aborts the process.
    text, forest = read_model_text(path)
    try:
        with _quiet_stderr():
            return lightgbm.Booster(model_str=text), forest
    except lightgbm.basic.LightGBMError as exc:
        raise ModelError(f"{path}: not a LightGBM model: {str(exc).strip().splitlines()[0]}") from None


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """LightGBM's C++ side prints its errors to file descriptor 2 before raising; keep them off the user's
    terminal (the error is reported once, as a ModelError)."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
