"""GEMM end to end: goldens per variant and profile, launcher behaviour, wrappers, registration."""

from __future__ import annotations

import re

import pytest

from ckast.catalog import load_profile
from ckast.config import as_dict, load_data
from ckast.emit import REGISTRATION, render, run_files
from ckast.lower.identity import kernel_name
from ckast.nodes import to_source
from ckast.variants import kernel_graph, lower_kernel

from .conftest import GOLDEN
from .cpp_tools import reformat
from .goldens import ALL, GEMM, GEMM_CASES, GEMM_HEADERS, GEMM_RUN
from .kernels import config_of, header_of, squash


def config(case: str | dict, profile: str = "ck-2025.11", **extra):
    return config_of(GEMM_CASES, case, profile, **extra)


def header(case: str | dict, profile: str = "ck-2025.11", **extra) -> str:
    return header_of(config(case, profile, **extra))


def emitted(*cases: str):
    return render(load_data([dict(GEMM_CASES[c], ck_api="ck-2025.11") for c in cases]))


@pytest.mark.parametrize(("case", "profile"), sorted(GEMM_HEADERS))
def test_golden_header(case, profile, file_regression):
    source = header(case, profile)
    file_regression.check(source, fullpath=GEMM_HEADERS[case, profile])
    assert reformat(source) == source


def test_golden_run_files(file_regression):
    kernels = emitted("standard", "multi_d", "preshuffle")
    by_variant = {k.config["variant"]: dict(k.files) for k in kernels}
    wrapper = next(src for path, src in by_variant["multi_d"].items() if path.startswith("dispatcher_wrappers/"))
    unit = next(src for path, src in by_variant["standard"].items() if path.endswith(".cpp"))
    [(path, registration)] = run_files(kernels)
    assert path == REGISTRATION
    for key, source, name in (("wrapper", wrapper, "x.hpp"), ("unit", unit, "x.cpp"), ("registration", registration, "x.hpp")):
        file_regression.check(source, fullpath=GEMM_RUN[key])
        assert reformat(source, name) == source


def test_every_golden_file_belongs_to_a_test():
    assert {p for p in GOLDEN.rglob("*") if p.is_file()} == ALL


# --- the type chain, declared once --------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(GEMM_CASES))
def test_each_construct_is_declared_once(case):
    source = header(case)
    c = GEMM_CASES[case]  # no base pipeline where the kernel picks its tail (Stream-K, persistent grouped)
    run_time_tail = c["variant"] == "stream_k" or c["variant"] == "grouped" and c.get("persistent", False)
    for alias in ("TileShape", "TilePartitioner", "Traits", "BaseProblem", "Problem", "Pipeline", "Epilogue", "Kernel"):
        assert len(re.findall(rf"using {alias} =", source)) == (alias != "BaseProblem" or not run_time_tail), alias


def test_graph_order_is_topological_and_patches_replace_nodes():
    _, graph = kernel_graph(config("multi_d"), load_profile("ck-2025.11"))
    graph.validate()
    order = graph.order()
    for name in order:
        for used in graph.construct(name).uses:
            assert order.index(used) < order.index(name)
    assert "GemmKernelMultiD" in to_source(lower_kernel(config("multi_d"), load_profile("ck-2025.11")).header)
    assert {"DsDataType", "DsLayout", "launch_plain"} <= set(order)


def test_dispatch_parameters_flow_along_uses_edges():
    _, graph = kernel_graph(config("standard"), load_profile("ck-2025.11"))
    graph.lower()
    names = lambda c: [p.name for p in graph.params_of(c)]  # noqa: E731
    assert names("Problem") == names("Pipeline") == ["HasHotLoop", "TailNum"]
    assert names("Epilogue") == ["MemOp"]
    assert names("Kernel") == names("run") == ["HasHotLoop", "TailNum", "MemOp"]
    assert names("launch") == [] and names("TileShape") == []


# --- ck-2025.11 correctness: tail and memory operation bound per launch (D4/D5) -----------------

def test_old_profile_binds_tail_and_memory_operation_per_launch():
    old, new = header("standard", "ck-2025.11"), header("standard", "ck-2026.06")
    assert "BaseGemmPipeline::TailHandler(dispatch, has_hot_loop, tail_num)" in old
    assert "if (args.k_batch == 1)" in old
    assert "memory_operation_enum::set>(" in old and "memory_operation_enum::atomic_add>(" in old
    assert "TailHandler" not in new and "memory_operation_enum" not in new


def test_split_k_zeroes_c_inside_the_timed_launch():
    source = header("standard")
    assert "ck_tile::launch_kernel_time_mask(" in source and "if (args.k_batch > 1)" in source
    assert squash("hipMemset2DAsync(args.e_ptr, args.stride_E * sizeof(CDataType), 0, args.N * sizeof(CDataType), args.M,"
                  "stream.stream_id_)") in squash(source)


def test_without_split_k_there_is_no_atomic_path_and_k_batch_is_checked():
    source = header("standard_no_split_k")
    assert "atomic_add" not in source and "launch_kernel_time_mask" not in source
    assert "if (args.k_batch != 1)" in source and "built without split-K" in source
    assert "memory_operation_enum::set" in source


def test_multi_d_never_splits_k_and_has_a_plain_args_overload():
    source = header("multi_d_2d")
    assert "atomic_add" not in source and "if (args.k_batch != 1)" in source
    assert "using HostArgs = ck_tile::GemmMultiDHostArgs<NumDTensor>;" in source
    assert "using DsDataType = ck_tile::tuple<CDataType, CDataType>;" in source
    assert "ck_tile::element_wise::MultiDMultiply" in source
    assert "static float launch(const ck_tile::GemmHostArgs& args, const ck_tile::stream_config& stream)" in source
    assert "K::MaxOccupancyGridSize(stream)" in source


def test_persistent_uses_the_max_occupancy_grid():
    assert "K::MaxOccupancyGridSize(stream)" in header("standard_persistent")
    assert "K::GridSize(args.M, args.N, args.k_batch)" in header("standard")


def test_preshuffle_swaps_the_pipeline_family():
    source = header("preshuffle")
    assert "using BaseGemmPipeline = ck_tile::BaseWeightPreshufflePipelineAGmemBGmemCRegV2<BaseProblem>;" in source
    assert squash("ck_tile::WeightPreshufflePipelineAGmemBGmemCRegV2<Problem<HasHotLoop, TailNum>>") in squash(source)
    assert "static constexpr bool Preshuffle = true;" in source


def test_block_size_follows_the_arch_warp_size():
    wave32 = dict(GEMM, arch="gfx1100", warp_m=2, warp_n=4, warp_k=1, warp_tile_m=16, warp_tile_n=16,
                  warp_tile_k=16, tile_m=64, tile_n=128, tile_k=64)
    assert "static constexpr ck_tile::index_t BlockSize = 256;" in header(wave32)  # 8 waves x 32 lanes
    one_wave = dict(GEMM, warp_m=1, warp_n=1, tile_m=32, tile_n=32)
    assert "static constexpr ck_tile::index_t BlockSize = 64;" in header(one_wave)


@pytest.mark.parametrize(("datatype", "acc", "out"), [
    ("fp16", "float", "ck_tile::half_t"), ("bf16", "float", "ck_tile::bf16_t"), ("fp8", "float", "ck_tile::half_t"),
    ("bf8", "float", "ck_tile::half_t"), ("int8", "ck_tile::int32_t", "ck_tile::int32_t"),
])
def test_data_types(datatype, acc, out):
    source = header(dict(GEMM, datatype=datatype))
    assert f"using AccDataType = {acc};" in source and f"using CDataType = {out};" in source


def test_fp32_needs_an_fp32_warp_tile():
    source = header(dict(GEMM, datatype="fp32", warp_tile_m=16, warp_tile_n=16, warp_tile_k=16))
    assert "using ADataType = float;" in source and "using CDataType = float;" in source


# --- identity -------------------------------------------------------------------------------------

ALTERNATIVES = [
    {"datatype": "bf16"}, {"layout": "rrr"}, {"arch": "gfx950"}, {"ck_api": "ck-2026.06"}, {"tile_m": 256},
    {"tile_n": 64}, {"tile_k": 32}, {"warp_m": 1}, {"warp_n": 1}, {"warp_tile_k": 8},
    {"warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 32}, {"pipeline": "mem"},
    {"pipeline": "mem", "scheduler": "interwave"}, {"epilogue": "default"}, {"pad_m": True}, {"pad_n": True},
    {"pad_k": True}, {"persistent": True}, {"split_k": False}, {"pipeline": "compv4", "double_smem_buffer": True},
    {"num_wave_groups": 2},
]


def test_every_behaviour_field_changes_the_name():
    base = dict(GEMM, variant="standard", ck_api="ck-2025.11")
    names = {kernel_name(load_data(base)[0].config)}
    for change in ALTERNATIVES:
        cfg = load_data(dict(base, **change))[0].config
        assert all(as_dict(cfg)[k] == v for k, v in change.items())
        names.add(kernel_name(cfg))
    assert len(names) == len(ALTERNATIVES) + 1
    multi = dict(GEMM, variant="multi_d")
    for knob, value in {"elementwise_op": "AddScale", "num_d_tensors": 2}.items():
        assert kernel_name(load_data(dict(multi, **{knob: value}))[0].config) != kernel_name(load_data(multi)[0].config)


def test_identical_configs_deduplicate_and_names_stay_short():
    kernels = render(load_data([GEMM_CASES["standard"], dict(GEMM_CASES["standard"]), GEMM_CASES["multi_d_2d"]]))
    assert len(kernels) == 2
    assert all(len(k.name) < 200 for k in kernels)
    assert kernels[1].name.startswith("gemm_fp16_rcrr_multi_d_gfx942_compv3_cshuffle_intrawave_128x128x64_")


# --- wrapper and registration ---------------------------------------------------------------------

def test_wrapper_key_carries_the_config():
    [k] = render(load_data(dict(GEMM_CASES["standard_persistent"], num_wave_groups=1)))
    wrapper = next(src for path, src in k.files if path.startswith("dispatcher_wrappers/"))
    for line in ("key.signature.dtype_a = ck_tile::dispatcher::DataType::BF16;",
                 "key.signature.layout_b = ck_tile::dispatcher::LayoutTag::RowMajor;",
                 "key.algorithm.pipeline = ck_tile::dispatcher::Pipeline::Mem;",
                 "key.algorithm.epilogue = ck_tile::dispatcher::Epilogue::Default;",
                 "key.algorithm.persistent = true;", "key.algorithm.pad_k = true;",
                 'key.gfx_arch = "gfx942";', "key.algorithm.block_size = 256;"):
        assert line in wrapper, line
    assert f"#include \"{k.header}\"" in wrapper


def test_registration_lists_this_runs_kernels_once_sorted_by_arch_and_name():
    cases = [GEMM_CASES["standard"], dict(GEMM_CASES["standard"], arch="gfx950"), GEMM_CASES["multi_d"]]
    kernels = render(load_data(cases))
    [(_, source)] = run_files(list(reversed(kernels)))
    assert [(_, source)] == run_files(kernels)
    registered = re.findall(r"registry.register_kernel\((\w+)::make_instance\(\), priority\)", source)
    assert sorted(registered) == sorted(k.name for k in kernels) and len(set(registered)) == 3
    assert source.index('gfx_arch == "gfx942"') < source.index('gfx_arch == "gfx950"')
    assert "return 3;" in source


def test_a_grouped_context_names_its_own_group_arguments_and_kernel():
    """The grouped patch takes the per-group host-argument type, the kernel and its arguments and the plain-arguments
    group from its context, so a grouped quant context (QuantGroupedGemmKernel with QuantType_ and
    QuantGroupedGemmHostArgs, no plain launch) reuses the launcher. Shown with catalog entries every profile has."""
    import attrs

    from ckast.nodes import File, Namespace, Struct, required_headers
    from ckast.variants import gemm, gemm_grouped

    @attrs.frozen
    class Other(gemm_grouped.Grouped):
        group_args_key = "GemmHostArgs"  # a plain catalog type, as CK's QuantGroupedGemmHostArgs is
        kernel_key = "BatchedGemmKernel"

        def plain_group(self, args):
            return None

    # without split-K the launcher reads only the fields the catalog lists for GemmHostArgs (M, N, K, k_batch)
    g = Other.of(config(GEMM_CASES["grouped"], "ck-2026.06", split_k=False), load_profile("ck-2026.06"))
    graph = gemm.shared_graph(g)
    gemm_grouped.patch(g, graph)
    body = [Namespace("x", [Struct("Launcher", graph.lower())])]
    source = to_source(File(body, includes=required_headers(Namespace("y", body))))
    assert "using GroupArgs = ck_tile::GemmHostArgs;" in source
    assert "using Kernel = ck_tile::BatchedGemmKernel<TilePartitioner, Pipeline, Epilogue>;" in source
    assert source.count("static float launch(") == 1  # no plain-arguments overload
