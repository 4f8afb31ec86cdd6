"""Kernel types as trees, from CK's generated headers and from ckast's, compared by path.

A generated header names the kernel it launches through a chain of `using` aliases and `constexpr`
constants (`using Kernel = ck_tile::QuantGemmKernel<TilePartitioner, GemmPipeline, ...>`). This
module resolves that chain into one JSON tree, so two generators' kernels compare as types, not as
text: spelling, alias names, declaration order, `using namespace`, comments and line breaks drop out.

Tree (JSON):
    int | bool                                 an integral or bool constant (evaluated when both sides of
                                               `+ - * /` are known)
    "ck_tile::bf8_t", "float",                 a type, enumerator or other name, fully qualified
    "ck_tile::QuantType::ABQuantGrouped"       (CK Tile's own type aliases folded: `fp16_t` -> `half_t`)
    "$HasHotLoop", "$TailNum", "$MemOp"        a template parameter the launcher binds at dispatch time
                                               (CK's lambda `has_hot_loop_.value`, ckast's alias-template
                                               parameter `HasHotLoop`)
    {"template": "ck_tile::X", "args": [...]}  a template-id with its arguments in order
    {"member": "M", "of": tree}                `T::M` / `t.M` that no rule in MEMBERS evaluates
    {"op": "+", "args": [a, b]}                arithmetic on something unknown

`tree_of_ast` reads ckast's header AST, `tree_of_header` any header text. `compare` lists every difference
by path (`ck_tile::QuantGemmKernel/1/ck_tile::X/0`: template name, then argument index, down the tree;
`/::M` steps into the type whose member `M` is taken); a difference is allowed only by a named
ProfileDifference whose path pattern (fnmatch) and values match, and an allowance that matches nothing is
reported as unused. With a `profile`, `compare` first spells omitted trailing template arguments from
ckast's catalog on both sides. CK's quant GEMM goldens and `compare_case` are in tests/ck_goldens.py.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

Tree = Any
"""int | bool | str | dict (see the module docstring)."""

CK_TYPE_ALIASES = {
    "ck_tile::fp16_t": "ck_tile::half_t",
    "ck_tile::bfloat16_t": "ck_tile::bf16_t",
    "ck_tile::float8_e4m3_t": "ck_tile::fp8_t",
    "ck_tile::float8_e5m2_t": "ck_tile::bf8_t",
}
"""CK Tile's own aliases of one type (core/numeric), folded to the name ckast and CK's dispatcher use."""

DISPATCH_PARAMS = {
    "has_hot_loop_": "$HasHotLoop", "tail_number_": "$TailNum", "memory_operation_": "$MemOp",
    "HasHotLoop": "$HasHotLoop", "TailNum": "$TailNum", "MemOp": "$MemOp",
}
"""Spellings of the launcher's dispatch-time template parameters: CK's lambda parameters (read as
`has_hot_loop_.value`) and ckast's alias-template parameters."""

BUILTINS = frozenset({"void", "bool", "char", "int", "unsigned", "long", "short", "float", "double", "auto"})


class TreeError(ValueError):
    """A header this module cannot read, or a kernel alias it cannot find or resolve."""


# --- member rules ----------------------------------------------------------------------------------

def _tile_shape_dim(seq: int, i: int) -> Callable[[dict], Tree]:
    """`Partitioner<TileGemmShape<seq<M,N,K>, ...>, ...>::MPerBlock` and friends."""
    def rule(part: dict) -> Tree:
        shape = part["args"][0]
        if isinstance(shape, dict) and shape.get("template") == "ck_tile::TileGemmShape":
            s = shape["args"][seq]
            if isinstance(s, dict) and s.get("template") == "ck_tile::sequence":
                return s["args"][i]
        raise KeyError
    return rule


_PARTITIONERS = ("ck_tile::GemmSpatiallyLocalTilePartitioner", "ck_tile::GemmTile1DPartitioner",
                 "ck_tile::GemmTile2DPartitioner", "ck_tile::StreamKTilePartitioner")
MEMBERS: dict[tuple[str, str], Callable[[dict], Tree]] = {
    **{(p, m): _tile_shape_dim(0, i) for p in _PARTITIONERS for i, m in enumerate(("MPerBlock", "NPerBlock", "KPerBlock"))},
}
"""(template, member) -> how to read the member from the template's arguments. Members not listed stay
`{"member": ..., "of": ...}` (both generators spelling the same member still compare equal)."""


# --- tokens ----------------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
  | (?P<num>[0-9][0-9A-Za-z_.']*)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>::|->|\.\.\.|&&|\|\||[-+*/%<>=!&|^~?:;,.(){}\[\]\#])
""", re.VERBOSE)


def _strip(text: str) -> str:
    """Text without comments and preprocessor lines (both branches of an #ifdef are kept)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    lines, cont = [], False
    for line in text.split("\n"):
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            continue
        lines.append(line)
    return "\n".join(lines)


def tokenize(text: str) -> list[str]:
    out, pos, text = [], 0, _strip(text)
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise TreeError(f"cannot read C++ at {text[pos:pos + 40]!r}")
        if m.lastgroup != "ws":
            out.append(m.group())
        pos = m.end()
    return out


# --- raw expressions (before name resolution) ------------------------------------------------------
# ("int", v) ("bool", v) ("str", s) ("name", parts) ("tmpl", parts, args) ("member", raw, name) ("op", op, a, b)

class _Expr:
    def __init__(self, toks: Sequence[str]) -> None:
        self.t, self.i = list(toks), 0

    def peek(self, k: int = 0) -> str | None:
        return self.t[self.i + k] if self.i + k < len(self.t) else None

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise TreeError(f"expected {want or 'more'} in {' '.join(self.t)!r}, got {tok!r}")
        self.i += 1
        return tok

    def parse_all(self) -> tuple:
        e = self.expr()
        if self.peek() is not None:
            raise TreeError(f"unexpected {self.peek()!r} in {' '.join(self.t)!r}")
        return e

    def expr(self) -> tuple:
        e = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            e = ("op", op, e, self.term())
        return e

    def term(self) -> tuple:
        e = self.unary()
        while self.peek() in ("*", "/", "%"):
            op = self.take()
            e = ("op", op, e, self.unary())
        return e

    def unary(self) -> tuple:
        if self.peek() == "-":
            self.take()
            return ("op", "-", ("int", 0), self.unary())
        return self.postfix(self.primary())

    def primary(self) -> tuple:
        tok = self.peek()
        if tok is None:
            raise TreeError(f"empty expression in {' '.join(self.t)!r}")
        if tok == "(":
            self.take()
            e = self.expr()
            self.take(")")
            return e
        if tok in ("typename", "const", "struct", "class"):
            self.take()
            return self.primary()
        if tok[0].isdigit():
            self.take()
            return ("int", int(re.sub(r"[uUlL']+$", "", tok).replace("'", ""), 0))
        if tok in ("true", "false"):
            self.take()
            return ("bool", tok == "true")
        if tok[0] in "\"'":
            self.take()
            return ("str", tok[1:-1])
        parts: list[str] = []
        if tok == "::":
            self.take()
        parts.append(self._ident())
        while self.peek() == "::":
            self.take()
            parts.append(self._ident())
        if tok in ("unsigned", "signed", "long", "short") and self.peek() in ("int", "long", "char", "short"):
            parts = [f"{parts[0]} {self.take()}"]
        if self.peek() == "<":
            e: tuple = ("tmpl", tuple(parts), tuple(self.targs()))
            while self.peek() == "::":
                self.take()
                e = ("member", e, self._ident())
            return e
        return ("name", tuple(parts))

    def _ident(self) -> str:
        tok = self.take()
        if tok == "template":
            tok = self.take()
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", tok):
            raise TreeError(f"expected a name in {' '.join(self.t)!r}, got {tok!r}")
        return tok

    def targs(self) -> list[tuple]:
        self.take("<")
        args: list[tuple] = []
        if self.peek() == ">":
            self.take()
            return args
        while True:
            args.append(self.expr())
            if self.peek() == ",":
                self.take()
                continue
            self.take(">")
            return args

    def postfix(self, e: tuple) -> tuple:
        while self.peek() in (".", "->"):
            self.take()
            e = ("member", e, self._ident())
        return e


# --- declarations and scopes -----------------------------------------------------------------------

@dataclass
class _Decl:
    raw: tuple
    scope: _Scope
    params: tuple[str, ...] = ()


@dataclass
class _Scope:
    name: str | None
    parent: _Scope | None
    decls: dict[str, _Decl] = field(default_factory=dict)
    children: dict[str, _Scope] = field(default_factory=dict)
    using_ns: list[tuple[str, ...]] = field(default_factory=list)
    inner: list[_Scope] = field(default_factory=list)

    def chain(self) -> Iterator[_Scope]:
        s: _Scope | None = self
        while s is not None:
            yield s
            s = s.parent

    def walk(self) -> Iterator[_Scope]:
        yield self
        for c in self.inner:
            yield from c.walk()


def _split_top(toks: Sequence[str], sep: str = ",") -> list[list[str]]:
    out, cur, depth = [], [], 0
    for t in toks:
        if t in "<([{":
            depth += 1
        elif t in ">)]}":
            depth -= 1
        if t == sep and depth == 0:
            out.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        out.append(cur)
    return out


class _Reader:
    """Walks a token stream, recording aliases and constants per (namespace/struct/body) scope."""

    def __init__(self, toks: list[str]) -> None:
        self.t = toks
        self.root = _Scope(None, None)

    def read(self) -> _Scope:
        scope, i, start = self.root, 0, True
        t = self.t
        while i < len(t):
            tok = t[i]
            if start and tok == "namespace" and i + 1 < len(t) and t[i + 1] != "=":
                j = i + 1
                names = []
                while t[j] != "{":
                    if t[j] != "::":
                        names.append(t[j])
                    j += 1
                for name in names or [None]:  # type: ignore[list-item]
                    scope = self._push(scope, name)
                i, start = j + 1, True
                continue
            if start and tok in ("struct", "class") and i + 2 < len(t):
                j = i + 2
                while j < len(t) and t[j] not in ("{", ";"):
                    j += 1
                if j < len(t) and t[j] == "{":
                    scope = self._push(scope, t[i + 1])
                    i, start = j + 1, True
                    continue
            if start and tok == "template" and i + 1 < len(t) and t[i + 1] == "<":
                j, depth = i + 1, 0
                while True:
                    depth += {"<": 1, ">": -1}.get(t[j], 0)
                    j += 1
                    if depth == 0:
                        break
                params = tuple(p[-1] for p in _split_top(t[i + 2:j - 1]) if p)
                if j < len(t) and t[j] == "using":
                    i = self._using(scope, j, params)
                    continue
                i = j
                continue
            if start and tok == "using":
                i = self._using(scope, i, ())
                continue
            if start and tok in ("static", "inline", "constexpr", "const") and "constexpr" in self._stmt(i):
                i = self._constant(scope, i)
                continue
            if tok == "{":
                scope = self._push(scope, None)
                i, start = i + 1, True
                continue
            if tok == "}":
                if scope.parent is None:
                    raise TreeError("unbalanced '}'")
                scope = scope.parent
                i, start = i + 1, True
                continue
            start = tok == ";"
            i += 1
        return self.root

    def _stmt(self, i: int) -> list[str]:
        j = i
        while j < len(self.t) and self.t[j] not in (";", "{", "}"):
            j += 1
        return self.t[i:j]

    def _push(self, scope: _Scope, name: str | None) -> _Scope:
        if name is not None and name in scope.children:
            return scope.children[name]
        child = _Scope(name, scope)
        scope.inner.append(child)
        if name is not None:
            scope.children[name] = child
        return child

    def _end(self, i: int) -> int:
        depth, t = 0, self.t
        while i < len(t):
            if t[i] in "([{":
                depth += 1
            elif t[i] in ")]}":
                depth -= 1
            elif t[i] == ";" and depth == 0:
                return i
            i += 1
        raise TreeError("declaration without ';'")

    def _using(self, scope: _Scope, i: int, params: tuple[str, ...]) -> int:
        t = self.t
        end = self._end(i)
        if t[i + 1] == "namespace":
            scope.using_ns.append(tuple(x for x in t[i + 2:end] if x != "::"))
        elif end > i + 3 and t[i + 2] == "=":
            scope.decls[t[i + 1]] = _Decl(_Expr(t[i + 3:end]).parse_all(), scope, params)
        return end + 1

    def _constant(self, scope: _Scope, i: int) -> int:
        t = self.t
        end = self._end(i)
        stmt = t[i:end]
        if "=" in stmt:
            k = stmt.index("=")
            name, value = stmt[k - 1], stmt[k + 1:]
        elif "{" in stmt:
            k = stmt.index("{")
            name, value = stmt[k - 1], stmt[k + 1:-1]
        else:
            return end + 1
        if "(" not in stmt[:k]:  # not a constexpr function
            try:
                scope.decls[name] = _Decl(_Expr(value).parse_all(), scope)
            except TreeError:
                pass  # a constant no kernel type can use (a string table, a lambda, ...)
        return end + 1


# --- resolution ------------------------------------------------------------------------------------

def _canon(parts: Sequence[str]) -> str:
    name = "::".join(parts)
    return CK_TYPE_ALIASES.get(name, name)


class _Resolver:
    def __init__(self) -> None:
        self.active: list[int] = []
        """Declarations being resolved, innermost last (an alias's own name on its right-hand side names
        the template it shadows: `using GemmPipelineProblem = GemmPipelineProblem<...>`)."""

    def find(self, parts: tuple[str, ...], scope: _Scope) -> tuple[_Decl | None, tuple[str, ...]]:
        """The declaration the longest prefix of `parts` names, and the components left over."""
        for s in scope.chain():
            cur: _Scope | None = s
            for k, part in enumerate(parts):
                assert cur is not None
                if part in cur.decls and self.active[-1:] != [id(cur.decls[part])]:
                    return cur.decls[part], parts[k + 1:]
                cur = cur.children.get(part)
                if cur is None:
                    break
        return None, parts

    def external(self, parts: tuple[str, ...], scope: _Scope) -> str:
        if len(parts) == 1 and parts[0] in DISPATCH_PARAMS:
            return DISPATCH_PARAMS[parts[0]]
        if len(parts) == 1 and (parts[0] in BUILTINS or " " in parts[0]):
            return parts[0]
        if parts[0] not in ("ck_tile", "std"):
            for s in scope.chain():
                for ns in s.using_ns:
                    return _canon(ns + parts)
        return _canon(parts)

    def decl(self, d: _Decl, env: dict[str, Tree], args: Sequence[Tree] | None = None) -> Tree:
        key = id(d)
        if key in self.active:
            raise TreeError("alias refers to itself")
        self.active.append(key)
        try:
            local = dict(env)
            if d.params:
                if args is None:
                    local.update({p: DISPATCH_PARAMS.get(p, f"${p}") for p in d.params})
                else:
                    if len(args) != len(d.params):
                        raise TreeError(f"alias template takes {len(d.params)} arguments, got {len(args)}")
                    local.update(zip(d.params, args))
            return self.raw(d.raw, d.scope, local)
        finally:
            self.active.pop()

    def raw(self, e: tuple, scope: _Scope, env: dict[str, Tree]) -> Tree:
        kind = e[0]
        if kind in ("int", "bool", "str"):
            return e[1]
        if kind == "name":
            parts = e[1]
            if len(parts) == 1 and parts[0] in env:
                return env[parts[0]]
            d, rest = self.find(parts, scope)
            if d is None:
                return self.external(parts, scope)
            out = self.decl(d, {})
            for m in rest:
                out = member(out, m)
            return out
        if kind == "tmpl":
            args = [self.raw(a, scope, env) for a in e[2]]
            d, rest = self.find(e[1], scope)
            if d is not None and not rest and d.params:
                return self.decl(d, {}, args)
            if d is not None and rest:
                raise TreeError(f"{'::'.join(e[1])}: a member template of an alias")
            return {"template": self.external(e[1], scope), "args": args}
        if kind == "member":
            base = e[1]
            if base[0] == "name" and len(base[1]) == 1 and base[1][0] in DISPATCH_PARAMS and e[2] == "value":
                return DISPATCH_PARAMS[base[1][0]]
            return member(self.raw(base, scope, env), e[2])
        if kind == "op":
            return arith(e[1], self.raw(e[2], scope, env), self.raw(e[3], scope, env))
        raise TreeError(f"unknown expression {e!r}")


def member(of: Tree, name: str) -> Tree:
    """`of::name`, evaluated by a MEMBERS rule when one applies."""
    if isinstance(of, dict) and "template" in of:
        rule = MEMBERS.get((of["template"], name))
        if rule is not None:
            try:
                return rule(of)
            except (KeyError, IndexError):
                pass
    if isinstance(of, str) and not of.startswith("$"):
        return f"{of}::{name}"
    return {"member": name, "of": of}


def arith(op: str, a: Tree, b: Tree) -> Tree:
    if type(a) is int and type(b) is int:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if b and op in ("/", "%"):
            return int(a / b) if op == "/" else a - b * int(a / b)
    return {"op": op, "args": [a, b]}


# --- entry points ----------------------------------------------------------------------------------

def declarations(text: str) -> _Scope:
    """The scope tree of a header's aliases and constants."""
    return _Reader(tokenize(text)).read()


def resolve(text: str, name: str) -> Tree:
    """The tree of the alias or constant `name` (qualified or not) declared anywhere in `text`;
    exactly one declaration may carry the name."""
    root = declarations(text)
    parts = tuple(name.split("::"))
    hits = [s.decls[parts[-1]] for s in root.walk() if parts[-1] in s.decls and _path_ends(s, parts[:-1])]
    if len(hits) != 1:
        raise TreeError(f"{len(hits)} declarations of {name!r} (need exactly one)")
    return _Resolver().decl(hits[0], {})


def _path_ends(scope: _Scope, prefix: tuple[str, ...]) -> bool:
    names = [s.name for s in scope.chain()][:-1][::-1]
    return not prefix or tuple(names[-len(prefix):]) == prefix


def tree_of_header(text: str, kernel: str = "Kernel") -> Tree:
    """The kernel type a header launches: the alias `kernel` (CK's generators and ckast both say `Kernel`)."""
    return resolve(text, kernel)


def tree_of_source(file: object, kernel: str = "Kernel") -> Tree:
    """The kernel type of ckast's header AST read back from the printer's output (the printer is
    ckast's only text producer, so this is the C++ the compiler sees); `tree_of_ast` must agree."""
    from ckast.nodes import to_source

    return tree_of_header(to_source(file), kernel)


def tree_of_ast(file: object, kernel: str = "Kernel") -> Tree:
    """The kernel type of ckast's header AST (a `ckast.nodes.File`), read from the nodes themselves:
    aliases, alias templates and constexpr constants of namespaces, structs and function bodies."""
    from ckast import nodes as n
    from ckast.nodes.base import children

    root = _Scope(None, None)

    def body(decls: Iterable[object], scope: _Scope) -> None:
        for d in decls:
            params: tuple[str, ...] = ()
            if isinstance(d, n.TemplateDecl):
                params, d = tuple(p.name for p in d.params), d.decl
            if isinstance(d, (n.Namespace, n.Struct)):
                child = _Scope(d.name, scope)
                scope.inner.append(child)
                if d.name is not None:
                    scope.children[d.name] = child
                body(d.body, child)
            elif isinstance(d, n.UsingAlias):
                scope.decls[d.name] = _Decl(_raw_of_node(d.type), scope, params)
            elif isinstance(d, n.UsingDirective):
                scope.using_ns.append(_name_parts_of(d.namespace))
            elif isinstance(d, n.FunctionDef):
                body(d.body or (), block(scope))
            elif isinstance(d, n.IfDef):
                body((*d.then, *d.else_), scope)
            else:
                if isinstance(d, n.VarDecl) and d.constexpr and d.init is not None:
                    try:
                        scope.decls[d.name] = _Decl(_raw_of_node(d.init), scope)
                    except TreeError:
                        pass
                nested(d, scope)

    def block(scope: _Scope) -> _Scope:
        child = _Scope(None, scope)
        scope.inner.append(child)
        return child

    def nested(node: object, scope: _Scope) -> None:
        """Blocks inside a statement: lambda bodies and the branches of if/for/while."""
        for child in children(node):  # type: ignore[arg-type]
            if isinstance(child, n.Lambda):
                body(child.body, block(scope))
            elif isinstance(child, (n.Stmt, n.Decl)):
                body((child,), block(scope))
            else:
                nested(child, scope)

    body(file.body, root)  # type: ignore[attr-defined]
    hits = [s.decls[kernel] for s in root.walk() if kernel in s.decls]
    if len(hits) != 1:
        raise TreeError(f"{len(hits)} declarations of {kernel!r} (need exactly one)")
    return _Resolver().decl(hits[0], {})


def _name_parts_of(name: object) -> tuple[str, ...]:
    from ckast import nodes as n

    parts: list[str] = []
    for part in name.parts:  # type: ignore[attr-defined]
        if isinstance(part, (n.Symbol, n.EnumSpec)):
            parts.extend(part.qualname)
        elif isinstance(part, str):
            parts.append(part)
        else:
            raise TreeError(f"a name starting with {type(part).__name__} where a plain name was expected")
    return tuple(parts)


def _raw_of_node(node: object) -> tuple:
    """A ckast type or expression node as a raw expression (the form the text reader builds)."""
    from ckast import nodes as n

    if isinstance(node, n.IntLit):
        return ("int", node.value)
    if isinstance(node, n.BoolLit):
        return ("bool", node.value)
    if isinstance(node, n.StrLit):
        return ("str", node.value)
    if isinstance(node, n.Builtin):
        return ("name", (node.keyword,))
    if isinstance(node, n.EnumValue):
        return ("name", (*node.spec.qualname, node.value))
    if isinstance(node, n.TemplateId):
        return ("tmpl", node.signature.qualname, tuple(_raw_of_node(a) for a in node.positional()))
    if isinstance(node, (n.TypeName, n.Id)):
        first, *rest = node.name.parts
        if isinstance(first, n.TemplateId):
            e = _raw_of_node(first)
            for m in rest:
                e = ("member", e, m)
            return e
        return ("name", _name_parts_of(node.name))
    if isinstance(node, n.Member):
        return ("member", _raw_of_node(node.obj), node.name)
    if isinstance(node, n.BinOp) and node.op in ("+", "-", "*", "/", "%"):
        return ("op", node.op, _raw_of_node(node.lhs), _raw_of_node(node.rhs))
    raise TreeError(f"no tree for a {type(node).__name__} node")


def normalize(tree: Tree, profile: object) -> Tree:
    """`tree` with every template's omitted trailing arguments spelled out from ckast's catalog of the
    CK API profile (`ckast.catalog.Profile`), so `X<a>` and `X<a, default>` compare equal. Templates the
    catalog lacks stay as they are."""
    from ckast import nodes as n

    sigs = {"::".join(s.qualname): s for s in profile.templates.values()}  # type: ignore[attr-defined]

    def walk(t: Tree) -> Tree:
        if isinstance(t, dict) and "template" in t:
            args = [walk(a) for a in t["args"]]
            sig = sigs.get(t["template"])
            if sig is not None and not any(p.is_pack for p in sig.params):
                given = {p.name: a for p, a in zip(sig.params, args)}
                for p in sig.params[len(args):]:
                    if p.default is None:
                        break
                    if isinstance(p.default, n.ParamRef):
                        value = given[p.default.name]
                    else:
                        try:
                            value = _Resolver().raw(_raw_of_node(p.default), _Scope(None, None), {})
                        except TreeError:
                            break
                    given[p.name] = value
                    args.append(value)
            return {"template": t["template"], "args": args}
        if isinstance(t, dict) and "member" in t:
            return {"member": t["member"], "of": walk(t["of"])}
        if isinstance(t, dict) and "op" in t:
            return {"op": t["op"], "args": [walk(a) for a in t["args"]]}
        return t

    return walk(tree)


# --- comparison ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Difference:
    path: str
    ck: Tree
    ckast: Tree

    def __str__(self) -> str:
        return f"{self.path}: CK {json.dumps(self.ck)} / ckast {json.dumps(self.ckast)}"


_ANY = object()


@dataclass(frozen=True)
class ProfileDifference:
    """A named, documented difference between CK's kernel and ckast's that the test accepts.

    `path` is an fnmatch pattern over Difference.path; `ck`/`ckast` (when given) must equal the two
    sides (use `MISSING` for an argument one side does not spell)."""

    name: str
    reason: str
    path: str
    ck: Tree = _ANY
    ckast: Tree = _ANY

    def matches(self, d: Difference) -> bool:
        return (fnmatch.fnmatchcase(d.path, self.path)
                and (self.ck is _ANY or self.ck == d.ck) and (self.ckast is _ANY or self.ckast == d.ckast))


MISSING = "<missing>"
"""The value of an argument one tree has and the other does not."""


@dataclass
class Comparison:
    unexplained: list[Difference]
    explained: dict[str, list[Difference]]
    unused: list[str]

    @property
    def ok(self) -> bool:
        return not self.unexplained and not self.unused

    def report(self) -> str:
        lines = [f"unexplained: {d}" for d in self.unexplained]
        lines += [f"allowed ({name}): {d}" for name, ds in self.explained.items() for d in ds]
        lines += [f"allowance matched nothing: {name}" for name in self.unused]
        return "\n".join(lines) or "equal"


def differences(ck: Tree, ckast: Tree, path: str = "") -> list[Difference]:
    """Every place the two trees differ; a differing template name stops the descent there."""
    if isinstance(ck, dict) and isinstance(ckast, dict) and "template" in ck and "template" in ckast:
        if ck["template"] != ckast["template"]:
            return [Difference(path or "/", ck["template"], ckast["template"])]
        out: list[Difference] = []
        a, b = ck["args"], ckast["args"]
        for i in range(max(len(a), len(b))):
            sub = f"{path}/{ck['template']}/{i}" if path else f"{ck['template']}/{i}"
            if i >= len(a) or i >= len(b):
                out.append(Difference(sub, a[i] if i < len(a) else MISSING, b[i] if i < len(b) else MISSING))
            else:
                out += differences(a[i], b[i], sub)
        return out
    if isinstance(ck, dict) and isinstance(ckast, dict) and "member" in ck and ck.get("member") == ckast.get("member"):
        return differences(ck["of"], ckast["of"], f"{path}/::{ck['member']}")
    if type(ck) is type(ckast) and ck == ckast:
        return []
    return [Difference(path or "/", ck, ckast)]


def compare(ck: Tree, ckast: Tree, allowed: Iterable[ProfileDifference] = (), profile: object = None) -> Comparison:
    """Differences of CK's tree and ckast's, each explained by the first allowance that matches or
    unexplained; with `profile`, both trees are `normalize`d against its catalog first."""
    if profile is not None:
        ck, ckast = normalize(ck, profile), normalize(ckast, profile)
    allowed = list(allowed)
    explained: dict[str, list[Difference]] = {}
    unexplained: list[Difference] = []
    for d in differences(ck, ckast):
        hit = next((a for a in allowed if a.matches(d)), None)
        if hit is None:
            unexplained.append(d)
        else:
            explained.setdefault(hit.name, []).append(d)
    return Comparison(unexplained, explained, [a.name for a in allowed if a.name not in explained])
