"""In-process JIT of emitted files (cppyy) against the host model of CK Tile: every golden compiles
against its profile's model and derives its config's constants; launchers behave; registration
fills the model's registries, whose GEMM dispatcher asks each kernel's `supports()` as CK's does; the model
declares its catalog; errors surface with their text."""

from __future__ import annotations

import functools
import json
import math
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

from ckast import nodes as n
from ckast import testing
from ckast.arch import DEPTHWISE_BLOCK_SIZE, PIPELINES, arch_spec
from ckast.arch.rules import QUANT_VARIANTS, waves_per_block
from ckast.arch.specs import QUANT_PIPELINES
from ckast.catalog import load_profile, profile_names
from ckast.catalog.profile import PROFILES_DIR
from ckast.cli import main
from ckast.config import load_data
from ckast.emit import render, write_outputs
from ckast.hostmodel import conformance
from ckast.hostmodel.handwritten import HANDWRITTEN, is_standard, path_of
from ckast.variants import conv, gemm, gemm_quant, gemm_wrapper, kernel_graph
from ckast.variants.conv_wrapper import conv_key

from .conftest import GOLDEN, ROOT
from .goldens import CONV, CONV_CASES, GEMM_CASES, GROUPED_QUANT_CASES, QUANT_CASES, SMALL_TILE
from .kernels import config_of

OLD, NEW = "ck-2025.11", "ck-2026.06"
KERNEL_GOLDENS = sorted(GOLDEN.glob("*/*_ck-*.hpp"))
CONV_CONFIGS = {case: data for case, (data, _) in CONV_CASES.items()}
GEMM_CONFIGS = {**GEMM_CASES, **{case: data for case, (data, _) in (*QUANT_CASES.items(),
                                                                     *GROUPED_QUANT_CASES.items())}}
PROBLEM = testing.ConvProblem(G=2, N=4, K=16, C=16, filter=(3, 3), input=(8, 8))
"""A small 2-D problem every 2-D golden conv kernel supports (channels fit every vector size)."""
DEPTHWISE = testing.ConvProblem(G=8, N=16, K=1, C=1, filter=(3, 3), input=(8, 8), left_pad=(1, 1), right_pad=(1, 1))
"""A depthwise problem of the golden depthwise kernel's filter, stride and pads (its 8x8 output fits the
kernel's one tile: a block holding several tiles covers the whole output with one)."""


def golden(kind: str, case: str, profile: str) -> Path:
    return GOLDEN / kind / f"{case}_{profile}.hpp"


def config_for(path: Path):
    case, profile = path.stem.rsplit("_", 1)
    cases = GEMM_CONFIGS if path.parent.name == "gemm" else CONV_CONFIGS
    assert case in cases, f"{path}: no config in tests/goldens.py"
    return config_of(cases, case, profile)


@functools.cache
def unit(path: Path) -> testing.Unit:
    """Each golden JIT-compiled once per session (each in its own namespace)."""
    return testing.jit_header(path)


def events_of(events: list[testing.Event], kind: str) -> list[testing.Event]:
    return [e for e in events if e.kind == kind]


# --- every golden kernel header -------------------------------------------------------------------

def kernel_instance(u: testing.Unit, config) -> n.Type:
    """The kernel type the launcher checks arguments with: `HostKernel`, or `Kernel` with any compile-time
    dispatch parameters bound to (hot loop, Full, set)."""
    profile = load_profile(config.ck_api)
    _, graph = kernel_graph(config, profile)
    graph.lower()
    target = "HostKernel" if "HostKernel" in graph.names() else "Kernel"
    parts = (*u.launcher().name.parts, target)
    params = graph.params_of(target)
    if not params:
        return n.type_of(*parts)
    bound = {"HasHotLoop": n.BoolLit(True), "TailNum": profile.enum_value("TailNumber", "Full"),
             "MemOp": profile.enum_value("memory_operation_enum", "set")}
    return n.type_of(n.Signature(target, parts, "alias", params)(**{p.name: bound[p.name] for p in params}))


def member(kernel: n.Type, *path: str) -> n.Id:
    return n.Id(n.Name((*kernel.name.parts, *path)))


def equal(lhs: n.Expr, value: int | bool) -> n.Expr:
    return n.BinOp("==", lhs, n.BoolLit(value) if isinstance(value, bool) else n.IntLit(value))


def instance_of(kernel: n.Type, member_type: str, key: str) -> n.Expr:
    """`kernel::member_type` is an instance of the catalog template `key`."""
    return testing.same(n.type_of(*kernel.name.parts, member_type, "ckast_tag"), testing.tag(key))


def expected_constants(u: testing.Unit, config) -> list[n.Expr]:
    """What the model derives from the type chain, against the config."""
    K = kernel_instance(u, config)
    L = u.member
    if config.variant == "forward_depthwise":
        traits = (*K.name.parts, "GemmPipeline", "Traits_")
        return [
            equal(member(K, "kBlockSize"), DEPTHWISE_BLOCK_SIZE),
            equal(n.Member(n.call(member(K, "BlockSize")), "x"), DEPTHWISE_BLOCK_SIZE),
            instance_of(K, "GemmPipeline", "DepthwiseConvFwdPipeline"),
            *(equal(n.Id(n.Name((*traits, f"{name}_"))), getattr(config, knob)) for name, knob in (
                ("TileH", "tile_h"), ("TileW", "tile_w"), ("FilterH", "filt"), ("StrideW", "str_w"), ("PadH", "pad_h"),
                ("NBatch", "nbatch"), ("InVectorSize", "in_vec"), ("OutVectorSize", "out_vec"))),
            equal(L("kBlockPerCu"), 2),
        ]
    block = waves_per_block(config) * arch_spec(config.arch).warp_size
    out = [
        *(equal(member(K, "TilePartitioner", f"{d}PerBlock"), getattr(config, f"tile_{d.lower()}")) for d in "MNK"),
        *(equal(n.call(n.Id(n.Name((*L("TileShape").name.parts, "WarpTile", "at"))), n.IntLit(i)),
                getattr(config, f"warp_tile_{d}")) for i, d in enumerate("mnk")),
        equal(member(K, "kBlockSize"), block),
        equal(n.Member(n.call(member(K, "BlockSize")), "x"), block),
        instance_of(K, "GemmPipeline", QUANT_PIPELINES[config.variant][config.pipeline] if config.variant in
                    QUANT_VARIANTS else PIPELINES[config.pipeline].cls),
    ]
    if config.kind == "gemm":
        epilogue = "CShuffleEpilogue" if config.epilogue == "cshuffle" else "DefaultGemm2DEpilogue"
        if config.variant in QUANT_VARIANTS:
            permuted = gemm_quant.Quant.of(config, load_profile(config.ck_api)).permute_n
            return [*out, equal(L("kBlockPerCu"), config.k_block_per_cu),
                    instance_of(K, "EpiloguePipeline", "PermuteNEpilogue" if permuted else epilogue)]
        if config.variant == "stream_k":
            out += [instance_of(K, "TilePartitioner", "StreamKTilePartitioner"),
                    equal(member(K, "TilePartitioner", "persistent"), bool(config.persistent))]
        return [*out, equal(L("kBlockPerCu"), gemm.BLOCK_PER_CU),
                instance_of(K, "EpiloguePipeline", epilogue)]
    out += [equal(L("kBlockPerCu"), conv.block_per_cu(config)),
            equal(n.call(member(K, "EpiloguePipeline", "GetVectorSizeC")), config.vector_size_c),
            *(equal(member(K, "GroupedConvTraitsType", f"VectorSize{x.upper()}"), getattr(config, f"vector_size_{x}"))
              for x in "abc")]
    if config.streamk_enabled:
        out += [instance_of(K, "TilePartitioner", "StreamKTilePartitioner"),
                equal(member(K, "TilePartitioner", "persistent"), bool(config.streamk_persistent))]
    return out


@pytest.mark.parametrize("path", KERNEL_GOLDENS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden_header_compiles_against_its_profile_and_derives_its_config(path):
    u = unit(path)
    config = config_for(path)
    assert u.profile == config.ck_api and len(u.kernels) == 1
    u.static_assert(*expected_constants(u, config))


def test_a_false_static_assert_fails_with_the_compiler_text():
    u = unit(golden("gemm", "standard", NEW))
    with pytest.raises(testing.JitError, match="static assertion failed"):
        u.static_assert(equal(u.member("TileM"), 7))


# --- launcher behaviour ---------------------------------------------------------------------------

def conv_config(case: str, profile: str):
    return config_of(CONV_CONFIGS, case, profile)


def weight_bytes(p: testing.ConvProblem, size: int) -> int:
    return size * p.G * p.K * p.C * math.prod(p.filter)


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_forward_never_zeroes(profile):
    events = unit(golden("conv", "forward", profile)).launch_conv(PROBLEM)
    assert [e.kind for e in events] == ["timed", "launch"]
    assert events[1]["op"] == "fwd" and events[1]["gemm"] == f"{4 * 36}x16x{16 * 9}"


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_bwd_data_zeroes_din_before_the_kernel(profile):
    events = unit(golden("conv", "bwd_data", profile)).launch_conv(PROBLEM)
    assert [e.kind for e in events] == ["timed", "memset", "launch"]
    din = 2 * PROBLEM.G * PROBLEM.N * PROBLEM.C * math.prod(PROBLEM.input)
    assert (events[1]["target"], events[1]["bytes"]) == ("in", din)


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_bwd_weight_zeroes_dwei_only_for_split_k(profile):
    u = unit(golden("conv", "bwd_weight", profile))
    assert not events_of(u.launch_conv(PROBLEM, k_batch=1), "memset")
    events = u.launch_conv(PROBLEM, k_batch=2)
    assert [e.kind for e in events] == ["timed", "memset", "launch"]
    assert (events[1]["target"], events[1]["bytes"]) == ("wei", weight_bytes(PROBLEM, 2))
    assert events[2]["grid"][2] == 2


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_two_stage_converts_an_fp32_workspace_after_the_gemm(profile):
    u = unit(golden("conv", "bwd_weight_two_stage", profile))
    events = u.launch_conv(PROBLEM, k_batch=2)
    alloc, = events_of(events, "alloc")
    assert alloc["bytes"] == weight_bytes(PROBLEM, 4)
    memset, = events_of(events, "memset")
    assert (memset["target"], memset["bytes"]) == (alloc["target"], alloc["bytes"])
    gemm_launch, convert = events_of(events, "launch")
    assert gemm_launch["kernel"] == "GroupedConvolutionBackwardWeightKernel"
    assert convert["kernel"] == "ElementWiseKernel"
    assert convert["elements"] == weight_bytes(PROBLEM, 1)
    assert (convert["input"], convert["output"]) == (alloc["target"], "wei")
    assert [e.kind for e in events] == ["alloc", "timed", "memset", "launch", "launch", "free"]
    assert not events_of(u.launch_conv(PROBLEM, k_batch=1), "memset")


def model_tail(pipeline: str, num_loop: int) -> tuple[int, str]:
    """The host model's (hot loop, tail) rule per pipeline family (behaviour/gemm.hpp)."""
    if pipeline == "compv3":
        return int(num_loop > 2), "Even" if num_loop % 2 == 0 else "Odd"
    stages, tails = {"mem": (2, ("Full", "One")), "compv4": (3, ("Full", "One", "Two"))}[pipeline]
    return int(num_loop > stages), tails[num_loop % stages]


@pytest.mark.parametrize("case", ["standard", "standard_persistent", "standard_no_split_k"])
def test_tail_handler_runs_the_instantiation_matching_the_loop_count(case):
    config = config_of(GEMM_CASES, case, OLD)
    u = unit(golden("gemm", case, OLD))
    seen = set()
    for num_loop in range(1, 6):
        launch, = events_of(u.launch_gemm(128, 128, num_loop * config.tile_k), "launch")
        hot, tail = model_tail(config.pipeline, num_loop)
        assert (launch["hot_loop"], launch["tail"]) == (hot, tail), num_loop
        seen.add((hot, tail))
    assert len(seen) >= 3


@pytest.mark.parametrize(("kind", "case"), [("gemm", "standard"), ("conv", "bwd_weight")])
def test_old_profile_writes_with_atomic_add_exactly_when_k_is_split(kind, case):
    u = unit(golden(kind, case, OLD))
    launches = [u.launch_gemm(256, 256, 256, k) if kind == "gemm" else u.launch_conv(PROBLEM, k) for k in (1, 2)]
    memops = [(events_of(e, "launch")[0]["memop"], events_of(e, "launch")[0]["memop_at"]) for e in launches]
    assert memops == [("set", "compile_time"), ("atomic_add", "compile_time")]
    assert [len(events_of(e, "memset")) for e in launches] == [0, 1]


def test_new_profile_chooses_the_memory_operation_at_run_time():
    u = unit(golden("gemm", "standard", NEW))
    launch, = events_of(u.launch_gemm(256, 256, 256, 2), "launch")
    assert (launch["memop"], launch["memop_at"], launch["hot_loop"]) == ("atomic_add", "run_time", "runtime")


@pytest.mark.parametrize(("case", "profile", "problem", "k_batch", "supported"), [
    ("forward", OLD, PROBLEM, 1, True),
    ("forward", OLD, PROBLEM, 2, False),  # CK's forward kernels never split K, nor does ck-2025.11's bwd_data
    ("bwd_data", OLD, PROBLEM, 2, False),
    ("forward", NEW, PROBLEM, 2, False),
    ("bwd_data", NEW, PROBLEM, 2, True),
    ("forward", NEW, PROBLEM, 0, False),
    ("forward", NEW, attrs.evolve(PROBLEM, C=12), 1, False),  # C is not a whole number of 8-wide vectors
    ("bwd_weight", OLD, PROBLEM, 4, True),
    ("bwd_weight_streamk", NEW, PROBLEM, 1, True),
    ("bwd_weight_streamk", NEW, PROBLEM, 2, False),  # stream-K never splits K
    ("forward_explicit_gemm", NEW, PROBLEM, 1, False),  # a 3x3 filter on the 1x1 explicit-GEMM path
    ("forward_explicit_gemm", NEW, attrs.evolve(PROBLEM, filter=(1, 1)), 1, True),
    ("forward_depthwise", NEW, DEPTHWISE, 1, True),
    ("forward_depthwise", NEW, attrs.evolve(DEPTHWISE, left_pad=None, right_pad=None), 1, False),  # the traits pad by 1
])
def test_is_supported_answers_from_the_model(case, profile, problem, k_batch, supported):
    assert unit(golden("conv", case, profile)).conv_is_supported(problem, k_batch) is supported


def test_unsupported_arguments_raise_the_launchers_error():
    with pytest.raises(testing.LaunchError, match="arguments not supported"):
        unit(golden("conv", "forward", OLD)).launch_conv(PROBLEM, k_batch=2)


@pytest.mark.parametrize(("case", "profile", "ds"), [("multi_d", OLD, "d0"), ("multi_d_2d", NEW, "d0,d1")])
def test_multi_d_plain_launch_forwards_null_d_pointers(case, profile, ds):
    u = unit(golden("gemm", case, profile))
    launch, = events_of(u.launch_gemm(256, 256, 256), "launch")
    plain, = events_of(u.launch_gemm(256, 256, 256, plain=True), "launch")
    assert (launch["kernel"], launch["ds"]) == ("GemmKernelMultiD", ds)
    assert plain["ds"] == ",".join(["null"] * len(ds.split(",")))


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_batched_launch_runs_every_batch_at_its_strides(profile):
    """Three fp16 batches 64 elements further apart than packed: one launch over (tiles, batches, K splits) whose
    batch i reads A and B and writes C i batch strides from their starts; split-K zeroes exactly each batch's C."""
    u = unit(golden("gemm", "batched", profile))
    m, n_, k, batches, pad = 128, 256, 128, 3, 64
    strides = {"a": m * k + pad, "b": k * n_ + pad, "e": m * n_ + pad}
    expected = ",".join(":".join(f"{t}+{2 * i * strides[t]}" if i else t for t in "abe") for i in range(batches))
    events = u.launch_gemm_batched(m, n_, k, batches, pad=pad)
    launch, = events_of(events, "launch")
    assert not events_of(events, "memset")
    assert (launch["kernel"], launch["grid"], launch["batch_count"]) == ("BatchedGemmKernel", (2, batches, 1), batches)
    assert launch["batches"] == expected
    split = u.launch_gemm_batched(m, n_, k, batches, 2, pad=pad)
    assert [e.kind for e in split] == ["timed", *["memset"] * batches, "launch"]
    assert [(e["target"], e["bytes"], e["pitch"]) for e in events_of(split, "memset")] == [
        (f"e+{2 * i * strides['e']}" if i else "e", 2 * m * n_, 2 * n_) for i in range(batches)]
    launch, = events_of(split, "launch")
    assert (launch["grid"], launch["memop"], launch["batches"]) == ((2, batches, 2), "atomic_add", expected)


@pytest.mark.parametrize(("batches", "pad"), [(0, 0), (2, -1)])
def test_batched_refuses_no_batch_and_overlapping_batches(batches, pad):
    """CK's batched IsSupportedArgument: batch_count >= 1 and batch strides of at least one packed batch."""
    u = unit(golden("gemm", "batched", NEW))
    u.launch_gemm_batched(128, 128, 128, 2)
    with pytest.raises(testing.LaunchError, match="arguments not supported"):
        u.launch_gemm_batched(128, 128, 128, batches, pad=pad)


def test_batched_plain_launch_runs_one_packed_batch():
    launch, = events_of(unit(golden("gemm", "batched", OLD)).launch_gemm(128, 256, 128), "launch")
    assert (launch["grid"], launch["batch_count"], launch["batches"]) == ((2, 1, 1), 1, "a:b:e")


def group_text(i: int, m: int, n_: int, k: int, strides: tuple[int, int, int], k_batch: int, blocks: tuple[int, int]):
    """One group as the grouped kernel model logs it: pointers, MxNxK, strides, k_batch, its block range."""
    return f"a{i}:b{i}:e{i}:{m}x{n_}x{k}:{','.join(map(str, strides))}:k{k_batch}:{blocks[0]}-{blocks[1]}"


@pytest.mark.parametrize(("profile", "tail"), [(OLD, (0, "Odd")), (NEW, ("runtime", "runtime"))])
def test_grouped_launch_hands_every_group_its_own_arguments(profile, tail):
    """Three fp16 rcr groups of different shapes (one with no rows, as an expert no token reached) in one launch:
    the descriptors are copied to a device workspace of one per group with work, which the kernel reads; each
    group keeps its pointers, sizes and strides and owns its tiles of the 1-D grid in order."""
    u = unit(golden("gemm", "grouped", profile))
    events = u.launch_gemm_grouped([(128, 256, 64), (0, 128, 64), (384, 128, 64)])
    assert [e.kind for e in events] == ["alloc", "memcpy", "timed", "launch", "free"]
    alloc, copy, launch = events[0], events[1], events[3]
    assert copy["target"] == alloc["target"] and copy["bytes"] == alloc["bytes"] > 0 and copy["source"] == "host"
    assert (launch["kernel"], launch["grid"], launch["group_count"], launch["persistent"]) == (
        "GroupedGemmKernel", (5, 1, 1), 2, 0)
    assert launch["groups"] == ";".join([group_text(0, 128, 256, 64, (64, 64, 256), 1, (0, 2)),
                                         group_text(2, 384, 128, 64, (64, 64, 128), 1, (2, 5))])
    assert (launch["hot_loop"], launch["tail"], launch["memop"]) == (*tail, "set")


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_grouped_split_k_zeroes_each_groups_c_and_gives_it_k_batch_blocks_per_tile(profile):
    u = unit(golden("gemm", "grouped", profile))
    events = u.launch_gemm_grouped([(128, 256, 128), (256, 128, 128)], k_batch=2)
    assert [(e["target"], e["bytes"], e["pitch"]) for e in events_of(events, "memset")] == [
        ("e0", 2 * 128 * 256, 2 * 256), ("e1", 2 * 256 * 128, 2 * 128)]
    launch, = events_of(events, "launch")
    assert (launch["grid"], launch["memop"]) == ((8, 1, 1), "atomic_add")
    assert launch["groups"] == ";".join([group_text(0, 128, 256, 128, (128, 128, 256), 2, (0, 4)),
                                         group_text(1, 256, 128, 128, (128, 128, 128), 2, (4, 8))])


def test_grouped_groups_share_what_the_old_profile_fixes_at_compile_time():
    """ck-2025.11 instantiates the memory operation and (non-persistent) the K loop's tail once per launch, so
    the groups must agree on k_batch and on the tail; ck-2026.06 chooses both per group on the device."""
    old, new = (unit(golden("gemm", "grouped", p)) for p in (OLD, NEW))
    with pytest.raises(testing.LaunchError, match="every group takes the first group's k_batch"):
        old.launch_gemm_grouped([(128, 128, 128), (128, 128, 128)], k_batch=[1, 2])
    with pytest.raises(testing.LaunchError, match="hot loop and tail are chosen at compile time"):
        old.launch_gemm_grouped([(128, 128, 64), (128, 128, 128)])  # one K loop (odd) and two (even)
    launch, = events_of(new.launch_gemm_grouped([(128, 128, 64), (128, 128, 128)], k_batch=[1, 2]), "launch")
    assert launch["groups"].endswith(":k2:1-3")


def test_grouped_persistent_loops_over_the_groups_on_a_device_sized_grid():
    """Persistent: one block per CU of the modelled device; even the old profile's kernel picks hot loop and
    tail per group, so groups of different K loops launch together."""
    u = unit(golden("gemm", "grouped_persistent", OLD))
    launch, = events_of(u.launch_gemm_grouped([(128, 128, 64), (256, 128, 256)]), "launch")
    assert (launch["grid"], launch["persistent"], launch["hot_loop"], launch["tail"]) == (
        (304, 1, 1), 1, "runtime", "runtime")
    assert launch["groups"] == ";".join([group_text(0, 128, 128, 64, (64, 128, 128), 1, (0, 1)),
                                         group_text(1, 256, 128, 256, (256, 128, 128), 1, (1, 3))])


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_grouped_refuses_a_bad_group_and_launches_nothing_for_no_work(profile):
    """CK's check runs per group (here: a K that is no whole tile without K padding); no groups, or only groups
    without work, launch nothing; the plain-arguments launch runs one group."""
    u = unit(golden("gemm", "grouped", profile))
    with pytest.raises(testing.LaunchError, match="arguments not supported"):
        u.launch_gemm_grouped([(128, 128, 64), (128, 128, 100)] if profile == NEW else [(128, 128, 100)])
    assert not events_of(u.launch_gemm_grouped([]), "launch")
    assert not events_of(u.launch_gemm_grouped([(0, 128, 64)]), "launch")
    launch, = events_of(u.launch_gemm(128, 256, 64), "launch")
    assert (launch["group_count"], launch["groups"]) == (1, "a:b:e:128x256x64:64,64,256:k1:0-2")


@pytest.mark.parametrize("case", ["bwd_weight_streamk", "bwd_weight_streamk_linear_persistent"])
def test_streamk_zeroes_its_workspace_inside_every_timed_repetition(case):
    u = unit(golden("conv", case, NEW))
    events = u.launch_conv(PROBLEM, time_kernel=True)
    alloc, = events_of(events, "alloc")
    timed, = events_of(events, "timed")
    memsets, launches = events_of(events, "memset"), events_of(events, "launch")
    assert alloc["bytes"] > 0 and not any(e["target"] == "wei" for e in memsets)
    assert len(memsets) == len(launches) == timed["iterations"] > 1
    assert all((m["target"], m["bytes"]) == (alloc["target"], alloc["bytes"]) for m in memsets)
    reduction = "Linear" if "linear" in case else "Tree"
    assert {(e["streamk"], e["persistent"], e["workspace"]) for e in launches} == {
        (reduction, int("persistent" in case), alloc["target"])}


@pytest.mark.parametrize(("profile", "strategy"), [(OLD, "Reduction"), (NEW, "Linear")])
def test_gemm_streamk_zeroes_its_workspace_inside_every_timed_repetition(profile, strategy):
    u = unit(golden("gemm", "streamk", profile))
    events = u.launch_gemm(256, 256, 256, time_kernel=True)
    alloc, = events_of(events, "alloc")
    timed, = events_of(events, "timed")
    memsets, launches = events_of(events, "memset"), events_of(events, "launch")
    assert alloc["bytes"] > 0 and len(memsets) == len(launches) == timed["iterations"] > 1
    assert all((m["target"], m["bytes"]) == (alloc["target"], alloc["bytes"]) for m in memsets)
    assert {(e["kernel"], e["streamk"], e["persistent"], e["workspace"], e["k_batch"]) for e in launches} == {
        ("StreamKKernel", strategy, 1, alloc["target"], 1)}
    with pytest.raises(testing.LaunchError, match="k_batch must be 1"):
        u.launch_gemm(256, 256, 256, 2)


def test_gemm_streamk_atomic_zeroes_c_and_allocates_no_workspace(tmp_path):
    emit_run([dict(GEMM_CASES["streamk"], streamk_reduction="atomic", persistent=False, ck_api=OLD)], tmp_path)
    header, = tmp_path.glob("gemm_*.hpp")
    u = testing.jit_header(header)
    events = u.launch_gemm(256, 512, 256, time_kernel=True)
    launches, memsets = events_of(events, "launch"), events_of(events, "memset")
    assert [e["bytes"] for e in events_of(events, "alloc")] == [0]
    assert len(memsets) == len(launches) > 1 and {m["target"] for m in memsets} == {"e"}
    assert all(m["bytes"] == 256 * 512 * 2 for m in memsets)
    assert {(e["streamk"], e["persistent"], e["workspace"], e["memop"]) for e in launches} == {
        ("Atomic", 0, "null", "atomic_add")}
    with pytest.raises(testing.LaunchError, match="arguments not supported"):
        u.launch_gemm(256, 500, 256)  # N (C's contiguous dimension) is no whole number of tiles, and N is not padded


def test_depthwise_launches_one_wave_per_block_without_zeroing():
    config, problem = conv_config("forward_depthwise", NEW), DEPTHWISE
    events = unit(golden("conv", "forward_depthwise", NEW)).launch_conv(problem)
    launch, = events_of(events, "launch")
    assert not events_of(events, "memset") and launch["direct"] == 1
    tiles = math.ceil(problem.output[0] / config.tile_h) * math.ceil(problem.output[1] / config.tile_w)
    assert launch["grid"] == (tiles, problem.G, problem.N // config.nbatch)
    assert launch["block"] == (DEPTHWISE_BLOCK_SIZE, 1, 1)


def test_instance_string_under_the_experimental_builder():
    text = unit(golden("conv", "bwd_weight", NEW)).instance_string()
    assert text == "grouped_conv_bwd_weight_GemmPipelineAgBgCrCompV3_16x64x64_ck-2026.06"


# --- registration of a generated run --------------------------------------------------------------

def conv_param(problem: testing.ConvProblem, profile: str) -> n.Expr:
    """`ck_tile::conv::ConvParam{...}` for a problem with unit strides and dilations and no pads."""
    def lengths(values) -> n.Expr:
        return n.BraceInit(None, [n.IntLit(v) for v in values])

    ones, zeros = (1,) * len(problem.filter), (0,) * len(problem.filter)
    return n.BraceInit(load_profile(profile).type("ConvParam"), [
        *(n.IntLit(v) for v in problem.scalars()),
        *map(lengths, (problem.filter, problem.input, ones, ones, zeros, zeros))])


def emit_run(configs: list[dict], out: Path, chunk_size: int = 25) -> dict:
    kernels = [k for c in configs for k in load_data(c)]
    write_outputs(render(kernels), out, chunk_size=chunk_size)
    return json.loads((out / "manifest.json").read_text())


def registrations(events: list[testing.Event]) -> dict[str, str]:
    registered = events_of(events, "register")
    assert all(e["accepted"] == 1 for e in registered)
    names = [e["name"] for e in registered]
    assert len(names) == len(set(names)), "a kernel registered twice"
    return {e["name"]: e["key"] for e in registered}


def key_text(fields: list[tuple[str, object]]) -> str:
    def text(value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        return "x".join(map(str, value)) if isinstance(value, tuple) else str(value)

    return ";".join(f"{name}={text(value)}" for name, value in fields)


def literal(expr: n.Expr) -> object:
    """The Python value of a wrapper's key literal."""
    if isinstance(expr, n.BraceInit):
        return tuple(literal(e) for e in expr.items)
    return expr.value


def dispatcher(*parts: str) -> n.Expr:
    return n.Id(n.Name(("ck_tile", "dispatcher", *parts)))


def registered(registry: str, kernel: str) -> n.Expr:
    """`ck_tile::dispatcher::<registry>::instance().lookup(ckast::<kernel>::dispatcher_key())`."""
    key = n.call(f"ckast::{kernel}::dispatcher_key")
    return n.call(n.Member(n.Call(dispatcher(registry, "instance"), []), "lookup"), key)


def test_gemm_run_registers_every_kernel_once_under_its_key(tmp_path):
    gemms = [dict(GEMM_CASES[c], ck_api=OLD) for c in ("standard", "preshuffle", "multi_d", "streamk")]
    manifest = emit_run(gemms, tmp_path)
    u = testing.jit_header(tmp_path / "dispatcher_wrappers" / "register_all_kernels.hpp")
    register = u.function(n.Builtin("int"), [], [
        n.ExprStmt(n.call(n.Member(n.Call(dispatcher("Registry", "instance"), []), "clear"))),
        n.Return(n.call("ckast::register_all_tile_gemm_kernels", n.StrLit("gfx942"))),
    ])
    testing.clear_log()
    assert register() == len(manifest["kernels"]) == 4
    keys = registrations(testing.log())
    expected = {}
    for entry in manifest["kernels"]:
        config = load_data(entry["config"])[0].config
        fields = gemm_wrapper.key_fields(gemm.Gemm.of(config, load_profile(config.ck_api)))
        expected[entry["name"]] = key_text([(path, literal(value)) for path, value in fields])
    assert keys == expected
    assert len(set(keys.values())) == len(keys)
    # The dispatcher runs a multi-D kernel through its plain-arguments launch.
    multi_d, = (k for k in u.kernels if "multi_d" in k)
    gemm_args = n.Signature("gemm_args", ("ckast_model", "testing", "gemm_args"), "function", [n.Param("L", "type")])
    args = n.Call(n.Id(n.Name((gemm_args(L=u.launcher(multi_d)),))), [n.IntLit(256)] * 3 + [n.IntLit(1)])
    stream = n.BraceInit(load_profile(OLD).type("stream_config"))
    run = u.function(n.Builtin("float"), [], [
        n.Return(n.call(n.Member(registered("Registry", multi_d), "run", arrow=True), args, stream))])
    testing.clear_log()
    run()
    launch, = events_of(testing.log(), "launch")
    assert (launch["kernel"], launch["ds"]) == ("GemmKernelMultiD", "null")


def test_batched_kernel_registers_and_the_dispatcher_runs_one_batch(tmp_path):
    """CK's dispatcher Problem and KernelKey have no batch: a batched kernel registers under its GEMM key, its
    `supports()` is the dispatcher's whole-tile check, and `run` reaches BatchedGemmKernel with one packed batch."""
    configs = [dict(GEMM_CASES["batched"], ck_api=NEW), dict(GEMM_CASES["standard"], tile_k=32, ck_api=NEW)]
    emit_run(configs, tmp_path)
    register, problem, select = gemm_dispatcher(tmp_path)
    kernels = {str(k.get_name()): k for k in register()}
    batched, = (k for name, k in kernels.items() if "_batched_" in name)
    assert len(kernels) == 2
    assert [bool(batched.supports(problem(*shape))) for shape in ((256, 256, 128), (200, 256, 128))] == [True, False]
    name, = (k for k in kernels if "_batched_" in k)
    launch = _dispatcher_launch(tmp_path, name)
    assert (launch["kernel"], launch["grid"], launch["batches"]) == ("BatchedGemmKernel", (4, 1, 1), "a:b:e")


def _dispatcher_launch(tmp_path, name: str) -> dict:
    """Register the library of `tmp_path` in a cleared registry, run kernel `name` through it on a 256x256x128
    problem and return its one launch event."""
    u = testing.jit_header(tmp_path / "dispatcher_wrappers" / "register_all_kernels.hpp")
    gemm_args = n.Signature("gemm_args", ("ckast_model", "testing", "gemm_args"), "function", [n.Param("L", "type")])
    args = n.Call(n.Id(n.Name((gemm_args(L=u.launcher(name)),))), [n.IntLit(256), n.IntLit(256), n.IntLit(128),
                                                                     n.IntLit(1)])
    stream = n.BraceInit(load_profile(NEW).type("stream_config"))
    run = u.function(n.Builtin("float"), [], [
        n.ExprStmt(n.call(n.Member(n.Call(dispatcher("Registry", "instance"), []), "clear"))),
        n.ExprStmt(n.call("ckast::register_all_tile_gemm_kernels", n.StrLit("gfx942"))),
        n.Return(n.call(n.Member(registered("Registry", name), "run", arrow=True), args, stream))])
    testing.clear_log()
    run()
    launch, = events_of(testing.log(), "launch")
    return launch


def test_grouped_kernel_registers_beside_its_standard_twin_and_the_dispatcher_runs_one_group(tmp_path):
    """CK's KernelKey holds `signature.grouped`, so a grouped kernel and the standard kernel of the same knobs
    register under two keys; the dispatcher's problem has one shape, which `run` hands the grouped kernel as one
    group."""
    configs = [dict(GEMM_CASES["grouped"], ck_api=NEW), dict(GEMM_CASES["standard"], ck_api=NEW)]
    emit_run(configs, tmp_path)
    register, problem, select = gemm_dispatcher(tmp_path)
    testing.clear_log()
    kernels = {str(k.get_name()): k for k in register()}
    keys = registrations(testing.log())
    assert len(kernels) == 2 and len(set(keys.values())) == 2
    name, = (k for k in keys if "_grouped_" in k)
    assert "signature.grouped=true" in keys[name]
    assert [bool(kernels[name].supports(problem(*shape))) for shape in ((256, 256, 128), (200, 256, 128))] == [
        True, False]
    launch = _dispatcher_launch(tmp_path, name)
    assert (launch["kernel"], launch["grid"], launch["groups"]) == (
        "GroupedGemmKernel", (4, 1, 1), "a:b:e:256x256x128:128,128,256:k1:0-4")


def gemm_dispatcher(run: Path):
    """A run's GEMM registration JIT-ed: `register()` fills the model's registry with the run's kernels and returns
    them in registry order; `problem(M, N, K)` is the dispatcher's Problem; `select(problem)` a FirstFit
    dispatcher's choice (its name, "" for none)."""
    u = testing.jit_header(run / "dispatcher_wrappers" / "register_all_kernels.hpp")
    registry = n.Call(dispatcher("Registry", "instance"), [])
    problem_t = n.type_of("ck_tile", "dispatcher", "Problem")
    vector = n.Signature("vector", ("std", "vector"), "struct", [n.Param("T", "type")])
    register = u.function(n.type_of(vector(T=n.type_of("ck_tile", "dispatcher", "KernelInstancePtr"))), [], [
        n.ExprStmt(n.call(n.Member(registry, "clear"))),
        n.ExprStmt(n.call("ckast::register_all_tile_gemm_kernels", n.StrLit("gfx942"))),
        n.Return(n.call(n.Member(registry, "get_all")))])
    sizes = [n.FuncParam(n.type_of("std", "int64_t"), x) for x in ("m", "nn", "k")]
    problem = u.function(problem_t, sizes, [n.Return(n.BraceInit(problem_t, [n.ident(x.name) for x in sizes]))])
    select = u.function(load_profile(NEW).type("string"), [n.FuncParam(n.LRef(n.Const(problem_t)), "problem")], [
        n.VarDecl(n.type_of("ck_tile", "dispatcher", "Dispatcher"), "dispatcher", n.UnOp("&", registry), brace=True),
        n.VarDecl(n.Const(n.Builtin("auto")), "kernel",
                  n.call(n.Member(n.ident("dispatcher"), "select_kernel"), n.ident("problem"))),
        n.Return(n.Cond(n.BinOp("==", n.ident("kernel"), n.NullPtr()), n.StrLit(""),
                        n.call(n.Member(n.ident("kernel"), "get_name", arrow=True))))])
    return register, problem, select


def test_gemm_dispatcher_asks_each_kernel_s_supports_as_the_dispatcher_layer_does(tmp_path):
    """Kernels of CK's parity sweep and the standard example (an unpadded rcr kernel, an rrr one padding M, N and
    K), registered under the host model: every instance's `supports()` answers as `ckast select`'s dispatcher layer
    does, and a FirstFit dispatcher takes the first registered kernel that supports the problem: none of the
    sweep's for M=257, N=1024, K=512 (CK's observation), one for M=N=K=1024. The sweep's 32 kernels share the
    fields `supports()` reads (64x64x64 tiles, no padding), so four of them (JIT time) answer for all 32."""
    from ckast.select.serving.applicability import DISPATCHER, applicable
    from ckast.select.serving.library import load_library
    from ckast.select.serving.problem_read import gemm_problem

    shapes = [(257, 1024, 512), (1024, 1024, 1024), (1024, 1024, 100), (100, 256, 256), (256, 1000, 512)]
    chosen: dict[tuple, str] = {}
    verdicts: dict[tuple, dict[str, bool]] = {}
    sweep = json.loads((ROOT / "examples" / "ck-real" / "gemm_fp16_rcr_gfx942_sweep.json").read_text())["kernels"]
    read = ("tile_m", "tile_n", "tile_k", "pad_m", "pad_n", "pad_k")
    assert len(sweep) == 32 and len({tuple(c[f] for f in read) for c in sweep}) == 1
    standard = json.loads((ROOT / "examples" / "gemm_standard.json").read_text())["kernels"]
    for run, configs in (("sweep", sweep[::8]), ("standard", standard)):
        emit_run([dict(c, ck_api=NEW) for c in configs], tmp_path / run)
        library = load_library(tmp_path / run)
        register, problem, select = gemm_dispatcher(tmp_path / run)
        kernels = register()
        order = [str(k.get_name()) for k in kernels]
        assert sorted(order) == sorted(library.names)
        for shape in shapes:
            instance = problem(*shape)
            supports = {str(k.get_name()): bool(k.supports(instance)) for k in kernels}
            layer = {name: bool(ok) for _, part in library.parts() for name, ok in
                     zip(part.names, applicable(gemm_problem(dict(zip("MNK", shape))), part.table, (DISPATCHER,)))}
            assert supports == layer, (run, shape)
            verdicts[run, *shape] = supports
            chosen[run, *shape] = str(select(instance))
            assert chosen[run, *shape] == next((name for name in order if supports[name]), ""), (run, shape)
        assert str(select(problem(0, 64, 64))) == ""  # an invalid problem: none
    assert len(verdicts["sweep", 257, 1024, 512]) == 4 and not any(verdicts["sweep", 257, 1024, 512].values())
    assert chosen["sweep", 257, 1024, 512] == "" and all(verdicts["sweep", 1024, 1024, 1024].values())
    unpadded, padded = sorted(load_library(tmp_path / "standard").names)  # rcr, rrr
    assert [verdicts["standard", *shape][unpadded] for shape in shapes] == [False, True, False, False, False]
    assert all(verdicts["standard", *shape][padded] for shape in shapes)
    assert chosen["standard", 100, 256, 256] == padded


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_conv_run_registers_every_kernel_once_under_its_key(tmp_path, profile):
    configs = [dict(CONV, variant="forward", pipeline="compv3", ck_api=profile),
               dict(CONV, variant="bwd_data", pipeline="compv3", ck_api=profile),
               dict(CONV, variant="bwd_weight", pipeline="compv3", ck_api=profile, **SMALL_TILE),
               dict(CONV, variant="bwd_weight", pipeline="compv3", two_stage=True, vector_size_c=4, ck_api=profile,
                    **SMALL_TILE)]
    if profile == NEW:
        configs += [dict(CONV_CONFIGS["forward_depthwise"], ck_api=NEW),
                    dict(CONV_CONFIGS["bwd_weight_streamk"], ck_api=NEW)]
    manifest = emit_run(configs, tmp_path, chunk_size=2)
    sources = sorted((tmp_path / "dispatcher_wrappers").glob("register_*.cpp"))
    u = testing.jit_files(sources)
    registry = n.Call(dispatcher("GroupedConvRegistry", "instance"), [])
    calls = [n.ExprStmt(n.call(f"ck_tile::dispatcher::register_all_grouped_conv_{d}_kernels", n.StrLit("gfx942")))
             for d in ("fwd", "bwd_data", "bwd_weight")]
    register = u.function(n.Builtin("int"), [], [
        n.ExprStmt(n.call(n.Member(registry, "clear"))), *calls,
        n.Return(n.StaticCast(n.Builtin("int"), n.call(n.Member(registry, "size")))),
    ])
    testing.clear_log()
    assert register() == len(manifest["kernels"]) == len(configs)
    keys = registrations(testing.log())
    expected = {}
    for entry in manifest["kernels"]:
        fields = conv_key(load_data(entry["config"])[0].config)
        expected[entry["name"]] = {k: key_text([(k, v)]).split("=", 1)[1] for k, v in fields.items()}
    for name, key in keys.items():
        assert expected[name].items() <= dict(f.split("=", 1) for f in key.split(";")).items()
    assert sorted(keys) == sorted(expected) and len(set(keys.values())) == len(keys)
    # The dispatcher runs the forward kernel through the backend's functions; the builder string is the launcher's.
    forward, = (k for k in u.kernels if "_forward_gfx" in k)
    instance = registered("GroupedConvRegistry", forward)
    buffers = [n.call("ckast_model::testing::buffer", n.StrLit(b)) for b in ("in", "wei", "out")]
    problem = n.BraceInit(n.type_of("ck_tile", "dispatcher", "GroupedConvProblem"),
                          [conv_param(PROBLEM, profile), *buffers, n.IntLit(1)])
    stream = n.BraceInit(load_profile(profile).type("stream_config"))
    supported = n.call(n.Member(instance, "is_supported", arrow=True), conv_param(PROBLEM, profile), n.IntLit(1))
    launch_it = n.call(n.Member(instance, "run", arrow=True), problem, stream)
    run = u.function(n.Builtin("float"), [], [n.Return(n.Cond(supported, launch_it, n.IntLit(-1)))])
    testing.clear_log()
    assert run() == 0
    launch, = events_of(testing.log(), "launch")
    text = u.function(load_profile(profile).type("string"), [], [
        n.Return(n.call(n.Member(instance, "instance_string", arrow=True)))])
    assert str(text()) == u.instance_string(kernel=forward) != ""
    assert (launch["kernel"], launch["op"]) == ("GroupedConvolutionForwardKernel", "fwd")


# --- errors surface with their text ---------------------------------------------------------------

def test_wrong_template_arity_fails_with_the_clang_error(tmp_path):
    text = golden("gemm", "standard", NEW).read_text()
    broken = tmp_path / "broken.hpp"
    broken.write_text(text.replace("GemmKernel<TilePartitioner, Pipeline, Epilogue>",
                                   "GemmKernel<TilePartitioner, Pipeline, Epilogue, Epilogue>"))
    with pytest.raises(testing.JitError) as info:
        testing.jit_header(broken, NEW)
    assert "too many template arguments for class template 'GemmKernel'" in str(info.value)
    assert f"{broken}:" in str(info.value)  # diagnostics name the original file, not the staged copy


def test_an_include_the_model_lacks_is_refused_with_file_and_line(tmp_path):
    header = tmp_path / "k.hpp"
    header.write_text('#pragma once\n#include "ck_tile/ops/grouped_convolution/pipeline/'
                      'grouped_convolution_forward_depthwise_pipeline.hpp"\n')
    with pytest.raises(testing.JitError, match=rf"{re.escape(str(header))}:2: .* nor a header of the {OLD} host model"):
        testing.jit_header(header, OLD)
    testing.jit_header(header, NEW)


def test_cli_jit_prints_one_line_per_file_and_fails_on_errors(tmp_path):
    broken = tmp_path / "broken_ck-2026.06.hpp"
    text = golden("gemm", "standard", NEW).read_text()
    broken.write_text(text.replace("ck_tile::TileGemmShape<", "ck_tile::TileShape<"))
    good = golden("gemm", "preshuffle", NEW)
    result = CliRunner().invoke(main, ["jit", str(good), str(broken)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith(f"PASS {good} [{NEW}]") and lines[1] == f"FAIL {broken} [{NEW}]"
    assert "error: no template named 'TileShape' in namespace 'ck_tile'" in result.output
    assert lines[-1] == "1 passed, 1 failed"


# --- the model and the catalog --------------------------------------------------------------------

@pytest.mark.parametrize("profile", profile_names())
def test_model_declares_every_catalog_entity_as_catalogued(profile):
    conformance.verify(load_profile(profile))


def _extra_parameter(sig: n.Signature) -> n.Signature:
    return attrs.evolve(sig, params=(*sig.params, n.Param("Extra_", "bool", default=n.BoolLit(False))))


def _other_last_default(sig: n.Signature) -> n.Signature:
    return attrs.evolve(sig, params=(*sig.params[:-1], attrs.evolve(sig.params[-1], default=n.BoolLit(True))))


DRIFTS = {"GemmKernel": _extra_parameter, "TileGemmShape": _other_last_default}


def drift_errors() -> dict[str, str]:
    """The model of NEW checked against catalogs that differ in one template (DRIFTS): each error."""
    profile = load_profile(NEW)
    errors = {}
    for key, drift in DRIFTS.items():
        drifted = attrs.evolve(profile, templates={**profile.templates, key: drift(profile.templates[key])})
        try:
            conformance.verify(drifted)
        except testing.JitError as exc:
            errors[key] = str(exc)
    return errors


@functools.cache
def drift_errors_elsewhere() -> dict[str, str]:
    """`drift_errors()` in a process of its own: Cling's rollback of the failed checks leaves templates
    instantiated before them unusable for later units of this process."""
    code = "import json, tests.test_jit as t; print(json.dumps(t.drift_errors()))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.parametrize(("key", "error"), [
    ("GemmKernel", "too many template parameters in template redeclaration"),
    ("TileGemmShape", "TileGemmShape: the catalog's kinds and defaults"),
])
def test_a_model_that_drifted_from_the_catalog_is_caught(key, error):
    """The model of NEW checked against a catalog that differs in one template: the checks fail."""
    assert error in drift_errors_elsewhere()[key]


def test_every_catalog_function_is_written_by_hand_where_the_list_says():
    for name in profile_names():
        with open(PROFILES_DIR / f"{name}.toml", "rb") as fh:
            functions = tomllib.load(fh).get("functions", {})
        for key, entry in functions.items():
            assert key in HANDWRITTEN or is_standard(tuple(entry["qualname"].split("::"))), key
    for key, relative in HANDWRITTEN.items():
        assert re.search(rf"\b{key}\b", path_of(relative).read_text()), (key, relative)


def test_profiles_coexist_and_a_header_jits_twice_into_two_units():
    first, second = (testing.jit_header(golden("gemm", "standard", OLD)) for _ in range(2))
    assert repr(first) != repr(second)
    newer = unit(golden("gemm", "standard", NEW))
    assert [events_of(u.launch_gemm(128, 128, 128), "launch")[0]["memop_at"] for u in (first, second, newer)] == [
        "compile_time", "compile_time", "run_time"]
