"""Parse a CK include tree once with libclang and reduce it to `Declarations`.

One translation unit includes every umbrella header asked for (built from `ckast.nodes`) and is parsed
in HIP device mode with the flags of the compile check (`Toolchain.command`). The libclang used is the
one installed beside that clang (Debian: `/usr/lib/llvm-19/lib/libclang-19.so.1`, part of clang-19),
else the one bundled in the PyPI `libclang` wheel, which also provides the Python bindings; both are
given clang's resource directory. The result is cached per tree under `cache_root()/api`, valid while
every file the parse read keeps its size and modification time.
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
from ckast.check.toolchain import Toolchain
from ckast.data_files import cache_root, file_states, keep_json, unchanged

from .model import Declarations, EnumInfo, NameInfo, ParamInfo, TemplateInfo, Where, normalize

TU_NAME = "ckast_api_check.hip"
INSTALL_HINT = "pip install libclang (or pip install 'ckast[api]')"
_INTEGRAL = {"CHAR_U", "UCHAR", "CHAR16", "CHAR32", "USHORT", "UINT", "ULONG", "ULONGLONG", "UINT128", "CHAR_S",
             "SCHAR", "WCHAR", "SHORT", "INT", "LONG", "LONGLONG", "INT128"}
_REFS = {"TYPE_REF", "TEMPLATE_REF", "NAMESPACE_REF", "DECL_REF_EXPR", "MEMBER_REF", "OVERLOADED_DECL_REF"}
_SCOPES = {"NAMESPACE", "LINKAGE_SPEC"}
_TYPES = {"STRUCT_DECL", "CLASS_DECL", "UNION_DECL", "TYPEDEF_DECL", "TYPE_ALIAS_DECL"}
_TEMPLATES = {"CLASS_TEMPLATE": "struct", "TYPE_ALIAS_TEMPLATE_DECL": "alias", "FUNCTION_TEMPLATE": "function"}
_PARAMS = {"TEMPLATE_TYPE_PARAMETER", "TEMPLATE_NON_TYPE_PARAMETER", "TEMPLATE_TEMPLATE_PARAMETER"}


class ApiUnavailable(Exception):
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


def parse_tree(toolchain: Toolchain, umbrellas: Iterable[str]) -> tuple[Declarations, bool]:
    """The declarations of the CK tree of `toolchain` reachable from `umbrellas`, and whether they came
    from the cache (see above)."""
    ci = cindex(toolchain)
    root = Path(toolchain.ck_include).resolve()
    toolchain = attrs.evolve(toolchain, ck_include=root)  # libclang then names every file under `root`
    umbrellas = sorted(set(umbrellas))
    args = [*toolchain.command(Path(TU_NAME), "syntax", (), None)[1:], f"-resource-dir={toolchain.resource_dir}"]
    lib = library_path(ci)
    key = json.dumps([str(root), umbrellas, args, lib, file_states(Path(lib).parent, [Path(lib).name])])
    path = _cache_file(key)
    cached = _load(path, root) if path else None
    if cached is not None:
        return cached, True
    decls, files = _parse(ci, root, umbrellas, args)
    if path is not None:
        _store(path, root, files, decls)
    return decls, False


def _parse(ci: ModuleType, root: Path, umbrellas: Sequence[str], args: list[str]) -> tuple[Declarations, set[str]]:
    present = [u for u in umbrellas if (root / u).is_file()]
    source = n.to_source(n.File([], includes=[n.Header(u) for u in present], pragma_once=False))
    options = ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES | ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    tu = ci.Index.create().parse(None, args=args, unsaved_files=[(TU_NAME, source)], options=options)
    walker = _Walker(root)
    walker.scope(tu.cursor, "")
    errors = tuple(f"{_rel(root, d.location.file.name) if d.location.file else TU_NAME}:{d.location.line}: {d.spelling}"
                   for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error)
    decls = Declarations(
        templates={q: _merged(ts) for q, ts in walker.templates.items()},
        enums=walker.enums,
        names={q: tuple(vs) for q, vs in walker.names.items()},
        includes={f: tuple(sorted(fs)) for f, fs in sorted(walker.includes.items())},
        missing=tuple(u for u in umbrellas if u not in present),
        errors=errors,
    )
    files = set(umbrellas) | set(walker.includes) | {f for fs in walker.includes.values() for f in fs}
    return decls, files


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
    """Collects the namespace-level declarations of the files under `root` and their include directives."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.prefix = str(root) + os.sep
        self.templates: dict[str, list[tuple[TemplateInfo, bool]]] = {}
        self.enums: dict[str, EnumInfo] = {}
        self.names: dict[str, list[NameInfo]] = {}
        self.includes: dict[str, set[str]] = {}

    def file_of(self, cursor: Any) -> str | None:
        f = cursor.location.file
        if f is None or not f.name.startswith(self.prefix):
            return None
        return f.name[len(self.prefix):]

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
            if kind in _SCOPES:
                self.scope(c, f"{qualname}::" if kind == "NAMESPACE" else prefix)
            elif kind in _TEMPLATES:
                info = TemplateInfo(qualname, _TEMPLATES[kind], tuple(_params(c)), Where(file, c.location.line))
                self.templates.setdefault(qualname, []).append((info, c.is_definition()))
                if kind == "FUNCTION_TEMPLATE":
                    self.name(qualname, "function", file, c)
            elif kind == "ENUM_DECL" and not c.spelling.startswith("("):
                values = tuple(e.spelling for e in c.get_children() if e.kind.name == "ENUM_CONSTANT_DECL")
                if values or qualname not in self.enums:
                    self.enums[qualname] = EnumInfo(qualname, c.is_scoped_enum(), values, Where(file, c.location.line))
            elif kind in _TYPES:
                canonical = c.underlying_typedef_type.get_canonical().spelling if kind.startswith("TYPE") else ""
                self.name(qualname, "type", file, c, canonical)
            elif kind == "FUNCTION_DECL":
                self.name(qualname, "function", file, c)
            elif kind == "USING_DECLARATION":
                target = c.referenced
                is_type = target is not None and target.kind.name in _TYPES
                canonical = target.underlying_typedef_type.get_canonical().spelling if is_type and target.kind.name.startswith("TYPE") else ""
                self.name(qualname, "type" if is_type else "function", file, c, canonical)

    def name(self, qualname: str, kind: str, file: str, cursor: Any, canonical: str = "") -> None:
        self.names.setdefault(qualname, []).append(NameInfo(qualname, kind, Where(file, cursor.location.line), canonical))

    def include(self, cursor: Any) -> None:
        source, target = self.file_of(cursor), cursor.get_included_file()
        if source is not None and target is not None and target.name.startswith(self.prefix):
            self.includes.setdefault(source, set()).add(target.name[len(self.prefix):])


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


def _rel(root: Path, name: str) -> str:
    return name[len(str(root)) + 1:] if name.startswith(f"{root}{os.sep}") else name


def _cache_file(key: str) -> Path | None:
    root = cache_root()
    return None if root is None else root / "api" / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def _load(path: Path, root: Path) -> Declarations | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not unchanged(root, data["files"]):
        return None
    return Declarations.from_json(data["declarations"])


def _store(path: Path, root: Path, files: set[str], decls: Declarations) -> None:
    keep_json(path, {"files": file_states(root, files), "declarations": decls.to_json()})
