"""Catalog truth: API profiles checked against real CK Tile headers (and CK's dispatcher headers, when a
tree has them), detected from a CK tree, diffed and drafted (`ckast api check | detect | diff | new`).

A CK tree is parsed once with libclang (`parse`); the catalog (`entries`) and the tree's declarations
(`model`) are compared by `compare`; `diff` compares two catalogs and `draft` writes a new profile. The
names below are imported on first use (PEP 562), so importing the package costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ckast.lazy import exports

if TYPE_CHECKING:
    from .diff import diff, diff_lines
    from .draft import Draft, draft, review_lines
    from .entries import Catalog, load_catalog, profile_ref
    from .parse import ApiUnavailable
    from .tree import ProfileMismatch, Report, declarations, detect, profile_for_tree, report

_SOURCE = {
    "diff": "diff", "diff_lines": "diff",
    "Draft": "draft", "draft": "draft", "review_lines": "draft",
    "Catalog": "entries", "load_catalog": "entries", "profile_ref": "entries",
    "ApiUnavailable": "parse",
    "ProfileMismatch": "tree", "Report": "tree", "declarations": "tree", "detect": "tree", "profile_for_tree": "tree",
    "report": "tree",
}
__all__ = sorted(_SOURCE)

__getattr__, __dir__ = exports(__name__, _SOURCE, __all__)
