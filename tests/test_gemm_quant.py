"""Block-scale quantized GEMM (variants bquant, abquant): goldens, knobs, rules and CK's refusals."""

from __future__ import annotations

import attrs
import pytest

from ckast.config import ConfigError, LoadedKernel, load_data

from .cpp_tools import reformat
from .goldens import QUANT_CASES, QUANT_HEADERS
from .kernels import header_of, squash


def config(case: str, profile: str, **extra):
    return load_data(dict(QUANT_CASES[case][0], ck_api=profile, **extra))[0].config


@pytest.mark.parametrize(("case", "profile"), sorted(QUANT_HEADERS))
def test_golden_header(case, profile, file_regression):
    source = header_of(config(case, profile))
    file_regression.check(source, fullpath=QUANT_HEADERS[case, profile])
    assert reformat(source) == source


def test_defaults_are_ck_factory_defaults():
    """bquant: CK's decode tile 16x64x256 on 1x4x1 waves, warp tile K 32 on gfx942 and 128 on gfx950, K padded,
    1x1x128 B groups; abquant: 128x128x128 with 1x128 A groups."""
    b = load_data({"kind": "gemm", "variant": "bquant"})[0].config
    assert (b.datatype, b.tile_m, b.tile_n, b.tile_k, b.warp_n, b.warp_tile_k) == ("fp8", 16, 64, 256, 4, 32)
    assert (b.pad_k, b.bquant_group_n, b.bquant_group_k, b.preshuffle_b, b.split_k) == (True, 1, 128, False, False)
    assert b.aquant_group_k is None and b.transpose_c is None
    b950 = load_data({"kind": "gemm", "variant": "bquant", "arch": "gfx950"})[0].config
    assert b950.warp_tile_k == 128
    ab = load_data({"kind": "gemm", "variant": "abquant", "ck_api": "ck-2026.06", "pipeline": "preshuffleb",
                    "warp_m": 2, "warp_n": 2, "warp_tile_k": 64})[0].config
    assert (ab.tile_k, ab.aquant_group_k, ab.preshuffle_b, ab.transpose_c, ab.pad_k) == (128, 128, True, True, False)


@pytest.mark.parametrize(("extra", "rule"), [
    (dict(variant="abquant", ck_api="ck-2025.11"), "profile.abquant"),
    (dict(variant="bquant", layout="rrr"), "quant.layout"),
    (dict(variant="bquant", datatype="mx_bf16bf16", arch="gfx942"), "quant.arch"),
    (dict(variant="abquant", datatype="bf8", pipeline="eightwaves", ck_api="ck-2026.06"), "quant.pipeline"),
    (dict(variant="bquant", datatype="fp8", pipeline="microscale"), "quant.pipeline"),
    (dict(variant="bquant", warp_tile_k=128), "quant.warp_tile"),
    (dict(variant="bquant", bquant_group_k=512), "quant.group_divides"),
    (dict(variant="bquant", bquant_group_n=128), "quant.group_divides"),
    (dict(variant="bquant", preshuffle_b=True), "quant.preshuffle_b"),
    (dict(variant="bquant", split_k=True), "split_k.unsupported"),
    (dict(variant="bquant", datatype="mx_bf16fp4", arch="gfx950", ck_api="ck-2025.11"), "profile.pipeline"),
])
def test_refusals_name_their_rule(extra, rule):
    with pytest.raises(ConfigError) as err:
        load_data(dict({"kind": "gemm"}, **extra))
    assert f"[rule {rule}]" in str(err.value)


@pytest.mark.parametrize(("extra", "message"), [
    (dict(variant="bquant", datatype="fp4"), 'datatype: "fp4" is not allowed; allowed: fp8, bf8, fp8i4, bf8i4, mx_'),
    (dict(variant="bquant", pipeline="eightwaves"), 'pipeline: "eightwaves" is not allowed; allowed: compv3, '
                                                    "preshuffleb, microscale"),
    (dict(variant="abquant", pipeline="microscale"), 'pipeline: "microscale" is not allowed; allowed: compv3, '
                                                     "preshuffleb, eightwaves"),
])
def test_family_choices(extra, message):
    """Each family's data types (CK's variant keys) and pipelines are the knobs' choices."""
    with pytest.raises(ConfigError, match=message):
        load_data(dict({"kind": "gemm"}, **extra))


def test_bquant_kernel_per_profile():
    """ck-2025.11 has one scale-preshuffle flag and no B cast policy; ck-2026.06 splits the flag and casts B before
    the LDS write when A and B share a type (CK's generator), after the read for int4 weights."""
    old = squash(header_of(config("bquant_fp8i4_preshuffleb", "ck-2025.11")))
    new = squash(header_of(config("bquant_fp8i4_preshuffleb", "ck-2026.06")))
    assert "TileGemmQuantTraits<kPadM,kPadN,kPadK,BPreshuffleQuant,PreshuffleB," in old and "CastPolicy" not in old
    assert "APreshuffleQuant,BPreshuffleQuant,PreshuffleB," in new and "CastPolicy::AfterLDSRead>" in new
    assert "WPQuantBPipelineAgBgCrV2<Problem<HasHotLoop,TailNum>>" in new
    fp8 = squash(header_of(config("bquant", "ck-2026.06")))
    assert "CastPolicy::BeforeLDSWrite>" in fp8 and "GemmTile1DPartitioner<TileShape>" in fp8
    assert ("QuantGemmKernel<TilePartitioner,Pipeline<HasHotLoop,TailNum>,Epilogue<HasHotLoop,TailNum>,"
            "ck_tile::QuantType::BQuantGrouped>") in fp8
    assert "usingAComputeDataType=Problem<HasHotLoop,TailNum>::AComputeDataType;" in fp8
    assert "PermuteNEpilogue<EpilogueProblem<HasHotLoop,TailNum>>" in new and "PermuteNEpilogue" not in old


def test_abquant_kernel():
    src = squash(header_of(config("abquant_eightwaves", "ck-2026.06")))
    assert "ABQuantGemmPipelineAgBgCrEightWaves<Problem<HasHotLoop,TailNum>>" in src
    assert "usingAQuantGroupSize=ck_tile::QuantGroupShape<ck_tile::sequence<1,1,128>>;" in src
    assert "GemmSpatiallyLocalTilePartitioner<TileShape,8,4>" in src and "ck_tile::QuantType::ABQuantGrouped" in src
    assert "staticconstexprboolTransposeC=true;" in src and "staticconstexprboolPreshuffleB=true;" in src


@pytest.mark.parametrize(("profile", "takes"), [("ck-2025.11", ()), ("ck-2026.06", ("interwave", "intrawave"))])
def test_aquant_mem_schedules_are_the_profiles(profile, takes):
    """The schedules the AQuant Mem pipeline takes are its profile's (feature aquant_mem_intrawave): ck-2026.06 runs
    either (CK's GEMM generator builds it interwave, its grouped generator intrawave), ck-2025.11 none (no Mem AQuant
    compiles there: profile.aquant_mem; intrawave is refused by aquant.schedule too). The default stays interwave."""
    for scheduler in ("interwave", "intrawave"):
        data = {"kind": "gemm", "variant": "aquant", "datatype": "fp8", "pipeline": "mem", "scheduler": scheduler,
                "ck_api": profile}
        if scheduler in takes:
            [k] = load_data(data)
            assert f"ck_tile::GemmPipelineScheduler::{scheduler.title()},HasHotLoop" in squash(header_of(k.config))
            continue
        with pytest.raises(ConfigError) as err:
            load_data(data)
        assert ("aquant.schedule" in {i.rule for i in err.value.issues}) == (scheduler == "intrawave")
    if takes:
        assert load_data({"kind": "gemm", "variant": "aquant", "ck_api": profile})[0].config.scheduler == "interwave"


def test_eight_waves_take_a_plain_b_and_either_lds_flag_in_ck_2026_06():
    """CK Tile 2026's eight-wave ABQuant pipeline reads a plain or a preshuffled B and ping-pongs inside its own LDS
    whatever DoubleSmemBuffer (features eight_waves_plain_b, eight_waves_own_lds): CK's grouped configs (both false)
    emit as CK's GEMM ones (both true) do, and its LDS budget is half the arch's either way."""
    base = {"kind": "gemm", "variant": "abquant", "datatype": "fp8", "pipeline": "eightwaves", "arch": "gfx950",
            "ck_api": "ck-2026.06", "warp_m": 4, "warp_n": 2, "tile_m": 192, "tile_n": 256, "warp_tile_k": 128}
    for flag in (False, True):
        [k] = load_data(dict(base, preshuffle_b=flag, double_smem_buffer=not flag))
        src = squash(header_of(k.config))
        assert f"staticconstexprboolPreshuffleB={str(flag).lower()};" in src
        assert f"staticconstexprboolDoubleSmemBuffer={str(not flag).lower()};" in src
    with pytest.raises(ConfigError, match=r"exceeds the 81920 B LDS budget of eightwaves on gfx950 \[rule lds"):
        load_data(dict(base, tile_m=448, double_smem_buffer=False))
    with pytest.raises(ConfigError, match=r"\[rule quant.preshuffle_b\]"):
        load_data(dict(base, pipeline="compv3", preshuffle_b=True, warp_m=1, warp_n=4))


# --- CK's codegen configs (ck_quant_configs) ---------------------------------------------------------------

TILE = {"tile_m": 128, "tile_n": 128, "tile_k": 128, "warp_m": 1, "warp_n": 4, "warp_k": 1, "warp_tile_m": 16,
        "warp_tile_n": 16, "warp_tile_k": 64}
BQUANT_CONFIG = {  # CK's gemm_bquant_utils.default_fp8_preshuffleb_bquant_config on gfx942, as the manifest holds it
    "double_smem_buffer": True, "epilogue": "cshuffle", "k_block_per_cu": 2, "layouts": ["rcr"],
    "pipeline": "preshuffleb", "preshuffle_b": True, "preshuffle_bquant": True,
    "quant_groups": [{"quant_group_k": 128, "quant_group_m": 1, "quant_group_n": 1}], "scheduler": "intrawave",
    "tile_configs": [TILE], "variant_keys": ["fp8", "bf8i4"]}
ABQUANT_CONFIG = {  # CK's gemm_abquant_utils.default_fp4_config
    "aquant_group_k": 128, "bquant_groups": [{"bquant_group_k": 128, "bquant_group_n": 128}],
    "double_smem_buffer": False, "eight_waves": False, "epilogue": "cshuffle", "k_block_per_cu": 1,
    "layouts": ["rcr"], "pad_k": False, "pipeline": "compv3", "preshuffle_b": False, "preshuffle_bquant": False,
    "scheduler": "intrawave", "tile_configs": [dict(TILE, warp_tile_k=32)], "transpose_c": False,
    "variant_keys": ["fp4"]}


def test_ck_bquant_config_expands_as_ck_does():
    kernels = [k.config for k in load_data(BQUANT_CONFIG)]
    assert [k.datatype for k in kernels] == ["fp8", "bf8i4"]
    k = kernels[0]
    assert (k.variant, k.pipeline, k.preshuffle_b, k.preshuffle_bquant, k.k_block_per_cu, k.double_smem_buffer,
            k.bquant_group_n, k.bquant_group_k, k.pad_k, k.arch) == (
        "bquant", "preshuffleb", True, True, 2, True, 1, 128, True, "gfx942")


def test_ck_abquant_config_and_manifest():
    [k] = [k.config for k in load_data(dict(ABQUANT_CONFIG, arch="gfx950"), {"ck_api": "ck-2026.06"})]
    assert (k.variant, k.datatype, k.aquant_group_k, k.bquant_group_n, k.transpose_c, k.arch) == (
        "abquant", "fp4", 128, 128, False, "gfx950")
    manifest = {"cases": {"gemm_abquant_utils::default_fp4_config::gfx942": {
        "arch": "gfx942", "module": "gemm_abquant_utils", "config": ABQUANT_CONFIG, "config_name": "x"}}}
    [m] = load_data(manifest, {"ck_api": "ck-2026.06"})
    assert m.config == attrs.evolve(k, arch="gfx942")
    assert m.path.startswith('cases["gemm_abquant_utils::default_fp4_config::gfx942"].config (fp4 rcr ')


@pytest.mark.parametrize(("change", "message"), [
    (dict(quant_groups=[{"quant_group_m": 2, "quant_group_n": 1, "quant_group_k": 128}]),
     r"quant_groups\[0\]\.quant_group_m: 2: CK's bquant pipelines take groups of 1 x N x K"),
    (dict(preshuffle_b=True, swizzle=True), r"swizzle: unknown key of CK's bquant codegen config"),
    (dict(tile_configs=[{"tile_m": 16}]), r"tile_configs\[0\]: expected tile_m, tile_n"),
    (dict(variant_keys=[]), "variant_keys: expected a non-empty list"),
    (dict(transpose_c=True), "transpose_c: true: CK's bquant kernels never transpose C"),
])
def test_ck_bquant_config_refusals(change, message):
    with pytest.raises(ConfigError, match=message):
        load_data(dict(BQUANT_CONFIG, **change))


def test_ck_config_eight_waves_must_match_the_pipeline():
    with pytest.raises(ConfigError, match="eight_waves: True with pipeline compv3"):
        load_data(dict(ABQUANT_CONFIG, eight_waves=True), {"ck_api": "ck-2026.06"})


GROUPED_ABQUANT = {  # CK's grouped_gemm_abquant_utils.default_fp8_compv3_config, as the manifest holds it
    "aquant_groups": [{"aquant_group_k": 128, "aquant_group_m": 1, "aquant_group_n": 1}],
    "bquant_groups": [{"bquant_group_k": 128, "bquant_group_m": 1, "bquant_group_n": 1}],
    "double_smem_buffer": False, "epilogue": "cshuffle", "k_block_per_cu": 1, "layouts": ["rcr"],
    "pipeline": "compv3", "preshuffle_aq": False, "preshuffle_b": False, "preshuffle_bq": False,
    "scheduler": "intrawave", "tile_configs": [dict(TILE, warp_tile_k=32)], "transpose_c": False,
    "variant_keys": ["fp8"]}
GROUPED_AQUANT = {  # CK's grouped_gemm_aquant_utils.default_fp8i4_config, but compv3 (CK's is mem)
    "double_smem_buffer": False, "epilogue": "cshuffle", "k_block_per_cu": 1, "layouts": ["rcr"],
    "pipeline": "compv3", "preshuffle_aq": False,
    "quant_groups": [{"quant_group_k": 128, "quant_group_m": 1, "quant_group_n": 1}], "scheduler": "intrawave",
    "tile_configs": [dict(TILE, tile_m=16, tile_n=64, tile_k=256, warp_tile_k=32)], "transpose_c": False,
    "variant_keys": ["fp8i4"]}


def test_ck_grouped_configs_read_as_their_family():
    """A bare grouped config is told by its keys (aquant_groups: abquant; preshuffle_aq: aquant), a grouped bquant
    one by its manifest module; each takes the grouped generator's form."""
    [ab] = [k.config for k in load_data(GROUPED_ABQUANT, {"ck_api": "ck-2026.06"})]
    assert (ab.variant, ab.aquant_group_k, ab.bquant_group_n, ab.tile_partitioner, ab.permute_n, ab.pad_k) == (
        "abquant", 128, 1, "1d", True, False)
    [a] = [k.config for k in load_data(GROUPED_AQUANT, {"ck_api": "ck-2026.06"})]
    assert (a.variant, a.datatype, a.pad_k, a.tile_partitioner, a.pipeline) == ("aquant", "fp8i4", True, "1d", "compv3")
    case = {"module": "grouped_gemm_bquant_utils", "arch": "gfx950", "config": BQUANT_CONFIG}
    [b, _] = [k.config for k in load_data(case, {"ck_api": "ck-2026.06"})]
    assert (b.bq_layout, b.b_cast_policy, b.permute_n) == ("r", "after_lds_read", True)
    [plain, _] = [k.config for k in load_data(dict(case, module="gemm_bquant_utils"), {"ck_api": "ck-2026.06"})]
    assert (plain.bq_layout, plain.b_cast_policy) == ("c", "before_lds_write")


def test_ck_grouped_aquant_permutes_n_where_the_tile_allows():
    """CK's grouped aquant generator permutes N whenever each wave repeats its warp tile an even number of times
    along N (its aquant_effective_epilogue); its default 16x64 tile on 1x4 waves does not (CShuffle)."""
    wide = dict(GROUPED_AQUANT, variant_keys=["fp8"], tile_configs=[dict(GROUPED_AQUANT["tile_configs"][0], tile_n=128)])
    for config, epilogue in ((GROUPED_AQUANT, "CShuffleEpilogue"), (wide, "PermuteNEpilogue")):
        [k] = load_data(dict(config, variant_keys=["fp8"]), {"ck_api": "ck-2026.06"})
        assert f"Epilogue=ck_tile::{epilogue}<" in squash(header_of(k.config))


@pytest.mark.parametrize(("config", "change", "message"), [
    (GROUPED_ABQUANT, dict(preshuffle_aq=True), "preshuffle_aq: true: CK's abquant kernels here take A scales"),
    (GROUPED_ABQUANT, dict(aquant_groups=[{"aquant_group_m": 2, "aquant_group_k": 128}]),
     r"aquant_groups\[0\]\.aquant_group_m: 2: CK's abquant pipelines take A groups of 1 x 1 x K"),
    (GROUPED_ABQUANT, dict(aquant_groups=[{"aquant_group_k": 64}]),
     "aquant_groups: aquant_group_k 64 with bquant_group_k 128: CK's ABQuant takes one K group"),
    (GROUPED_ABQUANT, dict(eight_waves=True), "eight_waves: unknown key of CK's grouped abquant codegen config"),
    (GROUPED_AQUANT, dict(transpose_c=True), "transpose_c: true: CK's aquant kernels never transpose C"),
])
def test_ck_grouped_config_refusals(config, change, message):
    with pytest.raises(ConfigError, match=message):
        load_data(dict(config, **change), {"ck_api": "ck-2026.06"})


def test_manifest_module_of_another_family_is_named():
    manifest = {"cases": {"c": {"arch": "gfx942", "module": "gemm_other_utils", "config": {}}}}
    with pytest.raises(ConfigError, match=r'cases\.c\.module: gemm_other_utils: ckast reads the quant'):
        load_data(manifest)


# --- CK's golden kernels, compared as trees --------------------------------------------------------------

def _grouped(family: str, factories, archs=("gfx942",)) -> list[str]:
    return [f"grouped_gemm_{family}_utils::default_{f}_config::{a}" for f in factories for a in archs]


WAIVED = [
    (("quant.arch",), [f"{m}::default_mx_{t}_config::gfx942" for m in ("gemm_bquant_utils", "grouped_gemm_bquant_utils")
                       for t in ("bf16bf16", "bf16bf8", "bf16fp4")],
     "MX (e8m0) kernels on gfx942: CK's GEMM generator guards them with #error unless gfx950, its arch-invariant "
     "grouped generator emits them for gfx942"),
    (("quant.warp_tile",), _grouped("bquant", [f"{t}{f}" for t in ("fp8", "bf8") for f in (
        "", "_preshuffleb", "_preshuffleb_bquant", "_preshufflequant")]) + _grouped("aquant", ["fp8_preshuffleaq",
                                                                                             "bf8_preshuffleaq"]),
     "the gfx950 warp tile 16x16x128 on gfx942 (CK's grouped generators are arch-invariant): CK Tile's 16x16x128 fp8 "
     "MFMA compiles to nothing there (#if defined(__gfx950__) ... #else ignore), so the kernel computes zeros"),
    (("quant.warp_tile",), _grouped("bquant", ["fp8i4", "bf8i4"], ("gfx942", "gfx950")),
     "the fp8 warp tile 16x16x16 of CK's grouped fp8i4/bf8i4 bquant: CK Tile's WarpGemmDispatcher has it as a gfx12 "
     "WMMA only (WarpGemmWmma_f32_16x16x16_f8_f8, __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12, "
     "rocm-libraries warp_gemm_dispatcher.hpp @0149199e), no MFMA of gfx942 or gfx950"),
    (("lds.capacity", "quant.pipeline"), _grouped("abquant", ["fp8_eightwaves", "bf8_eightwaves"]),
     "the eight-wave ABQuant pipeline on gfx942: it runs on gfx950 only (kIsAvailable is false elsewhere, the kernel "
     "does nothing) and its ping-pong LDS, 2 x (A + B) = 112 KiB, is more than gfx942's 64 KiB"),
]
"""CK's cases that ckast emits for ck-2026.06 only with waivers (`ckast emit --waive`): (the waivable rules that refuse
each, its cases, why CK Tile cannot run them as CK's generator configures them). Every other case emits as it is;
CK's grouped AQuant Mem pipeline with the intrawave schedule (rule aquant.schedule: feature aquant_mem_intrawave) and
its grouped eight-wave ABQuant without preshuffled B or double_smem_buffer (quant.preshuffle_b and
pipeline.lds_buffering: features eight_waves_plain_b, eight_waves_own_lds) are what CK Tile 2026 builds."""


def _ck_case(case) -> dict:
    return {"cases": {case.case_id: {"module": case.module, "arch": case.arch, "config": case.config}}}


def _ck_case_kernel(case) -> LoadedKernel:
    """The kernel of one CK case for ck-2026.06, with the rules WAIVED for it waived."""
    needs = {cid: rules for rules, cases, _ in WAIVED for cid in cases}
    [kernel] = load_data(_ck_case(case), {"ck_api": "ck-2026.06"}, frozenset(needs.get(case.case_id, ())))
    return kernel


def test_every_ck_case_emits():
    """All 140 cases of CK's manifest (rocm-libraries ea607ecd) emit for ck-2026.06: 118 as they are, 22 with the
    waivers WAIVED names (each refused without them by exactly those rules, its header opening with their banner)."""
    ck_goldens = pytest.importorskip("tests.ck_goldens", reason="CK's golden trees (tests/ck_goldens) not in this tree")
    from ckast.emit import render

    goldens = ck_goldens.load_goldens()
    assert len(goldens.cases) == 140
    needs = {cid: rules for rules, cases, _ in WAIVED for cid in cases}
    assert len(needs) == sum(len(cases) for _, cases, _ in WAIVED) == 22 and set(needs) <= set(goldens.cases)
    loaded = []
    for cid, case in sorted(goldens.cases.items()):
        if cid in needs:
            with pytest.raises(ConfigError) as refused:
                load_data(_ck_case(case), {"ck_api": "ck-2026.06"})
            assert sorted({i.rule for i in refused.value.issues}) == sorted(needs[cid]), cid
        kernel = _ck_case_kernel(case)
        assert sorted({i.rule for i in kernel.waived}) == sorted(needs.get(cid, ())), cid
        loaded.append(kernel)
    emitted = render(loaded, save=False)
    assert len(emitted) == len({k.config for k in loaded}) == 140
    banners = {k.name for k in emitted if "// WAIVED RULES: " in dict(k.files)[k.header]}
    assert len(banners) == 22


def _int4_on_b(int8: str) -> list:
    """The named difference of CK's grouped fp8i4/bf8i4 AQuant kernels from ckast's (`int8`: fp8_t or bf8_t)."""
    from tests.ck_trees import ProfileDifference

    why = ("CK's grouped AQuant generator at ea607ecd puts the packed int4 on B (A fp8/bf8, scaled); CK Tile's "
           "AQuant block GEMM (block_universal_gemm_as_aquant_bs_cr.hpp) static_asserts an fp8/bf8 B, and CK's "
           "generator puts it on A from 8e9c75d7 on, as CK's GEMM generator and ckast's aquant fp8i4/bf8i4 do")
    a, b = f"ck_tile::{int8}", "ck_tile::pk_int4_t"
    return [ProfileDifference(f"grouped-aquant-int4-{arg}", why, f"*ck_tile::GemmAQuantPipelineProblem/{arg}",
                              ck=ck, ckast=ours) for arg, ck, ours in ((0, a, b), (2, b, a), (8, a, b))]


def test_kernels_equal_cks_goldens():
    """Every golden kernel of CK's manifest (rocm-libraries ea607ecd; the grouped modules' are the same
    QuantGemmKernel of the same families, one problem per launch) against ckast's for the case's config, with the
    waivers WAIVED names, as trees: the 74 kernels of the GEMM generators and 33 of the grouped generators' 35
    equal with no allowance, and CK's grouped fp8i4/bf8i4 AQuant with one named difference (`_int4_on_b`: CK's
    generator put the int4 on B, which CK Tile's AQuant does not compile)."""
    ck_goldens = pytest.importorskip("tests.ck_goldens", reason="CK's golden trees (tests/ck_goldens) not in this tree")
    from ckast.catalog import load_profile
    from ckast.config.ck_quant_configs import GROUPED
    from ckast.variants import lower_kernel

    goldens, profile = ck_goldens.load_goldens(), load_profile("ck-2026.06")
    equal, explained = {False: set(), True: set()}, set()
    for cid, case in sorted(goldens.cases.items()):
        config = _ck_case_kernel(case).config
        int4_on_b = case.module == "grouped_gemm_aquant_utils" and config.datatype in ("fp8i4", "bf8i4")
        allowed = _int4_on_b(f"{config.datatype[:3]}_t") if int4_on_b else []
        result = ck_goldens.compare_case(case, lower_kernel(config, profile).header, allowed, profile=profile)
        assert result.ok, f"{case.config_name} ({cid}):\n{result.report()}"
        (explained if allowed else equal[case.module.startswith(GROUPED)]).add(case.config_name)
    assert (len(equal[False]), len(equal[True]), len(explained)) == (74, 33, 2)
    assert len(equal[False] | equal[True] | explained) == len(goldens.trees) == 109
    assert sorted(explained) == [f"grouped_gemm_aquant_{t}i4_rcr_mem_cshuffle_intrawave_16x64x256_1x4x1_16x16x32_"
                                 "aqg1x1x128" for t in ("bf8", "fp8")]


def test_quant_group_sizes_fit_index_t():
    with pytest.raises(ConfigError, match=r"bquant_group_k: 4294967296 does not fit CK's index_t .*"
                                          r"\[rule int.index_t\]"):
        load_data({"kind": "gemm", "variant": "bquant", "bquant_group_k": 2**32})


def test_block_scale_kernels_have_no_dispatcher_wrapper(tmp_path):
    """CK's registry runs GemmHostArgs: a block-scale launcher (QuantGemmHostArgs) gets no wrapper or registration,
    and its registry key is its name (two of them never collide there)."""
    from ckast.emit import render, write_outputs
    from ckast.variants import registry_key

    configs = load_data([dict(QUANT_CASES["bquant"][0]), dict(QUANT_CASES["bquant"][0], bquant_group_k=64)])
    assert registry_key(configs[0].config) != registry_key(configs[1].config)
    kernels = render(configs)
    write_outputs(kernels, tmp_path)
    assert not (tmp_path / "dispatcher_wrappers").exists()
    assert sorted(p.suffix for p in tmp_path.iterdir() if p.suffix in (".hpp", ".cpp")) == [".cpp"] * 2 + [".hpp"] * 2


# --- the launcher against the host model (JIT) -------------------------------------------------------------

@pytest.mark.parametrize("profile", ["ck-2025.11", "ck-2026.06"])
def test_bquant_launch_runs_the_quant_kernel_with_its_scales(profile):
    """One QuantGemmKernel launch per call: a block per 16x64 tile, the hot loop and tail of the K loop count
    (512 / 256 = 2: no hot loop, even tail), the scale tensors passed through."""
    from ckast import testing
    from .conftest import GOLDEN

    u = testing.jit_header(GOLDEN / "gemm" / f"bquant_{profile}.hpp")
    timed, launch = u.launch_gemm(64, 128, 512)
    assert (timed.kind, launch.kind) == ("timed", "launch")
    assert (launch["kernel"], launch["grid"], launch["block"], launch["quant"]) == (
        "QuantGemmKernel", (8, 1, 1), (256, 1, 1), "BQuantGrouped")
    assert (launch["hot_loop"], launch["tail"], launch["bq"]) == (0, "Even", "bq")
    with pytest.raises(testing.LaunchError, match="k_batch must be 1"):
        u.launch_gemm(64, 128, 512, 2)
    with pytest.raises(testing.LaunchError, match="arguments not supported"):
        u.launch_gemm(60, 128, 512)  # M is not padded: whole 16-row tiles only


def test_abquant_eight_waves_launch():
    from ckast import testing
    from .conftest import GOLDEN

    u = testing.jit_header(GOLDEN / "gemm" / "abquant_eightwaves_ck-2026.06.hpp")
    [_, launch] = u.launch_gemm(384, 256, 1024)
    assert (launch["grid"], launch["block"], launch["quant"], launch["hot_loop"], launch["tail"]) == (
        (2, 1, 1), (512, 1, 1), "ABQuantGrouped", 1, "Even")
