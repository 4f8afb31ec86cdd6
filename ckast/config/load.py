"""Reading and validating config files (JSON): one kernel, a list, {"kernels": [...]}, or a CK config (ck_formats)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from collections.abc import Mapping
from typing import Any

import attrs

from ckast.arch import check_config

from . import ck_formats, ck_spellings
from .errors import SHOWN_MAX, ConfigError, ConfigIssue, key_path, shown
from .json_file import read_json
from .kernel import KernelConfig, knobs_for
from .knobs import KNOB_NAMES, KNOBS, Config, Knob


@attrs.frozen
class LoadedKernel:
    """A validated kernel and where it came from (its JSON path)."""

    path: str
    config: Any  # KernelConfig
    waived: tuple[ConfigIssue, ...] = ()
    """What the rules waived for it refuse (`ckast.arch.waivers`)."""


def load_file(path: Path, defaults: Mapping[str, Any] | None = None,
              waive: frozenset[str] = frozenset()) -> list[LoadedKernel]:
    """Read and validate `path`; raise ConfigError listing every problem.

    `defaults` replaces knob defaults (e.g. `ck_api` from the command line); a value a kernel
    sets itself still wins. The rules `waive` names (checked: `ckast.arch.waivers.checked_waivers`)
    refuse nothing; what they find is each kernel's `waived`.
    """
    data = read_json(path)
    try:
        return load_data(data, defaults, waive)
    except ConfigError as exc:
        raise ConfigError(exc.issues, str(path)) from None


def kernel_objects(data: Any) -> list[tuple[str, Any]]:
    """(JSON path, kernel object) of every kernel in one of the three config forms or CK's formats."""
    expanded = ck_formats.expand(data)
    if expanded is not None:
        return expanded
    if isinstance(data, dict) and "kernels" in data:
        extra = sorted(set(data) - {"kernels"})
        if extra:
            raise ConfigError([ConfigIssue(key_path("", extra[0]), "unknown top-level key; expected only 'kernels'")])
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
    if len(items) > ck_formats.MAX_KERNELS:
        raise ConfigError([ConfigIssue(prefix or "", f"holds {len(items)} kernels, over the limit of "
                                                     f"{ck_formats.MAX_KERNELS}", "config.max_kernels")])
    return [("" if prefix is None else f"{prefix}[{i}]", item) for i, item in enumerate(items)]


def load_data(data: Any, defaults: Mapping[str, Any] | None = None,
              waive: frozenset[str] = frozenset()) -> list[LoadedKernel]:
    """Validate already-parsed JSON data (`waive`: as `load_file`)."""
    loaded: list[LoadedKernel] = []
    issues: list[ConfigIssue] = []
    for path, item in kernel_objects(data):
        r = resolve_kernel(item, path, defaults, hint=True)
        waived = tuple(i for i in r.issues if i.rule in waive)
        refused = [i for i in r.issues if i.rule not in waive]
        if r.config is not None and not any(i.rule for i in refused):
            loaded.append(LoadedKernel(path, r.config, waived))  # a line left (no rule) hints at the waived ones
        else:
            issues += refused
    if issues:
        raise ConfigError(issues)
    return loaded


def _allowed(values: tuple[Any, ...]) -> str:
    return ", ".join(json.dumps(v) if isinstance(v, bool) else str(v) for v in values)


_TYPE_WORDS = {bool: "true or false", int: "an integer", str: "a string"}


def _type_ok(value: Any, want: type) -> bool:
    if want is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, want)


_KNOWN = frozenset(KNOB_NAMES)
_KIND, _VARIANT = KNOBS[0], KNOBS[1]
"""Resolved first: whether any other knob applies depends on them."""
assert (_KIND.name, _VARIANT.name) == ("kind", "variant")


@attrs.frozen
class Resolved:
    """One kernel object after validation: the config when every knob resolved (even if arch rules
    then refused it, so a refused kernel still has a name), and every problem found."""

    config: Any  # KernelConfig | None
    issues: tuple[ConfigIssue, ...]

    @property
    def ok(self) -> bool:
        return self.config is not None and not self.issues


def resolve_kernel(obj: Any, path: str, defaults: Mapping[str, Any] | None = None, *, hint: bool = False) -> Resolved:
    """Check the knobs of one kernel object, then (if they all resolve) the arch rules.

    Problems are reported in knob-table order, after unknown keys; a bad kind or variant ends the check.
    An object the knob table refuses as written is read again in ckast's spellings if it holds CK's
    (`ck_spellings`, CK's dispatcher KernelConfig fields among them); its refused CK spellings (kept as
    written) come first and replace the other problems of their fields. A refused kernel whose `warp_*` hold
    more waves than any arch runs gets, with `hint` (a kernel the user wrote), a line saying what ckast's `warp_*`
    and `warp_tile_*` are.
    """
    if not isinstance(obj, dict):
        return Resolved(None, (ConfigIssue(path, "a kernel must be a JSON object"),))
    resolved = _resolve_object(obj, path, defaults or {})
    if resolved.config is not None:
        said = ck_spellings.wave_hint(obj, path) if hint and resolved.issues else []
        return attrs.evolve(resolved, issues=(*resolved.issues, *said)) if said else resolved
    spelled = ck_spellings.translate(obj, path)
    if spelled is None:
        return resolved
    resolved = _resolve_object(spelled.obj, path, defaults or {}, spelled.keys)
    if not spelled.issues:
        return resolved
    return Resolved(None, (*spelled.issues, *(i for i in resolved.issues if i.path not in spelled.refused)))


def _resolve_object(obj: dict[str, Any], path: str, defaults: Mapping[str, Any],
                    written: Mapping[str, str] | None = None) -> Resolved:
    """`resolve_kernel` of an object as written; `written` names the key each knob was written as, if another."""
    def where(name: str) -> str:
        return key_path(path, written.get(name, name) if written else name)

    issues = [] if _KNOWN.issuperset(obj) else [_unknown(path, key) for key in sorted(obj.keys() - _KNOWN)]
    if "kind" not in obj:
        required = f"is required; allowed: {_allowed(_KIND.choices)}"  # type: ignore[arg-type]
        return Resolved(None, (*issues, ConfigIssue(key_path(path, "kind"), required)))
    resolved: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for knob in (_KIND, _VARIANT):
        _resolve((knob,), obj, defaults, resolved, problems)
        if problems:
            return Resolved(None, (*issues, ConfigIssue(where(knob.name), problems[knob.name])))
    scope = _scope(resolved["kind"], resolved["variant"])
    if not scope.refusals.keys().isdisjoint(obj):
        problems = {name: scope.refusals[name] for name in obj.keys() & scope.refusals.keys()}
    _resolve(scope.knobs, obj, defaults, resolved, problems)
    if problems:
        issues += [ConfigIssue(where(name), problems[name]) for name in KNOB_NAMES if name in problems]
    if issues:
        return Resolved(None, tuple(issues))
    config = KernelConfig(**resolved)
    violations = check_config(config)
    return Resolved(config, tuple(ConfigIssue(where(v.field), v.detail, v.rule.id) for v in violations))


def _unknown(path: str, key: str) -> ConfigIssue:
    import difflib  # only for a misspelled key

    close = difflib.get_close_matches(key, KNOB_NAMES, n=1) if len(key) <= SHOWN_MAX else []
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return ConfigIssue(key_path(path, key), f"unknown knob{hint}")


@attrs.frozen
class _Scope:
    """What follows kind and variant for one (kind, variant): the knobs that apply, in table order, and
    the refusal of each knob that does not."""

    knobs: tuple[Knob, ...]
    refusals: Mapping[str, str]


@functools.cache
def _scope(kind: str, variant: str) -> _Scope:
    applicable = knobs_for(kind, variant)
    return _Scope(
        tuple(k for k in applicable if k.name not in ("kind", "variant")),
        {k.name: f"does not apply to {kind} {variant}; only to {'/'.join(k.variants or k.kinds or ())}"
         for k in KNOBS if k not in applicable},
    )


def _resolve(knobs: tuple[Knob, ...], obj: Mapping[str, Any], defaults: Mapping[str, Any], resolved: dict[str, Any],
             problems: dict[str, str]) -> None:
    """Resolve `knobs`, in order, into `resolved` (the kernel's value, else the run's default, else the
    table's) or `problems`. A knob whose default or choices need a knob that did not resolve is left
    out: that knob was already reported."""
    for knob in knobs:
        name = knob.name
        try:
            if name in obj:
                value = obj[name]
            elif name in defaults:
                value = defaults[name]
            else:
                value = knob.default_for(resolved)
            # The common case, decided here (this runs for every knob of every candidate): a value of the
            # knob's exact type, at least its minimum and one of its choices is one `_check` passes.
            if value.__class__ is knob.type and (knob.minimum is None or value >= knob.minimum):
                choices = knob.choices(resolved) if callable(knob.choices) else knob.choices
                if choices is None or value in choices:
                    resolved[name] = value if knob.inert is None else knob.held(value, resolved)
                    continue
            problem = _check(knob, value, resolved)
        except KeyError:
            continue
        if problem:
            problems[name] = problem
        else:
            resolved[name] = value if knob.inert is None else knob.held(value, resolved)


def _check(knob: Knob, value: Any, resolved: Config) -> str | None:
    if not _type_ok(value, knob.type):
        return f"{shown(value)} is not {_TYPE_WORDS[knob.type]}"
    if knob.minimum is not None and value < knob.minimum:
        return f"{value} is below the minimum {knob.minimum}"
    choices = knob.choices_for(resolved)
    if choices is not None and value not in choices:
        return f"{shown(value)} is not allowed; allowed: {_allowed(choices)}"
    return None
