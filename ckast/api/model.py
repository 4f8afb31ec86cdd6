"""What `ckast api` compares: template signatures, enums and plain names, from a catalog or from CK headers.

Both sides are reduced to the same plain records, so one comparison serves catalog-vs-headers (`check`)
and catalog-vs-catalog (`diff`). Names are fully qualified (`ck_tile::element_wise::PassThrough`) and
defaults are normalized text (see `normalize`).
"""

from __future__ import annotations

import re

import attrs

_SPACE = re.compile(r"\s+")
_LOOSE = re.compile(r" (?!\w)|(?<!\w) ")


def normalize(text: str) -> str:
    """C++ text with whitespace removed, except one space between two word characters (`unsigned int`)."""
    return _LOOSE.sub("", _SPACE.sub(" ", text.strip()))


@attrs.frozen
class ParamInfo:
    """One template parameter.

    `kind` is a catalog kind (type, int, bool, enum, type_pack, int_pack) or, from headers only,
    `template` (a template template parameter) or `value` (a non-type parameter of another type).
    `ctype` is the value type as spelled and qualified (int kinds: `ck_tile::index_t`; enum: the enum's
    qualname; value: its spelling); `canonical` is the integral type it stands for (`int`), where known.
    """

    name: str
    kind: str
    ctype: str = ""
    canonical: str = ""
    default: str | None = None

    def describe(self) -> str:
        """The kind as a reader knows it: `typename`, `bool`, `ck_tile::index_t (int)`, `enum X`, ..."""
        pack = "..." if self.kind.endswith("_pack") else ""
        if self.kind in ("type", "type_pack"):
            return f"typename{pack}"
        if self.kind == "template":
            return "template template parameter"
        if self.kind == "enum":
            return f"enum {self.ctype}"
        if self.kind in ("int", "int_pack"):
            shown = self.ctype if not self.canonical or self.canonical == self.ctype else f"{self.ctype} ({self.canonical})"
            return f"{shown}{pack}"
        return self.kind if self.kind == "bool" else f"{self.ctype} (not integral)"


@attrs.frozen
class Where:
    """Where a declaration is: a path relative to the include root (or a catalog `source`) and a line."""

    file: str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@attrs.frozen
class TemplateInfo:
    """A class template (`struct`), alias template (`alias`) or function template (`function`)."""

    qualname: str
    kind: str
    params: tuple[ParamInfo, ...]
    where: Where


@attrs.frozen
class EnumInfo:
    qualname: str
    scoped: bool
    values: tuple[str, ...]
    where: Where


@attrs.frozen
class NameInfo:
    """A plain type (class, typedef, alias, using-declaration) or function; `canonical` for typedefs."""

    qualname: str
    kind: str
    where: Where
    canonical: str = ""


Info = TemplateInfo | EnumInfo | NameInfo


@attrs.frozen
class Declarations:
    """What one parse of a CK include tree found in the files under its root, by qualified name.

    Class templates declared more than once are merged into one record; function templates keep every
    overload. `includes` maps each file to the files its `#include` directives name (paths relative to
    the root), `missing` lists the umbrella headers the tree lacks, `errors` the parse errors.
    """

    templates: dict[str, tuple[TemplateInfo, ...]]
    enums: dict[str, EnumInfo]
    names: dict[str, tuple[NameInfo, ...]]
    includes: dict[str, tuple[str, ...]]
    missing: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()

    def reaches(self, header: str, file: str) -> bool:
        """Whether `header` includes `file`, directly or not (or is it)."""
        seen, todo = {header}, [header]
        while todo:
            current = todo.pop()
            if current == file:
                return True
            for nxt in self.includes.get(current, ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    def declared(self, qualname: str) -> list[Info]:
        """Every declaration of `qualname`, of any sort."""
        enum = self.enums.get(qualname)
        return [*self.templates.get(qualname, ()), *([enum] if enum else []), *self.names.get(qualname, ())]

    def to_json(self) -> dict:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Declarations:
        def template(t: dict) -> TemplateInfo:
            return TemplateInfo(t["qualname"], t["kind"], tuple(ParamInfo(**p) for p in t["params"]), Where(**t["where"]))

        return cls(
            templates={q: tuple(map(template, ts)) for q, ts in data["templates"].items()},
            enums={q: EnumInfo(e["qualname"], e["scoped"], tuple(e["values"]), Where(**e["where"]))
                   for q, e in data["enums"].items()},
            names={q: tuple(NameInfo(v["qualname"], v["kind"], Where(**v["where"]), v["canonical"]) for v in vs)
                   for q, vs in data["names"].items()},
            includes={f: tuple(fs) for f, fs in data["includes"].items()},
            missing=tuple(data["missing"]),
            errors=tuple(data["errors"]),
        )
