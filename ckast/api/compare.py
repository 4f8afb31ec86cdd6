"""Mismatches between a catalog and the declarations of a CK tree, one `Row` each.

The parameter and enumerator comparisons are shared with `diff` (catalog against catalog): lists are
aligned by name (difflib), so a parameter that moved is one `order` row, one renamed in place is one
`name` row, and the kind and default of every aligned pair are compared.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

import attrs

from .entries import Catalog, Entry, absent_qualname
from .model import CallInfo, Declarations, EnumInfo, Info, NameInfo, ParamInfo, RecordInfo, TemplateInfo
from .parts import DISPATCHER

NONE = "-"


@attrs.frozen
class Row:
    """One difference: the entity, the parameter or enumerator (with its 1-based position), what differs,
    the value on each side (catalog, then header or second profile) and a note: where the header declares
    it (`check`) or why a profile lacks it (`diff`)."""

    entity: str
    item: str
    what: str
    a: str
    b: str
    note: str = ""


Canon = Callable[[str], str]


def compare_params(a: Sequence[ParamInfo], b: Sequence[ParamInfo], canon: Canon = str,
                   absent: frozenset[str] = frozenset()) -> list[tuple[str, str, str, str]]:
    """(parameter, what, a's value, b's value) for every difference between two parameter lists.

    `canon` maps the name of a type alias to the type it stands for (clang's canonical spelling): integral
    value types and type defaults that are one name compare by it (`index_t` is `int`, a default
    `PassThrough` aliasing `element_wise::PassThrough` is that). `absent` are the names a's profile marks
    absent (one in b is reported as such)."""
    out: list[tuple[str, str, str, str]] = []
    if len(a) != len(b):
        out.append(("", "count", str(len(a)), str(len(b))))
    names_a, names_b = [p.name for p in a], [p.name for p in b]
    pairs: list[tuple[int, int]] = []
    removed: dict[str, int] = {}
    added: dict[str, int] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, names_a, names_b, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1 and not set(names_a[i1:i2]) & set(names_b)
                              and not set(names_b[j1:j2]) & set(names_a)):
            pairs += zip(range(i1, i2), range(j1, j2))
        else:
            removed.update((names_a[i], i) for i in range(i1, i2))
            added.update((names_b[j], j) for j in range(j1, j2))
    for name in [n for n in removed if n in added]:
        i, j = removed.pop(name), added.pop(name)
        out.append((_at(name, j), "order", f"#{i + 1}", f"#{j + 1}"))
        pairs.append((i, j))
    out += [(_at(name, i), "parameter", _shown(a[i]), NONE) for name, i in removed.items()]
    out += [(_at(name, j), "absent" if name in absent else "parameter", "marked absent" if name in absent else NONE,
             _shown(b[j])) for name, j in added.items()]
    for i, j in sorted(pairs, key=lambda p: p[1]):
        pa, pb = a[i], b[j]
        if pa.name != pb.name:
            out.append((_at(pa.name, j), "name", pa.name, pb.name))
        if not _same_kind(pa, pb, canon):
            out.append((_at(pb.name, j), "type" if pa.kind == "typed" else "kind", pa.describe(), pb.describe()))
        if pa.default != pb.default and not (pa.kind == "type" and canon(pa.default or "") == canon(pb.default or "")):
            out.append((_at(pb.name, j), "default", pa.default or NONE, pb.default or NONE))
    return out


def compare_enums(a: EnumInfo, b: EnumInfo) -> list[tuple[str, str, str, str]]:
    """(enumerator, what, a's, b's) for every difference in scoping and enumerators."""
    out: list[tuple[str, str, str, str]] = []
    if a.scoped != b.scoped:
        out.append(("", "scoped", _scoped(a), _scoped(b)))
    matcher = difflib.SequenceMatcher(None, a.values, b.values, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            out += [(_at(a.values[i], j), "enumerator", a.values[i], b.values[j]) for i, j in zip(range(i1, i2), range(j1, j2))]
        elif tag != "equal":
            out += [(_at(a.values[i], i), "enumerator", a.values[i], NONE) for i in range(i1, i2)]
            out += [(_at(b.values[j], j), "enumerator", NONE, b.values[j]) for j in range(j1, j2)]
    return out


def compare_calls(a: CallInfo, b: CallInfo) -> list[tuple[str, str, str, str]]:
    """(parameter, what, a's, b's) for every difference between two signatures: result type, static,
    and the parameters (names, order, types, defaults)."""
    out: list[tuple[str, str, str, str]] = []
    if not same_type(a.result, b.result, b.result_canonical):
        out.append(("", "result", a.result or NONE, b.result or NONE))
    if a.static != b.static:
        out.append(("", "static", str(a.static).lower(), str(b.static).lower()))
    return out + [(item, "argument" if what == "parameter" else f"argument {what}", x, y)
                  for item, what, x, y in compare_params(a.args, b.args)]


def compare_records(a: RecordInfo, b: RecordInfo, records: dict[str, RecordInfo]) -> list[tuple[str, str, str, str]]:
    """(member, what, a's, b's) for every difference in the members `a` lists: the whole field list, and
    each constructor, method (found in `b` or, through `records`, its bases), member alias and the bases."""
    out = [(item, "field" if what == "parameter" else f"field {what}", x, y)
           for item, what, x, y in (compare_params(a.fields, b.fields) if a.fields else [])]
    for ctor in a.constructors:
        label = f"constructor({', '.join(p.name for p in ctor.args)})"
        out += _closest_call(label, ctor, b.constructors, "no constructor declared")
    for name, method in a.methods:
        owner = records.get(method.owner, b) if method.owner else b
        found = [c for m, c in _methods(owner, records) if m == name]
        missing = f"not declared in {method.owner or b.qualname}" + ("" if method.owner else " or its bases")
        out += _closest_call(f"{name}()", method, found, missing)
    aliases = {p.name: p for p in b.aliases}
    for alias in a.aliases:
        other = aliases.get(alias.name)
        if other is None:
            out.append((alias.name, "alias", alias.ctype, NONE))
        elif not same_type(alias.ctype, other.ctype, other.canonical):
            out.append((alias.name, "alias type", alias.ctype, other.ctype))
    if a.bases and a.bases != b.bases:
        out.append(("", "bases", ", ".join(a.bases), ", ".join(b.bases) or NONE))
    return out


def same_type(a: str, b: str, b_canonical: str = "") -> bool:
    """Whether type `a` (catalog text) is `b` (as written) or what `b` stands for."""
    return a == b or bool(b_canonical) and a == b_canonical


def compare_overloads(a: Sequence[CallInfo], b: Sequence[CallInfo]) -> list[tuple[str, str, str, str]]:
    """Each signature of `a` against the closest of `b` (labelled by its parameters when there are several)."""
    out = []
    for call in a:
        label = f"({', '.join(p.name for p in call.args)})" if len(a) > 1 else ""
        out += _closest_call(label, call, b, "no such overload")
    return out


def _closest_call(label: str, call: CallInfo, found: Sequence[CallInfo], missing: str) -> list[tuple[str, str, str, str]]:
    if not found:
        return [(label, "missing", label, missing)]
    rows = min((compare_calls(call, other) for other in found), key=len)
    return [(f"{label} {item}".strip(), what, x, y) for item, what, x, y in rows]


def _methods(record: RecordInfo, records: dict[str, RecordInfo], seen: frozenset[str] = frozenset()):
    """(name, signature) of the record's methods, then of its bases' (those the tree defines)."""
    yield from record.methods
    for base in record.bases:
        target = records.get(base.split("<")[0])
        if target is not None and target.qualname not in seen:
            yield from _methods(target, records, seen | {record.qualname})


def check(catalog: Catalog, decls: Declarations) -> tuple[list[Row], list[Entry]]:
    """Every mismatch between the catalog's entries and the tree, and the entries checked: CK Tile's,
    and the dispatcher's when the tree has it."""
    rows = [Row("", "", "parse", NONE, message, where) for where, _, message in
            (error.partition(": ") for error in decls.errors)]
    checked = [e for e in catalog.entries.values() if e.part == "tile" or e.part == "dispatcher" and decls.dispatcher]
    for entry in checked:
        rows += entry_rows(entry, catalog, decls)
    for key, found in present_absent(catalog, decls).items():
        rows.append(Row(found.qualname, "", "absent", f"marked absent: {catalog.absent[key]}", f"declared ({_sort(found)})",
                        str(found.where)))
    return rows, checked


def present_absent(catalog: Catalog, decls: Declarations) -> dict[str, Info]:
    """The entities the catalog marks absent that the tree declares, by key."""
    found = {key: decls.declared(absent_qualname(key)) for key in catalog.absent if "." not in key}
    return {key: infos[0] for key, infos in found.items() if infos}


def entry_rows(entry: Entry, catalog: Catalog, decls: Declarations) -> list[Row]:
    """The mismatches of one catalog entry against the tree."""
    info = entry.info
    if entry.include in decls.missing:
        return [Row(info.qualname, "", "include", entry.include, "no such header in the tree")]
    found = declarations_of(entry, decls)
    if not found:
        other = decls.declared(info.qualname)
        return [Row(info.qualname, "", "missing", f"{_sort(info)} in {entry.include}",
                    f"declared as a {_sort(other[0])}" if other else "not declared", str(other[0].where) if other else "")]
    rows = []
    if not any(decls.reaches(entry.include, f.where.file) for f in found):
        rows.append(Row(info.qualname, "", "include", entry.include, f"declared in {found[0].where.file}, which it does "
                        "not include", str(found[0].where)))
    if all(f.where.file != entry.source for f in found):
        rows.append(Row(info.qualname, "", "source", entry.source, found[0].where.file, str(found[0].where)))
    if isinstance(info, TemplateInfo):
        rows += closest(entry, catalog, found, decls)[1]  # type: ignore[arg-type]
    elif isinstance(info, EnumInfo):
        enum = found[0]
        rows += [Row(info.qualname, item, what, a, b, str(enum.where)) for item, what, a, b in compare_enums(info, enum)]
    else:
        rows += _name_rows(entry, found)  # type: ignore[arg-type]
    if entry.record is not None and entry.source.startswith(DISPATCHER):  # members are read in dispatcher files only
        record = decls.records.get(info.qualname)
        if record is None:
            rows.append(Row(info.qualname, "", "definition", "members listed", "no definition in the tree"))
        else:
            rows += [Row(info.qualname, item, what, a, b, str(record.where))
                     for item, what, a, b in compare_records(entry.record, record, decls.records)]
    return rows


def _name_rows(entry: Entry, found: Sequence[NameInfo]) -> list[Row]:
    """An alias's type and a function's signatures (each overload against the closest declaration)."""
    info = entry.info
    assert isinstance(info, NameInfo)
    rows = []
    if info.spelled and not same_type(info.spelled, found[0].spelled, found[0].canonical):
        rows.append(Row(info.qualname, "", "aliased type", info.spelled, found[0].spelled or found[0].canonical or NONE,
                        str(found[0].where)))
    signatures = [f.call for f in found if f.call is not None]
    return rows + [Row(info.qualname, item, what, a, b, str(found[0].where))
                   for item, what, a, b in compare_overloads(entry.calls, signatures)]


def closest(entry: Entry, catalog: Catalog, found: Sequence[TemplateInfo],
            decls: Declarations) -> tuple[TemplateInfo, list[Row]]:
    """The declaration (of overloaded function templates) closest to the catalog's, with its mismatches."""
    info = entry.info
    assert isinstance(info, TemplateInfo)
    absent = frozenset(k.split(".", 1)[1] for k in catalog.absent if k.startswith(f"{entry.key}."))
    return min(((f, _template_rows(info, f, decls, absent)) for f in found), key=lambda pair: len(pair[1]))


def _template_rows(info: TemplateInfo, decl: TemplateInfo, decls: Declarations, absent: frozenset[str]) -> list[Row]:
    """Function templates: the catalog lists only the parameters callers give (a leading part), and the
    signature where it records one."""
    params = decl.params[:len(info.params)] if info.kind == "function" else decl.params
    rows = [Row(info.qualname, "", "template kind", info.kind, decl.kind, str(decl.where))] if info.kind != decl.kind else []
    canon = _canonical(decls)
    found = compare_params(info.params, params, canon, absent)
    if info.call is not None and decl.call is not None:
        found += compare_calls(info.call, decl.call)
    return rows + [Row(info.qualname, item, what, a, b, str(decl.where)) for item, what, a, b in found]


def declarations_of(entry: Entry, decls: Declarations) -> list[Info]:
    """The tree's declarations of the entry's qualified name, of the entry's sort."""
    q = entry.info.qualname
    if entry.table == "templates":
        return list(decls.templates.get(q, ()))
    if entry.table == "enums":
        return [decls.enums[q]] if q in decls.enums else []
    kind = "type" if entry.table == "types" else "function"
    return [d for d in decls.names.get(q, ()) if d.kind == kind]


def _canonical(decls: Declarations) -> Canon:
    def canon(ctype: str) -> str:
        types = [d for d in decls.names.get(ctype, ()) if d.canonical]
        return types[0].canonical if types else ctype

    return canon


def _same_kind(a: ParamInfo, b: ParamInfo, canon: Canon) -> bool:
    """Same kind and value type: integral types compare by spelling or, failing that, by what they stand for."""
    if a.kind != b.kind:
        return False
    if a.ctype == b.ctype:
        return True
    if a.kind == "typed":
        return same_type(a.ctype, b.ctype, b.canonical)
    return a.kind in ("int", "int_pack") and (a.canonical or canon(a.ctype)) == (b.canonical or canon(b.ctype))


def _at(name: str, index: int) -> str:
    return f"{name} #{index + 1}"


def _shown(p: ParamInfo) -> str:
    return p.describe() + (f" = {p.default}" if p.default else "")


def _scoped(e: EnumInfo) -> str:
    return "enum class" if e.scoped else "enum"


def _sort(info: Info) -> str:
    if isinstance(info, TemplateInfo):
        return {"struct": "class template", "alias": "alias template", "function": "function template"}[info.kind]
    return "enum" if isinstance(info, EnumInfo) else info.kind
