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
    Kind `typed` is a function parameter, data member or member type alias: `ctype` is its type as
    written with every name qualified, `canonical` clang's canonical type (headers only).
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
        if self.kind == "typed":
            return self.ctype
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
class CallInfo:
    """A function's, method's or constructor's signature: the result type (empty for a constructor) and
    its canonical form, the parameters (kind `typed`), whether it is static; `owner` is the class that
    declares an inherited method (catalog side only)."""

    result: str
    args: tuple[ParamInfo, ...]
    static: bool = False
    result_canonical: str = ""
    owner: str = ""


@attrs.frozen
class RecordInfo:
    """A class's members: data fields (a nested struct's as dotted paths after the struct member),
    constructors, methods by name, member type aliases (kind `typed`) and base classes."""

    qualname: str
    fields: tuple[ParamInfo, ...] = ()
    constructors: tuple[CallInfo, ...] = ()
    methods: tuple[tuple[str, CallInfo], ...] = ()
    aliases: tuple[ParamInfo, ...] = ()
    bases: tuple[str, ...] = ()
    where: Where = Where("")


@attrs.frozen
class TemplateInfo:
    """A class template (`struct`), alias template (`alias`) or function template (`function`, with its
    `call` signature where known)."""

    qualname: str
    kind: str
    params: tuple[ParamInfo, ...]
    where: Where
    call: CallInfo | None = None


@attrs.frozen
class EnumInfo:
    qualname: str
    scoped: bool
    values: tuple[str, ...]
    where: Where


@attrs.frozen
class NameInfo:
    """A plain type (class, typedef, alias, using-declaration) or function; `canonical` for typedefs,
    `spelled` the type an alias names (as written, qualified) and `call` a function's signature, where
    known."""

    qualname: str
    kind: str
    where: Where
    canonical: str = ""
    spelled: str = ""
    call: CallInfo | None = None


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
    records: dict[str, RecordInfo] = attrs.field(factory=dict)
    dispatcher: bool = False
    """Whether the tree has CK's dispatcher headers (its entries are then checked)."""

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
            return TemplateInfo(t["qualname"], t["kind"], _params(t["params"]), Where(**t["where"]), _call(t["call"]))

        def name(v: dict) -> NameInfo:
            return NameInfo(v["qualname"], v["kind"], Where(**v["where"]), v["canonical"], v["spelled"], _call(v["call"]))

        def record(r: dict) -> RecordInfo:
            return RecordInfo(r["qualname"], _params(r["fields"]), tuple(map(_call, r["constructors"])),
                              tuple((m, _call(c)) for m, c in r["methods"]), _params(r["aliases"]),
                              tuple(r["bases"]), Where(**r["where"]))

        return cls(
            templates={q: tuple(map(template, ts)) for q, ts in data["templates"].items()},
            enums={q: EnumInfo(e["qualname"], e["scoped"], tuple(e["values"]), Where(**e["where"]))
                   for q, e in data["enums"].items()},
            names={q: tuple(map(name, vs)) for q, vs in data["names"].items()},
            includes={f: tuple(fs) for f, fs in data["includes"].items()},
            missing=tuple(data["missing"]),
            errors=tuple(data["errors"]),
            records={q: record(r) for q, r in data["records"].items()},
            dispatcher=data["dispatcher"],
        )


def _params(raw: list) -> tuple[ParamInfo, ...]:
    return tuple(ParamInfo(**p) for p in raw)


def _call(raw: dict | None) -> CallInfo | None:
    if raw is None:
        return None
    return CallInfo(raw["result"], _params(raw["args"]), raw["static"], raw["result_canonical"], raw["owner"])
