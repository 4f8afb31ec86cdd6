"""The quant families' grouped kernels (CK Tile's QuantGroupedGemmKernel): goldens, the rules of what each
profile's kernel takes, the launcher's per-group arguments, workspace and grid on the host model, and (marked
ck_compile) the wheel's CK Tile."""

from __future__ import annotations

import numpy as np
import pytest

from ckast import testing
from ckast.check import Toolchain, check_headers
from ckast.config import ConfigError, as_dict, load_data
from ckast.emit import render, write_outputs
from ckast.library import Selection, build
from ckast.output import entry_points_for
from ckast.select.features import KernelTable
from ckast.select.serving.applicability import LAYERS, applicable, conditions, why_not
from ckast.select.serving.problem_read import gemm_problem, parse_pairs

from .goldens import GROUPED_QUANT_CASES, GROUPED_QUANT_HEADERS
from .kernels import config_of, header_of, squash
from .test_gemm_compile import BQUANT_HEADERS

OLD, NEW = "ck-2025.11", "ck-2026.06"
QUANT = {"kind": "gemm", "layout": "rcr", "datatype": "fp8", "grouped": True}


@pytest.mark.parametrize(("case", "profile"), sorted(GROUPED_QUANT_HEADERS))
def test_golden_header(case, profile, file_regression):
    source = header_of(config_of({k: v[0] for k, v in GROUPED_QUANT_CASES.items()}, case, profile))
    file_regression.check(source, fullpath=GROUPED_QUANT_HEADERS[case, profile])


def test_the_kernel_is_the_familys_graph_under_the_grouped_launcher():
    """The grouped knob keeps the family's types, traits, pipeline and epilogue and swaps kernel and host
    arguments for CK's grouped quant ones; the plain family's kernel is untouched (no persistent traits)."""
    grouped = squash(header_of(load_data(dict(QUANT, variant="bquant", ck_api=NEW))[0].config))
    plain = squash(header_of(load_data(dict(QUANT, variant="bquant", grouped=False, ck_api=NEW))[0].config))
    for shared in ("usingPipeline=ck_tile::BQuantGemmPipelineAgBgCrCompV3<Problem<HasHotLoop,TailNum>>;",
                   "usingBQuantGroupSize=ck_tile::QuantGroupShape<ck_tile::sequence<1,1,128>>;"):
        assert shared in grouped and shared in plain
    assert ("usingKernel=ck_tile::QuantGroupedGemmKernel<TilePartitioner,Pipeline<HasHotLoop,TailNum>,"
            "Epilogue<HasHotLoop,TailNum>,ck_tile::QuantType::BQuantGrouped>;") in grouped
    assert "usingGroupArgs=ck_tile::QuantGroupedGemmHostArgs;usingHostArgs=std::vector<GroupArgs>;" in grouped
    assert "QuantGroupedGemm" not in plain and "UsePersistentKernel" not in plain
    assert "launch(constck_tile::GemmHostArgs&" not in grouped  # every group needs its scales
    assert ("launch(constck_tile::QuantGemmHostArgs&args,constck_tile::stream_config&stream){//Onegroup."
            "constHostArgsgroups=HostArgs{GroupArgs{args.a_ptr,args.b_ptr,args.c_ptr,args.aq_ptr,args.bq_ptr,"
            "args.k_batch,") in grouped


def test_persistent_kernel_picks_its_tail_on_the_device():
    """Persistent: the traits say so, the problem takes no hot loop or tail and the launcher dispatches nothing."""
    text = squash(header_of(load_data(dict(QUANT, variant="rowcolquant", persistent=True, ck_api=NEW))[0].config))
    assert "staticconstexprboolUsePersistentKernel=true;" in text and "DoubleSmemBuffer,UsePersistentKernel>;" in text
    assert "HasHotLoop" not in text and "TailHandler" not in text
    assert "constdim3grids=K::MaxOccupancyGridSize(stream);" in text


def test_persistent_by_default_where_the_profile_has_no_other():
    old, new = (load_data(dict(QUANT, variant="bquant", ck_api=p))[0].config for p in (OLD, NEW))
    assert (old.persistent, new.persistent) == (True, False)
    assert "_grouped_persistent_" in header_of(old)
    plain = load_data(dict(QUANT, variant="bquant", grouped=False))[0].config
    assert plain.persistent is False and "_grouped" not in header_of(plain)


def test_descriptors_come_from_make_kargs_where_it_compiles():
    """ck-2026.06's MakeKargs; ck-2025.11's does not compile, so the launcher builds the same descriptors from
    each group's QuantGemmKernel::MakeKernelArgs."""
    old, new = (squash(header_of(config_of({k: v[0] for k, v in GROUPED_QUANT_CASES.items()}, "bquant_grouped", p)))
                for p in (OLD, NEW))
    assert "constautokargs=K::MakeKargs(args);" in new and "MakeKernelArgs" not in new
    assert "K::MakeKargs" not in old
    assert "std::vector<ck_tile::QuantGemmTransKernelArg>kargs;" in old
    assert "kargs.emplace_back(K::Base::MakeKernelArgs(ck_tile::QuantGemmHostArgs{args[group].a_ptr," in old


@pytest.mark.parametrize(("extra", "rule", "message"), [
    ({"variant": "bquant", "persistent": False, "ck_api": OLD}, "profile.grouped_quant_persistent",
     "static_asserts a persistent kernel"),
    ({"variant": "aquant", "pipeline": "compv3", "persistent": True, "ck_api": OLD}, "profile.grouped_quant_type",
     "no AQuantGrouped path"),
    ({"variant": "abquant", "pipeline": "preshuffleb", "ck_api": NEW}, "grouped_quant.double_smem_buffer",
     "double LDS buffer for bquant only"),
    ({"variant": "bquant", "split_k": True, "ck_api": NEW}, "split_k.unsupported", "k_batch > 1"),
    ({"variant": "bquant", "persistent": True, "grouped": False, "ck_api": NEW}, "quant.persistent",
     "no persistent kernel"),
])
def test_what_each_profiles_kernel_refuses_is_named(extra, rule, message):
    with pytest.raises(ConfigError) as err:
        load_data(dict(QUANT, **extra))
    line, = [line for line in str(err.value).splitlines() if f"[rule {rule}]" in line]
    assert message in line


@pytest.mark.parametrize(("variant", "extra"), [
    ("bquant", {"persistent": True}), ("bquant", {"pipeline": "preshuffleb", "tile_m": 128, "tile_n": 128,
                                                  "tile_k": 128, "warp_tile_k": 64, "datatype": "fp8i4"}),
    ("rowcolquant", {}), ("tensor_quant", {}), ("aquant", {"pipeline": "compv3"}), ("abquant", {}),
])
def test_what_the_new_profile_builds(variant, extra):
    [loaded] = load_data(dict(QUANT, variant=variant, ck_api=NEW, **extra))
    assert loaded.config.grouped


# --- library and selection -----------------------------------------------------------------------

def test_gemm_quant_proposes_each_kernel_grouped_too():
    """Rule set gemm-quant proposes each of its kernels again as a persistent grouped kernel (`+grouped`); what a
    profile's grouped kernel does not run is refused by the grouped rules (ck-2025.11: no grouped AQuant)."""
    old, new = (build(Selection("gemm-quant", "gfx942", p)) for p in (OLD, NEW))
    for lib in (old, new):
        grouped = [e for e in lib.entries if e.candidate.origin.endswith("+grouped")]
        assert grouped and all(e.candidate.knobs["grouped"] and e.candidate.knobs["persistent"] for e in grouped)
        assert {e.config.grouped for e in lib.accepted} == {False, True}
    assert {e.config.variant for e in old.accepted if e.config.grouped} == {"bquant", "rowcolquant", "tensor_quant"}
    assert {e.config.variant for e in new.accepted if e.config.grouped} == {
        "bquant", "abquant", "aquant", "rowcolquant", "tensor_quant"}


def test_a_grouped_quant_problem_runs_on_grouped_kernels_of_its_family():
    """`groups > 1` with a quant variant: only that family's grouped kernels serve it (`gemm.groups` names why the
    plain ones do not); a single problem is served by both."""
    lib = build(Selection("gemm-quant", "gfx942", NEW, ("fp8",), variants=("bquant",)))
    configs = [e.config for e in lib.accepted]
    table = [as_dict(c) for c in configs]
    moe = gemm_problem(parse_pairs("M=64,N=4096,K=7168,variant=bquant,groups=8"))
    served = applicable(moe, table)
    assert served.any() and all(c.grouped for c, on in zip(configs, served) if on)
    plain = next(c for c in configs if not c.grouped)
    assert why_not(moe, as_dict(plain)).startswith("gemm.groups ")
    one = applicable(gemm_problem(parse_pairs("M=64,N=4096,K=7168,variant=bquant")), table)
    assert {c.grouped for c, on in zip(configs, one) if on} == {False, True}


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_gemm_quant_serves_fp8_block_scale_experts(arch):
    """DeepSeek-V3-style experts (gate/up N = 4096, K = 7168; down N = 7168, K = 2048; 1 x 128 activation and
    128 x 128 weight scales: abquant) and weight-only 128 x 128 blocks (bquant), decode to prefill, 8 and 32
    experts: each has an applicable grouped kernel in ck-2026.06's gemm-quant."""
    lib = build(Selection("gemm-quant", arch, NEW, ("fp8",)))
    table = KernelTable.of([as_dict(e.config) for e in lib.accepted])
    for m in (1, 16, 256, 2048):
        for groups in (8, 32):
            for n_, k, variant in ((4096, 7168, "abquant"), (7168, 2048, "abquant"), (1536, 2048, "bquant")):
                problem = gemm_problem(parse_pairs(f"M={m},N={n_},K={k},groups={groups},variant={variant},"
                                                   "bquant_group_n=128"))
                assert applicable(problem, table).any(), problem


def test_the_cxx_selector_checks_grouped_quant_kernels():
    pytest.importorskip("cppyy")
    from .test_select_cxx_applicability import _agree

    base = {"kind": "gemm", "datatype": "fp8", "arch": "gfx942", "ck_api": NEW, "pad_m": True, "pad_n": True}
    kernels = [{**base, "variant": "bquant"}, {**base, "variant": "bquant", "grouped": True},
               {**base, "variant": "tensor_quant", "grouped": True, "persistent": True},
               {**base, "variant": "grouped", "datatype": "fp16"}]
    table = KernelTable.of([as_dict(e.config) for e in load_data(kernels)])
    problems = [gemm_problem(parse_pairs(f"M={m},N=4096,K=2048{v}{g}")) for m in (16, 192)
                for v in (",variant=bquant", ",variant=tensor_quant", "") for g in ("", ",groups=8")]
    answers = np.array([applicable(p, table) for p in problems])
    assert answers.any() and not answers.all()
    assert _agree("gemm", [c.holds for c in conditions("gemm", LAYERS)], table, problems) == 0


# --- the host model ------------------------------------------------------------------------------

def groups_text(*groups: tuple[int, int, int, int, tuple[int, int]]) -> str:
    """Groups as the grouped quant kernel model logs them: pointers (scales too), MxNxK, k_batch, block range."""
    return ";".join(f"a{i}:b{i}:e{i}:aq{i}:bq{i}:{m}x{n}x{k}:k1:{start}-{end}" for i, m, n, k, (start, end) in groups)


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_launch_hands_every_group_its_arguments_and_scales(profile):
    """Three fp8 bquant groups of one K loop (one with no rows: an expert no token reached): one descriptor per
    group with work in a device workspace the kernel reads, each with its own pointers and scales and its tiles of
    the 1-D grid (16 x 64 tiles); persistent (ck-2025.11's default), one block per CU, else the groups' blocks."""
    u = testing.jit_header(GROUPED_QUANT_HEADERS["bquant_grouped", profile])
    events = u.launch_gemm_grouped([(32, 128, 256), (0, 64, 256), (16, 64, 256)])
    assert [e.kind for e in events] == ["alloc", "memcpy", "timed", "launch", "free"]
    alloc, copy, launch = events[0], events[1], events[3]
    assert copy["target"] == alloc["target"] and copy["bytes"] == alloc["bytes"] and copy["source"] == "host"
    assert (launch["kernel"], launch["quant"], launch["group_count"]) == ("QuantGroupedGemmKernel", "BQuantGrouped", 2)
    assert launch["groups"] == groups_text((0, 32, 128, 256, (0, 4)), (2, 16, 64, 256, (4, 5)))
    persistent = profile == OLD
    assert (launch["persistent"], launch["grid"]) == ((1, (304, 1, 1)) if persistent else (0, (5, 1, 1)))
    assert launch["hot_loop"] == "runtime" if persistent else launch["hot_loop"] in (0, 1)


def test_workspace_holds_one_descriptor_per_group_with_work():
    u = testing.jit_header(GROUPED_QUANT_HEADERS["tensor_quant_grouped_persistent", OLD])
    one = u.launch_gemm_grouped([(16, 64, 256)])[0]["bytes"]
    three = u.launch_gemm_grouped([(16, 64, 256), (0, 64, 256), (32, 64, 256), (16, 128, 256)])[0]["bytes"]
    assert three == 3 * one > 0


def test_non_persistent_groups_share_the_first_groups_tail():
    """ck-2026.06's non-persistent kernel instantiates hot loop and tail once per launch (the quant problems take
    them), so the groups' K loops must agree; the persistent kernel takes any."""
    u = testing.jit_header(GROUPED_QUANT_HEADERS["bquant_grouped", NEW])
    with pytest.raises(testing.LaunchError, match="hot loop and tail are chosen at compile time"):
        u.launch_gemm_grouped([(16, 64, 256), (16, 64, 512)])
    persistent = testing.jit_header(GROUPED_QUANT_HEADERS["tensor_quant_grouped_persistent", NEW])
    launch, = [e for e in persistent.launch_gemm_grouped([(16, 64, 256), (16, 64, 512)]) if e.kind == "launch"]
    assert launch["hot_loop"] == "runtime"


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_refuses_bad_groups_and_launches_nothing_for_no_work(profile):
    """QuantGemmKernel's check per group (N not whole tiles without N padding), k_batch 1 only, and no launch
    without work."""
    u = testing.jit_header(GROUPED_QUANT_HEADERS["bquant_grouped", profile])
    with pytest.raises(testing.LaunchError, match="arguments not supported"):
        u.launch_gemm_grouped([(16, 64, 256), (16, 100, 256)])
    with pytest.raises(testing.LaunchError, match="k_batch must be 1"):
        u.launch_gemm_grouped([(16, 64, 256)], k_batch=2)
    assert not [e for e in u.launch_gemm_grouped([]) if e.kind == "launch"]
    assert not [e for e in u.launch_gemm_grouped([(16, 0, 256)]) if e.kind == "launch"]


@pytest.mark.parametrize("profile", [OLD, NEW])
def test_one_problem_launch_runs_one_group(profile):
    """The `QuantGemmHostArgs` overload (a quant problem of one shape, as a selector hands it) runs one group."""
    u = testing.jit_header(GROUPED_QUANT_HEADERS["bquant_grouped", profile])
    launch, = [e for e in u.launch_gemm(32, 128, 256) if e.kind == "launch"]
    assert (launch["kernel"], launch["group_count"], launch["groups"]) == (
        "QuantGroupedGemmKernel", 1, "a:b:e:aq:bq:32x128x256:k1:0-4")


# --- real CK Tile --------------------------------------------------------------------------------

@pytest.mark.ck_compile
def test_grouped_quant_compiles_against_the_wheel(tmp_path):
    """ck-2025.11's persistent grouped kernels of every family its kernel runs, descriptors built group by group:
    bquant with device code for gfx942, and (host and device syntax) bquant's int4 weights on the preshuffled-B
    pipeline (the kernel's two-LDS path), row-col and tensor quant (~40 s on 2 cores). The wheel's aggregate
    gemm_quant.hpp is replaced by the BQuant headers, as for the plain families."""
    configs = [dict(GROUPED_QUANT_CASES["bquant_grouped"][0], ck_api=OLD),
               dict(QUANT, variant="bquant", datatype="fp8i4", pipeline="preshuffleb", tile_m=128, tile_n=128,
                    tile_k=128, warp_tile_k=64, preshuffle_bquant=True, ck_api=OLD),
               dict(QUANT, variant="rowcolquant", ck_api=OLD),
               dict(GROUPED_QUANT_CASES["tensor_quant_grouped_persistent"][0], ck_api=OLD)]
    kernels = render(load_data(configs))
    write_outputs(kernels, tmp_path)
    headers = [tmp_path / k.header for k in kernels]
    for header in headers:
        text = header.read_text()
        assert "ck_tile::QuantGroupedGemmKernel<" in text and "K::Base::MakeKernelArgs(" in text
        header.write_text(text.replace('#include "ck_tile/ops/gemm_quant.hpp"\n',
                                       "".join(f'#include "{i}"\n' for i in BQUANT_HEADERS)))
    toolchain = Toolchain.discover()
    [codegen] = check_headers(headers[:1], toolchain, entry_points_for, mode="codegen")
    assert codegen.passed, codegen.log
    results = check_headers(headers[1:], toolchain, entry_points_for, parallel=2)
    assert len(results) == 3 and all(r.passed for r in results), "\n".join(r.log for r in results if not r.passed)
