"""`gemm-full`: CK tile_engine's full GEMM space per datatype and layout, with padded kernels."""

from __future__ import annotations

from collections import Counter

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.library import Selection, SelectionError, build
from ckast.library import gemm_full

LAYOUTS = ("rcr", "rrr", "crr", "ccr")
FP16_GFX942 = {"proposed": 10676, "accepted": 7424, "padm": 5568}
"""The space's 810 tiles per layout: 29 pass ckast's rules and CK's sweep on gfx942 for fp16 (256 x {128, 256} x 32
with the wave layouts 1x4x1, 2x2x1 and 4x1x1 CK's sweep keeps, and the 5 fp16 warp tiles the space's values
reach), each with the 16 of the 24 traits that CK implements x 4 paddings (3 of them pad M); the 781 others are
proposed once and refused (30 of them by CK's sweep: waves 1x1x1, 1x2x1 and 2x1x1, which ckast's rules
accept). The 8 traits refused by trait.combination (compv3 and compv4 with interwave) are proposed once per
padding, with the first tile: 32."""


@pytest.fixture(scope="module")
def lib():
    """The set's standard kernels (fp16, gfx942)."""
    return build(Selection("gemm-full", "gfx942", "ck-2025.11", ("fp16",), variants=("standard",)))


def test_fp16_gfx942_counts(lib):
    assert len(lib.entries) == FP16_GFX942["proposed"]
    assert len(lib.accepted) == FP16_GFX942["accepted"]
    assert sum(e.config.pad_m for e in lib.accepted) == FP16_GFX942["padm"]
    per_layout = FP16_GFX942["accepted"] // 4
    assert Counter(e.config.layout for e in lib.accepted) == {layout: per_layout for layout in LAYOUTS}
    assert not lib.with_status("merged")


def test_every_refusal_is_named_by_a_rule(lib):
    """Nothing is dropped silently: every proposal CK's checks would drop is refused by a named rule."""
    assert {rule: len(entries) for rule, entries in lib.by_rule().items()} == {
        "sweep.waves": 120, "tile.divisible": 1404, "trait.combination": 128, "warp_tile.supported": 2880,
        "waves.supported": 1080}
    assert all(e.rules and "knob" not in e.rules for e in lib.refused)


def test_a_tile_refused_for_every_trait_is_proposed_once(lib):
    """4x4x1 waves are not gfx942's: the tile is proposed once, with the first trait and no padding."""
    tile = {"tile_m": 256, "tile_n": 256, "tile_k": 32, "warp_m": 4, "warp_n": 4, "warp_k": 1,
            "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 16}
    entries = [e for e in lib.entries if e.candidate.knobs["layout"] == "rcr"
               and all(e.candidate.knobs[k] == v for k, v in tile.items())]
    assert len(entries) == 1 and entries[0].rules == ("waves.supported",)
    assert not any(entries[0].candidate.knobs[p] for p in ("pad_m", "pad_n", "pad_k", "persistent"))


def test_what_cks_sweep_leaves_out_is_refused_by_name(lib):
    """ckast's rules accept 1x1x1 waves on gfx942; CK's sweep keeps tile_engine's 3 layouts only."""
    gated = [e for e in lib.refused if "sweep.waves" in e.rules]
    assert {(e.config.warp_m, e.config.warp_n, e.config.warp_k) for e in gated} == {(1, 1, 1), (1, 2, 1), (2, 1, 1)}
    assert all(e.rules == ("sweep.waves",) for e in gated)
    assert {(e.config.warp_m, e.config.warp_n) for e in lib.accepted} == {(1, 4), (2, 2), (4, 1)}
    message = "waves 1x1x1 are not in CK's sweep on gfx942; it keeps 1x4x1, 2x2x1, 4x1x1"
    assert any(message in e.issues[0].message for e in gated)
    result = CliRunner().invoke(main, ["explain", gated[0].name, "--rule-set", "gemm-full", "--arch", "gfx942",
                                       "--datatype", "fp16"])
    assert result.exit_code == 2 and "sweep.waves" in result.output


def test_cks_other_sweep_gates():
    """CK's examples: MRepeat 3 over a 32-wide warp tile (192 / (2 x 32)) stores wrong results with
    CShuffle; with a 16-wide warp tile, or the default epilogue, it is kept. compv3 intrawave with 8
    waves on gfx1250 is left out."""
    gates = gemm_full.space()["gates"]
    tile = {"tile_m": 192, "tile_n": 128, "warp_m": 2, "warp_n": 2, "warp_tile_m": 32, "warp_tile_n": 32}
    trait = {"pipeline": "compv4", "scheduler": "intrawave", "epilogue": "cshuffle"}
    assert gemm_full._config_gate(gates, "gfx942", tile, trait)[0] == "sweep.cshuffle_store"
    assert gemm_full._config_gate(gates, "gfx942", tile, {**trait, "epilogue": "default"}) is None
    assert gemm_full._config_gate(gates, "gfx942", {**tile, "warp_m": 4, "warp_tile_m": 16}, trait) is None
    eight = {**tile, "tile_m": 256, "warp_m": 4}
    assert gemm_full._config_gate(gates, "gfx1250", eight, {**trait, "pipeline": "compv3"})[0] == "sweep.gfx1250_compv3"
    assert gemm_full._config_gate(gates, "gfx1250", eight, trait) is None


def test_a_trait_ck_drops_is_refused_by_name_once(lib):
    """compv4 has no interwave schedule: each such trait is proposed once (per layout), with the first tile."""
    refused = [e for e in lib.entries if e.candidate.knobs["pipeline"] == "compv4"
               and e.candidate.knobs["scheduler"] == "interwave"]
    assert all(e.rules == ("trait.combination",) for e in refused)
    assert len(refused) == 4 * 2 * 2 * 4  # layouts x epilogues x persistent x paddings
    tiles = {tuple(e.candidate.knobs[f] for f in ("tile_n", "warp_m", "warp_n", "warp_tile_m")) for e in refused}
    assert len(tiles) == 1


def test_m_padded_kernels_serve_every_layout(lib):
    """Decode (M = 1..32) needs M-padded kernels: every layout has them, alone and with N and K padding."""
    pads = {(e.config.layout, e.config.pad_m, e.config.pad_n, e.config.pad_k) for e in lib.accepted}
    for layout in LAYOUTS:
        assert {(layout, True, False, False), (layout, True, True, False), (layout, True, True, True)} <= pads
    assert any("_padm_" in name for name in lib.names)


def test_enumeration_is_deterministic(lib):
    again = build(Selection("gemm-full", "gfx942", "ck-2025.11", ("fp16",), variants=("standard",)))
    assert [(e.candidate.origin, e.name, e.status) for e in again.entries] == \
        [(e.candidate.origin, e.name, e.status) for e in lib.entries]


def test_stream_k_joins_with_each_reduction_the_profile_has_and_batched_only_when_named():
    """Stream-K: the standard space once per reduction CK spells (atomic, linear, tree), tree refused by
    ck-2025.11 by name; batched kernels (whose registry key is their standard twin's) only under --variant
    batched, where persistent ones are refused (CK's batched kernel has no persistent grid)."""
    old = build(Selection("gemm-full", "gfx942", "ck-2025.11", ("fp16",)))
    assert Counter((e.config.variant, e.config.streamk_reduction if e.config.variant == "stream_k" else None)
                   for e in old.accepted) == {("standard", None): 7424, ("stream_k", "atomic"): 3712,
                                              ("stream_k", "linear"): 3712}
    assert len(old.by_rule()["profile.streamk_reduction"]) == 384 and "registry.key_unique" not in old.by_rule()
    new = build(Selection("gemm-full", "gfx942", "ck-2026.06", ("fp16",), variants=("stream_k",)))
    assert Counter(e.config.streamk_reduction for e in new.accepted) == {"atomic": 3712, "linear": 3712, "tree": 3712}
    batched = build(Selection("gemm-full", "gfx942", "ck-2025.11", ("fp16",), variants=("batched",)))
    assert {e.config.variant for e in batched.accepted} == {"batched"} and len(batched.accepted) == 3712
    assert not any(e.config.persistent for e in batched.accepted) and "batched.persistent" in batched.by_rule()


def test_a_gemm_datatype_or_variant_the_set_has_not_yields_nothing():
    assert not build(Selection("gemm-full", "gfx942", "ck-2025.11", ("int8",))).entries
    assert not build(Selection("gemm-full", "gfx942", "ck-2025.11", ("fp16",), variants=("multi_d",))).entries
    with pytest.raises(SelectionError, match="datatype 'fp64' is not a GEMM datatype"):
        build(Selection("gemm-full", "gfx942", "ck-2025.11", ("fp64",)))
    result = CliRunner().invoke(main, ["list", "--rule-set", "gemm-full", "--arch", "gfx942", "--datatype", "int8"])
    assert result.exit_code == 2 and "no config matches --datatype int8" in result.output


def test_a_variant_joins_by_one_data_line(monkeypatch):
    """The variants table is the axis: one line adds a variant ckast has (with the knobs it sets, a list
    swept), and a variant ckast has not is refused when the data is read."""
    real = gemm_full.data("gemm_full")
    line = {"multi_d": {"elementwise_op": ["MultiDAdd", "MultiDMultiply"], "num_d_tensors": 1}}
    monkeypatch.setattr(gemm_full, "data", lambda name: {**real, "variants": {"standard": {}, **line},
                                                          "opt_in": {"variants": []}})
    gemm_full.space.cache_clear()
    try:
        cands = gemm_full.candidates(Selection("gemm-full", "gfx942", "ck-2025.11", ("fp16",), variants=("multi_d",)))
        assert cands and {c.knobs["variant"] for c in cands} == {"multi_d"}
        assert cands[0].origin == "gemm-full/multi_d/fp16/rcr[0]"
        swept = Counter((c.knobs["elementwise_op"], c.knobs["num_d_tensors"]) for c in cands
                        if c.knobs["persistent"])  # a tile refused whatever its traits is proposed once
        assert swept[("MultiDAdd", 1)] == swept[("MultiDMultiply", 1)] > 0
        monkeypatch.setattr(gemm_full, "data", lambda name: {**real, "variants": {"stream": {}},
                                                              "opt_in": {"variants": []}})
        gemm_full.space.cache_clear()
        with pytest.raises(SelectionError, match=r"data/gemm_full.toml: variants: stream not among standard"):
            gemm_full.space()
    finally:
        gemm_full.space.cache_clear()


def test_rule_sets_listing_names_the_sources():
    result = CliRunner().invoke(main, ["list", "--rule-sets"])
    line = next(line for line in result.output.splitlines() if line.startswith("gemm-full "))
    for source in ("tile_engine/ops/gemm/configs/default_config.json", "d162b8bb", "gemm_search_space.py",
                   "de5766ce", "padding"):
        assert source in line


@pytest.mark.slow
@pytest.mark.parametrize(("arch", "datatype", "accepted", "padm"), [
    ("gfx942", "bf16", 7424, 5568), ("gfx942", "fp8", 4608, 3456), ("gfx942", "bf8", 4608, 3456),
    ("gfx950", "fp16", 7424, 5568), ("gfx950", "bf16", 7424, 5568), ("gfx950", "fp8", 4608, 3456),
    ("gfx950", "bf8", 4608, 3456)])
def test_counts_per_datatype_and_arch(arch, datatype, accepted, padm):
    """bf16 as fp16 (the same warp tiles); the 8-bit types have 3 warp tiles whose k fits tile_k 32; gfx950
    as gfx942 (CK's sweep keeps the same 3 wave layouts on both)."""
    lib = build(Selection("gemm-full", arch, "ck-2025.11", (datatype,), variants=("standard",)))
    assert len(lib.accepted) == accepted
    assert sum(e.config.pad_m for e in lib.accepted) == padm
