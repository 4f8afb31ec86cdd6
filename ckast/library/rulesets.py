"""The named rule sets: name -> how to enumerate its candidates."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from ckast.data_files import load_toml

from .selection import Candidate, Selection

Accepts = Callable[[Candidate], bool]
"""Whether ckast's validation accepts a candidate (a rule set that picks among accepted configs, like `tiny`)."""
Enumerate = Callable[[Selection, Accepts], list[Candidate]]


@attrs.frozen
class RuleSet:
    name: str
    kind: str
    summary: str
    candidates: Enumerate


def _module(name: str) -> Any:
    """A rule-set module of this package, imported when a rule set is used (listing the names, as the
    command line does to check an option, imports none of them)."""
    return importlib.import_module(f".{name}", __package__)


def _conv_full(s: Selection) -> list[Candidate]:
    return _module("conv_full").candidates(s)


_PRESELECTED = load_toml(Path(__file__).with_name("data") / "gemm_preselected.toml")["sets"]
_GEMM_FULL = load_toml(Path(__file__).with_name("data") / "gemm_full.toml")
_QUANT = load_toml(Path(__file__).with_name("data") / "gemm_quant.toml")
_GEMM_QUANT_SOURCE = f"{_QUANT['repo']} {_QUANT['path']} @ {_QUANT['commit'][:12]}"

RULE_SETS: dict[str, RuleSet] = {r.name: r for r in (
    RuleSet("default", "grouped_conv", "CK's hand-curated conv set: 10 tiles, compv3/compv4 forward, compv3/mem "
            "backward, two-stage bwd_weight; every config for every requested datatype",
            lambda s, _: _module("conv_default").candidates(s)),
    RuleSet("full", "grouped_conv", "CK's rule-based conv set: per (direction, rank, dtype) tile tables, wave and "
            "vector strategies, curated pipelines, specializations, feature specs and depthwise",
            lambda s, _: _conv_full(s)),
    RuleSet("full-tests", "grouped_conv", "about 20% of full, stratified by feature category and datatype, with "
            "every (pipeline, scheduler) of each direction and datatype",
            lambda s, _: _module("subsets").full_tests(_conv_full(s))),
    RuleSet("tiny", "grouped_conv", "one accepted config per (direction, feature category, datatype, rank) of "
            "full-tests, then round-robin up to 10",
            lambda s, accepts: _module("subsets").tiny(_module("subsets").full_tests(_conv_full(s)), accepts)),
    RuleSet("gemm-default", "gemm", "CK's GEMM generator defaults: the tiles its arch filter keeps (checked with "
            "compv4's LDS limit) x its 16 valid traits; preshuffle from compv3/intrawave traits; multi-D x "
            "MultiDAdd/MultiDMultiply x 1/2 D tensors; layout rcr",
            lambda s, _: _module("gemm_sets").default_candidates(s)),
    RuleSet("gemm-full", "gemm", _GEMM_FULL["summary"], lambda s, _: _module("gemm_full").candidates(s)),
    RuleSet("gemm-quant", "gemm", "CK's default quantized GEMM configs: every config factory of its dispatcher's "
            "quant families (block-scale bquant and abquant: fp8, bf8, int4 and fp4 weights, the microscale mixes; "
            "plain and preshuffled B and scales; eight waves) per datatype and arch, from its codegen golden "
            "manifest (" + _GEMM_QUANT_SOURCE + ")", lambda s, _: _module("gemm_quant").candidates(s)),
    *(RuleSet(name, "gemm", spec["summary"],
              lambda s, _, name=name: _module("gemm_sets").preselected_candidates(name, s))
      for name, spec in _PRESELECTED.items()),
    RuleSet("profiler", "grouped_conv", "CK Builder's profiler instances: every line of the --builder-conf "
            "DIR/<direction>/profiler/*.conf files, mapped as CK's builder rule module maps it",
            lambda s, _: _module("builder_conf").candidates(s, "profiler")),
    RuleSet("tests", "grouped_conv", "CK Builder's test instances: every line of the --builder-conf "
            "DIR/<direction>/tests/*.conf files, mapped as CK's builder rule module maps it",
            lambda s, _: _module("builder_conf").candidates(s, "tests")),
)}


def rule_set_names() -> tuple[str, ...]:
    return tuple(RULE_SETS)
