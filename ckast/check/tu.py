"""The translation unit that wraps a header for a compile check, built from nodes.

It includes the header and defines one external function per launcher entry point that calls
it, so the compiler instantiates (and, in codegen mode, emits) every template the entry points
reach. Calling rather than taking an address also works for overloaded entry points.
"""

from __future__ import annotations

from collections.abc import Sequence

from ckast import nodes as n
from ckast.lower.identity import STREAM_CONFIG, EntryPoint


def _type(qualified: str) -> n.Type:
    return n.TypeName(n.Name(tuple(qualified.split("::"))))


def wrapper_tu(header: str, entry_points: Sequence[EntryPoint]) -> str:
    """Source of a TU including `header` (a relative path, found through `-I`) and calling each entry point."""
    uses = [
        n.FunctionDef(
            f"ckast_use_{i}",
            n.Builtin("float"),
            [n.FuncParam(n.LRef(n.Const(_type(e.args))), "args"),
             n.FuncParam(n.LRef(n.Const(_type(STREAM_CONFIG))), "stream")],
            [n.Return(n.Call(n.ident(*e.function.split("::")), [n.ident("args"), n.ident("stream")]))],
        )
        for i, e in enumerate(entry_points)
    ]
    return n.to_source(n.File(uses, includes=[n.Header(header)], pragma_once=False))
