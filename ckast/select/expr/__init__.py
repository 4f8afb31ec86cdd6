"""ckast's selection language: one typed expression language for the applicability conditions
(`select.applicability`), the features (`select.features`) and the analytic model (`select.analytic`).

A rule is data: a tree of typed nodes over a problem's fields, a kernel table's columns and a hardware
profile's figures (`nodes`: the types, nodes and operations, and their semantics), evaluated for every
kernel of a table at once over numpy, for one problem or many (`evaluate`), shown as text (`text`) and
lowered to C++ with the same values (`ckast.select.cxx`).
"""

from __future__ import annotations

from .evaluate import ProblemsScope, Scope, problem_values, problems_values
from .nodes import (
    FALSE,
    TRUE,
    Col,
    Const,
    Expr,
    Field,
    Hw,
    Lookup,
    Named,
    Op,
    Over,
    all_of,
    any_of,
    ceil,
    ceil_div,
    children,
    floor,
    gcd,
    interned,
    leaves,
    log2,
    lookup,
    maximum,
    minimum,
    trunc,
    walk,
    where,
)
from .text import text

__all__ = [
    "FALSE", "TRUE", "Col", "Const", "Expr", "Field", "Hw", "Lookup", "Named", "Op", "Over", "ProblemsScope",
    "Scope", "all_of", "any_of", "ceil", "ceil_div", "children", "floor", "gcd", "interned", "leaves", "log2",
    "lookup", "maximum", "minimum", "problem_values", "problems_values", "text", "trunc", "walk", "where",
]
