"""Parse a CK include tree once with libclang and reduce it to `Declarations`.

One translation unit includes every umbrella header asked for (built from `ckast.nodes`) and is parsed
in HIP device mode with the flags of the compile check (`Toolchain.command`). CK's dispatcher headers,
when the tree has them (their include root is also put on the include path), come after the CK Tile
ones and after `#define`s of the macros some dispatcher declarations are guarded by
(`CK_EXPERIMENTAL_BUILDER`): CK Tile is then parsed exactly as without them. In dispatcher files the
members of records and the signatures of functions are read too. The libclang used is the one
installed beside that clang (Debian: `/usr/lib/llvm-19/lib/libclang-19.so.1`, part of clang-19), else
the one bundled in the PyPI `libclang` wheel, which also provides the Python bindings; both are given
clang's resource directory. The result is cached per tree under `cache_root()/api`, valid while every
file the parse read keeps its size and modification time.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs

from ckast import nodes as n
from ckast.interrupt import interruptible
from ckast.check.toolchain import Toolchain
from ckast.data_files import cache_root, file_states, keep_json, unchanged
from ckast.errors import CkastError

from .model import (
    CallInfo,
    Declarations,
    EnumInfo,
    NameInfo,
    ParamInfo,
    RecordInfo,
    TemplateInfo,
    Where,
    normalize,
)
from .parts import DISPATCHER

TU_NAME = "ckast_api_check.hip"
CACHE_SCHEMA = 2
"""Bumped when `Declarations` changes shape: older cache files are then not read."""
INSTALL_HINT = "pip install libclang (or pip install 'ckast[api]')"
_INTEGRAL = {"CHAR_U", "UCHAR", "CHAR16", "CHAR32", "USHORT", "UINT", "ULONG", "ULONGLONG", "UINT128", "CHAR_S",
             "SCHAR", "WCHAR", "SHORT", "INT", "LONG", "LONGLONG", "INT128"}
_REFS = {"TYPE_REF", "TEMPLATE_REF", "NAMESPACE_REF", "DECL_REF_EXPR", "MEMBER_REF", "OVERLOADED_DECL_REF"}
_SCOPES = {"NAMESPACE", "LINKAGE_SPEC"}
_TYPES = {"STRUCT_DECL", "CLASS_DECL", "UNION_DECL", "TYPEDEF_DECL", "TYPE_ALIAS_DECL"}
_TEMPLATES = {"CLASS_TEMPLATE": "struct", "TYPE_ALIAS_TEMPLATE_DECL": "alias", "FUNCTION_TEMPLATE": "function"}
_PARAMS = {"TEMPLATE_TYPE_PARAMETER", "TEMPLATE_NON_TYPE_PARAMETER", "TEMPLATE_TEMPLATE_PARAMETER"}
_RECORDS = {"STRUCT_DECL", "CLASS_DECL", "CLASS_TEMPLATE"}
_SPECIFIERS = {"static", "inline", "virtual", "constexpr", "consteval", "explicit", "extern", "friend",
               "public", "protected", "private"}


class ApiUnavailable(CkastError):
    """libclang cannot be imported or loaded (an environment problem)."""


def cindex(toolchain: Toolchain) -> ModuleType:
    """`clang.cindex`, its library chosen once per process (see the module docstring)."""
    try:
        import clang.cindex as ci
    except ImportError as exc:
        raise ApiUnavailable(f"libclang's Python bindings are not installed ({exc}); {INSTALL_HINT}") from None
    if not ci.Config.loaded:
        beside = libclang_beside(toolchain.clang)
        if beside is not None:
            ci.Config.set_library_file(str(beside))
        try:
            ci.conf.lib
        except ci.LibclangError as exc:
            raise ApiUnavailable(f"cannot load libclang ({exc}); {INSTALL_HINT}") from None
    return ci


def libclang_beside(clang: Path) -> Path | None:
    """The libclang shared library of the LLVM install `clang` belongs to, if there is one."""
    lib = Path(os.path.realpath(clang)).parent.parent / "lib"
    found = sorted(lib.glob("libclang-*.so.*")) + sorted(lib.glob("libclang.so*"))
    return found[0] if found else None


def library_path(ci: ModuleType) -> str:
    """The file of the loaded libclang (for reports and cache keys)."""
    return ci.Config.library_file or str(Path(ci.__file__).parent / "native" / "libclang.so")


@attrs.frozen
class Dispatcher:
    """CK's dispatcher part of a parse: its include root, its umbrella headers and the macros to define."""

    root: Path
    umbrellas: tuple[str, ...]
    guards: tuple[str, ...] = ()


def parse_tree(toolchain: Toolchain, umbrellas: Iterable[str],
               dispatcher: Dispatcher | None = None) -> tuple[Declarations, bool]:
    """The declarations of the CK tree of `toolchain` reachable from `umbrellas` (and of its dispatcher,
    when given), and whether they came from the cache (see above)."""
    ci = cindex(toolchain)
    root = Path(toolchain.ck_include).resolve()
    toolchain = attrs.evolve(toolchain, ck_include=root)  # libclang then names every file under `root`
    umbrellas = sorted(set(umbrellas))
    if dispatcher is not None:
        dispatcher = Dispatcher(dispatcher.root.resolve(), tuple(sorted(set(dispatcher.umbrellas))),
                                tuple(sorted(set(dispatcher.guards))))
    extra = [dispatcher.root] if dispatcher is not None and dispatcher.root != root else []
    args = [*toolchain.command(Path(TU_NAME), "syntax", extra, None)[1:], f"-resource-dir={toolchain.resource_dir}"]
    lib = library_path(ci)
    shown = None if dispatcher is None else [str(dispatcher.root), dispatcher.umbrellas, dispatcher.guards]
    key = json.dumps([CACHE_SCHEMA, str(root), umbrellas, shown, args, lib,
                      file_states(Path(lib).parent, [Path(lib).name])])
    path = _cache_file(key)
    cached = _load(path) if path else None
    if cached is not None:
        return cached, True
    decls, files = _parse(ci, root, umbrellas, dispatcher, args)
    if path is not None:
        _store(path, files, decls)
    return decls, False


def _parse(ci: ModuleType, root: Path, umbrellas: Sequence[str], dispatcher: Dispatcher | None,
           args: list[str]) -> tuple[Declarations, set[str]]:
    wanted = [(root, u) for u in umbrellas]
    body: list[n.Decl] = []
    if dispatcher is not None:
        wanted += [(dispatcher.root, u) for u in dispatcher.umbrellas]
        body += [n.Define(g) for g in dispatcher.guards]
        body += [n.Include(n.Header(u)) for u in dispatcher.umbrellas if (dispatcher.root / u).is_file()]
    present = [u for u in umbrellas if (root / u).is_file()]
    source = n.to_source(n.File(body, includes=[n.Header(u) for u in present], pragma_once=False))
    options = ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES | ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    tu = interruptible(lambda: ci.Index.create().parse(None, args=args, unsaved_files=[(TU_NAME, source)],
                                                        options=options))
    walker = _Walker([root] + ([dispatcher.root] if dispatcher is not None else []))
    walker.scope(tu.cursor, "")
    errors = tuple(f"{walker.relative(d.location.file.name) if d.location.file else TU_NAME}:{d.location.line}: "
                   f"{d.spelling}" for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error)
    decls = Declarations(
        templates={q: _merged(ts) for q, ts in walker.templates.items()},
        enums=walker.enums,
        names={q: tuple(vs) for q, vs in walker.names.items()},
        includes={f: tuple(sorted(fs)) for f, fs in sorted(walker.includes.items())},
        missing=tuple(u for r, u in wanted if not (r / u).is_file()),
        errors=errors,
        records=dict(sorted(walker.records.items())),
        dispatcher=dispatcher is not None,
    )
    return decls, {str(r / u) for r, u in wanted} | walker.files


def _merged(found: list[tuple[TemplateInfo, bool]]) -> tuple[TemplateInfo, ...]:
    """Function templates: every overload. Class templates: one record from the definition (else the
    first declaration), names filled in and defaults taken from whichever declaration gives them."""
    decls = [d for d, _ in found]
    if decls[0].kind == "function":
        return tuple(decls)
    primary = next((d for d, definition in found if definition), decls[0])
    same = [d for d in decls if len(d.params) == len(primary.params)]
    params = []
    for i, p in enumerate(primary.params):
        name = p.name or next((d.params[i].name for d in same if d.params[i].name), "")
        default = p.default or next((d.params[i].default for d in same if d.params[i].default), None)
        params.append(ParamInfo(name, p.kind, p.ctype, p.canonical, default))
    return (TemplateInfo(primary.qualname, primary.kind, tuple(params), primary.where),)


class _Walker:
    """Collects the namespace-level declarations of the files under the `roots` and their include
    directives (files named relative to their root), and in dispatcher files records' members and
    functions' signatures."""

    def __init__(self, roots: list[Path]) -> None:
        self.prefixes = list(dict.fromkeys(str(r) + os.sep for r in roots))
        self.templates: dict[str, list[tuple[TemplateInfo, bool]]] = {}
        self.enums: dict[str, EnumInfo] = {}
        self.names: dict[str, list[NameInfo]] = {}
        self.records: dict[str, RecordInfo] = {}
        self.includes: dict[str, set[str]] = {}
        self.files: set[str] = set()
        """The absolute paths of every file an include directive names (for the cache)."""

    def relative(self, name: str) -> str:
        """A file's path relative to the root that holds it (else as given)."""
        return next((name[len(p):] for p in self.prefixes if name.startswith(p)), name)

    def file_of(self, cursor: Any) -> str | None:
        f = cursor.location.file
        if f is None or not any(f.name.startswith(p) for p in self.prefixes):
            return None
        return self.relative(f.name)

    def scope(self, cursor: Any, prefix: str) -> None:
        for c in cursor.get_children():
            kind = c.kind.name
            if kind == "INCLUSION_DIRECTIVE":
                self.include(c)
                continue
            file = self.file_of(c)
            if file is None or not c.spelling:
                continue
            qualname = f"{prefix}{c.spelling}"
            dispatcher = file.startswith(DISPATCHER)
            if dispatcher and kind in _RECORDS and c.is_definition():
                self.record(c, qualname, file)
            if kind in _SCOPES:
                self.scope(c, f"{qualname}::" if kind == "NAMESPACE" else prefix)
            elif kind in _TEMPLATES:
                call = _call(c) if dispatcher and kind == "FUNCTION_TEMPLATE" else None
                info = TemplateInfo(qualname, _TEMPLATES[kind], tuple(_params(c)), Where(file, c.location.line), call)
                self.templates.setdefault(qualname, []).append((info, c.is_definition()))
                if kind == "FUNCTION_TEMPLATE":
                    self.name(qualname, "function", file, c)
            elif kind == "ENUM_DECL" and not c.spelling.startswith("("):
                self.enum(c, qualname, file)
            elif kind in _TYPES:
                canonical = c.underlying_typedef_type.get_canonical().spelling if kind.startswith("TYPE") else ""
                spelled = _aliased(c) if dispatcher and kind.startswith("TYPE") else ""
                self.name(qualname, "type", file, c, canonical, spelled)
            elif kind == "FUNCTION_DECL":
                self.name(qualname, "function", file, c, call=_call(c) if dispatcher else None)
            elif kind == "USING_DECLARATION":
                target = c.referenced
                is_type = target is not None and target.kind.name in _TYPES
                canonical = target.underlying_typedef_type.get_canonical().spelling if is_type and target.kind.name.startswith("TYPE") else ""
                self.name(qualname, "type" if is_type else "function", file, c, canonical)

    def name(self, qualname: str, kind: str, file: str, cursor: Any, canonical: str = "", spelled: str = "",
             call: CallInfo | None = None) -> None:
        where = Where(file, cursor.location.line)
        self.names.setdefault(qualname, []).append(NameInfo(qualname, kind, where, canonical, spelled, call))

    def enum(self, c: Any, qualname: str, file: str) -> None:
        values = tuple(e.spelling for e in c.get_children() if e.kind.name == "ENUM_CONSTANT_DECL")
        if values or qualname not in self.enums:
            self.enums[qualname] = EnumInfo(qualname, c.is_scoped_enum(), values, Where(file, c.location.line))

    def record(self, c: Any, qualname: str, file: str) -> None:
        """The members of the record `c` (and its nested records and enums, under their own names)."""
        fields: list[ParamInfo] = []
        ctors: list[CallInfo] = []
        methods: list[tuple[str, CallInfo]] = []
        aliases: list[ParamInfo] = []
        bases: list[str] = []
        for m in c.get_children():
            kind = m.kind.name
            if kind == "FIELD_DECL":
                fields += _fields(m, c, "")
            elif kind == "CONSTRUCTOR":
                ctors.append(_call(m))
            elif kind in ("CXX_METHOD", "FUNCTION_TEMPLATE"):
                methods.append((m.spelling, _call(m)))
            elif kind in ("TYPE_ALIAS_DECL", "TYPEDEF_DECL"):
                canonical = normalize(m.underlying_typedef_type.get_canonical().spelling)
                aliases.append(ParamInfo(m.spelling, "typed", _aliased(m), canonical))
            elif kind == "CXX_BASE_SPECIFIER":
                bases.append(_qualified(m, _without_specifiers(list(m.get_tokens()))))
            elif kind in _RECORDS and m.spelling and m.is_definition():
                self.record(m, f"{qualname}::{m.spelling}", file)
            elif kind == "ENUM_DECL" and m.spelling:
                self.enum(m, f"{qualname}::{m.spelling}", file)
        self.records[qualname] = RecordInfo(qualname, tuple(fields), tuple(ctors), tuple(methods), tuple(aliases),
                                            tuple(bases), Where(file, c.location.line))

    def include(self, cursor: Any) -> None:
        source, target = self.file_of(cursor), cursor.get_included_file()
        if source is None or target is None:
            return
        self.files.add(target.name)
        if any(target.name.startswith(p) for p in self.prefixes):
            self.includes.setdefault(source, set()).add(self.relative(target.name))


def _fields(field: Any, record: Any, prefix: str) -> list[ParamInfo]:
    """A data member as a `typed` parameter; one of a struct defined in its own declaration
    (`struct Signature { ... } signature;`) is followed by that struct's members, as dotted paths."""
    name = f"{prefix}{field.spelling}"
    nested = field.type.get_declaration()
    tokens = list(field.get_tokens())
    if nested.kind.name in _RECORDS and nested.semantic_parent == record and any(t.spelling == "{" for t in tokens):
        out = [ParamInfo(name, "typed", qualname(nested), normalize(field.type.get_canonical().spelling))]
        for m in nested.get_children():
            if m.kind.name == "FIELD_DECL":
                out += _fields(m, nested, f"{name}.")
        return out
    return [_typed(field, name)]


def _typed(cursor: Any, name: str | None = None) -> ParamInfo:
    """A function parameter or data member: its type as written (names qualified), clang's canonical type
    and its default (`= x` or a braced initializer)."""
    tokens = list(cursor.get_tokens())
    at = _name_at(cursor, tokens)
    eq = next((i for i in range(at if at is not None else 0, len(tokens)) if tokens[i].spelling == "="), None)
    head = tokens[:at] if at is not None else tokens[:eq]
    default = None
    if eq is not None:
        default = _qualified(cursor, tokens[eq + 1:])
    elif at is not None and at + 1 < len(tokens) and tokens[at + 1].spelling == "{":
        default = _qualified(cursor, tokens[at + 1:])
    canonical = normalize(cursor.type.get_canonical().spelling)
    return ParamInfo(name if name is not None else cursor.spelling, "typed", _qualified(cursor, head), canonical, default)


def _call(cursor: Any) -> CallInfo:
    """The signature of a function, method, constructor or function template."""
    args = tuple(_typed(p) for p in cursor.get_children() if p.kind.name == "PARM_DECL")
    if cursor.kind.name == "CONSTRUCTOR":
        return CallInfo("", args)
    tokens = list(cursor.get_tokens())
    at = _name_at(cursor, tokens)
    head = tokens[:at] if at is not None else []
    if head and head[0].spelling == "template":
        depth, i = 0, 1
        for i in range(1, len(head)):
            depth += {"<": 1, ">": -1, ">>": -2}.get(head[i].spelling, 0)
            if depth <= 0:
                break
        head = head[i + 1:]
    static = any(t.spelling == "static" for t in head)
    result = _qualified(cursor, _without_specifiers(head)) if at is not None else normalize(cursor.result_type.spelling)
    return CallInfo(result, args, static, normalize(cursor.result_type.get_canonical().spelling))


def _aliased(cursor: Any) -> str:
    """The type a `using X = T;` or `typedef T X;` names, as written (names qualified)."""
    tokens = list(cursor.get_tokens())
    if cursor.kind.name == "TYPE_ALIAS_DECL":
        eq = next((i for i, t in enumerate(tokens) if t.spelling == "="), len(tokens) - 1)
        return _qualified(cursor, tokens[eq + 1:])
    at = _name_at(cursor, tokens)
    return _qualified(cursor, tokens[1:at])


def _name_at(cursor: Any, tokens: list[Any]) -> int | None:
    """The index of the token that is the declaration's name."""
    return next((i for i, t in enumerate(tokens) if cursor.spelling and t.spelling == cursor.spelling
                 and t.location.offset == cursor.location.offset), None)


def _without_specifiers(tokens: list[Any]) -> list[Any]:
    return [t for t in tokens if t.spelling not in _SPECIFIERS]


def _params(template: Any) -> Iterator[ParamInfo]:
    for p in template.get_children():
        if p.kind.name in _PARAMS:
            yield _param(p)


def _param(p: Any) -> ParamInfo:
    tokens = list(p.get_tokens())
    spelled = [t.spelling for t in tokens]
    name_at = next((i for i, t in enumerate(tokens) if p.spelling and t.spelling == p.spelling
                    and t.location.offset == p.location.offset), None)
    head = tokens[:name_at] if name_at is not None else tokens
    eq = next((i for i in range(name_at or 0, len(tokens)) if spelled[i] == "="), None)
    if name_at is None and eq is not None:
        head = tokens[:eq]
    pack = "_pack" if any(t.spelling == "..." for t in head) else ""
    default = _qualified(p, tokens[eq + 1:]) if eq is not None else None
    kind = p.kind.name
    if kind == "TEMPLATE_TYPE_PARAMETER":
        return ParamInfo(p.spelling, f"type{pack}", default=default)
    if kind == "TEMPLATE_TEMPLATE_PARAMETER":
        return ParamInfo(p.spelling, f"template{pack}", default=default)
    ctype = _qualified(p, [t for t in head if t.spelling != "..."])
    canonical = p.type.get_canonical()
    if canonical.kind.name == "BOOL":
        return ParamInfo(p.spelling, f"bool{pack}", default=default)
    if canonical.kind.name == "ENUM":
        return ParamInfo(p.spelling, f"enum{pack}", qualname(canonical.get_declaration()), default=default)
    if canonical.kind.name in _INTEGRAL:
        return ParamInfo(p.spelling, f"int{pack}", ctype, canonical.spelling, default)
    return ParamInfo(p.spelling, f"value{pack}", ctype, default=default)


def _qualified(p: Any, tokens: list[Any]) -> str:
    """`tokens` as normalized text, each name the parameter's declaration refers to written as the fully
    qualified name of what it refers to (a template parameter by its bare name)."""
    refs: dict[int, str] = {}
    for c in p.walk_preorder():
        if c.kind.name in _REFS and c.referenced is not None:
            target = c.referenced
            refs[c.extent.end.offset] = target.spelling if target.kind.name in _PARAMS else qualname(target)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        j = i + (tokens[i].spelling == "::")
        if j < len(tokens) and tokens[j].kind.name == "IDENTIFIER":
            while j + 2 < len(tokens) and tokens[j + 1].spelling == "::" and tokens[j + 2].kind.name == "IDENTIFIER":
                j += 2
            resolved = refs.get(tokens[j].extent.end.offset)
            out.append(resolved or " ".join(t.spelling for t in tokens[i:j + 1]))
            i = j + 1
        else:
            out.append(tokens[i].spelling)
            i += 1
    return normalize(" ".join(out))


def qualname(cursor: Any) -> str:
    """`ns::Class::name` of a declaration (its semantic parents up to the translation unit)."""
    parts = []
    while cursor is not None and cursor.kind.name != "TRANSLATION_UNIT":
        if cursor.spelling:
            parts.append(cursor.spelling)
        cursor = cursor.semantic_parent
    return "::".join(reversed(parts))


def _cache_file(key: str) -> Path | None:
    root = cache_root()
    return None if root is None else root / "api" / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def _load(path: Path) -> Declarations | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not unchanged(os.sep, data["files"]):
        return None
    return Declarations.from_json(data["declarations"])


def _store(path: Path, files: set[str], decls: Declarations) -> None:
    """The declarations and the state of every file (absolute paths) they were read from."""
    keep_json(path, {"files": file_states(os.sep, files), "declarations": decls.to_json()})
