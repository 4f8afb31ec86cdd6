"""The translation unit that wraps a header for a compile check, built from nodes.

It includes the header and takes the address of every launcher entry point, so the compiler
instantiates every template the entry points reach.
"""

from __future__ import annotations

from collections.abc import Sequence

from ckast import nodes as n


def wrapper_tu(header: str, entry_points: Sequence[str]) -> str:
    """Source of a TU including `header` (a relative path, found through `-I`) and ODR-using each
    `a::b::f` in `entry_points`."""
    uses = [
        n.VarDecl(
            n.Const(n.Ptr(n.Builtin("auto"))),
            f"ckast_odr_use_{i}",
            n.UnOp("&", n.ident(*entry.split("::"))),
            static=True,
            maybe_unused=True,
        )
        for i, entry in enumerate(entry_points)
    ]
    return n.to_source(n.File(uses, includes=[n.Header(header)], pragma_once=False))
