"""The drift between two profiles, entry by entry (by catalog key), as `compare` rows."""

from __future__ import annotations

from .compare import NONE, Row, compare_enums, compare_overloads, compare_params, compare_records
from .entries import Catalog, Entry
from .model import EnumInfo, NameInfo, RecordInfo, TemplateInfo
from .table import table



def diff(a: Catalog, b: Catalog) -> list[Row]:
    """Entries added or removed (with the reason a profile gives for lacking one), qualified names,
    includes and sources that changed, template and enum differences, and feature flags that differ."""
    rows: list[Row] = []
    for key in sorted(a.entries.keys() | b.entries.keys()):
        ea, eb = a.entries.get(key), b.entries.get(key)
        if ea is None or eb is None:
            present = ea or eb
            assert present is not None
            lacking = a if ea is None else b
            shown = f"{present.table[:-1]} {present.info.qualname}"
            absent = "absent" if key in lacking.absent else NONE
            rows.append(Row(key, "", "added" if ea is None else "removed", absent if ea is None else shown,
                            shown if ea is None else absent, lacking.absent.get(key, "")))
        else:
            rows += _entry_rows(key, ea, eb)
    for name in sorted(a.features.keys() | b.features.keys()):
        fa, fb = a.features.get(name), b.features.get(name)
        if fa != fb:
            rows.append(Row("features", name, "feature", _flag(fa), _flag(fb)))
    return rows


def _entry_rows(key: str, ea: Entry, eb: Entry) -> list[Row]:
    rows = [Row(key, "", what, x, y) for what, x, y in (
        ("table", ea.table, eb.table), ("qualname", ea.info.qualname, eb.info.qualname),
        ("include", ea.include, eb.include), ("source", ea.source, eb.source)) if x != y]
    ia, ib = ea.info, eb.info
    if isinstance(ia, TemplateInfo) and isinstance(ib, TemplateInfo):
        if ia.kind != ib.kind:
            rows.append(Row(key, "", "template kind", ia.kind, ib.kind))
        rows += [Row(key, *r) for r in compare_params(ia.params, ib.params)]
        rows += [Row(key, *r) for r in compare_overloads(_calls(ia), _calls(ib))]
    elif isinstance(ia, EnumInfo) and isinstance(ib, EnumInfo):
        rows += [Row(key, *r) for r in compare_enums(ia, ib)]
    elif isinstance(ia, NameInfo) and isinstance(ib, NameInfo) and ia.spelled != ib.spelled:
        rows.append(Row(key, "", "aliased type", ia.spelled or NONE, ib.spelled or NONE))
    rows += [Row(key, *r) for r in compare_overloads(ea.calls, eb.calls)]
    if ea.record is not None or eb.record is not None:
        empty = RecordInfo(ia.qualname)
        rows += [Row(key, *r) for r in compare_records(ea.record or empty, eb.record or empty, {})]
    return rows


def _calls(info: TemplateInfo) -> tuple:
    return (info.call,) if info.call is not None else ()


def _flag(value: bool | None) -> str:
    return NONE if value is None else str(value).lower()


def diff_lines(a: Catalog, b: Catalog) -> list[str]:
    """`diff` as a table, under a line counting the differences."""
    rows = diff(a, b)
    summary = f"{a.name} -> {b.name}: {len(rows)} differences"
    header = ("entry", "parameter", "what", a.name, b.name, "note")
    return [summary, *(table(header, [(r.entity, r.item, r.what, r.a, r.b, r.note) for r in rows]) if rows else [])]
