"""GEMM libraries: CK's generator defaults (`gemm-default`) and its preselected sets, validated by ckast.

No refusal here is a knob refusal: every CK value these sets carry is a ckast knob value (CK's
`block_size` and `k_block_per_cu` labels are not proposed; ckast derives the block from the waves).
"""

from __future__ import annotations

from collections import Counter

import pytest

from ckast.arch.rules import UNARY_ELEMENTWISE_OPS
from ckast.library import Selection, SelectionError, build
from ckast.library.gemm_sets import PRESELECTED

APIS = ("ck-2025.11", "ck-2026.06")
CK_DEFAULT_FP16_RCR = {"standard": 2768, "preshuffle": 524, "multi_d": 11072}
"""CK's counts for its built-in lists, fp16 rcr gfx942 (shared/reference/ck_dispatcher_anatomy.md, 6)."""
CK_PRESELECTED = {"fp16_rcr_compute": 7, "fp16_rcr_memory": 8, "fp16_rcr_latency": 2, "fp16_rcr_multi_d": 8,
                  "fp16_rcr_preshuffle": 2, "fp16_rcr_all": 27, "fp16_rcr_essential": 6, "bf16_rcr_essential": 2,
                  "int8_rcr_essential": 2, "fp8_rcr_essential": 2, "mixed_precision": 2}
"""Configs per set in CK's preselected_kernels.py (PRESELECTED_SETS)."""


@pytest.fixture(scope="module")
def default_libs():
    return {api: build(Selection("gemm-default", "gfx942", api, ("fp16",))) for api in APIS}


def by_variant(entries) -> dict[str, int]:
    return dict(Counter(e.candidate.knobs["variant"] for e in entries))


def rule_counts(library) -> dict[str, int]:
    return {rule: len(entries) for rule, entries in library.by_rule().items()}


@pytest.mark.parametrize("api", APIS)
def test_default_proposes_cks_lists_and_names_the_rule_of_every_refusal(default_libs, api):
    """Every trait of CK's 173 tiles is accepted; multi-D with CK's "default" epilogue (CK builds
    CShuffle under that name) is refused by rule; preshuffle's 4 configs per tile are 2 distinct ones."""
    lib = default_libs[api]
    assert by_variant(lib.entries) == CK_DEFAULT_FP16_RCR
    assert by_variant(lib.accepted) == {"standard": 2768, "preshuffle": 262, "multi_d": 5536}
    assert by_variant(lib.with_status("merged")) == {"preshuffle": 262}
    assert rule_counts(lib) == {"multi_d.epilogue": 5536}
    assert all(e.rules and "knob" not in e.rules for e in lib.refused)
    assert {e.candidate.knobs["epilogue"] for e in lib.refused} == {"default"}


def test_default_reproduces_cks_tile_selection(default_libs):
    """CK keeps 173 tiles (131 for preshuffle), all checked against compv4's 32 KiB LDS limit even
    where the trait's pipeline (compv3, mem) has 64 KiB."""
    lib = default_libs["ck-2025.11"]
    tiles = {v: {tuple(e.candidate.knobs[f"{p}_{d}"] for p in ("tile", "warp", "warp_tile") for d in "mnk")
                 for e in lib.entries if e.candidate.knobs["variant"] == v} for v in CK_DEFAULT_FP16_RCR}
    assert {v: len(t) for v, t in tiles.items()} == {"standard": 173, "preshuffle": 131, "multi_d": 173}
    assert max((m + n) * k * 2 for m, n, k, *_ in tiles["standard"]) == 32768
    traits = {(e.candidate.knobs["pipeline"], e.candidate.knobs["scheduler"]) for e in lib.entries
              if e.candidate.knobs["variant"] == "standard"}
    assert traits == {("compv3", "intrawave"), ("compv4", "intrawave"), ("mem", "intrawave"), ("mem", "interwave")}


def test_preshuffle_has_no_name_collisions(default_libs):
    """CK overwrites the source trait's epilogue, so per tile its cshuffle and default traits give one
    config that CK writes twice under one name. ckast names every distinct config differently and
    merges the identical ones: 262 kernels, one per (tile, persistent)."""
    lib = default_libs["ck-2025.11"]
    pre = [e for e in lib.entries if e.candidate.knobs["variant"] == "preshuffle"]
    knobs_by_name: dict[str, set] = {}
    for e in pre:
        knobs_by_name.setdefault(e.name, set()).add(tuple(e.candidate.knobs.items()))
    assert len(knobs_by_name) == 262 and all(len(k) == 1 for k in knobs_by_name.values())
    accepted = {e.name: e.config for e in pre if e.status == "accepted"}
    assert all(accepted[e.merged_into] == e.config for e in pre if e.status == "merged")
    assert {(e.candidate.knobs["pipeline"], e.candidate.knobs["scheduler"], e.candidate.knobs["epilogue"])
            for e in pre} == {("preshufflev2", "default", "cshuffle")}


@pytest.mark.parametrize("name", PRESELECTED)
def test_preselected_sets_propose_cks_configs(name):
    lib = build(Selection(name, "gfx942", "ck-2025.11"))
    assert len(lib.entries) == CK_PRESELECTED[name] and set(PRESELECTED) == set(CK_PRESELECTED)
    assert all(e.rules and "knob" not in e.rules for e in lib.refused)


@pytest.mark.parametrize("api", APIS)
def test_preselected_all_refusals_by_rule(api):
    """CK's 27: 4x4x1/4x2x1/2x4x1 waves gfx942 lacks, compv3 with interwave (memory set), a compv4
    256x256x64 tile over the halved LDS, preshuffle stated with compv4, and the unary multi-D ops."""
    lib = build(Selection("fp16_rcr_all", "gfx942", api))
    assert by_variant(lib.accepted) == {"standard": 4, "multi_d": 2} and not lib.with_status("merged")
    assert rule_counts(lib) == {"lds.capacity": 1, "multi_d.binary_op": 6, "preshuffle.pipeline": 2,
                                "trait.combination": 8, "waves.supported": 6}


def test_unary_multi_d_ops_are_refused_by_rule():
    lib = build(Selection("fp16_rcr_multi_d", "gfx942", "ck-2026.06"))
    assert {e.candidate.knobs["elementwise_op"] for e in lib.accepted} == {"MultiDAdd"}
    assert {e.candidate.knobs["elementwise_op"] for e in lib.refused} == set(UNARY_ELEMENTWISE_OPS)
    assert all(e.rules == ("multi_d.binary_op",) for e in lib.refused)


def test_selection_filters_sets_ignores_ranks_and_refuses_non_gemm_values():
    def proposed(name, **sel):
        return len(build(Selection(name, "gfx942", "ck-2025.11", **sel)).entries)

    assert proposed("fp16_rcr_all", variants=("standard",)) == 17
    assert proposed("fp16_rcr_all", datatypes=("bf16",)) == 0
    assert proposed("bf16_rcr_essential", datatypes=("bf16",)) == 2
    assert proposed("fp16_rcr_all", ndims=(3,)) == 27
    with pytest.raises(SelectionError, match="not a GEMM datatype"):
        build(Selection("gemm-default", "gfx942", "ck-2025.11", ("pk_fp4",)))
    with pytest.raises(SelectionError, match="not a GEMM variant"):
        build(Selection("fp16_rcr_all", "gfx942", "ck-2025.11", variants=("forward",)))
