"""Kernel libraries: rule sets propose, ckast's one validation decides; generate, list, explain."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.library import Candidate, Selection, SelectionError, build
from ckast.output import stamp
from ckast.library.build import KEY_RULE, Validator, _sort_out
from ckast.library.subsets import full_tests, tiny

from .conftest import ROOT
from .kernels import output_tree


def run(*args):
    return CliRunner().invoke(main, list(args))


def counts(library, status):
    return {v: n for (v, _, _), n in library.counts(status).items()}


# --- CK's "default" set ---------------------------------------------------------------------------

DEFAULT_FP16_2D = Selection("default", "gfx942", "ck-2025.11", ("fp16",), (2,))


def test_default_reproduces_ck_and_accounts_for_every_refusal():
    """CK's default set for fp16 2-D gfx942 has 14 forward, 16 bwd_data and 32 bwd_weight configs.
    The rule set proposes CK's list before CK's own arch check, which drops the tiles whose waves
    gfx942 lacks (4x4x1, 8x2x1); ckast refuses exactly those by waves.supported, and every other
    refusal names its rule."""
    lib = build(DEFAULT_FP16_2D)
    assert not lib.with_status("merged")
    proposed = Counter(e.candidate.knobs["variant"] for e in lib.entries)
    assert proposed == {"forward": 16, "bwd_data": 20, "bwd_weight": 40}
    waves = Counter(e.candidate.knobs["variant"] for e in lib.by_rule()["waves.supported"])
    assert {v: proposed[v] - waves[v] for v in proposed} == {"forward": 14, "bwd_data": 16, "bwd_weight": 32}
    assert all(e.rules and "knob" not in e.rules for e in lib.refused)
    assert counts(lib, "accepted") == {"forward": 11, "bwd_data": 16, "bwd_weight": 2}
    assert {rule: len(entries) for rule, entries in lib.by_rule().items()} == {
        "atomic.vector_c": 20, "conv.transpose_vector": 36, "lds.capacity": 3, "waves.supported": 14}
    # the three: compv4 with CK's doubled tile_k overflows the halved LDS (CK's own arch filter agrees)
    assert {e.candidate.knobs["pipeline"] for e in lib.by_rule()["lds.capacity"]} == {"compv4"}


def test_default_on_newer_profile_has_no_drift_refusals():
    """ck-2026.06 uses the conv LDS policy for compv3/mem, so the C1 transpose refusals disappear."""
    lib = build(Selection("default", "gfx942", "ck-2026.06", ("fp16",), (2,)))
    assert "conv.transpose_vector" not in lib.by_rule()
    assert counts(lib, "accepted") == {"forward": 11, "bwd_data": 16, "bwd_weight": 16}


def test_unknown_selection_values_are_refused():
    with pytest.raises(SelectionError, match="not a grouped-conv datatype"):
        build(Selection("default", "gfx942", "ck-2025.11", ("int8",)))
    with pytest.raises(SelectionError, match="unknown rule set"):
        build(Selection("nope", "gfx942", "ck-2025.11"))


def test_identical_configs_merge_and_registry_key_clashes_are_refused():
    """Two configs CK's GroupedConvKernelKey cannot tell apart (here: only two_stage differs): the
    later is refused by rule; a repeated config is merged into the first."""
    base = {"kind": "grouped_conv", "variant": "bwd_weight", "pipeline": "compv3", "vector_size_c": 4}
    sel = Selection("default", "gfx942", "ck-2026.06")
    entries = list(_sort_out([Candidate("a", base), Candidate("b", dict(base, two_stage=True)),
                              Candidate("c", dict(base))], Validator(sel)))
    assert [e.status for e in entries] == ["accepted", "refused", "merged"]
    assert entries[1].rules == (KEY_RULE,) and entries[0].name in entries[1].issues[0].message
    assert entries[2].merged_into == entries[0].name


# --- subsets ----------------------------------------------------------------------------------------

def cand(i, variant="forward", dtype="fp16", pipeline="compv3", scheduler="intrawave", **knobs):
    return Candidate(f"c[{i}]", {"kind": "grouped_conv", "variant": variant, "datatype": dtype,
                                 "ndim_spatial": 2, "pipeline": pipeline, "scheduler": scheduler, **knobs})


def test_full_tests_keeps_every_fifth_per_category_and_covers_pipelines():
    regular = [cand(i) for i in range(12)]
    rare = [cand(12, two_stage=True, variant="bwd_weight")]
    odd = [cand(13, variant="bwd_data", pipeline="mem", scheduler="interwave")]
    picked = full_tests(regular + rare + odd)
    origins = [c.origin for c in picked]
    # ranks 5 and 10 of the 13 regular configs (odd is regular too), the only two-stage one
    # regular (13 with c[13]): ranks 5 and 10; two-stage: its only one; bwd_data's mem/interwave: top-up
    assert origins == ["c[4]", "c[9]", "c[12]", "c[13]"]


def test_tiny_covers_every_accepted_stratum_then_fills_to_ten():
    configs = [cand(i, variant=v) for i, v in enumerate(["forward"] * 8 + ["bwd_data"] * 3 + ["bwd_weight"] * 2)]
    refused = {"c[8]"}
    picked = tiny(configs, lambda c: c.origin not in refused)
    assert [c.origin for c in picked[:3]] == ["c[0]", "c[9]", "c[11]"]
    assert len(picked) == 10 and "c[8]" not in {c.origin for c in picked}


# --- commands ---------------------------------------------------------------------------------------

SMALL = ["--rule-set", "default", "--arch", "gfx942", "--datatype", "fp16", "--ndim", "2", "--ck-api", "ck-2026.06"]


def test_generate_is_byte_identical_for_any_jobs_and_hash_seed(tmp_path):
    outs = []
    for jobs, seed in (("1", "0"), ("2", "12345")):
        out = tmp_path / f"j{jobs}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "ckast", "generate", *SMALL, "-o", str(out), "-j", jobs],
                       check=True, env=env, cwd=ROOT, capture_output=True)
        outs.append(output_tree(out))
    assert outs[0] == outs[1]
    manifest = json.loads(outs[0]["manifest.json"])
    assert len(manifest["kernels"]) == 43 and manifest["run"]["rule_set"] == "default"


def test_generate_rewrites_nothing_on_rerun(tmp_path):
    first = run("generate", *SMALL, "-o", str(tmp_path), "-j", "1")
    assert first.exit_code == 0, first.output
    assert "43 kernels (76 proposed, 33 refused, 0 merged)" in first.output
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    second = run("generate", *SMALL, "-o", str(tmp_path), "-j", "1")
    assert "0 files written" in second.output
    assert stamps == {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}


def test_a_rerun_is_up_to_date_until_an_input_ckast_or_a_file_changes(tmp_path, monkeypatch):
    assert run("generate", *SMALL, "-o", str(tmp_path), "-j", "1").exit_code == 0
    again = run("generate", *SMALL, "-o", str(tmp_path), "-j", "1")
    assert "0 files written, 138 unchanged, 0 removed" in again.output and "(up to date)" in again.output
    header = sorted(tmp_path.glob("*.hpp"))[0]
    original = header.read_bytes()
    header.write_bytes(original + b"// edited by hand\n")
    fixed = run("generate", *SMALL, "-o", str(tmp_path), "-j", "2")  # the rendering processes write
    assert "1 file written, 137 unchanged" in fixed.output and header.read_bytes() == original
    header.unlink()
    assert "1 file written" in run("generate", *SMALL, "-o", str(tmp_path)).output and header.exists()
    assert "(up to date)" not in run("generate", *SMALL, "--chunk-size", "10", "-o", str(tmp_path)).output
    monkeypatch.setattr(stamp, "generator_digest", lambda: "another ckast")
    assert "(up to date)" not in run("generate", *SMALL, "--chunk-size", "10", "-o", str(tmp_path)).output


def test_generate_needs_a_selection():
    result = run("generate", "--rule-set", "default", "-o", "x")
    assert result.exit_code == 2 and "needs --rule-set and --arch" in result.output


def test_list_counts_names_and_rejected():
    table = run("list", *SMALL)
    assert table.exit_code == 0
    assert "bwd_weight  fp16      2           40        16       0       24" in table.output
    names = run("list", *SMALL, "--names").output.split()
    assert len(names) == 43 and names == sorted(names)
    rejected = run("list", *SMALL, "--rejected").output
    assert "atomic.vector_c (20): split-K adds the output" in rejected
    data = json.loads(run("list", *SMALL, "--json", "--rejected", "--names").output)
    assert sum(c["accepted"] for c in data["counts"]) == 43 and len(data["kernels"]) == 43
    assert {rule: len(v) for rule, v in data["rejected"].items()} == {
        "atomic.vector_c": 20, "lds.capacity": 3, "waves.supported": 14}


def test_explain_by_name_and_file(tmp_path):
    lib = build(Selection("default", "gfx942", "ck-2026.06", ("fp16",), (2,)))
    refused = lib.by_rule()["lds.capacity"][0]
    out = run("explain", refused.name, *SMALL)
    assert out.exit_code == 2 and out.stderr.splitlines()[-1].startswith(f"refused: {refused.name} fails rule")
    assert "FAIL lds.capacity" in out.output and "PASS waves.supported" in out.output
    assert "graph (construct [role] <- uses):" in out.output and "Kernel [kernel] <- " in out.output
    accepted = lib.accepted[0]
    cfg = tmp_path / "one.json"
    cfg.write_text(json.dumps(dict(accepted.candidate.knobs, ck_api="ck-2026.06")))
    dot = tmp_path / "g.dot"
    out = run("explain", str(cfg), "--dot", str(dot))
    assert out.exit_code == 0 and f"kernel {accepted.name}" in out.output and "FAIL" not in out.output
    assert dot.read_text().startswith(f'digraph "{accepted.name}"') and '"Pipeline" -> "Kernel";' in dot.read_text()
    assert run("explain", "no_such_kernel", *SMALL).exit_code == 2


# --- CK's "full", "full-tests" and "tiny" --------------------------------------------------------------

CK_FULL_FP16_2D = {"forward": 659, "forward_depthwise": 20, "bwd_data": 124, "bwd_weight": 2404}
"""CK's full set for fp16, 2-D, gfx942 before any filter (shared/reference/ck_dispatcher_anatomy.md, 6)."""


def proposed(library):
    return dict(Counter(e.candidate.knobs["variant"] for e in library.entries))


@pytest.mark.parametrize(("api", "accepted", "refused"), [
    ("ck-2025.11", {"forward": 232, "bwd_weight": 34},
     {"atomic.vector_c": 90, "conv.transpose_vector": 1892, "profile.backward_specialization": 1264,
      "profile.conv_pipeline": 152, "profile.depthwise": 20, "profile.explicit_gemm": 696, "profile.pipeline": 1813,
      "profile.streamk_conv": 660, "tile.minimum": 4}),
    ("ck-2026.06", {"forward": 655, "bwd_data": 124, "bwd_weight": 1222, "forward_depthwise": 20},
     {"atomic.vector_c": 90, "conv.transpose_vector": 412, "explicit_gemm.requirements": 348, KEY_RULE: 381,
      "tile.minimum": 4}),
])
def test_full_proposes_cks_set_and_names_the_rule_of_every_refusal(api, accepted, refused):
    lib = build(Selection("full", "gfx942", api, ("fp16",), (2,)))
    assert proposed(lib) == CK_FULL_FP16_2D
    assert counts(lib, "accepted") == accepted and not lib.with_status("merged")
    assert {rule: len(entries) for rule, entries in lib.by_rule().items()} == refused
    assert all(e.rules and "knob" not in e.rules for e in lib.refused)
    assert len(lib.accepted) + len(lib.refused) == sum(CK_FULL_FP16_2D.values())


def test_full_over_every_datatype_and_rank_is_cks_production_set():
    """CK's production path renders 14,048 kernels for full (3 datatypes, 2-D and 3-D)."""
    lib = build(Selection("full", "gfx942", "ck-2026.06"))
    by_variant = proposed(lib)
    assert by_variant == {"forward": 3256, "forward_depthwise": 60, "bwd_data": 624, "bwd_weight": 10108}
    assert len({e.name for e in lib.accepted}) == len(lib.accepted) == 8968
    # CK's fp32 32x32 tiles with tile_k 16 get warp_tile_k 4; the 2026 WarpGemmDispatcher has fp32 32x32x8 only
    assert {(e.candidate.knobs["datatype"], e.candidate.knobs["warp_tile_k"]) for e in lib.by_rule()["profile.warp_gemm"]} \
        == {("fp32", 4)}


def test_full_tests_is_cks_subset():
    for api in ("ck-2025.11", "ck-2026.06"):
        lib = build(Selection("full-tests", "gfx942", api, ("fp16",), (2,)))
        assert proposed(lib) == {"forward": 131, "forward_depthwise": 4, "bwd_data": 24, "bwd_weight": 481}


@pytest.mark.parametrize("api", ["ck-2025.11", "ck-2026.06"])
def test_tiny_covers_every_direction_and_category_the_profile_builds(api):
    tests = build(Selection("full-tests", "gfx942", api))
    wanted = {(e.candidate.knobs["variant"], e.candidate.category) for e in tests.accepted}
    lib = build(Selection("tiny", "gfx942", api))
    assert not lib.refused and len(lib.accepted) >= 10
    assert {(e.candidate.knobs["variant"], e.candidate.category) for e in lib.accepted} == wanted
    if api == "ck-2026.06":  # CK's own tiny has no bwd_data kernel
        assert {"bwd_data", "forward_depthwise"} <= {v for v, _ in wanted}


def test_config_files_are_a_library_source(tmp_path):
    """`generate --config` treats a config file like a rule set (each kernel a candidate; refusals
    counted, listed by `list --rejected`); `emit` stays strict and writes nothing."""
    cfg = tmp_path / "two.json"
    cfg.write_text(json.dumps([{"kind": "gemm"}, {"kind": "gemm", "tile_m": 96}]))
    listed = run("list", "--config", str(cfg), "--rejected")
    assert listed.exit_code == 0
    assert "standard  fp16      -            2         1       0        1" in listed.output
    assert f"  {cfg}:[1] gemm_fp16_rcr_standard_gfx942_compv3_cshuffle_intrawave_96x128x64" in listed.output
    out = tmp_path / "lib"
    generated = run("generate", "--config", str(cfg), "-o", str(out), "-j", "1")
    assert generated.exit_code == 0 and "1 kernel (2 proposed, 1 refused, 0 merged)" in generated.output
    digest = hashlib.sha256(cfg.read_bytes()).hexdigest()  # the file by name and bytes, not by its path here
    assert json.loads((out / "manifest.json").read_text())["run"] == {
        "configs": [{"file": "two.json", "sha256": digest}], "ck_api": "ck-2025.11"}
    assert run("emit", "--config", str(cfg), "-o", str(tmp_path / "strict")).exit_code == 2
    assert not (tmp_path / "strict").exists()
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    result = run("list", "--config", str(broken))
    assert result.exit_code == 2 and f"{broken}: <root>: not valid JSON" in result.output


CK_FIELDS = ("variant", "tile_m", "tile_n", "tile_k", "warp_m", "warp_n", "warp_k", "warp_tile_m", "warp_tile_n",
             "warp_tile_k", "pipeline", "scheduler", "vector_size_a", "vector_size_b", "vector_size_c",
             "double_smem_buffer", "num_groups_to_merge", "split_image", "explicit_gemm", "two_stage", "specialization",
             "streamk_enabled", "streamk_persistent")
DEPTHWISE_FIELDS = ("tile_h", "tile_w", "filt", "str_h", "str_w", "pad_h", "pad_w", "nbatch", "sub_h", "sub_w",
                    "in_vec", "out_vec")
UNSET = {"num_groups_to_merge": 1, "specialization": "default"}


def ck_sequence_digest(library) -> str:
    """sha256 (16 hex) of the proposals as CK's configs, one line each in order: the digests below were
    taken from the lists CK's own generator (ROCm/composable_kernel 610e69bf) produced for the same
    selection, so equality means the same configs in the same order."""
    def line(knobs):
        if knobs["variant"] == "forward_depthwise":
            return "forward_depthwise " + " ".join(str(knobs[k]) for k in DEPTHWISE_FIELDS)
        return " ".join(str(knobs.get(k, UNSET.get(k, False))).lower() for k in CK_FIELDS)
    return hashlib.sha256("\n".join(line(e.candidate.knobs) for e in library.entries).encode()).hexdigest()[:16]


@pytest.mark.parametrize(("rule_set", "datatype", "ndim", "digest"), [
    ("full", "fp16", 2, "22cb3556309d7dcc"),
    ("full", "fp32", 3, "d5ecfaa21dee0a6a"),
    ("full-tests", "fp16", 2, "a3750ce466930075"),
])
def test_proposals_are_cks_configs_in_cks_order(rule_set, datatype, ndim, digest):
    lib = build(Selection(rule_set, "gfx942", "ck-2026.06", (datatype,), (ndim,)))
    assert ck_sequence_digest(lib) == digest
