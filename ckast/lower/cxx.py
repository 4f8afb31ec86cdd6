"""Small builders shared by variants: common node shapes spelled once."""

from __future__ import annotations

from collections.abc import Sequence

from ckast import nodes as n


def alias_or_template(params: Sequence[n.Param], name: str, target: n.Type) -> tuple[n.Decl, n.Signature | None]:
    """`using name = target;`, or `template <params> using name = target;` when params exist.

    Returns the declaration and, for the template form, the signature later uses bind against.
    """
    alias = n.UsingAlias(name, target)
    if not params:
        return alias, None
    return n.TemplateDecl(params, alias), n.Signature(name, (name,), "alias", params)


def use(name: str, sig: n.Signature | None, **args: object) -> n.Type:
    """A reference to a local alias declared by `alias_or_template` (binding `args` if templated)."""
    return n.type_of(sig(**args)) if sig is not None else n.type_of(name)


def constexpr(type_: n.Type, name: str, value: object) -> n.VarDecl:
    """`static constexpr T name = value;` (ints and bools become literals)."""
    init = value if isinstance(value, n.Expr) else n.BoolLit(value) if isinstance(value, bool) else n.IntLit(value)
    return n.VarDecl(type_, name, init, static=True, constexpr=True)


def c_str() -> n.Type:
    return n.Ptr(n.Const(n.Builtin("char")))
