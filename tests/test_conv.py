"""Grouped conv end to end: goldens per variant, feature and profile; launcher behaviour; wrappers; registration."""

from __future__ import annotations

import re

import pytest

from ckast.catalog import load_profile
from ckast.config import ConfigError, load_data
from ckast.emit import render, run_files
from ckast.lower import conv_registration
from ckast.variants import kernel_graph

from .cpp_tools import reformat
from .goldens import CONV, CONV_CASES, CONV_HEADERS, CONV_RUN, SMALL_TILE
from .kernels import config_of, header_of, squash


CASES = {case: data for case, (data, _) in CONV_CASES.items()}


def config(case: str, profile: str = "ck-2025.11"):
    return config_of(CASES, case, profile)


def header(case: str, profile: str = "ck-2025.11") -> str:
    return header_of(config(case, profile))


def function(source: str, name: str) -> str:
    """The text of the launcher's static function `name` (up to the next member at struct level)."""
    start = source.index(f" {name}(")
    end = source.find("\n    }\n", start)
    return source[start:end]


@pytest.mark.parametrize(("case", "profile"), sorted(CONV_HEADERS))
def test_golden_header(case, profile, file_regression):
    source = header(case, profile)
    file_regression.check(source, fullpath=CONV_HEADERS[case, profile])
    assert reformat(source) == source


def run_kernels():
    cases = ("forward", "bwd_weight", "bwd_weight_two_stage")
    return render(load_data([dict(CONV_CASES[c][0], ck_api="ck-2025.11") for c in cases]))


def test_golden_run_files(file_regression):
    kernels = run_kernels()
    files = dict(run_files(kernels, chunk_size=1))
    forward = next(k for k in kernels if k.config["variant"] == "forward")
    files["dispatcher_wrappers/dispatcher_wrapper_forward.hpp"] = dict(forward.files)[
        f"dispatcher_wrappers/dispatcher_wrapper_{forward.name}.hpp"]
    for name, path in CONV_RUN.items():
        file_regression.check(files[name], fullpath=path)
        assert reformat(files[name], "x.cpp" if name.endswith(".cpp") else "x.hpp") == files[name]


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_each_construct_is_declared_once(case):
    """One type chain per launcher: every alias once, and is_supported reuses it (CK's generator repeats it 3x)."""
    profile = CONV_CASES[case][1][-1]
    source = header(case, profile)
    aliases = ("DwTraits", "Pipeline", "ConvTraits", "Kernel") if "depthwise" in case else (
        "Problem", "Pipeline", "EpilogueProblem", "Epilogue", "Kernel", "ConvTraits", "TileShape")
    for alias in aliases:
        assert len(re.findall(rf"using {alias} =", source)) == 1, alias
    assert "Pipeline" not in function(source, "is_supported")


def test_zeroing_per_direction():
    forward, bwd_data, bwd_weight = (function(header(c), "run") for c in ("forward", "bwd_data", "bwd_weight"))
    assert "hipMemsetAsync" not in forward and "launch_kernel(" in forward
    assert "hipMemsetAsync(kargs.in_ptr" in squash(bwd_data) and "k_batch" not in bwd_data
    assert squash("if (kargs.k_batch > 1) { ck_tile::hip_check_error(hipMemsetAsync(kargs.wei_ptr") in squash(bwd_weight)
    assert "GetWeightByte<WeiDataType>" in bwd_weight and "GetInputByte<InDataType>" in bwd_data


def test_memory_operation_is_chosen_per_launch_only_where_blocks_accumulate():
    """ck-2025.11 (D5): bwd_weight picks set or atomic_add from k_batch; forward and bwd_data always set."""
    weight = function(header("bwd_weight"), "launch")
    assert "memory_operation_enum::atomic_add" in weight and "args.k_batch == 1" in weight
    for case in ("forward", "bwd_data"):
        source = header(case)
        assert "atomic_add" not in source and "memory_operation_enum::set" in source
    assert "memory_operation_enum" not in header("bwd_weight", "ck-2026.06")  # chosen at run time there


def test_gemm_k_and_tail_dispatch_per_direction():
    expected = {"forward": ("C_", "filter_spatial_lengths_"), "bwd_data": ("K_", "filter_spatial_lengths_"),
                "bwd_weight": ("N_", "output_spatial_lengths_")}
    for case, (channels, pixels) in expected.items():
        launch = squash(function(header(case), "launch"))
        assert f"args.{pixels}.begin()" in launch and f"static_cast<ck_tile::index_t>(args.{channels})*k_pixels" in launch
        assert "BaseGemmPipeline::TailHandler(dispatch,has_hot_loop,tail_num)" in launch
    assert "TailHandler" not in header("forward", "ck-2026.06")  # pipelines pick the loop variant at run time


def test_two_stage_converts_an_fp32_workspace_in_the_same_timed_launch():
    source = header("bwd_weight_two_stage")
    run = squash(function(source, "run"))
    assert "using WorkspaceDataType = float;" in source and "AccDataType,\n        WorkspaceDataType," in source
    assert "ck_tile::DeviceMemworkspace{gemm_m*gemm_n*sizeof(WorkspaceDataType)};" in run
    assert "gemm_m=static_cast<ck_tile::index_t>(args.G_*args.K_)" in run
    assert "gemm_n=static_cast<ck_tile::index_t>(args.C_)*filter_pixels" in run
    # one timed call: zero the workspace (split-K only), GEMM, then the convert kernel into dWei
    assert re.search(r"launch_kernel_time_mask\(stream,zero_workspace,ck_tile::make_kernel<kBlockPerCu>\(K\{\}.*"
                     r"make_kernel<kBlockPerCu>\(C\{\}", run)
    assert "make_tuple(gemm_n,static_cast<ck_tile::index_t>(1))" in run  # index types agree (CK's seed mixes long/int)
    assert "static_cast<CDataType*>(args.wei_ptr)" in run


def test_pipeline_classes_policy_and_block_per_cu():
    assert "GemmPipelineAgBgCrMem<" in header("forward_features")
    wavelet = header("forward_wavelet", "ck-2026.06")
    assert squash("GemmPipelineAgBgCrWavelet<Problem,ck_tile::GroupedConvUniversalPipelineAgBgCrPolicy,4>") in squash(wavelet)
    assert "GroupedConvUniversalPipelineAgBgCrPolicy" not in header("forward")  # not in ck-2025.11 (D2)
    assert "kBlockPerCu = 1;" in header("forward_1d_fp32_compv4") and "kBlockPerCu = 2;" in header("forward")
    assert "DoubleSmemBuffer = true;" in header("forward_1d_fp32_compv4")


def test_conv_features_reach_the_traits():
    source = squash(header("forward_features"))
    assert "ck_tile::ConvolutionSpecialization::Filter1x1Stride1Pad0" in source
    assert "NDHWGC" in source and "GKZYXC" in source and "ck_tile::bf16_t" in source
    assert "NumGroupsToMerge=2;" in source and "EnableSplitImage=true;" in source
    assert "ExplicitGemm" not in source  # ck-2025.11 has no ExplicitGemm_ (D1)
    assert "ExplicitGemm=true;" in squash(header("forward_explicit_gemm", "ck-2026.06"))


@pytest.mark.parametrize(("change", "rule"), [
    ({"explicit_gemm": True, "specialization": "filter1x1_stride1_pad0"}, "profile.explicit_gemm"),
    ({"lds_policy": "conv"}, "profile.conv_lds_policy"),
    ({"variant": "bwd_weight", "streamk_enabled": True, **SMALL_TILE}, "profile.streamk_conv"),
    ({"pipeline": "wavelet"}, "profile.pipeline"),
    ({"pipeline": "basic_async_v1"}, "profile.pipeline"),
])
def test_ck_2025_11_refuses_what_it_lacks_by_name(change, rule):
    with pytest.raises(ConfigError) as info:
        load_data({**CONV, "variant": "forward", "ck_api": "ck-2025.11", **change})
    [issue] = [i for i in info.value.issues if i.rule == rule]
    assert "ck-2025.11" in issue.message or "does not exist" in issue.message


def test_wrapper_key_comes_from_the_config():
    kernels = run_kernels()
    weight = next(k for k in kernels if k.config["variant"] == "bwd_weight" and not k.config["two_stage"])
    wrapper = squash(next(src for path, src in weight.files if path.startswith("dispatcher_wrappers/")))
    for field in ('key.op=ck_tile::dispatcher::GroupedConvOp::BackwardWeight;', 'key.tile_m=16;', 'key.wave_n=4;',
                  'key.warp_k=32;', 'key.vector_size_a=8;', 'key.block_per_cu=2;', 'key.layout="nhwgc";',
                  'key.arch="gfx942";', "make_conv_bwd_weight_run_fn<Launcher,2>()"):
        assert field in wrapper, field


def test_kernels_differing_only_outside_the_registry_key_are_refused():
    base = dict(CONV, variant="forward", pipeline="compv3")
    with pytest.raises(ConfigError) as info:
        render(load_data([base, dict(base, lds_policy="gemm", ck_api="ck-2026.06"),
                          dict(base, ck_api="ck-2026.06", lds_policy="conv")]))
    assert [i.rule for i in info.value.issues] == ["registry.key_unique"]


def test_registration_is_chunked_sorted_and_complete():
    kernels = run_kernels()
    files = dict(run_files(kernels, chunk_size=1))
    chunks = sorted(p for p in files if "_chunk_" in p)
    assert chunks == [conv_registration.chunk_path("bwd_weight", 0), conv_registration.chunk_path("bwd_weight", 1),
                      conv_registration.chunk_path("fwd", 0)]
    registered = [name for p in chunks for name in re.findall(r"ckast::(\w+)::make_instance", files[p])]
    assert sorted(registered) == sorted(k.name for k in kernels)
    everything = files[conv_registration.SOURCE]
    assert all(f"register_grouped_conv_{c}(registry, arch);" in everything
               for c in ("fwd_chunk_0", "bwd_weight_chunk_0", "bwd_weight_chunk_1"))
    assert dict(run_files(kernels))[conv_registration.chunk_path("bwd_weight", 0)].count("make_instance") == 2
    include_all = files[conv_registration.include_all_path("bwd_data")]
    assert "#include" not in include_all  # this run has no bwd_data kernel: nothing globbed from disk
    assert "using " not in "".join(files.values())  # no global aliases: any set of kernels compiles as one TU


def test_conv_graph_is_the_gemm_chain_patched_not_copied():
    _, plain = kernel_graph(config("bwd_weight"), load_profile("ck-2025.11"))
    _, two_stage = kernel_graph(config("bwd_weight_two_stage"), load_profile("ck-2025.11"))
    added = set(two_stage.names()) - set(plain.names())
    assert added == {"ConvertConfig", "WorkspaceDataType", "ConvertShape", "ConvertProblem", "ConvertKernel"}
    changed = {name for name in plain.names() if plain.construct(name).uses != two_stage.construct(name).uses}
    assert changed == {"EpilogueProblem", "run"}
    assert "WorkspaceDataType" in two_stage.construct("EpilogueProblem").uses


def test_stream_k_swaps_the_partitioner_and_run_only():
    _, plain = kernel_graph(config("bwd_weight", "ck-2026.06"), load_profile("ck-2026.06"))
    _, streamk = kernel_graph(config("bwd_weight_streamk", "ck-2026.06"), load_profile("ck-2026.06"))
    assert set(streamk.names()) == set(plain.names())
    changed = {name for name in plain.names() if plain.construct(name).uses != streamk.construct(name).uses}
    assert changed == {"TilePartitioner", "run"}


def test_stream_k_zeroes_its_workspace_not_dwei_on_every_timed_launch():
    source = header("bwd_weight_streamk", "ck-2026.06")
    run = squash(function(source, "run"))
    assert squash("StreamKTilePartitioner<TileShape,ck_tile::StreamKReductionStrategy::Tree,false>") in squash(source)
    assert "autokargs=K::MakeKernelArgs(args);" in run  # SetWorkSpacePointer writes into kargs
    assert ("conststd::size_tworkspace_bytes=K::GetWorkSpaceSize(kargs);ck_tile::DeviceMemworkspace{workspace_bytes};"
            "K::SetWorkSpacePointer(kargs,workspace.GetDeviceBuffer());") in run
    assert "hipMemsetAsync(workspace.GetDeviceBuffer(),0,workspace_bytes,stream.stream_id_)" in run
    assert "wei_ptr" not in run and "k_batch" not in run  # the last tile is stored with `set`
    assert "launch_kernel_time_mask(stream,zero_workspace,ck_tile::make_kernel<kBlockPerCu>(K{}" in run
    persistent = squash(header("bwd_weight_streamk_linear_persistent", "ck-2026.06"))
    assert "StreamKReductionStrategy::Linear,true>" in persistent


def test_depthwise_is_the_forward_kernel_with_the_depthwise_pipeline():
    source = squash(header("forward_depthwise", "ck-2026.06"))
    _, graph = kernel_graph(config("forward_depthwise", "ck-2026.06"), load_profile("ck-2026.06"))
    assert not {"TileShape", "TilePartitioner", "Problem", "EpilogueProblem"} & set(graph.names())
    assert "usingKernel=ck_tile::GroupedConvolutionForwardKernel<ConvTraits,void,Pipeline,NullEpilogue>;" in source
    assert "usingPipeline=ck_tile::DepthwiseConvFwdPipeline<DwTraits>;" in source
    # stride before dilation in CK's traits; the filter is square
    assert "TileH,TileW,Filter,Filter,StrideH,StrideW,Dilation,Dilation,PadH,PadW,NBatch,SubTileH,SubTileW" in source
    assert "void,void,ck_tile::tuple<>,void,InVectorSize,InVectorSize,OutVectorSize,1,false,false,DwTraits>" in source
    assert "structNullEpilogue{usingDsLayout=ck_tile::tuple<>;usingDsDataType=ck_tile::tuple<>;" in source
    assert "NBatch=8;" in source and "BlockSize=64;" in source and "kBlockPerCu=2;" in source
    assert "hipMemsetAsync" not in source  # forward never zeroes
    assert '#include"ck_tile/ops/grouped_convolution/pipeline/grouped_convolution_forward_depthwise_pipeline.hpp"' in source


def test_depthwise_key_packs_the_depthwise_knobs_as_ck_registers_them():
    [kernel] = render(load_data([dict(CASES["forward_depthwise_bf16_stride2"], ck_api="ck-2026.06")]))
    wrapper = squash(next(src for path, src in kernel.files if path.startswith("dispatcher_wrappers/")))
    for field in ('key.layout="ngchw";', "key.tile_m=32;", "key.tile_k=3;", "key.wave_m=2;", "key.wave_k=0;",
                  "key.warp_k=1;", 'key.pipeline="depthwise";', 'key.specialization="sub2x8";', "key.vector_size_c=8;",
                  "key.op=ck_tile::dispatcher::GroupedConvOp::Forward;", "make_conv_fwd_run_fn<Launcher,2>()"):
        assert field in wrapper, field
    files = dict(run_files([kernel]))
    assert kernel.name in files[conv_registration.chunk_path("fwd", 0)]


@pytest.mark.parametrize("profile", ["ck-2025.11", "ck-2026.06"])
def test_specialization_knob_and_ck_enumerators_agree(profile):
    """The knob's choices (config layer) and their CK enumerators (variants) are two tables of one list."""
    from ckast.config import knobs
    from ckast.variants import conv

    assert set(knobs.SPECIALIZATIONS) == set(conv.SPECIALIZATIONS)
    assert set(conv.SPECIALIZATIONS.values()) <= set(load_profile(profile).enum("ConvolutionSpecialization").values)


@pytest.mark.parametrize("pipeline", ["basic_v1", "basic_v2", "compv1", "compv2", "mem", "compv3", "compv4", "compv5",
                                      "compv6", "comp_async", "basic_async_v1", "wavelet"])
@pytest.mark.parametrize("profile", ["ck-2025.11", "ck-2026.06"])
def test_every_pipeline_emits_its_class_or_is_refused_by_profile(pipeline, profile):
    from ckast.arch import PIPELINES

    spec = PIPELINES[pipeline]
    data = dict(CONV, variant="forward", pipeline=pipeline, ck_api=profile)
    try:
        [loaded] = load_data(data)
    except ConfigError as exc:  # a class the profile lacks, or one its conv kernels cannot call
        expected = "profile.conv_pipeline" if pipeline in ("compv6", "comp_async") else "profile.pipeline"
        assert [i.rule for i in exc.issues] == [expected] and profile == "ck-2025.11"
        return
    source = header_of(loaded.config)
    assert f"using Pipeline = ck_tile::{spec.cls}<" in source
    assert ("DoubleSmemBuffer = true;" in source) == (spec.lds == "double")
    if profile == "ck-2025.11":  # the base pipeline serves the compile-time tail dispatch
        assert f"using BaseGemmPipeline = ck_tile::{spec.base}<" in source
