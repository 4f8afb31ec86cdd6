"""Template signatures and template-ids bound to them by parameter name.

A `Signature` is one catalog entry (class template, alias template or function template) of one
API profile. Calling it with keyword arguments builds a `TemplateId`; binding checks names, kinds
and required parameters at once and names the template, parameter and profile when it refuses.
The printer orders arguments by the signature and fills skipped defaulted parameters.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from .base import Expr, Node, Type, as_tuple, each, instances_of, node
from .marks import Slot
from .names import identifier
from .symbols import EnumSpec, Header, _qualname

ParamKind = Literal["type", "int", "bool", "enum", "type_pack", "int_pack"]
PARAM_KINDS: tuple[str, ...] = ("type", "int", "bool", "enum", "type_pack", "int_pack")


class BindError(ValueError):
    """A template-id could not be built against its signature."""


@node
class ParamRef(Node):
    """Default of a template parameter that repeats an earlier parameter (`C_ = A_`)."""

    name: str = attrs.field(converter=identifier)


@node
class PackExpansion(Type, Expr):
    """`of...`: a template parameter pack (of types or of values) expanded in an argument list."""

    of: Node = attrs.field(validator=instances_of(Type, Expr))


@node
class Param(Node):
    """One template parameter: name, kind, value type (`int`/`enum` kinds) and default."""

    name: str = attrs.field(converter=identifier)
    kind: str = attrs.field(validator=attrs.validators.in_(PARAM_KINDS))
    ctype: Type | None = attrs.field(default=None, validator=instances_of(Type, optional=True))
    enum: EnumSpec | None = attrs.field(default=None, validator=instances_of(EnumSpec, optional=True))
    default: Node | None = attrs.field(
        default=None, validator=instances_of(Type, Expr, ParamRef, optional=True)
    )

    @property
    def is_pack(self) -> bool:
        return self.kind.endswith("_pack")

    def __attrs_post_init__(self) -> None:
        if (self.kind == "enum") != (self.enum is not None):
            raise ValueError(f"parameter {self.name}: an enum spec goes with kind 'enum' only")
        if self.is_pack and self.default is not None:
            raise ValueError(f"parameter pack {self.name} cannot have a default")


@node
class Signature(Node):
    """A template of one API profile: `qualname<params...>`, found in `header`."""

    key: str = attrs.field(converter=identifier)
    qualname: tuple[str, ...] = attrs.field(converter=_qualname)
    kind: str = attrs.field(validator=attrs.validators.in_(("struct", "alias", "function")))
    params: tuple[Param, ...] = attrs.field(converter=as_tuple, validator=each(Param))
    header: Header | None = None
    profile: str = ""
    absent_params: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=as_tuple)
    """Parameters other profiles have and this one lacks, with the reason (for clear refusals)."""

    def __attrs_post_init__(self) -> None:
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.key}: duplicate parameter names")
        if any(p.is_pack for p in self.params[:-1]):
            raise ValueError(f"{self.key}: only the last parameter may be a pack")
        for i, p in enumerate(self.params):
            if isinstance(p.default, ParamRef) and p.default.name not in names[:i]:
                raise ValueError(f"{self.key}.{p.name}: default refers to unknown {p.default.name}")

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        for absent, reason in self.absent_params:
            if absent == name:
                raise self.error(f"parameter {name} does not exist in this profile: {reason}")
        raise self.error(f"unknown parameter {name!r}; parameters are {', '.join(p.name for p in self.params)}")

    def has_param(self, name: str) -> bool:
        return any(p.name == name for p in self.params)

    def error(self, message: str) -> BindError:
        return BindError(f"{'::'.join(self.qualname)} (profile {self.profile or '?'}): {message}")

    def __call__(self, **args: Any) -> TemplateId:
        """Bind arguments by parameter name; Python ints/bools become literals."""
        return TemplateId(self, tuple((name, _coerce(value)) for name, value in args.items()))


def _coerce(value: Any) -> Any:
    from .expr import BoolLit, IntLit  # expr depends on this module; import when binding

    if isinstance(value, bool):
        return BoolLit(value)
    if isinstance(value, (int, Slot)):
        return IntLit(value)
    if isinstance(value, (list, tuple)):
        return tuple(_coerce(v) for v in value)
    return value


def _expr_of_kind(value: object, kind: str) -> bool:
    return isinstance(value, Expr) and value.literal_kind in (None, kind)


def _fits(param: Param, value: object) -> bool:
    if param.kind == "type":
        return isinstance(value, Type)
    if param.kind in ("int", "bool"):
        return _expr_of_kind(value, param.kind)
    if param.kind == "enum":
        if isinstance(value, Expr) and value.literal_kind == "enum":
            return value.spec.key == param.enum.key  # type: ignore[attr-defined, union-attr]
        return _expr_of_kind(value, "enum")
    item_kind = "type" if param.kind == "type_pack" else "int"
    return isinstance(value, tuple) and all(_fits(Param("x", item_kind), v) for v in value)


_KIND_WORDS = {
    "type": "a type",
    "int": "an integral constant expression",
    "bool": "a bool constant expression",
    "type_pack": "a tuple of types",
    "int_pack": "a tuple of integral constant expressions",
}


def _describe(value: object) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_describe(v) for v in value) + ")"
    return type(value).__name__


@node
class TemplateId(Node):
    """`Signature<args>` with arguments held by parameter name, in signature order."""

    signature: Signature = attrs.field(validator=instances_of(Signature))
    args: tuple[tuple[str, Any], ...] = attrs.field(converter=as_tuple)

    def __attrs_post_init__(self) -> None:
        sig = self.signature
        given = dict(self.args)
        if len(given) != len(self.args):
            raise sig.error("a parameter is given twice")
        for name, value in self.args:
            param = sig.param(name)
            if not _fits(param, value):
                want = _KIND_WORDS.get(param.kind) or f"a value of enum {param.enum.key}"  # type: ignore[union-attr]
                raise sig.error(f"parameter {name} expects {want}, got {_describe(value)}")
        missing = [p.name for p in sig.params if p.name not in given and p.default is None and not p.is_pack]
        if missing:
            raise sig.error(f"missing argument for {', '.join(missing)} (no default)")
        order = {p.name: i for i, p in enumerate(sig.params)}
        ordered = tuple(sorted(self.args, key=lambda item: order[item[0]]))
        object.__setattr__(self, "args", ordered)

    def positional(self) -> tuple[Any, ...]:
        """Arguments as C++ spells them: up to the last given one, gaps filled by defaults."""
        given = dict(self.args)
        params = self.signature.params
        last = max((i for i, p in enumerate(params) if p.name in given), default=-1)
        resolved: dict[str, Any] = {}
        out: list[Any] = []
        for p in params[: last + 1]:
            if p.name in given:
                value = given[p.name]
            elif isinstance(p.default, ParamRef):
                value = resolved[p.default.name]
            else:
                value = p.default
            resolved[p.name] = value
            if p.is_pack:
                out.extend(value)
            else:
                out.append(value)
        return tuple(out)
