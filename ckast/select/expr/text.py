"""The selection language as text: a compact infix rendering (named quantities, lookups, columns and fields by
name), what `why_not` shows of a condition."""

from __future__ import annotations

from .nodes import Col, Const, Expr, Field, Hw, Lookup, Named, Op, Over

INFIX = ("+", "-", "*", "/", "//", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or")
_PREFIX = {"not": "not ", "neg": "-"}


def text(node: Expr) -> str:
    if isinstance(node, Const):
        return repr(node.value) if node.type is str else str(node.value).lower()
    if isinstance(node, Field):
        return node.name if node.index is None else f"{node.name}[{node.index}]"
    if isinstance(node, (Col, Hw, Named, Lookup)):
        return node.name
    if isinstance(node, Over):
        return f"{node.op}({text(node.arg)})"
    if node.op in _PREFIX:
        return _PREFIX[node.op] + _operand(node.args[0])
    if node.op in INFIX:
        return f" {node.op} ".join(_operand(a) for a in node.args)
    return f"{node.op}({', '.join(text(a) for a in node.args)})"


def _operand(node: Expr) -> str:
    return f"({text(node)})" if isinstance(node, Op) and (node.op in INFIX or node.op in _PREFIX) else text(node)
