"""C++ identifiers, header paths and the validation every node applies to them."""

from __future__ import annotations

import re

from .marks import checked

KEYWORDS = frozenset(
    """
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class co_await co_return co_yield compl concept const consteval constexpr
    constinit const_cast continue decltype default delete do double dynamic_cast else enum
    explicit export extern false float for friend goto if inline int long mutable namespace new
    noexcept not not_eq nullptr operator or or_eq private protected public register
    reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
    switch template this thread_local throw true try typedef typeid typename union unsigned using
    virtual void volatile wchar_t while xor xor_eq
    """.split()
)
"""Reserved words of C++20 (alternative tokens included): never usable as identifiers."""

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_HEADER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+\-/]*\Z")


class NameError_(ValueError):
    """A string that is not acceptable where C++ needs an identifier or a header path."""


def identifier(value: object) -> str:
    """Return `value` if it is a usable C++ identifier, else raise `NameError_` saying why.

    Rules: ASCII letters, digits and underscores, not starting with a digit; not a keyword; not a
    name reserved to the implementation anywhere (containing `__` or starting with `_` + capital).
    """
    if type(value) is str and value in _IDENTIFIERS:
        return value
    if not isinstance(value, str):
        raise NameError_(f"identifier must be a string, got {type(value).__name__}")
    text = checked(value)
    if not _IDENT.match(text):
        raise NameError_(f"{value!r} is not a C++ identifier")
    if text in KEYWORDS:
        raise NameError_(f"{value!r} is a C++ keyword")
    if "__" in text or (len(text) > 1 and text[0] == "_" and text[1].isupper()):
        raise NameError_(f"{value!r} is reserved to the C++ implementation")
    if text is value and len(_IDENTIFIERS) < 1 << 16:
        _IDENTIFIERS.add(value)
    return value


_IDENTIFIERS: set[str] = set()
"""Strings already accepted by `identifier` (the rules never change; marked text is never kept)."""


def header_path(value: object) -> str:
    """Return `value` if it is a safe `#include` path (relative, no quotes, no `..`)."""
    if not isinstance(value, str) or not _HEADER.match(checked(value)):
        raise NameError_(f"{value!r} is not an acceptable header path")
    if any(part in ("", ".", "..") for part in checked(value).split("/")):
        raise NameError_(f"{value!r} has an empty, '.' or '..' path component")
    return value
