"""Rule sets `profiler` and `tests`: CK Builder `.conf` lines mapped as CK's builder rule module maps them.

The files under tests/data/builder/configs copy lines from CK's own test files (forward, bwd_data and
bwd_weight nhwgc_fp16, a stream-K excerpt) and add a few native CK Tile lines; the expected objects
are the research report's samples S1-S7."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.library import Selection, SelectionError, build

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "data" / "builder" / "configs"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def library(arch="gfx942", api="ck-2026.06", **axes):
    return build(Selection("tests", arch, api, builder_conf=CONFIGS, **axes))


def gemm(variant, ndim, dtype, tile, waves, warp_tile, vectors, pipeline, scheduler="intrawave", **extra):
    """A GEMM-shaped conv kernel object with the knobs CK's builder rules always set."""
    dims = {f"{p}_{d}": v for p, t in (("tile", tile), ("warp", waves), ("warp_tile", warp_tile))
            for d, v in zip("mnk", t)}
    return {"kind": "grouped_conv", "variant": variant, "ndim_spatial": ndim, "datatype": dtype, "arch": "gfx942",
            **dims, **{f"vector_size_{x}": v for x, v in zip("abc", vectors)}, "pipeline": pipeline,
            "scheduler": scheduler, "epilogue": "cshuffle", "double_smem_buffer": False, "num_wave_groups": 1,
            "specialization": "default", "num_groups_to_merge": 1, "split_image": False, "explicit_gemm": False,
            **extra}


EXPECTED = {
    # S1: old-CK V3, Filter3x3, merged groups; warp_k = 256 / (64 x 2 x 1) = 2
    "tests/forward/nhwgc_fp16.conf:4": gemm("forward", 2, "fp16", (128, 32, 32), (2, 1, 2), (32, 32, 16), (4, 4, 4),
                                            "compv1", "interwave", specialization="filter3x3", num_groups_to_merge=8),
    "tests/forward/nhwgc_fp16.conf:3": gemm("forward", 2, "fp16", (64, 64, 32), (1, 1, 1), (32, 32, 16), (1, 1, 1),
                                            "compv1", split_image=True),
    "tests/forward/nhwgc_fp16.conf:5": gemm("forward", 2, "fp16", (256, 256, 32), (2, 2, 1), (32, 32, 16), (8, 8, 8),
                                            "compv4", double_smem_buffer=True),
    # S2: old-CK V1, fp32 MFMA K of a 16x16 XDL is 4
    "tests/forward/ndhwgc_fp32.conf:1": gemm("forward", 3, "fp32", (64, 16, 16), (1, 1, 1), (16, 16, 4), (4, 1, 1),
                                             "compv1", num_groups_to_merge=32),
    # old-CK v5 is CK Tile's compv6
    "tests/forward/ndhwgc_fp32.conf:2": gemm("forward", 3, "fp32", (128, 128, 64), (2, 2, 1), (32, 32, 8), (4, 4, 8),
                                             "compv6", specialization="filter1x1_pad0"),
    "tests/forward/ndhwgc_fp32.conf:3": gemm("forward", 3, "fp32", (128, 64, 32), (2, 2, 1), (32, 32, 8), (4, 4, 4),
                                             "compv4", double_smem_buffer=True, specialization="filter1x1_pad0",
                                             split_image=True),
    # S3
    "tests/backward_data/nhwgc_fp16.conf:1": gemm("bwd_data", 2, "fp16", (256, 128, 32), (2, 2, 1), (32, 32, 16),
                                                  (8, 8, 8), "compv1"),
    "tests/backward_data/ndhwgc_fp16.conf:2": gemm("bwd_data", 3, "fp16", (64, 64, 64), (2, 2, 1), (16, 16, 32),
                                                   (8, 8, 8), "mem", "interwave"),
    # V1 bwd_weight: K per block = K0 4 x K1 8
    "tests/backward_weight/nhwgc_fp16.conf:2": gemm("bwd_weight", 2, "fp16", (64, 64, 32), (1, 1, 1), (32, 32, 16),
                                                    (8, 8, 8), "compv1"),
    # V3 with direct load: v1 -> ASYNC_V1
    "tests/backward_weight/nhwgc_fp16.conf:3": gemm("bwd_weight", 2, "fp16", (16, 64, 64), (1, 2, 1), (16, 16, 32),
                                                    (8, 8, 4), "basic_async_v1"),
    # S4: TwoStage
    "tests/backward_weight/nhwgc_fp16.conf:5": gemm("bwd_weight", 2, "fp16", (32, 128, 32), (1, 1, 1), (32, 32, 16),
                                                    (8, 8, 1), "compv1", num_groups_to_merge=8, two_stage=True),
    # S5: explicit GEMM, spec forced, v2 -> mem
    "tests/backward_weight/nhwgc_fp16.conf:9": gemm("bwd_weight", 2, "fp16", (64, 16, 64), (2, 1, 1), (16, 16, 32),
                                                    (8, 2, 2), "mem", specialization="filter1x1_stride1_pad0",
                                                    explicit_gemm=True),
    # explicit GEMM with an odd C vector (fp16) is two-stage
    "tests/backward_weight/nhwgc_fp16.conf:11": gemm("bwd_weight", 2, "fp16", (16, 32, 64), (1, 2, 1), (16, 16, 32),
                                                     (1, 1, 1), "compv1", specialization="filter1x1_stride1_pad0",
                                                     explicit_gemm=True, two_stage=True),
    # native, C vector 1 (fp16, no stream-K): two-stage
    "tests/backward_weight/nhwgc_fp16.conf:12": gemm("bwd_weight", 2, "fp16", (64, 64, 64), (2, 2, 1), (16, 16, 32),
                                                     (8, 8, 1), "compv1", two_stage=True),
    # S6: stream-K
    "tests/backward_weight/nhwgc_fp16_streamk.conf:2": gemm(
        "bwd_weight", 2, "fp16", (64, 64, 64), (2, 2, 1), (16, 16, 16), (8, 8, 8), "basic_async_v1",
        streamk_enabled=True, streamk_reduction="tree", streamk_persistent=False),
    "tests/backward_weight/nhwgc_fp16_streamk.conf:3": gemm(
        "bwd_weight", 2, "fp16", (64, 16, 64), (2, 1, 1), (16, 16, 16), (8, 2, 2), "mem",
        streamk_enabled=True, streamk_reduction="tree", streamk_persistent=True),
}


def test_lines_map_as_cks_builder_rules():
    lib = library()
    objects = {e.candidate.origin: dict(e.candidate.knobs) for e in lib.entries
               if e.candidate.knobs["variant"] != "forward_depthwise"}
    for origin, expected in EXPECTED.items():
        assert objects[origin] == dict(sorted(expected.items())), origin


def test_depthwise_file_serves_every_datatype():
    """S7: the 12 integers become the depthwise knobs, once per datatype (2-D only)."""
    lib = library(variants=("forward_depthwise",))
    first = [e.candidate for e in lib.entries if e.candidate.origin == "tests/forward/ngchw_depthwise.conf:2"]
    assert [c.knobs["datatype"] for c in first] == ["fp16", "bf16", "fp32"]
    assert {k: first[0].knobs[k] for k in ("tile_h", "tile_w", "filt", "str_h", "str_w", "pad_h", "pad_w", "nbatch",
                                           "sub_h", "sub_w", "in_vec", "out_vec")} == {
        "tile_h": 32, "tile_w": 32, "filt": 3, "str_h": 2, "str_w": 2, "pad_h": 1, "pad_w": 1, "nbatch": 1,
        "sub_h": 2, "sub_w": 8, "in_vec": 8, "out_vec": 8}
    assert {e.candidate.origin for e in lib.entries} == {f"tests/forward/ngchw_depthwise.conf:{n}" for n in (2, 4)}
    with pytest.raises(SelectionError, match="no CK Builder .conf file of the selection"):
        library(variants=("forward_depthwise",), ndims=(3,))  # depthwise is 2-D only


def test_counts_origins_dedup_and_conventions():
    """Comment and blank lines are skipped, duplicates of a file proposed once (forward :9 is OddC of :7,
    bwd_weight :8 the MNKPadding twin of :7), CK's conventions leave out bwd_weight :10 (warp coverage),
    bwd_data :3 (vector coverage) and the fp32 async stream-K line; odd vectors are refused by rule."""
    lib = library()
    proposed = Counter(e.candidate.knobs["variant"] for e in lib.entries)
    assert proposed == {"forward": 9, "forward_depthwise": 6, "bwd_data": 4, "bwd_weight": 11}
    assert Counter(e.candidate.knobs["variant"] for e in lib.accepted) == {
        "forward": 8, "forward_depthwise": 6, "bwd_data": 4, "bwd_weight": 10}
    assert not lib.with_status("merged")
    lines = {}
    for e in lib.entries:
        file, line = e.candidate.origin.rsplit(":", 1)
        lines.setdefault(file, set()).add(int(line))
    assert lines == {
        "tests/forward/nhwgc_fp16.conf": {2, 3, 4, 5, 7, 8},
        "tests/forward/ndhwgc_fp32.conf": {1, 2, 3},
        "tests/forward/ngchw_depthwise.conf": {2, 4},
        "tests/backward_data/nhwgc_fp16.conf": {1, 2},
        "tests/backward_data/ndhwgc_fp16.conf": {1, 2},
        "tests/backward_weight/nhwgc_fp16.conf": {2, 3, 4, 5, 7, 9, 11, 12},
        "tests/backward_weight/nhwgc_fp16_streamk.conf": {2, 3},
        "tests/backward_weight/nhwgc_fp32_streamk.conf": {3},
    }
    refused = {e.candidate.origin: e.rules for e in lib.refused}
    assert refused == {"tests/forward/ndhwgc_fp32.conf:2": ("lds.capacity",),
                       "tests/backward_weight/nhwgc_fp16.conf:4": ("conv.vector_width", "conv.transpose_vector")}


def test_selection_axes_pick_the_files():
    lib = library(datatypes=("fp32",))
    assert {e.candidate.origin.rsplit(":", 1)[0] for e in lib.entries} == {
        "tests/forward/ndhwgc_fp32.conf", "tests/forward/ngchw_depthwise.conf",
        "tests/backward_weight/nhwgc_fp32_streamk.conf"}
    lib = library(variants=("bwd_data",), ndims=(3,))
    assert {e.candidate.origin for e in lib.entries} == {f"tests/backward_data/ndhwgc_fp16.conf:{n}" for n in (1, 2)}


def test_warp_size_32_arch_derives_waves_and_lets_ckast_refuse():
    """On a WMMA arch the waves follow warp size 32, and what CK skips there ckast refuses by rule."""
    lib = library(arch="gfx1100", datatypes=("fp16",), variants=("forward", "bwd_weight"))
    s1 = next(e for e in lib.entries if e.candidate.origin == "tests/forward/nhwgc_fp16.conf:4")
    assert (s1.candidate.knobs["warp_m"], s1.candidate.knobs["warp_n"], s1.candidate.knobs["warp_k"]) == (2, 1, 4)
    streamk = [e for e in lib.entries if e.candidate.knobs.get("streamk_enabled")]
    assert streamk and all("streamk.arch" in e.rules for e in streamk)
    assert all(e.rules for e in lib.refused)


def test_profiler_reads_its_own_subset(tmp_path):
    conf = tmp_path / "forward" / "profiler" / "nhwgc_bf16.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text((CONFIGS / "forward" / "tests" / "nhwgc_fp16.conf").read_text())
    lib = build(Selection("profiler", "gfx942", "ck-2026.06", builder_conf=tmp_path))
    assert len(lib.entries) == 6 and {e.candidate.knobs["datatype"] for e in lib.entries} == {"bf16"}
    assert lib.entries[0].candidate.origin == "profiler/forward/nhwgc_bf16.conf:2"
    with pytest.raises(SelectionError, match="no CK Builder .conf file"):
        build(Selection("tests", "gfx942", "ck-2026.06", builder_conf=tmp_path))


V3 = (CONFIGS / "forward" / "tests" / "nhwgc_fp16.conf").read_text().splitlines()[3]
NATIVE = (CONFIGS / "forward" / "tests" / "ndhwgc_fp32.conf").read_text().splitlines()[2]


@pytest.mark.parametrize(("line", "problem"), [
    ("DeviceGroupedConvFwdMultipleABD_Wmma_CShuffle<2,NHWGC>", "unknown forward instance kind"),
    (V3.replace(",Filter3x3,", ","), "has 50 template arguments, this line 49"),
    (V3.replace(",v1,", ",v9,"), "unknown pipeline version 'v9'"),
    (V3.replace("Filter3x3", "Filter5x5"), "unknown specialization 'Filter5x5'"),
    (NATIVE.replace("COMPUTE_V4", "COMPUTE_V9"), "unknown CK Tile pipeline 'COMPUTE_V9'"),
    ("128,128,32", "expected an instance type string"),
])
def test_malformed_line_is_refused_with_file_and_line(tmp_path, line, problem):
    conf = tmp_path / "forward" / "tests" / "nhwgc_fp16.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text(f"# a comment\n{line}\n")
    with pytest.raises(SelectionError) as info:
        build(Selection("tests", "gfx942", "ck-2026.06", builder_conf=tmp_path))
    assert str(info.value).startswith(f"{conf}:2: ") and problem in str(info.value)
    result = run("list", "--rule-set", "tests", "--arch", "gfx942", "--builder-conf", tmp_path)
    assert result.exit_code == 2 and f"{conf}:2: " in result.output


def test_missing_builder_conf_exits_2():
    for rule_set in ("tests", "profiler"):
        result = run("list", "--rule-set", rule_set, "--arch", "gfx942")
        assert result.exit_code == 2 and "pass --builder-conf DIR" in result.output


def test_cli_lists_the_tests_set_and_every_refusal_names_a_rule():
    base = ("list", "--rule-set", "tests", "--arch", "gfx942", "--builder-conf", CONFIGS)
    table = run(*base)
    assert table.exit_code == 0 and "rule set tests on gfx942" in table.output
    data = json.loads(run(*base, "--json", "--rejected").output)
    refused = {(e["origin"], e["name"]) for entries in data["rejected"].values() for e in entries}
    assert len(refused) == sum(c["refused"] for c in data["counts"]) > 0
    assert "knob" not in data["rejected"]
    lib = build(Selection("tests", "gfx942", "ck-2025.11", builder_conf=CONFIGS))
    assert all(e.rules and "knob" not in e.rules for e in lib.refused)
