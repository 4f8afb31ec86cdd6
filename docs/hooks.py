"""MkDocs hook: the reference sections generated from ckast's own tables at build time, so they cannot drift.

A page asks for one with a marker line:

- `<!-- ckast:knobs -->`: every knob of `ckast.config.knobs.KNOBS` (type, where it applies, default, allowed
  values, CK's spellings from `ckast.config.ck_spellings`, the rules that read it). A derived default or
  allowed set is evaluated over the values it reads, per kind and variant.
- `<!-- ckast:rules -->`: every validation rule of `ckast.arch.RULES` (id, reason, scope, fields read).
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))  # the checkout's ckast, not another installed copy

from ckast.arch import RULES  # noqa: E402
from ckast.config import ck_spellings, knobs  # noqa: E402
from ckast.config.kernel import knobs_for  # noqa: E402

MARKERS: dict[str, Callable[[], str]] = {}
"""Marker line -> the Markdown it is replaced with."""

_TYPES = {bool: "boolean", int: "integer", str: "string"}
_ENUMERATED = 64
"""At most this many combinations of the values a derived default reads are spelled out."""


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown


def _marker(name: str) -> Callable[[Callable[[], str]], Callable[[], str]]:
    def register(make: Callable[[], str]) -> Callable[[], str]:
        MARKERS[f"<!-- ckast:{name} -->"] = make
        return make

    return register


def _value(v: Any) -> str:
    return f"`{json.dumps(v) if isinstance(v, bool) else v}`"


def _values(vs: Iterable[Any]) -> str:
    return ", ".join(_value(v) for v in vs)


class _Reads(dict):  # type: ignore[type-arg]
    """A resolved config that records which knobs are read from it."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        super().__init__(data)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)


def _scopes() -> list[tuple[str, str]]:
    return [(kind, variant) for kind in knobs.KINDS for variant in knobs.VARIANTS[kind]]


def _defaults(kind: str, variant: str) -> dict[str, Any]:
    """The config of `kind` and `variant` with every other knob at its default (as the loader resolves it)."""
    resolved: dict[str, Any] = {"kind": kind, "variant": variant}
    for knob in knobs_for(kind, variant):
        if knob.name not in resolved:
            resolved[knob.name] = knob.default_for(resolved)
    return resolved


Results = list[tuple[dict[str, Any], Any]]
"""(values of the knobs read, result) per combination."""


def _evaluate(fn: Callable[[Mapping[str, Any]], Any], kind: str, variant: str) -> tuple[list[str], Results]:
    """The knobs `fn` reads besides kind and variant, and its result for each combination of their allowed values.

    What `fn` reads can depend on the values it read (a short-circuit), so the combinations grow until no
    call reads a knob more."""
    base = _defaults(kind, variant)
    scope = [k for k in knobs_for(kind, variant) if k.name not in ("kind", "variant")]
    reads: list[str] = []
    while True:
        options = [k.choices_for(base) or ((False, True) if k.type is bool else (base[k.name],))
                   for k in scope if k.name in reads]
        combos = [dict(zip(reads, combo)) for combo in itertools.product(*options)]
        if len(combos) > _ENUMERATED:
            return reads, [({}, fn(base))]
        results, read = [], set()
        for combo in combos:
            probe = _Reads({**base, **combo})
            results.append((combo, fn(probe)))
            read |= probe.read
        grown = [k.name for k in scope if k.name in read or k.name in reads]
        if grown == reads:
            return reads, results
        reads = grown


def _reads(fn: Callable[[Mapping[str, Any]], Any], knob: knobs.Knob) -> list[str]:
    """Every knob `fn` reads in some scope of `knob`, kind and variant included, in table order."""
    read: set[str] = set()
    for kind, variant in _scopes():
        if knob in knobs_for(kind, variant):
            for combo, _ in _evaluate(fn, kind, variant)[1]:
                probe = _Reads({**_defaults(kind, variant), **combo})
                fn(probe)
                read |= probe.read
    return [k.name for k in knobs.KNOBS if k.name in read]


def _describe(reads: list[str], results: Results, show: Callable[[Any], str]) -> str:
    """One scope's results: the value, or each value with the combinations of read knobs that give it."""
    by_value: dict[str, list[dict[str, Any]]] = {}
    for combo, result in results:
        by_value.setdefault(show(result), []).append(combo)
    if len(by_value) == 1:
        return next(iter(by_value))
    if len(reads) == 1:
        return "; ".join(f"{v} for {reads[0]} {_values(c[reads[0]] for c in combos)}" for v, combos in by_value.items())
    common = max(by_value, key=lambda v: len(by_value[v]))
    parts = []
    for v, combos in by_value.items():
        if v == common:
            continue
        *head, last = sorted(reads, key=lambda r: len({repr(c[r]) for c in combos}))
        groups: dict[tuple[Any, ...], list[Any]] = {}
        for c in combos:
            groups.setdefault(tuple(c[h] for h in head), []).append(c[last])
        when = "; ".join(" ".join(f"{h} {_value(x)}" for h, x in zip(head, key)) + f" and {last} {_values(lasts)}"
                         for key, lasts in groups.items())
        parts.append(f"{v} for {when}")
    return "; ".join(parts) + f"; otherwise {common}"


def _per_scope(knob: knobs.Knob, fn: Callable[[Mapping[str, Any]], Any], show: Callable[[Any], str]) -> str:
    """`fn` (a derived default or allowed set) described per kind and variant, scopes alike merged."""
    lines: dict[str, list[tuple[str, str]]] = {}
    for kind, variant in _scopes():
        if knob in knobs_for(kind, variant):
            lines.setdefault(_describe(*_evaluate(fn, kind, variant), show), []).append((kind, variant))
    if len(lines) == 1:
        return next(iter(lines))
    return "<br>".join(f"{_scope_text(scopes)}: {d}" for d, scopes in lines.items())


def _scope_text(scopes: list[tuple[str, str]]) -> str:
    by_kind: dict[str, list[str]] = {}
    for kind, variant in scopes:
        by_kind.setdefault(kind, []).append(variant)
    return "; ".join(f"{kind} {', '.join(vs)}" if len(vs) < len(knobs.VARIANTS[kind]) else f"every {kind}"
                     for kind, vs in by_kind.items())


def _applies(knob: knobs.Knob) -> str:
    scopes = [s for s in _scopes() if knob in knobs_for(*s)]
    return "every kernel" if len(scopes) == len(_scopes()) else _scope_text(scopes)


def _default(knob: knobs.Knob) -> str:
    if knob.name == "kind":
        return "none: required"
    if not callable(knob.default):
        return _value(knob.default)
    derived = f"derived from {', '.join(_reads(knob.default, knob))}"
    doc = (knob.default.__doc__ or "").strip()
    return f"{derived}{' (' + doc.rstrip('.') + ')' if doc else ''}: {_per_scope(knob, knob.default, _value)}"


def _allowed(knob: knobs.Knob) -> str:
    bound = f"at least {knob.minimum}" if knob.minimum is not None else ""
    if knob.choices is None:
        if knob.type is bool:
            return "`true`, `false`"
        return bound or "any integer; the rules that read it decide"
    if not callable(knob.choices):
        return _values(knob.choices)
    doc = (knob.choices.__doc__ or "").strip()
    return f"{doc + ' ' if doc else ''}{_per_scope(knob, knob.choices_for, _values)}"


def _inert(knob: knobs.Knob) -> str:
    """The values of the knobs `knob.inert` reads where it holds."""
    where: list[str] = []
    for kind, variant in _scopes():
        if knob in knobs_for(kind, variant):
            reads, results = _evaluate(knob.inert, kind, variant)  # type: ignore[arg-type]
            where += [" and ".join(f"{r} {_value(c[r])}" for r in reads) for c, inert in results if inert]
    return "; ".join(dict.fromkeys(where))


def _spellings(knob: knobs.Knob) -> str:
    """CK's keys and values that stand for this knob (accepted, or refused with what to write)."""
    parts = []
    for ck, s in (*ck_spellings.KEYS.items(), *ck_spellings.KERNEL_CONFIG.items()):
        if s.ckast == (knob.name,):
            parts.append(f"key `{ck}` ({s.source}){': refused, ' + s.lossy if s.lossy else ''}")
    together = {"datatype": ck_spellings.KERNEL_CONFIG_DTYPES, "layout": ck_spellings.KERNEL_CONFIG_LAYOUTS}
    if knob.name in together:
        parts.append(f"on gemm, keys {_values(together[knob.name])} (dispatcher Python KernelConfig fields, read "
                     "together)")
    accepted: dict[str, list[str]] = {}
    refused: dict[str, list[str]] = {}
    for ck, s in ck_spellings.VALUES.get(knob.name, {}).items():
        if s.accepted is not None:
            accepted.setdefault(s.accepted, []).append(f'`"{ck}"`')
        else:
            why = f"{s.lossy}: write" if s.lossy else "ambiguous: write"
            refused.setdefault(f"{why} {' or '.join(map(_value, s.ckast))}", []).append(f'`"{ck}"`')
    parts += [f"{', '.join(cks)} → {_value(v)}" for v, cks in accepted.items()]
    parts += [f"{', '.join(cks)} refused ({why})" for why, cks in refused.items()]
    if knob.name in ("layout", "d_layout"):
        ck, (layout, d_layout) = next(iter(ck_spellings.MULTI_D_LAYOUTS.items()))
        parts.append(f"CK's 4-letter multi-D GEMM layout {_values(ck_spellings.MULTI_D_LAYOUTS)} → layout and "
                     f"d_layout (`{ck}`: `{layout}` and `{d_layout}`; refused on a kernel without D tensors)")
    if knob.name == "datatype":
        parts.append("a datatype object of per-tensor types (keys " + "; ".join(
            f"{kind}: {_values(roles)}" for kind, roles in ck_spellings.ROLES.items())
            + ") whose types are one ckast datatype's")
    if knob.name in ck_spellings.CONV_PADS:
        parts.append(f"on grouped_conv `true` is accepted and `false` refused ({ck_spellings.CONV_PADS_FIXED})")
    return "; ".join(parts) if parts else "the same"


@_marker("knobs")
def knob_reference() -> str:
    reading = {k.name: [r.id for r in RULES if k.name in r.reads] for k in knobs.KNOBS}
    out = ["| knob | type | applies to | default |", "|---|---|---|---|"]
    for k in knobs.KNOBS:
        default = "derived" if callable(k.default) else ("required" if k.name == "kind" else _value(k.default))
        out.append(f"| [`{k.name}`](#{k.name}) | {_TYPES[k.type]} | {_applies(k)} | {default} |")
    for k in knobs.KNOBS:
        out += [
            "", f"### `{k.name}` {{#{k.name}}}", "",
            f"- **Type**: {_TYPES[k.type]}",
            f"- **Applies to**: {_applies(k)}",
            f"- **Default**: {_default(k)}",
            f"- **Allowed**: {_allowed(k)}",
            f"- **CK's spelling**: {_spellings(k)}",
        ]
        if k.inert is not None:
            out.append(f"- **Inert** for {_inert(k)}: it changes nothing in the kernel there, so a value given is "
                       "checked, then replaced by the default (such configs are one kernel)")
        if reading[k.name]:
            out.append("- **Read by rules**: " + ", ".join(f"[`{r}`](#rule-{r.replace('.', '-')})"
                                                           for r in reading[k.name]))
    unused = [f"`{ck}` ({s.source}: {s.lossy})" for ck, s in ck_spellings.KEYS.items() if not s.ckast]
    if unused:
        out += ["", "### CK's keys that ckast does not use", "",
                "ckast reads them and warns that it does not use them: " + "; ".join(unused) + "."]
    return "\n".join(out)


@_marker("rules")
def rule_reference() -> str:
    out = ["| rule | what it requires | applies to | reads |", "|---|---|---|---|"]
    for r in RULES:
        scope = ", ".join(r.variants) if r.variants else ", ".join(r.kinds)
        anchor = f'<a id="rule-{r.id.replace(".", "-")}"></a>'
        out.append(f"| {anchor}`{r.id}` | {r.reason.replace('|', '/')} | {scope} | {', '.join(r.reads)} |")
    return "\n".join(out)
