"""The escape hatch: a small C++ type-id parser that yields nodes or refuses.

Catalog data spells default template arguments as text (`"ck_tile::tuple<>"`,
`"ck_tile::element_wise::PassThrough"`, `"AsDataType_"`). `parse_type` turns such text into the
same nodes builders use, so no text ever reaches the printer unparsed. Grammar:

    type   := ["const"] base {"*" | "&"}
    base   := builtin | qualname ["<" [arg {"," arg}] ">"]
    arg    := type | integer | "true" | "false"

A qualified name is resolved by the caller's `resolve` callback to a catalog `Symbol`, a
`Signature` (required when template arguments follow; they bind to its parameters in order), or
None for a plain name.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .base import Node, Type
from .expr import BoolLit, IntLit
from .names import identifier
from .symbols import Symbol
from .templates import Signature
from .types import BUILTIN_TYPES, Builtin, Const, LRef, Name, Ptr, TypeName

Resolver = Callable[[tuple[str, ...]], "Symbol | Signature | None"]

_TOKEN = re.compile(r"\s*(?:(::)|([A-Za-z_][A-Za-z0-9_]*)|(-?[0-9]+)|([<>,*&]))")


class ParseError(ValueError):
    """Text that is not a type-id of the supported subset."""


def parse_type(text: str, resolve: Resolver) -> Type:
    """Parse `text` into a Type node, or raise ParseError naming the offending position."""
    parser = _Parser(text, resolve)
    result = parser.type()
    parser.expect_end()
    return result


class _Parser:
    def __init__(self, text: str, resolve: Resolver) -> None:
        self.text = text
        self.resolve = resolve
        self.tokens: list[tuple[int, str]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise ParseError(f"cannot parse type {text!r} at column {pos}")
            self.tokens.append((m.start(m.lastindex or 0), m.group(m.lastindex or 0)))
            pos = m.end()
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self) -> str:
        if self.i >= len(self.tokens):
            raise ParseError(f"unexpected end of type {self.text!r}")
        self.i += 1
        return self.tokens[self.i - 1][1]

    def expect(self, token: str) -> None:
        got = self.take()
        if got != token:
            raise ParseError(f"expected {token!r} in type {self.text!r}, got {got!r}")

    def expect_end(self) -> None:
        if self.peek() is not None:
            raise ParseError(f"unexpected {self.peek()!r} in type {self.text!r}")

    def type(self) -> Type:
        const = self.peek() == "const"
        if const:
            self.take()
        result: Type = self.base()
        if const:
            result = Const(result)
        while self.peek() in ("*", "&"):
            result = Ptr(result) if self.take() == "*" else LRef(result)
        return result

    def base(self) -> Type:
        first = self.take()
        if first in BUILTIN_TYPES:
            return Builtin(first)
        parts = [identifier(first)]
        while self.peek() == "::":
            self.take()
            parts.append(identifier(self.take()))
        qualname = tuple(parts)
        target = self.resolve(qualname)
        if self.peek() == "<":
            if not isinstance(target, Signature):
                raise ParseError(f"{'::'.join(qualname)} is not a known template (in {self.text!r})")
            return TypeName(Name((self.bind(target, self.args()),)))
        if isinstance(target, Signature):
            raise ParseError(f"template {'::'.join(qualname)} needs arguments (in {self.text!r})")
        return TypeName(Name((target,)) if isinstance(target, Symbol) else Name(qualname))

    def args(self) -> list[Node]:
        self.expect("<")
        args: list[Node] = []
        if self.peek() == ">":
            self.take()
            return args
        while True:
            token = self.peek()
            if token is not None and re.fullmatch(r"-?[0-9]+", token):
                args.append(IntLit(int(self.take())))
            elif token in ("true", "false"):
                args.append(BoolLit(self.take() == "true"))
            else:
                args.append(self.type())
            if self.take() == ">":
                return args
            if self.tokens[self.i - 1][1] != ",":
                raise ParseError(f"expected ',' or '>' in type {self.text!r}")

    @staticmethod
    def bind(sig: Signature, args: list[Node]):
        named: dict[str, object] = {}
        for i, param in enumerate(sig.params):
            if param.is_pack:
                named[param.name] = tuple(args[i:])
                break
            if i < len(args):
                named[param.name] = args[i]
        if len(args) > len(sig.params) and not (sig.params and sig.params[-1].is_pack):
            raise sig.error(f"too many template arguments ({len(args)})")
        return sig(**named)
