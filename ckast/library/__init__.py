"""Kernel libraries: named rule sets enumerate candidate configs, ckast's one validation decides.

A rule set (`rulesets.RULE_SETS`) turns a `Selection` (arch, datatypes, spatial ranks, variants,
API profile) into candidates: plain knob objects with their origin, exactly as a user would write
them in a config file. `build` validates every candidate with the same knob table and arch rules
as `ckast emit` (never a second filter), merges identical configs, and refuses configs whose CK
registry key another config already holds. The result says what was accepted and why the rest
was refused.

The names below are imported on first use (PEP 562): `build` pulls the variants and their IR graph
(networkx), which the rule-set names and selections do not need.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from ckast.lazy import exports

if TYPE_CHECKING:
    from .build import Entry, Library, build
    from .rulesets import RULE_SETS, rule_set_names
    from .selection import Candidate, Selection, SelectionError

__all__ = ["RULE_SETS", "Candidate", "Entry", "Library", "Selection", "SelectionError", "build", "rule_set_names"]
_SOURCE = {
    **dict.fromkeys(("Entry", "Library", "build"), "build"),
    **dict.fromkeys(("RULE_SETS", "rule_set_names"), "rulesets"),
    **dict.fromkeys(("Candidate", "Selection", "SelectionError"), "selection"),
}


__getattr__, __dir__ = exports(__name__, _SOURCE, __all__)


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        # Loading the submodule `build` binds it on the package (import machinery); `ckast.library.build`
        # stays the function, as when this package imported it eagerly.
        if name == "build" and isinstance(value, types.ModuleType):
            value = value.build
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
