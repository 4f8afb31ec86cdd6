"""The named rule sets: name -> how to enumerate its candidates."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from . import conv_default, conv_full, subsets
from .selection import Candidate, Selection

if TYPE_CHECKING:
    from .build import Validator

Enumerate = Callable[[Selection, "Validator"], list[Candidate]]


@attrs.frozen
class RuleSet:
    name: str
    kind: str
    summary: str
    candidates: Enumerate


RULE_SETS: dict[str, RuleSet] = {r.name: r for r in (
    RuleSet("default", "grouped_conv", "CK's hand-curated conv set: 10 tiles, compv3/compv4 forward, compv3/mem "
            "backward, two-stage bwd_weight; every config for every requested datatype",
            lambda s, v: conv_default.candidates(s)),
    RuleSet("full", "grouped_conv", "CK's rule-based conv set: per (direction, rank, dtype) tile tables, wave and "
            "vector strategies, curated pipelines, specializations, feature specs and depthwise",
            lambda s, v: conv_full.candidates(s)),
    RuleSet("full-tests", "grouped_conv", "about 20% of full, stratified by feature category and datatype, with "
            "every (pipeline, scheduler) of each direction and datatype",
            lambda s, v: subsets.full_tests(conv_full.candidates(s))),
    RuleSet("tiny", "grouped_conv", "one accepted config per (direction, feature category, datatype, rank) of "
            "full-tests, then round-robin up to 10",
            lambda s, v: subsets.tiny(subsets.full_tests(conv_full.candidates(s)), v.accepts)),
)}


def rule_set_names() -> tuple[str, ...]:
    return tuple(RULE_SETS)
