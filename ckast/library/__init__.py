"""Kernel libraries: named rule sets enumerate candidate configs, ckast's one validation decides.

A rule set (`rulesets.RULE_SETS`) turns a `Selection` (arch, datatypes, spatial ranks, variants,
API profile) into candidates: plain knob objects with their origin, exactly as a user would write
them in a config file. `build` validates every candidate with the same knob table and arch rules
as `ckast emit` (never a second filter), merges identical configs, and refuses configs whose CK
registry key another config already holds. The result says what was accepted and why the rest
was refused.
"""

from .build import Entry, Library, build
from .rulesets import RULE_SETS, rule_set_names
from .selection import Candidate, Selection, SelectionError

__all__ = ["RULE_SETS", "Candidate", "Entry", "Library", "Selection", "SelectionError", "build", "rule_set_names"]
