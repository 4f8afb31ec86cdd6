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
from .model import Declarations, EnumInfo, Info, ParamInfo, TemplateInfo

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
            out.append((_at(pb.name, j), "kind", pa.describe(), pb.describe()))
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


def check(catalog: Catalog, decls: Declarations) -> tuple[list[Row], int]:
    """Every mismatch between the catalog's CK Tile entries and the tree, and how many entries were checked."""
    rows = [Row("", "", "parse", NONE, message, where) for where, _, message in
            (error.partition(": ") for error in decls.errors)]
    checked = [e for e in catalog.entries.values() if e.in_tree]
    for entry in checked:
        rows += entry_rows(entry, catalog, decls)
    for key, found in present_absent(catalog, decls).items():
        rows.append(Row(found.qualname, "", "absent", f"marked absent: {catalog.absent[key]}", f"declared ({_sort(found)})",
                        str(found.where)))
    return rows, len(checked)


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
    return rows


def closest(entry: Entry, catalog: Catalog, found: Sequence[TemplateInfo],
            decls: Declarations) -> tuple[TemplateInfo, list[Row]]:
    """The declaration (of overloaded function templates) closest to the catalog's, with its mismatches."""
    info = entry.info
    assert isinstance(info, TemplateInfo)
    absent = frozenset(k.split(".", 1)[1] for k in catalog.absent if k.startswith(f"{entry.key}."))
    return min(((f, _template_rows(info, f, decls, absent)) for f in found), key=lambda pair: len(pair[1]))


def _template_rows(info: TemplateInfo, decl: TemplateInfo, decls: Declarations, absent: frozenset[str]) -> list[Row]:
    """Function templates: the catalog lists only the parameters callers give (a leading part)."""
    params = decl.params[:len(info.params)] if info.kind == "function" else decl.params
    rows = [Row(info.qualname, "", "template kind", info.kind, decl.kind, str(decl.where))] if info.kind != decl.kind else []
    canon = _canonical(decls)
    return rows + [Row(info.qualname, item, what, a, b, str(decl.where))
                   for item, what, a, b in compare_params(info.params, params, canon, absent)]


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
