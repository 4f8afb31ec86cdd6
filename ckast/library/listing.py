"""What `ckast list` prints about a library: counts, names, refusals by rule."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ckast.arguments import argument, in_command
from ckast.variants import KEY_RULE, KEY_RULE_REASON

from .build import ACCEPTED, MERGED, REFUSED, Library, group_of
from .selection import RULE_SET_REFUSALS

STATUSES = (ACCEPTED, MERGED, REFUSED)


def _groups(library: Library) -> dict[tuple, Counter]:
    out: dict[tuple, Counter] = {}
    for e in library.entries:
        out.setdefault(group_of(e), Counter())[e.status] += 1
    return out


def table(library: Library) -> list[str]:
    """One row per (variant, datatype, rank): proposed, accepted, merged, refused; then totals."""
    rows = [("variant", "datatype", "ndim", "proposed", *STATUSES)]
    totals: Counter = Counter()
    for (variant, dtype, ndim), c in sorted(_groups(library).items(), key=lambda kv: tuple(map(str, kv[0]))):
        totals.update(c)
        rows.append((variant, dtype, "-" if ndim is None else str(ndim), str(sum(c.values())), *(str(c[x]) for x in STATUSES)))
    rows.append(("total", "", "", str(sum(totals.values())), *(str(totals[x]) for x in STATUSES)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    head = f"{source(library)}, CK API {library.selection.ck_api}"
    return [head, *("  ".join(cell.rjust(w) if i > 2 else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths))).rstrip()
                    for r in rows)]


def source(library: Library) -> str:
    """What the library was made from: `rule set full on gfx942`, or `2 config file(s)`."""
    s = library.selection
    return f"rule set {s.rule_set} on {s.arch}" if not s.configs else f"{len(s.configs)} config file(s)"


def empty_reason(library: Library) -> str | None:
    """Why the library has no kernel, in one line (None when it has one): the selection matched no config
    of the rule set, or every config was refused (with the rule that refused most)."""
    if library.accepted:
        return None
    s = library.selection
    where = f"{source(library)}, CK API {s.ck_api}"
    if not library.entries:
        asked = [f"{argument(option + 's')} {' '.join(map(str, values))}" for option, values in
                 (("datatype", s.datatypes), ("ndim", s.ndims), ("variant", s.variants)) if values]
        return f"no kernel of {where}: no config matches {' '.join(asked) or 'the selection'}"
    refused = library.refused
    rule, entries = max(library.by_rule().items(), key=lambda item: len(item[1]))
    return (f"no kernel of {where}: 0 of {len(library.entries):,} configs accepted, {len(refused):,} refused "
            f"({'all' if len(entries) == len(refused) else f'{len(entries):,}'} by rule {rule}: {_reason(rule)}); "
            + ("see `ckast list --rejected` with the same options" if in_command() else
               "see the `refused` of `ckast.build_library` with the same arguments"))


def _reason(rule: str) -> str:
    from ckast.arch.rules import RULES

    return {KEY_RULE: KEY_RULE_REASON, **RULE_SET_REFUSALS, **{r.id: r.reason for r in RULES}}.get(
        rule, "values the knob table refuses")


def names(library: Library) -> list[str]:
    return library.names


def rejected(library: Library) -> list[str]:
    """Per rule (id, count, reason), each refused config: its origin, kernel name and what failed."""
    lines = []
    for rule, entries in library.by_rule().items():
        lines.append(f"{rule} ({len(entries)}): {_reason(rule)}")
        for e in entries:
            details = "; ".join(_problem(i.path.removeprefix(e.candidate.origin).lstrip("."), i.message)
                                for i in e.issues if (i.rule or "knob") == rule)
            lines.append(f"  {e.candidate.origin}{' ' + e.name if e.name else ''}: {details}")
    return lines or ["no config refused"]


def _problem(field: str, message: str) -> str:
    return f"{field}: {message}" if field else message


def as_json(library: Library, *, names: bool, rejected: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "selection": library.selection.as_dict(),
        "counts": [{"variant": v, "datatype": d, "ndim": n, **{x: c[x] for x in STATUSES}}
                   for (v, d, n), c in sorted(_groups(library).items(), key=lambda kv: tuple(map(str, kv[0])))],
    }
    if names:
        out["kernels"] = globals()["names"](library)
    if rejected:
        out["rejected"] = {rule: [{"origin": e.candidate.origin, "name": e.name,
                                   "problems": [i.message for i in e.issues if (i.rule or "knob") == rule]}
                                  for e in entries]
                           for rule, entries in library.by_rule().items()}
    return out
