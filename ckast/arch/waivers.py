"""Waived rules: a kernel a waivable rule refuses, emitted anyway on request, as CK's generators emit it.

CK's generators emit some kernels CK Tile cannot run as configured (an arch-invariant generator's gfx950 warp tile
on gfx942, MX types on gfx942, ...). ckast refuses them by rule; a user may still ask for one by waiving the rule
(`ckast emit --waive RULE`, `ckast.load_configs(..., waive=...)`). Only rules declared `waivable` can be waived.
A waived kernel keeps its name and paths; its header opens with `banner`, naming each rule it breaks, so a
reviewer sees them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ckast.arguments import ArgumentError

from .rules import RULES, Violation


def waivable_rules() -> tuple[str, ...]:
    """The ids of the rules that can be waived, sorted."""
    return tuple(sorted(r.id for r in RULES if r.waivable))


def checked_waivers(names: str | Iterable[str]) -> frozenset[str]:
    """The rule ids `names` (one or several) as a set; an id that names no rule, or a rule that cannot be waived,
    raises ArgumentError naming it (argument `waive`)."""
    names = (names,) if isinstance(names, str) else tuple(names)
    known = {r.id: r for r in RULES}
    waivable = ", ".join(waivable_rules())
    for name in names:
        if not isinstance(name, str) or name not in known:
            raise ArgumentError("waive", f"{name!r} names no rule; rules that can be waived: {waivable}")
        if not known[name].waivable:
            raise ArgumentError("waive", f"rule {name} cannot be waived; rules that can be waived: {waivable}")
    return frozenset(names)


def banner(violations: Sequence[Violation]) -> str:
    """The comment text opening a kernel header that breaks `violations` (rules waived to emit it)."""
    lines = ["WAIVED RULES: ckast emitted this kernel although these rules refuse it (waived on request, as",
             "CK's generator emits it); CK Tile does not run it as configured:"]
    for v in violations:
        lines.append(f"- rule {v.rule.id}, {v.field}: {v.detail}")
        lines.append(f"  ({v.rule.reason})")
    return "\n".join(lines)
