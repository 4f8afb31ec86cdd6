"""Reading and validating config files (JSON): one kernel, a list, {"kernels": [...]}, or a CK config (ck_formats)."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from collections.abc import Mapping
from typing import Any

import attrs

from ckast.arch import check_config

from . import ck_formats
from .errors import ConfigError, ConfigIssue
from .kernel import KernelConfig, applies
from .knobs import KNOB_NAMES, KNOBS


@attrs.frozen
class LoadedKernel:
    """A validated kernel and where it came from (its JSON path)."""

    path: str
    config: Any  # KernelConfig


def load_file(path: Path, defaults: Mapping[str, Any] | None = None) -> list[LoadedKernel]:
    """Read and validate `path`; raise ConfigError listing every problem.

    `defaults` replaces knob defaults (e.g. `ck_api` from the command line); a value a kernel
    sets itself still wins.
    """
    data = read_json(path)
    try:
        return load_data(data, defaults)
    except ConfigError as exc:
        raise ConfigError(exc.issues, str(path)) from None


def read_json(path: Path) -> Any:
    """The parsed JSON of a config file (ConfigError naming the file if unreadable or not JSON)."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([ConfigIssue("", f"cannot read config file: {exc.strerror}")], source) from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        issue = ConfigIssue("", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
        raise ConfigError([issue], source) from exc


def kernel_objects(data: Any) -> list[tuple[str, Any]]:
    """(JSON path, kernel object) of every kernel in one of the three config forms or CK's formats."""
    expanded = ck_formats.expand(data)
    if expanded is not None:
        return expanded
    if isinstance(data, dict) and "kernels" in data:
        extra = sorted(set(data) - {"kernels"})
        if extra:
            raise ConfigError([ConfigIssue(extra[0], "unknown top-level key; expected only 'kernels'")])
        items, prefix = data["kernels"], "kernels"
        if not isinstance(items, list):
            raise ConfigError([ConfigIssue("kernels", "must be a list of kernel objects")])
    elif isinstance(data, list):
        items, prefix = data, ""
    elif isinstance(data, dict):
        items, prefix = [data], None
    else:
        raise ConfigError([ConfigIssue("", "expected a kernel object, a list of them, or {\"kernels\": [...]}")])
    if not items:
        raise ConfigError([ConfigIssue(prefix or "", "no kernels in the config")])
    return [("" if prefix is None else f"{prefix}[{i}]", item) for i, item in enumerate(items)]


def load_data(data: Any, defaults: Mapping[str, Any] | None = None) -> list[LoadedKernel]:
    """Validate already-parsed JSON data."""
    loaded: list[LoadedKernel] = []
    issues: list[ConfigIssue] = []
    for path, item in kernel_objects(data):
        config, problems = parse_kernel(item, path, defaults)
        issues += problems
        if config is not None:
            loaded.append(LoadedKernel(path, config))
    if issues:
        raise ConfigError(issues)
    return loaded


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _allowed(values: tuple[Any, ...]) -> str:
    return ", ".join(json.dumps(v) if isinstance(v, bool) else str(v) for v in values)


_TYPE_WORDS = {bool: "true or false", int: "an integer", str: "a string"}


def _type_ok(value: Any, want: type) -> bool:
    if want is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, want)


@attrs.frozen
class Resolved:
    """One kernel object after validation: the config when every knob resolved (even if arch rules
    then refused it, so a refused kernel still has a name), and every problem found."""

    config: Any  # KernelConfig | None
    issues: tuple[ConfigIssue, ...]

    @property
    def ok(self) -> bool:
        return self.config is not None and not self.issues


def parse_kernel(obj: Any, path: str, defaults: Mapping[str, Any] | None = None) -> tuple[Any, list[ConfigIssue]]:
    """Validate one kernel object; returns (KernelConfig or None, problems)."""
    r = resolve_kernel(obj, path, defaults)
    return (r.config, []) if r.ok else (None, list(r.issues))


def resolve_kernel(obj: Any, path: str, defaults: Mapping[str, Any] | None = None) -> Resolved:
    """Check the knobs of one kernel object, then (if they all resolve) the arch rules."""
    if not isinstance(obj, dict):
        return Resolved(None, (ConfigIssue(path, "a kernel must be a JSON object"),))
    defaults = defaults or {}
    issues: list[ConfigIssue] = []
    for key in sorted(set(obj) - set(KNOB_NAMES)):
        close = difflib.get_close_matches(str(key), KNOB_NAMES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        issues.append(ConfigIssue(_join(path, str(key)), f"unknown knob{hint}"))
    resolved: dict[str, Any] = {}
    for knob in KNOBS:
        where = _join(path, knob.name)
        if not applies(knob, resolved):
            if knob.name in obj and "kind" in resolved and "variant" in resolved:
                scope = "/".join(knob.variants or knob.kinds or ())
                issues.append(ConfigIssue(where, f"does not apply to {resolved['kind']} {resolved['variant']}; only to {scope}"))
            continue
        if knob.name == "kind" and "kind" not in obj:
            issues.append(ConfigIssue(where, f"is required; allowed: {_allowed(knob.choices)}"))  # type: ignore[arg-type]
            break
        try:
            if knob.name in obj:
                value = obj[knob.name]
            elif knob.name in defaults:
                value = defaults[knob.name]
            else:
                value = knob.default_for(resolved)
            problem = _check(knob, value, resolved)
        except KeyError:
            continue  # depends on a field that was already reported as invalid
        if problem:
            issues.append(ConfigIssue(where, problem))
            if knob.name in ("kind", "variant"):
                break  # everything else depends on them
            continue
        resolved[knob.name] = value
    if issues:
        return Resolved(None, tuple(issues))
    config = KernelConfig(**resolved)
    violations = check_config(config)
    return Resolved(config, tuple(ConfigIssue(_join(path, v.field), v.detail, v.rule.id) for v in violations))


def _check(knob: Any, value: Any, resolved: dict[str, Any]) -> str | None:
    if not _type_ok(value, knob.type):
        return f"{json.dumps(value)} is not {_TYPE_WORDS[knob.type]}"
    if knob.minimum is not None and value < knob.minimum:
        return f"{value} is below the minimum {knob.minimum}"
    choices = knob.choices_for(resolved)
    if choices is not None and value not in choices:
        return f"{json.dumps(value)} is not allowed; allowed: {_allowed(choices)}"
    return None
