"""A library diff as text (full or `--stat`) and as JSON."""

from __future__ import annotations

import json
from typing import Any

from ckast.json_out import dumps
from ckast.wording import quantity

from .compare import Group, LibraryDiff, unified_diff
from .sides import Side

SHOWN_NAMES = 5
"""Kernels named besides a way's representative."""


def summary(diff: LibraryDiff) -> list[str]:
    c = diff.counts()
    run = diff.run_files
    return [
        f"old: {diff.old.label} ({quantity(c['old'], 'kernel')}{_notes(diff.old)})",
        f"new: {diff.new.label} ({quantity(c['new'], 'kernel')}{_notes(diff.new)})",
        f"{c['unchanged']} unchanged, {c['changed']} changed, {c['renamed']} renamed (identical code), "
        f"{c['added']} added, {c['removed']} removed; run files: {len(run.changed)} changed, {len(run.added)} added, "
        f"{len(run.removed)} removed",
    ]


def stat_lines(diff: LibraryDiff) -> list[str]:
    lines = summary(diff)
    for title, groups in (("changed", diff.changed), ("renamed", diff.renamed)):
        for group in groups:
            lines.append(f"{title} {group.count:>6}  {_knobs(group)}  ({quantity(len(group.ways), 'way')})")
    return lines


def text_lines(diff: LibraryDiff) -> list[str]:
    lines = summary(diff)
    for group in diff.changed:
        lines += ["", f"== changed: {_knobs(group)}: {quantity(group.count, 'kernel')}, "
                      f"{quantity(len(group.ways), 'way')}"]
        for i, way in enumerate(group.ways, 1):
            old, new = way.pairs[0]
            lines.append(f"-- way {i} of {len(group.ways)}: {quantity(len(way.pairs), 'kernel')} changed as "
                         f"{old}{'' if old == new else ' -> ' + new} did")
            lines += _others(way.pairs)
            lines += unified_diff(diff.old.kernels[old], diff.new.kernels[new])
    for group in diff.renamed:
        lines += ["", f"== renamed, identical code: {_knobs(group)}: {quantity(group.count, 'kernel')}"]
        lines += [f"   {old} -> {new}" for way in group.ways for old, new in way.pairs]
    for title, names in (("added", diff.added), ("removed", diff.removed)):
        if names:
            lines += ["", f"== {title}: {quantity(len(names), 'kernel')}"] + [f"   {name}" for name in names]
    run = diff.run_files
    if run:
        lines += ["", "== run files"] + [f"   {mark} {p}" for mark, paths in (("M", run.changed), ("A", run.added),
                                                                              ("D", run.removed)) for p in paths]
    return lines


def as_json(diff: LibraryDiff) -> str:
    def group(g: Group, with_diff: bool) -> dict[str, Any]:
        return {"knobs": [{"knob": k, "old": a, "new": b} for k, a, b in g.knobs], "kernels": g.count,
                "ways": [{"kernels": [list(p) for p in way.pairs],
                          **({"diff": "\n".join(unified_diff(diff.old.kernels[way.pairs[0][0]],
                                                             diff.new.kernels[way.pairs[0][1]]))} if with_diff else {})}
                         for way in g.ways]}

    run = diff.run_files
    data = {"old": diff.old.label, "new": diff.new.label, "refused": {"old": diff.old.refused, "new": diff.new.refused}, "same": diff.same, "counts": diff.counts(),
            "changed": [group(g, True) for g in diff.changed], "renamed": [group(g, False) for g in diff.renamed],
            "added": list(diff.added), "removed": list(diff.removed),
            "run_files": {"changed": list(run.changed), "added": list(run.added), "removed": list(run.removed)}}
    return dumps(data, indent=2, default=str)


def _notes(side: Side) -> str:
    """The configs a selection side refused, and the workload a tree was generated for."""
    refused = f", {quantity(side.refused, 'config')} refused" if side.refused else ""
    return refused + (f"; {side.workload}" if side.workload else "")


def _knobs(group: Group) -> str:
    if not group.knobs:
        return "same config"
    return ", ".join(f"{k}: {_value(a)} -> {_value(b)}" for k, a, b in group.knobs)


def _value(value: Any) -> str:
    return value if isinstance(value, str) and value == "(absent)" else json.dumps(value)


def _others(pairs: tuple[tuple[str, str], ...]) -> list[str]:
    rest = [old if old == new else f"{old} -> {new}" for old, new in pairs[1:]]
    if not rest:
        return []
    more = f" and {len(rest) - SHOWN_NAMES} more" if len(rest) > SHOWN_NAMES else ""
    return [f"   also: {', '.join(rest[:SHOWN_NAMES])}{more}"]
