"""Reading problems: a GEMM or grouped-conv problem (`problem.GemmProblem`, `problem.ConvProblem`) from
`key=value` pairs (the command line's `--problem "M=4096,N=4096,K=4096"`, a CSV row, a JSON object), in the
spellings the `problem` module describes; a bad one raises `ProblemError` naming the field, and a problem
that breaks one of `validity.rules` is refused by them.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

from ckast.config.errors import shorten
from ckast.number_text import OutOfRange, parse_int

from ckast.select.problem import (
    _FILTER,
    _INPUT,
    AXES,
    D_FIELDS,
    DIRECTIONS,
    GROUP_FIELDS,
    INT_MAX,
    MAX_GROUPS,
    QUANT_GROUPS,
    ConvProblem,
    GemmProblem,
    ProblemError,
    bounds,
    problem_variants,
    quant_groups,
)

GEMM_FIELDS = ("M", "N", "K", "batch", "groups", "k_batch", "variant", "num_d_tensors", "d_layout",
               "elementwise_op", *QUANT_GROUPS, *GROUP_FIELDS)
GEMM_ALIASES = {"m": "M", "n": "N", "k": "K", "split_k": "k_batch", "batch_count": "batch", "group_count": "groups"}
"""Other spellings of GEMM fields: CK's timing tables' lowercase sizes, split_k, and CK's batch_count and
group_count."""
CONV_FIELDS = ("direction", "ndim", "G", "N", "C", "K", "k_batch", *_INPUT.values(), *_FILTER.values(),
               *(name.format(a) for name in ("stride_{}", "dilation_{}", "pad_{}", "left_pad_{}", "right_pad_{}")
                 for a in AXES))
"""The fields a GEMM / conv problem is read from (besides GEMM's `GEMM_ALIASES`)."""


def gemm_problem(fields: Mapping[str, Any], where: str = "", checked: bool = True) -> GemmProblem:
    """A GEMM problem from `M, N, K` (or CK's `m, n, k`), optionally `batch` (alias `batch_count`), `groups`
    (alias `group_count`), `k_batch` (alias `split_k`), `variant`, a multi_d problem's D fields and a quantized
    problem's scale groups (see the `problem` module's docstring). `checked` false: the rules the reader does not
    decide are left to the caller, who checks many problems at once (`validity.first_broken`)."""
    from ckast.config.knobs import GEMM, KNOBS, VARIANTS

    from .validity import check

    fields = _aliased(fields, GEMM_ALIASES, where)
    _known(fields, set(GEMM_FIELDS), where)
    shapes = _group_shapes(fields, where)
    if shapes:
        fields = {**fields, "groups": _int(fields, "groups", where, len(shapes))}
        if fields["groups"] != len(shapes):
            raise ProblemError("groups", f"{fields['groups']} disagrees with the {len(shapes)} groups of "
                               f"{next(f for f in GROUP_FIELDS if f in fields)}", where)
    if len(shapes) == 1:  # one group: the GEMM of its shape
        (m, n, k), shapes = shapes[0], ()
        fields = {**{f: v for f, v in fields.items() if f not in GROUP_FIELDS}, "M": m, "N": n, "K": k}
    if shapes:
        size = dict(zip("MNK", (max(s[d] for s in shapes) for d in range(3))))
    else:
        size = {f: _int(fields, f, where) for f in ("M", "N", "K")}
    variant = _choice(fields, "variant", problem_variants(VARIANTS[GEMM]), "standard", where)
    d_fields: dict[str, Any] = {}
    if variant == "multi_d":
        knobs = {k.name: k for k in KNOBS}
        for name in D_FIELDS:
            knob = knobs[name]
            value = _int(fields, name, where, knob.default) if knob.type is int else fields.get(name, knob.default)
            d_fields[name] = _choice({name: value}, name, knob.choices, knob.default, where)
    elif given := [f for f in D_FIELDS if f in fields]:
        raise ProblemError(given[0], f"only a multi_d problem has D tensors (this one is {variant})", where)
    groups = quant_groups(variant)
    if other := [f for f in QUANT_GROUPS if f in fields and f not in groups]:
        has = f"has {', '.join(groups)}" if groups else "has no scale groups"
        raise ProblemError(other[0], f"a {variant} problem {has}", where)
    quant = {f: _int(fields, f, where, default) for f, default in groups.items()}
    problem = GemmProblem(**size, k_batch=_int(fields, "k_batch", where, default=1), variant=variant, **d_fields,
                          batch=_int(fields, "batch", where, default=1), **quant,
                          groups=_int(fields, "groups", where, default=1), group_shapes=shapes)
    if checked or shapes:  # many problems are checked together by rules of one shape (`validity.first_broken`)
        check(problem, where)
    return problem


def _group_shapes(fields: Mapping[str, Any], where: str) -> tuple[tuple[int, int, int], ...]:
    """Each group's (M, N, K) from `group_m` (with N and K) or `group_shapes` (see the `problem` module), or ()
    for a problem of one shape."""
    given = [f for f in GROUP_FIELDS if f in fields]
    if not given:
        return ()
    if len(given) > 1:
        raise ProblemError(given[1], f"give {given[0]} or {given[1]}, not both", where)
    name = given[0]
    if clash := [f for f in ("M",) + (("N", "K") if name == "group_shapes" else ()) if f in fields]:
        one = "M, N and K" if name == "group_shapes" else "M"
        raise ProblemError(clash[0], f"give {one} (one shape for every group) or {name}, not both", where)
    items = _items(fields[name], name, where)
    if not 1 <= len(items) <= MAX_GROUPS:
        raise ProblemError(name, f"{len(items)} groups; a grouped problem has 1 to {MAX_GROUPS}", where)
    if name == "group_m":
        n, k = _int(fields, "N", where), _int(fields, "K", where)
        shapes = tuple((_size(m, f"{name}[{i}]", where), n, k) for i, m in enumerate(items))
    else:
        shapes = tuple(_shape(item, f"{name}[{i}]", where) for i, item in enumerate(items))
    if not any(all(s) for s in shapes):
        raise ProblemError(name, "every group is empty (M, N or K 0): one group at least has work", where)
    return shapes


def _items(value: Any, name: str, where: str) -> list[Any]:
    """A list field's items: a list or tuple, or text separated by `:`."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(":")]
    if isinstance(value, (list, tuple)):
        return list(value)
    raise ProblemError(name, f"{shorten(repr(value))} is not a list (groups separated by ':')", where)


def _size(value: Any, path: str, where: str) -> int:
    """A group's size: an integer in [0, INT_MAX] (0: an empty group)."""
    return _integer(value, path, 0, INT_MAX, where)


def _shape(item: Any, path: str, where: str) -> tuple[int, int, int]:
    """A group's M x N x K: text `MxNxK` or a list of three sizes."""
    parts = item.split("x") if isinstance(item, str) else item
    if not isinstance(parts, (list, tuple)) or len(parts) != 3:
        raise ProblemError(path, f"{shorten(repr(item))} is not M x N x K (as 64x4096x7168)", where)
    m, n, k = (_size(v, f"{path}.{d}", where) for v, d in zip(parts, "MNK"))
    return m, n, k


def conv_problem(fields: Mapping[str, Any], where: str = "", checked: bool = True) -> ConvProblem:
    """A grouped-conv problem from CK's spellings (see the module docstring); `checked` as `gemm_problem`'s."""
    from .validity import check

    fields = dict(fields)
    axes = _axes(fields, where)
    _known(fields, set(CONV_FIELDS), where)
    direction = str(fields.get("direction", "forward"))
    if direction not in DIRECTIONS:
        raise ProblemError("direction", f"{direction!r} is not one of {', '.join(DIRECTIONS)}", where)
    for a in AXES:
        if a not in axes:
            given = [f for f in fields if f.endswith(f"_{a}") or f in (_INPUT[a], _FILTER[a])]
            if given:
                raise ProblemError(given[0], f"axis {a} is not in a {len(axes)}-D problem", where)
        elif f"pad_{a}" in fields and (f"left_pad_{a}" in fields or f"right_pad_{a}" in fields):
            raise ProblemError(f"pad_{a}", f"give pad_{a} or left_pad_{a}/right_pad_{a}, not both", where)

    def spatial(name: str, default: int | None) -> tuple[int, ...]:
        return tuple(_int(fields, name.format(a), where, default) for a in axes)

    def pad(side: str) -> tuple[int, ...]:
        return tuple(_int(fields, f"{side}_pad_{a}", where, _int(fields, f"pad_{a}", where, 0)) for a in axes)

    groups = _int(fields, "G", where)
    problem = ConvProblem(
        direction, groups, _int(fields, "N", where), *(_per_group(fields, f, groups, where) for f in ("C", "K")),
        input=tuple(_int(fields, _INPUT[a], where) for a in axes),
        filter=tuple(_int(fields, _FILTER[a], where) for a in axes),
        stride=spatial("stride_{}", 1), dilation=spatial("dilation_{}", 1),
        left_pad=pad("left"), right_pad=pad("right"), k_batch=_int(fields, "k_batch", where, 1))
    if checked:
        check(problem, where)
    return problem


def parse_pairs(text: str, where: str = "--problem") -> dict[str, str]:
    """`"M=4096,N=4096,K=4096"` -> {"M": "4096", ...}; a pair without `=` or a repeated key is refused."""
    pairs: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = (s.strip() for s in item.partition("="))
        if not eq or not key:
            raise ProblemError(item, "expected key=value", where)
        if key in pairs:
            raise ProblemError(key, "given twice", where)
        pairs[key] = value
    return pairs


def _axes(fields: Mapping[str, Any], where: str) -> tuple[str, ...]:
    if "ndim" in fields:
        return AXES[len(AXES) - _int(fields, "ndim", where):]
    given = [a for a in AXES if _INPUT[a] in fields or _FILTER[a] in fields]
    if not given:
        raise ProblemError("Wi", "missing (a convolution needs its input and filter sizes)", where)
    return AXES[AXES.index(given[0]):]


def _aliased(fields: Mapping[str, Any], aliases: Mapping[str, str], where: str) -> dict[str, Any]:
    out = dict(fields)
    for alias, name in aliases.items():
        if alias in out:
            if name in out:
                raise ProblemError(alias, f"give {alias} or {name}, not both", where)
            out[name] = out.pop(alias)
    return out


def _known(fields: Mapping[str, Any], allowed: set[str], where: str) -> None:
    for name in fields:
        if name not in allowed:
            raise ProblemError(name, f"unknown field; allowed: {', '.join(sorted(allowed))}", where)


def _choice(fields: Mapping[str, Any], name: str, choices: tuple[Any, ...], default: Any, where: str) -> Any:
    """Field `name`, one of `choices` (missing: `default`)."""
    value = fields.get(name, default)
    if isinstance(value, str):
        value = value.strip()
    if value not in choices:
        raise ProblemError(name, f"{value!r} is not one of {', '.join(map(str, choices))}", where)
    return value


def _int(fields: Mapping[str, Any], name: str, where: str, default: int | None = None) -> int:
    """Field `name` as an int within its `bounds`; missing: `default`, or refused when there is none. Text is
    ASCII decimal digits, optionally after a minus sign (Python's int() also reads other scripts' digits,
    underscores and a plus sign)."""
    value = fields.get(name)
    if value is None or value == "":
        if default is None:
            raise ProblemError(name, "missing", where)
        return default
    lo, hi = bounds(name)
    return _integer(value, name, lo, hi, where)


def _integer(value: Any, path: str, lo: int, hi: int, where: str) -> int:
    """`value` (text of ASCII digits, an int or a whole float) as an int in [lo, hi] (ProblemError at `path`)."""
    if isinstance(value, str):
        try:
            value = parse_int(value)
        except OutOfRange:
            raise ProblemError(path, f"{shorten(value.strip(string.whitespace))} is out of range [{lo}, {hi}]",
                               where) from None
        except ValueError as exc:
            raise ProblemError(path, f"{shorten(repr(value))} {exc}", where) from None
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProblemError(path, f"{shorten(repr(value))} is not an integer", where)
    if not lo <= value <= hi:
        raise ProblemError(path, f"{shorten(str(value))} is out of range [{lo}, {hi}]", where)
    return value


def _per_group(fields: Mapping[str, Any], name: str, groups: int, where: str) -> int:
    total = _int(fields, name, where)
    if total % groups:
        raise ProblemError(name, f"{total} channels do not split into G={groups} groups (C and K count all groups)",
                           where)
    return total // groups
