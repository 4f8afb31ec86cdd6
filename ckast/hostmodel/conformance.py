"""C++ checks that a profile's compiled host model declares its catalog exactly (so it cannot drift).

- Every class template is redeclared with the catalog's parameter list (defaults dropped): C++
  accepts a redeclaration only with the same number of parameters of the same kinds and value types.
- For every template (class, alias or function), `X<required arguments>` and `X<every argument,
  defaults spelled out>` name the same entity: the catalog's kinds are accepted and the defaults are
  the catalog's. (A function template is a variable template in the model; its specializations
  compare by address.)
- Every enumerator exists, in catalog order, with the catalog's scopedness.
- Every namespaced catalog type and function is declared (`using` names it).

Entities of the standard library are not the model's and are not checked.
"""

from __future__ import annotations

import attrs

from ckast import nodes as n
from ckast.catalog import Profile

from .handwritten import is_standard
from .jit import UNOPTIMIZED, session
from .model import profile_namespace

CHECKS = "catalog_conformance"
_PLACEHOLDER = n.Builtin("int")


def _trait(name: str, *params: str) -> n.Signature:
    return n.Signature(name, ("std", name), "alias", [n.Param(p, "type") for p in params])


IS_SAME = _trait("is_same_v", "A", "B")
IS_CONVERTIBLE = _trait("is_convertible_v", "From", "To")


def _placeholder(p: n.Param) -> object:
    if p.kind == "type":
        return _PLACEHOLDER
    if p.kind == "bool":
        return n.BoolLit(True)
    if p.kind == "enum":
        return n.EnumValue(p.enum, p.enum.values[0])
    return n.IntLit(1)


def _arguments(sig: n.Signature) -> tuple[dict[str, object], dict[str, object]]:
    """(the required arguments, every argument with the defaults spelled out)."""
    required = {p.name: _placeholder(p) for p in sig.params if p.default is None and not p.is_pack}
    every = dict(required)
    for p in sig.params:
        if p.is_pack:
            every[p.name] = ()
        elif p.default is not None:
            every[p.name] = every[p.default.name] if isinstance(p.default, n.ParamRef) else p.default
    return required, every


def _address(tid: n.TemplateId) -> n.Expr:
    return n.UnOp("&", n.Id(n.Name((tid,))))


def _defaults(sig: n.Signature) -> n.StaticAssert:
    required, every = (sig(**args) for args in _arguments(sig))
    if sig.kind == "function":
        same = n.BinOp("==", _address(required), _address(every))
    else:
        same = n.Id(n.Name((IS_SAME(A=n.type_of(required), B=n.type_of(every)),)))
    return n.StaticAssert(same, f"{sig.key}: the catalog's kinds and defaults")


def _redeclaration(sig: n.Signature) -> n.Decl:
    """`template <catalog parameters> struct X;` in X's namespace."""
    params = [attrs.evolve(p, default=None) for p in sig.params]
    decl: n.Decl = n.TemplateDecl(params, n.ForwardDecl(sig.qualname[-1]))
    for part in reversed(sig.qualname[:-1]):
        decl = n.Namespace(part, [decl])
    return decl


def _enum_checks(spec: n.EnumSpec) -> list[n.Decl]:
    enum = n.type_of(spec)
    convertible = n.Id(n.Name((IS_CONVERTIBLE(From=enum, To=n.Builtin("int")),)))
    checks: list[n.Decl] = [n.StaticAssert(n.UnOp("!", convertible) if spec.scoped else convertible,
                                           f"{spec.key}: scoped={spec.scoped}")]
    checks += [n.StaticAssert(n.BinOp("==", n.StaticCast(n.Builtin("int"), n.EnumValue(spec, value)), n.IntLit(i)),
                              f"{spec.key}::{value} is enumerator {i}")
               for i, value in enumerate(spec.values)]
    return checks


def checks(p: Profile) -> list[n.Decl]:
    """Every check of profile `p`'s catalog, as declarations to compile inside the profile's namespace."""
    templates = [s for s in p.templates.values() if not is_standard(s.qualname)]
    inside: list[n.Decl] = [_defaults(s) for s in templates]
    for spec in p.enums.values():
        inside += _enum_checks(spec)
    inside += [n.UsingDeclaration(n.Name(sym.qualname)) for sym in p.symbols.values()
               if not is_standard(sym.qualname) and len(sym.qualname) > 1]
    return [*(_redeclaration(s) for s in templates if s.kind == "struct"), n.Namespace(CHECKS, inside)]


def verify(p: Profile) -> None:
    """Compile the checks of catalog `p` against the model of profile `p.name`; raises JitError naming
    what differs."""
    s = session()
    s.load(p.name)
    body = n.Namespace(profile_namespace(p.name), checks(p))
    s.cppdef(n.to_source(n.File([UNOPTIMIZED, body], pragma_once=False)))
