"""Hypothesis strategies for kernel configs, drawn from the knob table (`ckast.config.knobs`).

A config holds one or two kernel objects, each of a drawn kind and variant, in one of the config forms
(a kernel object, a list, `{"kernels": [...]}`) or CK's kernel-set format. Most knobs are left out or
take a value the table allows (a choice, a boolean, an integer near the knob's default or a small
power of two at least its minimum). In a hostile config some knobs take a hostile value instead:
a string carrying `MARK` among quotes, comment ends, newlines and unicode; a near miss of an
enumerator; an integer out of range; a value of the wrong JSON type; and unknown keys are added.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from ckast.arch.rules import CONV_VARIANTS
from ckast.catalog import profile_names
from ckast.config.kernel import applies, knobs_for
from ckast.config.knobs import CONV, DEFAULT_VARIANT, GEMM, KINDS, KNOBS, PIPELINES, VARIANTS, Knob

MARK = "ckfuzz"
"""Every hostile string contains it, so its absence from emitted text is a meaningful check."""

_PIECES = ('"', "'", "\\", "*/", "/*", "//", "\n", "\r\n", "\t", "\0", "??/", "#define", "R\"(", ")\"", "{", "}",
           ";", "%s", "{0}", "$(", "`", "\u202e", "\u00e9", "\U0001f600", "\ufeff", "\u2028")
_PAYLOAD = st.lists(st.one_of(st.sampled_from(_PIECES), st.characters()), max_size=5).map("".join)
MARKED = st.builds(lambda a, b: f"{a}{MARK}{b}", _PAYLOAD, _PAYLOAD)
"""A hostile string."""

_CONTEXTS = [
    {"kind": kind, "variant": variant, "ndim_spatial": ndim, "ck_api": api, "pipeline": pipeline}
    for kind in KINDS for variant in VARIANTS[kind] for ndim in (1, 2, 3) for api in profile_names()
    for pipeline in PIPELINES[kind]
]
ENUMERATORS = frozenset(
    value for knob in KNOBS if knob.type is str for context in _CONTEXTS if knob in knobs_for(context["kind"],
                                                                                             context["variant"])
    for value in knob.choices_for(context) or ()
)
"""Every string some knob allows somewhere."""


def _near_misses(value: str) -> list[str]:
    return [value.upper(), f" {value}", f"{value}\n", f"{value}\0", value[:-1], f"{value}{value[-1]}"]


_WRONG_TYPES = st.sampled_from([None, 1.5, [], {}, [1], {"values": [1]}])
_HOSTILE = {
    bool: st.one_of(_WRONG_TYPES, st.sampled_from([0, 1, "true", "false", "yes"]), MARKED),
    int: st.one_of(_WRONG_TYPES, st.sampled_from([True, False, "128", 64.0, -1, 0, 2**31, 2**63, 10**30]), MARKED),
}


def hostile(knob: Knob, resolved: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value `knob` probably refuses: of the wrong type, out of range, or not one of its choices."""
    if knob.type is bool:
        return _HOSTILE[bool]
    if knob.type is int:
        return _HOSTILE[int] if knob.minimum is None else _below(knob.minimum)
    try:
        choices = knob.choices_for(resolved) or ()
    except KeyError:
        choices = ()
    return _hostile_str(choices)


@functools.cache
def _below(minimum: int) -> st.SearchStrategy[Any]:
    return st.one_of(_HOSTILE[int], st.integers(max_value=minimum - 1))


@functools.cache
def _hostile_str(choices: tuple[str, ...]) -> st.SearchStrategy[Any]:
    misses = [m for c in choices for m in _near_misses(c) if m not in choices]
    foreign = sorted(ENUMERATORS - set(choices))
    return st.one_of(_WRONG_TYPES, st.integers(), st.sampled_from(misses or [""]), st.sampled_from(foreign), MARKED)


def allowed(knob: Knob, resolved: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value the knob table allows for `knob` (the arch rules may still refuse it)."""
    choices = knob.choices_for(resolved)
    if choices is not None:
        return _sampled(tuple(choices))
    if knob.type is bool:
        return _sampled((False, True))
    return _allowed_int(knob.default_for(resolved), knob.minimum if knob.minimum is not None else 1)


@functools.cache
def _sampled(values: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    return st.sampled_from(values)


@functools.cache
def one_in(n: int) -> st.SearchStrategy[bool]:
    """True with chance 1/n (shrinking to False)."""
    return st.integers(0, n - 1).map(lambda r: r == n - 1)


@functools.cache
def _modes(spread: int, hostile_rate: int) -> st.SearchStrategy[str]:
    """"hostile" with chance 1/hostile_rate (if not 0), else "allowed" with chance about 1/spread, else "omit"
    (one draw, shrinking towards "omit")."""
    n = spread * max(hostile_rate, 1)
    return st.integers(0, n - 1).map(
        lambda r: "hostile" if hostile_rate and r >= n - spread else "allowed" if r % spread == spread - 1 else "omit")


@functools.cache
def _allowed_int(default: int, low: int) -> st.SearchStrategy[int]:
    """Near `default` (a quarter to twice it), or a power of two up to 256 (or 0); at least `low`."""
    near = sorted({v for v in (default // 4, default // 2, default, default * 2) if v >= low})
    powers = [v for v in (0, *(2**i for i in range(9))) if v >= low]
    return st.one_of(st.sampled_from(near), st.sampled_from(powers))


_ALWAYS = ("kind", "variant", "arch", "ck_api")
"""Knobs every kernel object sets (unless hostile), so kinds, variants, archs and profiles are drawn evenly."""
_SPREADS = st.sampled_from([8, 4, 2])
_UNKNOWN_VALUES = st.one_of(MARKED, st.integers(), st.booleans())


@st.composite
def kernel_objects(draw: st.DrawFn, hostile_rate: int = 0, profiles: tuple[str, ...] | None = None,
                   archs: tuple[str, ...] | None = None) -> dict[str, Any]:
    """One kernel object. A third of the objects are hostile when `hostile_rate` n > 0: about one knob in n
    takes a hostile value and unknown keys may be added. `profiles` and `archs` restrict `ck_api` and `arch`."""
    restrict = {"ck_api": profiles, "arch": archs}
    hostile_rate = hostile_rate if hostile_rate and draw(one_in(3)) else 0
    spread = draw(_SPREADS)  # about one knob in `spread` is set
    obj: dict[str, Any] = {}
    resolved: dict[str, Any] = {}
    for knob in KNOBS:
        if resolved and not applies(knob, resolved):
            continue
        mode = draw(_modes(spread, hostile_rate))
        if mode == "hostile":
            value = draw(hostile(knob, resolved))
            if knob.name == "kind" and draw(st.booleans()):
                return obj  # no kind at all
            obj[knob.name] = value
            if knob.name in ("kind", "variant"):
                return obj  # nothing after them is checked
            continue
        try:
            if mode == "allowed" or knob.name in _ALWAYS:
                choices = restrict.get(knob.name)
                value = obj[knob.name] = draw(_sampled(choices) if choices else allowed(knob, resolved))
            else:
                value = knob.default_for(resolved)
        except KeyError:  # a knob it depends on is hostile: the kernel is refused anyway
            continue
        resolved[knob.name] = value
    if hostile_rate and draw(one_in(hostile_rate)):
        for key in draw(st.lists(_unknown_keys(resolved["kind"], resolved["variant"]), min_size=1, max_size=2)):
            obj[key] = draw(_UNKNOWN_VALUES)
    return obj


@functools.cache
def _unknown_keys(kind: str, variant: str) -> st.SearchStrategy[str]:
    """Keys no kernel of `kind` and `variant` takes: hostile, near misses of knob names, other variants' knobs."""
    names = [k.name for k in KNOBS]
    foreign = [k.name for k in KNOBS if k not in knobs_for(kind, variant)]
    misses = [m for name in names for m in _near_misses(name) if m not in names]
    return st.one_of(MARKED, st.sampled_from(misses), st.sampled_from(foreign or names[:1]))


_CK_TILE = [f"{p}_{d}" for p in ("tile", "warp", "warp_tile") for d in "mnk"]
_CK_SECTIONS = {
    GEMM: {"tile_config": _CK_TILE,
           "trait_config": ["pipeline", "scheduler", "epilogue", "pad_m", "pad_n", "pad_k", "persistent"]},
    CONV: {"tile_config": _CK_TILE,
           "trait_config": ["pipeline", "scheduler", "epilogue", "double_smem_buffer", "num_groups_to_merge"],
           "vector_config": ["vector_size_a", "vector_size_b", "vector_size_c"],
           "occupancy_config": ["num_wave_groups"]},
}
"""The knobs CK's kernel-set formats hold, by section (ckast/config/ck_formats.py)."""


def ck_kernel_set(obj: dict[str, Any], label: str, comment: str) -> dict[str, Any] | None:
    """`obj` as CK's GEMM or grouped-conv kernel-set config (its knobs CK's format holds, as one-value
    leaves), named `label` and carrying `comment` as comments; None for a kernel the format cannot hold."""
    kind = obj.get("kind")
    variant = obj.get("variant", DEFAULT_VARIANT[kind]) if kind in KINDS else None
    if variant not in (*VARIANTS[GEMM], *CONV_VARIANTS):
        return None
    top = {"variant": variant, **{k: obj[k] for k in ("datatype", "layout") if k in obj}}
    if "arch" in obj:
        top["gpu_target"] = obj["arch"]
    if kind == CONV:
        top["ndim"] = obj.get("ndim_spatial", 2)
    sections = {section: {k: {"values": [obj[k]]} for k in keys if k in obj}
                for section, keys in _CK_SECTIONS[kind].items()}
    sections["tile_config"]["_comment"] = comment
    return {"kernel_set_name": label, f"_{comment}": comment, **top, **sections}


@st.composite
def configs(draw: st.DrawFn, hostile_rate: int = 8, profiles: tuple[str, ...] | None = None,
            archs: tuple[str, ...] | None = None) -> tuple[Any, dict[str, Any]]:
    """(JSON data, load defaults): one or two kernel objects in a drawn config form."""
    objects = [draw(kernel_objects(hostile_rate, profiles, archs)) for _ in range(1 + draw(one_in(4)))]
    form = draw(st.sampled_from(["object", "list", "kernels", "ck"]))
    if form == "ck":
        data = ck_kernel_set(objects[0], draw(MARKED), draw(MARKED))
        if data is not None:  # CK's format has no ck_api: it comes from the command line
            return data, {"ck_api": objects[0]["ck_api"]} if "ck_api" in objects[0] else {}
    if len(objects) == 1 and form in ("object", "ck"):
        return objects[0], {}
    return (objects if form == "list" else {"kernels": objects}), {}


def strings(data: Any) -> Iterator[str]:
    """Every string value in JSON data, and every key holding `MARK`."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        yield from (k for k in data if isinstance(k, str) and MARK in k)
        yield from itertools.chain.from_iterable(map(strings, data.values()))
    elif isinstance(data, list):
        yield from itertools.chain.from_iterable(map(strings, data))
