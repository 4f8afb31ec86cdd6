"""The Stream-K GEMM variant: what its header holds per profile and reduction, its name and dispatcher key,
and the configs it refuses (each by its rule)."""

from __future__ import annotations

import pytest

from ckast.config import ConfigError, load_data
from ckast.lower.identity import kernel_name
from ckast.variants import gemm_wrapper

from .goldens import GEMM
from .kernels import header_of

OLD, NEW = "ck-2025.11", "ck-2026.06"
STREAM_K = dict(GEMM, variant="stream_k")


def config(profile: str = OLD, **knobs):
    return load_data(dict(STREAM_K, ck_api=profile, **knobs))[0].config


def issues(**knobs) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_data(dict(STREAM_K, **knobs))
    return info.value.lines()


def test_defaults_are_ck_s_atomic_reduction_without_split_k():
    c = config()
    assert (c.streamk_reduction, c.split_k, c.epilogue, c.persistent) == ("atomic", False, "cshuffle", False)


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_the_kernel_picks_its_hot_loop_and_tail_at_run_time(profile):
    source = header_of(config(profile))
    assert "StreamKKernel<TilePartitioner, Pipeline, Epilogue>" in source
    assert not any(word in source for word in ("BaseGemmPipeline", "TailHandler", "HasHotLoop"))


@pytest.mark.parametrize(("reduction", "old", "new"), [
    ("atomic", "Atomic", "Atomic"), ("linear", "Reduction", "Linear"), ("tree", None, "Tree")])
def test_each_profile_spells_the_reduction_strategy_its_way(reduction, old, new):
    for profile, spelled in ((OLD, old), (NEW, new)):
        if spelled is None:
            continue
        source = header_of(config(profile, streamk_reduction=reduction))
        assert f"StreamKReductionStrategy::{spelled}," in source  # the partitioner's argument
        host_args = "ck_tile::reboot::StreamKHostArgs{" if profile == OLD else "ck_tile::StreamKHostArgs{"
        assert host_args in source
        # ck-2025.11's host arguments carry the strategy too; ck-2026.06's do not.
        assert source.count(f"StreamKReductionStrategy::{spelled}") == (2 if profile == OLD else 1)


@pytest.mark.parametrize(("reduction", "memop"), [("atomic", "atomic_add"), ("linear", "set")])
def test_old_epilogue_writes_atomically_exactly_for_the_atomic_reduction(reduction, memop):
    assert f"ck_tile::memory_operation_enum::{memop},\n" in header_of(config(OLD, streamk_reduction=reduction))
    assert "memory_operation_enum" not in header_of(config(NEW, streamk_reduction=reduction))


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_atomic_zeroes_c_and_the_workspace_reductions_zero_the_workspace(profile):
    atomic, linear = (header_of(config(profile, streamk_reduction=r)) for r in ("atomic", "linear"))
    assert "const auto zero_c = [&]()" in atomic and "hipMemset2DAsync" in atomic and "hipMemsetAsync" not in atomic
    assert "const auto zero_workspace = [&]()" in linear and "hipMemset2DAsync" not in linear
    for source in (atomic, linear):
        assert "K::SetWorkSpacePointer(kargs, workspace.GetDeviceBuffer());" in source
        assert "K::GridSize(kargs.tile_partitioner)" in source


def test_the_partitioner_is_persistent_exactly_when_the_kernel_is():
    for persistent in (False, True):
        source = header_of(config(NEW, persistent=persistent))
        assert f"UsePersistentKernel = {str(persistent).lower()};" in source
        assert "        UsePersistentKernel>;\n    using Traits" in source


def test_name_and_dispatcher_key_tell_the_reduction_apart_from_standard():
    atomic, tree = config(NEW), config(NEW, streamk_reduction="tree")
    standard = load_data(dict(GEMM, variant="standard", split_k=False, ck_api=NEW))[0].config
    assert "_stream_k_" in kernel_name(atomic) and "_atomic_" in kernel_name(atomic)
    assert "_tree_" in kernel_name(tree)
    keys = {gemm_wrapper.key_of(c) for c in (atomic, tree, standard)}
    assert len(keys) == 3
    fields = dict(gemm_wrapper.gemm_key(tree))
    assert (fields["algorithm.streamk"], fields["algorithm.reduction_strategy"], fields["algorithm.workspace"]) == (
        True, "Tree", True)
    assert gemm_wrapper.gemm_key(atomic)["algorithm.workspace"] is False
    assert "algorithm.streamk" not in gemm_wrapper.gemm_key(standard)


@pytest.mark.parametrize(("knobs", "line"), [
    (dict(streamk_reduction="Reduce"), 'streamk_reduction: "Reduce" is not allowed; allowed: atomic, linear, tree'),
    (dict(streamk_reduction="tree", ck_api=OLD), "streamk_reduction: tree: CK API profile ck-2025.11 has no tree "
     "reduction (its StreamKReductionStrategy is Atomic or Reduction); use atomic or linear, or a newer profile "
     "(ck_api) [rule profile.streamk_reduction]"),
    (dict(epilogue="default"), "epilogue: default: CK builds its Stream-K GEMM with the cshuffle epilogue only "
     "[rule stream_k.epilogue]"),
    (dict(pipeline="compv5"), "pipeline: compv5: the Stream-K GEMM kernel drives mem, compv3, compv4 only "
     "[rule stream_k.pipeline]"),
    (dict(split_k=True), "split_k: CK's stream_k GEMM kernel does not support k_batch > 1; set split_k to false "
     "[rule split_k.unsupported]"),
    (dict(streamk_persistent=True), "streamk_persistent: does not apply to gemm stream_k; only to bwd_weight"),
])
def test_bad_stream_k_configs_are_refused_by_name(knobs, line):
    assert line in issues(**knobs)


def test_stream_k_runs_on_its_archs_only():
    assert any(line.endswith("[rule stream_k.arch]") and line.startswith("arch: Stream-K GEMM is not supported on "
                                                                         "gfx1250")
               for line in issues(arch="gfx1250", warp_tile_m=16, warp_tile_n=16, ck_api=NEW))


def test_the_knob_keeps_its_conv_choices():
    bwd = dict(kind="grouped_conv", variant="bwd_weight", streamk_enabled=True, ck_api=NEW)
    with pytest.raises(ConfigError) as info:
        load_data(dict(bwd, streamk_reduction="atomic"))
    assert info.value.lines() == ['streamk_reduction: "atomic" is not allowed; allowed: tree, linear']
    assert load_data(bwd)[0].config.streamk_reduction == "tree"
    with pytest.raises(ConfigError):
        load_data(dict(GEMM, variant="standard", streamk_reduction="atomic"))


def test_ck_generator_config_keeps_cshuffle_times_each_reduction_strategy():
    tiles = {k: [v] for k, v in dict(tile_m=128, tile_n=128, tile_k=64, warp_m=2, warp_n=2, warp_k=1, warp_tile_m=32,
                                     warp_tile_n=32, warp_tile_k=16).items()}
    traits = {"pipeline": ["compv3", "mem"], "epilogue": ["cshuffle", "default"], "scheduler": ["intrawave"]}
    data = {"variants": ["standard", "stream_k"], "tile_config": tiles, "trait_config": traits,
            "streamk_config": {"reduction_strategy": ["atomic", "linear"]}}
    configs = [k.config for k in load_data(data)]
    streamk = [(c.pipeline, c.streamk_reduction) for c in configs if c.variant == "stream_k"]
    assert sorted(streamk) == sorted((p, r) for p in ("compv3", "mem") for r in ("atomic", "linear"))
    assert all(c.epilogue == "cshuffle" for c in configs if c.variant == "stream_k")
    assert sum(c.variant == "standard" for c in configs) == 4  # streamk_config is stream_k's only
    without = [k.config for k in load_data({**data, "variants": ["stream_k"], "streamk_config": {}})]
    assert {c.streamk_reduction for c in without} == {"atomic"}  # CK's default strategy list


def test_ck_spellings_of_the_strategy_are_read_and_checked():
    assert config(reduction_strategy="Reduction").streamk_reduction == "linear"  # ck-2025.11's enumerator
    assert config(NEW, reduction_strategy="Tree").streamk_reduction == "tree"
    assert issues(reduction_strategy="tree", ck_api=OLD)[0].startswith(
        "reduction_strategy: tree: CK API profile ck-2025.11 has no tree reduction")


def test_the_wrapper_keys_the_kernel_by_its_reduction():
    from ckast.catalog import load_profile
    from ckast.nodes import to_source
    from ckast.variants import wrapper_header

    c = config(OLD, streamk_reduction="linear")
    text = to_source(wrapper_header(c, load_profile(OLD), "kernel.hpp"))
    assert "key.algorithm.streamk = true;" in text
    assert "key.algorithm.reduction_strategy = ck_tile::dispatcher::ReductionStrategy::Linear;" in text
    assert "key.algorithm.workspace = true;" in text
    assert "GeneratedKernelInstance<Launcher>" in text
