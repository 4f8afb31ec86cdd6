"""The generated half of the host model: one profile's catalog as C++ declarations, built as nodes.

For a profile the model file holds, in order: the catalog's enums; `behaviour/core.hpp`; the
model's support declarations (`ckast_model::feature`, `ckast_model::dispatcher_rules` (the name of the
rule set CK's dispatcher checks, per op kind), one tag per template key, one `params`
struct per template naming each argument by its catalog parameter name, `enum_name` overloads);
an empty struct for every catalog type nobody writes by hand; every catalog template, declared
with exactly the catalog's parameters, kinds and defaults; the hand-written behaviour files.

A class template `X<args>` derives from `ckast_model::behaviour<tag::X, params::X<args>>` (and
inherits its constructors); an alias template names `ckast_model::alias_t<tag::X, params::X<args>>`;
a function template is a variable template of type `ckast_model::function<tag::X, params::X<args>>`,
so `X<args>(call args)` reads as in CK. The file has no include guard: it is included once inside
each profile's namespace (`profile_namespace`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import attrs

from ckast import nodes as n
from ckast.catalog import Profile, load_profile, profile_names

from .handwritten import BEHAVIOUR, CORE, HANDWRITTEN, is_standard

MODEL = "ckast_model"
PREAMBLE = "ckast host model: declarations generated from the signature catalog. Do not edit."


def profile_namespace(profile: str) -> str:
    """The C++ namespace holding a profile's model and units: `ck-2025.11` -> `ckjit_ck_2025_11`."""
    return "ckjit_" + re.sub(r"\W", "_", profile)


def _support(key: str, *params: n.Param, kind: str = "struct") -> n.Signature:
    return n.Signature(key, (MODEL, key), kind, params)


BEHAVIOUR_SIG = _support("behaviour", n.Param("Tag", "type"), n.Param("Params", "type"))
ALIAS_SIG = _support("alias_t", n.Param("Tag", "type"), n.Param("Params", "type"), kind="alias")
FUNCTION_SIG = _support("function", n.Param("Tag", "type"), n.Param("Params", "type"))
TYPE_PACK_SIG = _support("type_pack", n.Param("Ts", "type_pack"))
VALUE_PACK_SIG = _support("value_pack", n.Param("T", "type"), n.Param("Vs", "int_pack"))


def tag(key: str) -> n.Type:
    """`ckast_model::tag::<key>`: the identity of a catalog template in behaviour specializations."""
    return n.type_of(MODEL, "tag", key)


def _arg(index: int) -> str:
    return f"Arg{index}"


def params_signature(sig: n.Signature) -> n.Signature:
    """`ckast_model::params::<key>`: the template's arguments, all required, named `Arg<i>`."""
    params = tuple(attrs.evolve(p, name=_arg(i), default=None) for i, p in enumerate(sig.params))
    return n.Signature(sig.key, (MODEL, "params", sig.key), "struct", params)


def _forwarded(p: n.Param, name: str) -> object:
    """The template parameter `name` as an argument: a type, a value or an expanded pack."""
    if p.kind == "type":
        return n.type_of(name)
    if p.kind == "type_pack":
        return (n.PackExpansion(n.type_of(name)),)
    if p.kind == "int_pack":
        return (n.PackExpansion(n.ident(name)),)
    return n.ident(name)


def params_of(sig: n.Signature) -> n.Type:
    """`ckast_model::params::<key><P...>` with the template's own parameters as arguments."""
    target = params_signature(sig)
    return n.type_of(target(**{_arg(i): _forwarded(p, p.name) for i, p in enumerate(sig.params)}))


def _value_type(p: n.Param) -> n.Type:
    if p.kind == "bool":
        return n.Builtin("bool")
    if p.kind == "enum":
        return n.type_of(p.enum)
    assert p.ctype is not None, f"integral parameter {p.name} has no ctype"
    return p.ctype


def _params_struct(sig: n.Signature) -> n.TemplateDecl:
    members: list[n.Decl] = []
    for i, p in enumerate(sig.params):
        arg = _forwarded(p, _arg(i))
        if p.kind == "type":
            members.append(n.UsingAlias(p.name, arg))
        elif p.kind == "type_pack":
            members.append(n.UsingAlias(p.name, n.type_of(TYPE_PACK_SIG(Ts=arg))))
        elif p.kind == "int_pack":
            members.append(n.UsingAlias(p.name, n.type_of(VALUE_PACK_SIG(T=_value_type(p), Vs=arg))))
        else:
            members.append(n.VarDecl(_value_type(p), p.name, arg, static=True, constexpr=True))
    return n.TemplateDecl(params_signature(sig).params, n.Struct(sig.key, members))


def _enum_name(spec: n.EnumSpec) -> n.FunctionDef:
    """`enum_name(E value)`: the enumerator's name, for the log."""
    value = n.ident("value")
    body: list[n.Stmt] = [
        n.If(n.BinOp("==", value, n.EnumValue(spec, v)), [n.Return(n.StrLit(v))]) for v in spec.values
    ]
    body.append(n.Return(n.StrLit("?")))
    return n.FunctionDef("enum_name", n.Ptr(n.Const(n.Builtin("char"))), [n.FuncParam(n.type_of(spec), "value")], body)


def template_keys() -> tuple[str, ...]:
    """Every template key of every profile: tags exist for all, so shared behaviour files compile in each."""
    return tuple(sorted({key for name in profile_names() for key in load_profile(name).templates}))


def _modelled(p: Profile) -> list[n.Signature]:
    """The profile's non-standard templates, each after the templates its defaults name."""
    sigs = {k: s for k, s in p.templates.items() if not is_standard(s.qualname)}
    order: list[n.Signature] = []
    done: set[str] = set()

    def visit(key: str) -> None:
        if key in done:
            return
        done.add(key)
        for dep in sorted(_template_deps(sigs[key])):
            if dep in sigs:
                visit(dep)
        order.append(sigs[key])

    for key in sorted(sigs):
        visit(key)
    return order


def _template_deps(sig: n.Signature) -> set[str]:
    found: set[str] = set()
    stack: list[object] = [p.default for p in sig.params if p.default is not None]
    while stack:
        current = stack.pop()
        if isinstance(current, n.TemplateId):
            found.add(current.signature.key)
            stack.extend(v for _, v in current.args)
        elif isinstance(current, n.Node):
            stack.extend(getattr(current, f.name) for f in attrs.fields(type(current)))
        elif isinstance(current, tuple):
            stack.extend(current)
    return found


def _declaration(sig: n.Signature) -> n.TemplateDecl:
    name = sig.qualname[-1]
    if sig.kind == "alias":
        target = n.type_of(ALIAS_SIG(Tag=tag(sig.key), Params=params_of(sig)))
        return n.TemplateDecl(sig.params, n.UsingAlias(name, target))
    if sig.kind == "function":
        callable_ = n.type_of(FUNCTION_SIG(Tag=tag(sig.key), Params=params_of(sig)))
        return n.TemplateDecl(sig.params, n.VarDecl(callable_, name, brace=True, inline=True, constexpr=True))
    base = BEHAVIOUR_SIG(Tag=tag(sig.key), Params=params_of(sig))
    body = [n.UsingAlias("ckast_tag", tag(sig.key)), n.UsingDeclaration(n.Name((base, "behaviour")))]
    return n.TemplateDecl(sig.params, n.Struct(name, body, bases=[n.type_of(base)]))


def _in_namespaces(items: Iterable[tuple[tuple[str, ...], n.Decl]]) -> Iterator[n.Decl]:
    """Declarations wrapped in their namespaces, consecutive ones of one namespace together."""
    groups: list[tuple[tuple[str, ...], list[n.Decl]]] = []
    for where, decl in items:
        if groups and groups[-1][0] == where:
            groups[-1][1].append(decl)
        else:
            groups.append((where, [decl]))
    for where, decls in groups:
        for part in reversed(where):
            decls = [n.Namespace(part, decls)]
        yield from decls


def _types(p: Profile) -> list[tuple[tuple[str, ...], n.Decl]]:
    """An empty struct for each catalog type that is neither hand-written nor standard.

    The catalog's functions are all hand-written (`handwritten.HANDWRITTEN`; a test keeps it so).
    """
    return [(sym.qualname[:-1], n.Struct(sym.qualname[-1]))
            for key, sym in sorted(p.symbols.items(), key=lambda item: item[1].qualname)
            if key not in HANDWRITTEN and not is_standard(sym.qualname)]


def model_file(p: Profile) -> n.File:
    """The generated model of profile `p` (see the module docstring for its layout)."""
    c_str = n.Ptr(n.Const(n.Builtin("char")))
    modelled = _modelled(p)
    support = n.Namespace(MODEL, [
        n.VarDecl(c_str, "profile", n.StrLit(p.name), inline=True, constexpr=True),
        n.Namespace("feature", [
            n.VarDecl(n.Builtin("bool"), name, n.BoolLit(value), inline=True, constexpr=True)
            for name, value in p.features.items()
        ]),
        n.Namespace("dispatcher_rules", [
            n.VarDecl(c_str, kind, n.StrLit(p.dispatcher_supports(kind).rules), inline=True, constexpr=True)
            for kind in sorted(p.dispatcher)
        ]),
        n.Namespace("tag", [
            n.Struct(key, [n.VarDecl(c_str, "name", n.StrLit(key), static=True, constexpr=True)])
            for key in template_keys()
        ]),
        n.Namespace("params", [_params_struct(s) for s in modelled]),
        *(_enum_name(spec) for spec in p.enums.values()),
    ])
    enums = [(spec.qualname[:-1], n.EnumDecl(spec.qualname[-1], spec.values, scoped=spec.scoped))
             for spec in sorted(p.enums.values(), key=lambda e: e.qualname) if spec.key not in HANDWRITTEN]
    templates = [(s.qualname[:-1], _declaration(s)) for s in modelled]
    body = [
        *_in_namespaces(enums),
        n.Include(n.Header(CORE)),
        support,
        *_in_namespaces(_types(p)),
        *_in_namespaces(templates),
        *(n.Include(n.Header(path)) for path in BEHAVIOUR),
    ]
    return n.File(body, preamble=PREAMBLE, pragma_once=False)


def model_headers(p: Profile) -> frozenset[str]:
    """The quoted headers the profile's model provides (the catalog's `include`s): units may include them."""
    found = (e.header for e in (*p.templates.values(), *p.symbols.values(), *p.enums.values()))
    return frozenset(h.path for h in found if h is not None and not h.system)


def unit_prelude(p: Profile, unit: str) -> n.Namespace:
    """Namespace `unit`, opened with a shadow of every model namespace that nominates the model's.

    Emitted registration code reopens `namespace ck_tile { namespace dispatcher {`; inside a unit that
    creates the unit's own `ck_tile::dispatcher`, which then finds the model's entities through the
    shadow's using-directive, while what the unit declares there stays in the unit.
    """
    outer = profile_namespace(p.name)
    spaces = {s.qualname[:i] for s in (*p.templates.values(), *p.symbols.values(), *p.enums.values())
              if not is_standard(s.qualname) for i in range(1, len(s.qualname))}

    def shadow(prefix: tuple[str, ...]) -> n.Namespace:
        children = sorted(s for s in spaces if len(s) == len(prefix) + 1 and s[:len(prefix)] == prefix)
        body = [n.UsingDirective(n.Name((outer, *prefix))), *(shadow(c) for c in children)]
        return n.Namespace(prefix[-1], body)

    return n.Namespace(unit, [shadow(s) for s in sorted(s for s in spaces if len(s) == 1)])
