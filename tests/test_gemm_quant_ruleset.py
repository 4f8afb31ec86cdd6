"""Rule set `gemm-quant`: CK's default quantized GEMM configs (its dispatcher's config factories, as the codegen
golden manifest records them) per family, datatype and arch, expanded by ckast's reader of CK's quant configs;
named with its source and commit by `list --rule-sets`."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.library import Selection, SelectionError, build
from ckast.library import gemm_quant
from ckast.library.conv_common import data

from .select_helpers import ROOT

CASES = ROOT / "tests" / "data" / "ck_quant_goldens" / "cases.json"


def test_the_data_is_cks_manifest_as_it_is():
    """Every case of CK's golden manifest, its config unchanged, at the manifest's commit."""
    manifest = json.loads(CASES.read_text())
    d = data("gemm_quant")
    assert d["commit"] == manifest["source"]["commit"] and len(d["cases"]) == manifest["case_count"] == 140
    assert {c["id"]: (c["module"], c["arch"], c["config"]) for c in d["cases"]} == {
        i: (c["module"], c["arch"], c["config"]) for i, c in manifest["cases"].items()}


def test_rule_sets_listing_names_the_source_and_commit():
    result = CliRunner().invoke(main, ["list", "--rule-sets"])
    line = next(line for line in result.output.splitlines() if line.startswith("gemm-quant "))
    for source in ("ROCm/rocm-libraries", "dispatcher/tests/golden/codegen/manifest.json", "ea607ecdb59e"):
        assert source in line


@pytest.mark.parametrize(("arch", "accepted", "refused", "grouped"), [("gfx942", 98, 27, (82, 43)),
                                                                      ("gfx950", 119, 6, (103, 22))])
def test_every_family_and_datatype_on_both_archs(arch, accepted, refused, grouped):
    """The five families ckast reads CK's configs of (the grouped factories' configs too), every datatype of each;
    the microscale (e8m0) mixes are gfx950's only (refused on gfx942 by name, as are the gfx950 warp tiles CK's
    factories also propose for gfx942), and the cases the golden test emits only with waivers are refused here by
    those rules (a rule set waives none: quant.arch, quant.warp_tile, ...), as are bquant's 128-wide B groups on a
    64-wide tile. Each is proposed again as a grouped kernel, which the grouped rules refuse where CK's kernel does
    not run it (abquant's double-buffered pipelines)."""
    lib = build(Selection("gemm-quant", arch, "ck-2026.06"))
    plain = [e for e in lib.entries if not e.candidate.origin.endswith("+grouped")]
    assert (sum(e in lib.accepted for e in plain), sum(e not in lib.accepted for e in plain)) == (accepted, refused)
    assert (len(lib.accepted) - accepted, len(lib.entries) - len(lib.accepted) - refused) == grouped
    kept = Counter((k.config.variant, k.config.datatype) for k in lib.kernels())
    read = {v for r in gemm_quant.READERS for v in r.MODULES.values()}
    assert {v for v, _ in kept} == set(gemm_quant.families()) == read
    assert {d for v, d in kept if v == "bquant"} >= {"fp8", "bf8", "fp8i4", "bf8i4"}
    assert {d for v, d in kept if v == "abquant"} == {"fp8", "bf8", "fp4"}
    if arch == "gfx950":
        assert {d for v, d in kept if v == "bquant"} >= {"mx_bf16bf16", "mx_bf16bf8", "mx_bf16fp4"}
    origins = [e.candidate.origin for e in lib.entries]
    assert len(origins) == len(set(origins))
    assert all(o.startswith(("gemm-quant/gemm_", "gemm-quant/grouped_gemm_")) for o in origins)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_ckasts_additions_are_marked_deepseek_blocks_and_m_n_padding(arch):
    """CK's fp8/bf8 abquant factories group B 1 x 128 only and its factories never pad M or N; the set adds each of
    their configs with DeepSeek-V3's 128 x 128 weight blocks, and every config padded in M and N, marked
    `+extend<n>`."""
    lib = build(Selection("gemm-quant", arch, "ck-2026.06", variants=("abquant",)))
    factory = [e for e in lib.accepted if e.candidate.origin.startswith("gemm-quant/gemm_abquant_utils::")]
    own = [e.config for e in factory if "+extend" not in e.candidate.origin]
    added = [e.config for e in factory if "+extend" in e.candidate.origin]
    assert not any(c.pad_m or c.pad_n for c in own) and all(c.pad_m for c in added if c.pad_n)
    assert all(c.bquant_group_n == 1 for c in own if c.datatype != "fp4")
    blocks = [c for c in added if c.bquant_group_n == 128 and c.datatype in ("fp8", "bf8")]
    assert len(blocks) == 2 * len([c for c in own if c.datatype in ("fp8", "bf8")])  # with and without pad_n
    assert len([c for c in added if c.pad_n]) == len(own) + len([c for c in added if not c.pad_n])


def test_bquant_takes_128x128_weight_blocks_on_128_wide_tiles():
    from ckast.select.serving.applicability import applicable
    from ckast.select.serving.problem_read import gemm_problem, parse_pairs
    from ckast.config import as_dict

    lib = build(Selection("gemm-quant", "gfx942", "ck-2026.06", ("fp8",), variants=("bquant",)))
    configs = [e.config for e in lib.accepted]
    ok = applicable(gemm_problem(parse_pairs("M=16,N=7168,K=7168,variant=bquant,bquant_group_n=128")),
                    [as_dict(c) for c in configs])
    assert ok.any() and all(c.bquant_group_n == 128 and c.tile_n % 128 == 0 for c, on in zip(configs, ok) if on)


def test_padded_n_serves_a_weight_of_n_not_whole_tiles():
    """A weight-only fp8 block-scale GEMM of N = 1000 (not whole 64- or 128-wide tiles): only the N-padded kernels
    serve it."""
    from ckast.select.serving.applicability import applicable
    from ckast.select.serving.problem_read import gemm_problem, parse_pairs

    lib = build(Selection("gemm-quant", "gfx942", "ck-2026.06", ("fp8",), variants=("bquant",)))
    configs = [e.config for e in lib.accepted]
    from ckast.config import as_dict

    ok = applicable(gemm_problem(parse_pairs("M=16,N=1000,K=7168,variant=bquant")), [as_dict(c) for c in configs])
    assert ok.any() and all(c.pad_n for c, served in zip(configs, ok) if served)


def test_variants_and_datatypes_filter_the_set():
    lib = build(Selection("gemm-quant", "gfx950", "ck-2026.06", ("fp8",), variants=("abquant",)))
    assert {(k.config.variant, k.config.datatype) for k in lib.kernels()} == {("abquant", "fp8")}
    with pytest.raises(SelectionError, match="'standard' is not in gemm-quant; it has: abquant, aquant, bquant, rowcolquant, tensor_quant"):
        build(Selection("gemm-quant", "gfx950", "ck-2026.06", variants=("standard",)))
