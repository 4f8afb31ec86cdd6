"""Declarations, preprocessor blocks and the file node."""

from __future__ import annotations

import attrs

from .base import Decl, Expr, Node, Stmt, Type, as_tuple, each, instances_of, node
from .expr import FuncParam
from .names import identifier
from .symbols import Header
from .templates import Param
from .types import Name


def _comment_text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("comment text must be a string")
    for line in value.split("\n"):
        if any(ord(c) < 32 or ord(c) == 127 for c in line):
            raise ValueError(f"comment has a control character: {line!r}")
        if line.endswith("\\"):
            raise ValueError("a comment line may not end with a backslash (line splice)")
    return value


@node
class Comment(Stmt, Decl):
    """`// text`, one `//` line per line of `text`."""

    text: str = attrs.field(converter=_comment_text)


@node
class UsingAlias(Stmt, Decl):
    """`using name = type;`."""

    name: str = attrs.field(converter=identifier)
    type: Type = attrs.field(validator=instances_of(Type))


@node
class UsingDirective(Decl):
    """`using namespace name;`."""

    namespace: Name = attrs.field(validator=instances_of(Name))


@node
class UsingDeclaration(Decl):
    """`using a::b;` (with `Base::Base` as the name, it inherits the constructors of `Base`)."""

    name: Name = attrs.field(validator=instances_of(Name))


@node
class Include(Decl):
    """`#include` at this point of a body (a File's own includes are printed at its top)."""

    header: Header = attrs.field(validator=instances_of(Header))


@node
class Define(Decl):
    """`#define macro` (an object-like macro without a value) at this point of a body."""

    macro: str = attrs.field(converter=identifier)


@node
class VarDecl(Stmt, Decl):
    """A variable or data member: `[[maybe_unused]] static inline constexpr T name = init;`.

    `brace` selects `T name{init}` (an absent init then prints `T name{}`).
    """

    type: Type = attrs.field(validator=instances_of(Type))
    name: str = attrs.field(converter=identifier)
    init: Expr | None = attrs.field(default=None, validator=instances_of(Expr, optional=True))
    brace: bool = False
    static: bool = False
    inline: bool = False
    constexpr: bool = False
    maybe_unused: bool = False


@node
class StaticAssert(Stmt, Decl):
    cond: Expr = attrs.field(validator=instances_of(Expr))
    message: str | None = attrs.field(default=None, validator=instances_of(str, optional=True))


@node
class FunctionDef(Decl):
    """A function definition (or, with `body=None`, a declaration)."""

    name: str = attrs.field(converter=identifier)
    returns: Type = attrs.field(validator=instances_of(Type))
    params: tuple[FuncParam, ...] = attrs.field(default=(), converter=as_tuple, validator=each(FuncParam))
    body: tuple[Stmt, ...] | None = attrs.field(default=(), converter=lambda b: None if b is None else as_tuple(b))
    static: bool = False
    inline: bool = False
    constexpr: bool = False
    noexcept: bool = False


@node
class Access(Decl):
    """An access specifier inside a struct or class."""

    level: str = attrs.field(validator=attrs.validators.in_(("public", "protected", "private")))


@node
class Struct(Decl):
    """`struct name : bases { body };` (`is_class` prints `class`)."""

    name: str = attrs.field(converter=identifier)
    body: tuple[Decl, ...] = attrs.field(default=(), converter=as_tuple, validator=each(Decl))
    bases: tuple[Type, ...] = attrs.field(default=(), converter=as_tuple, validator=each(Type))
    is_class: bool = False


@node
class ForwardDecl(Decl):
    """`struct name;` (`is_class` prints `class`): a declaration without a definition."""

    name: str = attrs.field(converter=identifier)
    is_class: bool = False


@node
class EnumDecl(Decl):
    name: str = attrs.field(converter=identifier)
    values: tuple[str, ...] = attrs.field(converter=lambda v: tuple(identifier(x) for x in as_tuple(v)))
    scoped: bool = True
    underlying: Type | None = attrs.field(default=None, validator=instances_of(Type, optional=True))


@node
class TemplateDecl(Decl):
    """`template <params> decl` for a struct (or its forward declaration), alias, function or variable."""

    params: tuple[Param, ...] = attrs.field(converter=as_tuple, validator=each(Param))
    decl: Decl = attrs.field(validator=instances_of(Struct, ForwardDecl, UsingAlias, FunctionDef, VarDecl))


@node
class Namespace(Decl):
    """`namespace name { body }`; `name=None` is an unnamed namespace."""

    name: str | None = attrs.field(converter=lambda n: None if n is None else identifier(n))
    body: tuple[Decl, ...] = attrs.field(default=(), converter=as_tuple, validator=each(Decl))


@node
class IfDef(Decl):
    """`#ifdef macro` (or `#ifndef` when `negate`) with an optional `#else` part."""

    macro: str = attrs.field(converter=identifier)
    then: tuple[Decl, ...] = attrs.field(converter=as_tuple, validator=each(Decl))
    else_: tuple[Decl, ...] = attrs.field(default=(), converter=as_tuple, validator=each(Decl))
    negate: bool = False


@node
class File(Node):
    """A whole source file: leading comment, `#pragma once`, includes, declarations."""

    body: tuple[Decl, ...] = attrs.field(converter=as_tuple, validator=each(Decl))
    includes: tuple[Header, ...] = attrs.field(default=(), converter=as_tuple, validator=each(Header))
    preamble: str = attrs.field(default="", converter=_comment_text)
    pragma_once: bool = True
