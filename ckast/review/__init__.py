"""Reviewing a change to a whole library (`ckast diff`): two sides (output trees or selections rendered in
memory, `sides`), their kernels paired and the changes grouped (`compare`), and the report (`report`)."""

from .compare import Group, LibraryDiff, Way, compare, unified_diff
from .sides import Kernel, Request, Side, SideError, read_side, read_tree, render_selection

__all__ = ["Group", "Kernel", "LibraryDiff", "Request", "Side", "SideError", "Way", "compare", "read_side", "read_tree",
           "render_selection", "unified_diff"]
