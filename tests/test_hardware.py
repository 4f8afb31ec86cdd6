"""Hardware profiles: one per arch of archs.toml, every figure with a public source."""

from __future__ import annotations

from pathlib import Path

import pytest

import ckast.arch.hardware as H
from ckast.arch import ARCH_NAMES, arch_spec
from ckast.arch.calibration import CONSTANTS, PATH, calibration
from ckast.arch.hardware import FIGURES, ck_engine_hardware, hardware
from ckast.config.knobs import DATATYPES
from ckast.data_files import load_toml

RAW = load_toml(Path(H.__file__).with_name("hardware.toml"))


@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_every_arch_has_a_profile_with_a_source_for_every_figure(arch):
    hw = hardware(arch)
    assert hw.arch == arch and hw.product
    for name in FIGURES:
        value = getattr(hw, name)
        assert isinstance(value, int) and value >= (0 if name == "l3_cache_kb" else 1), (name, value)
        assert hw.sources[name], name
    assert set(hw.peak_tflops) <= set(DATATYPES["gemm"])
    for dtype, peak in hw.peak_tflops.items():
        assert peak > 0 and "FLOPS/clock/CU" in hw.sources[f"peak_tflops.{dtype}"]
    assert (hw.hbm_gbps is None) == ("hbm_gbps" not in hw.sources)
    assert hw.total_simds == hw.num_cus * hw.simds_per_cu


@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_lds_and_wavefront_are_archs_toml(arch):
    hw, spec = hardware(arch), arch_spec(arch)
    assert (hw.lds_bytes, hw.wavefront_size) == (spec.lds_bytes, spec.warp_size)
    assert "archs.toml" in hw.sources["lds_bytes"]
    assert not {"lds_bytes", "wavefront_size"} & set(RAW["archs"][arch])  # one source per fact


def test_sources_are_public_and_all_used():
    cited = {f["source"] for table in (*RAW["archs"].values(), RAW["ck_engine"],
                                       *RAW["matrix_flops_per_clock_per_cu"].values(),
                                       *RAW["mfma_full_rate_k"].values())
             for f in table.values() if isinstance(f, dict)}
    assert cited == set(RAW["sources"])
    for key, text in RAW["sources"].items():
        assert key == "none" or "https://" in text or "ROCm/composable_kernel" in text, key


@pytest.mark.parametrize("arch", [a for a in ARCH_NAMES if hardware(a).hbm_gbps is not None])
def test_every_matrix_datatype_of_an_arch_has_a_peak(arch):
    types = {key.split("_")[0] for key in arch_spec(arch).warp_tiles} & set(DATATYPES["gemm"])
    # CK lists fp8/bf8 warp tiles for gfx90a, whose matrix cores have no 8-bit float rate (AMD publishes none)
    unrated = {"fp8", "bf8"} if arch == "gfx90a" else set()
    assert types - set(hardware(arch).peak_tflops) == unrated


def test_peaks_are_amds_published_figures():
    assert {k: round(v, 1) for k, v in hardware("gfx942").peak_tflops.items()} == {
        "fp16": 1307.4, "bf16": 1307.4, "fp32": 163.4, "fp8": 2614.9, "bf8": 2614.9, "int8": 2614.9}
    assert {k: round(v, 1) for k, v in hardware("gfx908").peak_tflops.items()} == {
        "fp16": 184.6, "bf16": 92.3, "fp32": 46.1, "int8": 184.6}
    assert round(hardware("gfx90a").peak_tflops["fp16"] * 2) == 383  # MI250X: two GCDs
    mi355x = hardware("gfx950").peak_tflops
    assert (round(mi355x["fp16"], -2), round(mi355x["fp8"], -2)) == (2500, 5000)
    assert round(hardware("gfx1100").peak_tflops["fp16"], 1) == 122.9
    assert hardware("gfx1250").peak_tflops == {} and hardware("gfx1250").hbm_gbps is None


def test_mi300x_and_mi355x_figures():
    mi300x = hardware("gfx942")
    assert (mi300x.num_cus, mi300x.num_xcd, mi300x.max_clock_mhz, mi300x.hbm_gbps) == (304, 8, 2100, 5300.0)
    assert (mi300x.l2_cache_kb, mi300x.l3_cache_kb, mi300x.shader_engines) == (4096, 262144, 32)
    mi355x = hardware("gfx950")
    assert (mi355x.num_cus, mi355x.lds_bytes, mi355x.max_clock_mhz, mi355x.hbm_gbps) == (256, 163840, 2400, 8000.0)


def test_ck_engine_hardware_is_cks_defaults_overridden_by_the_record():
    ck = ck_engine_hardware()
    assert [getattr(ck, f) for f in FIGURES] == [256, 4, 32, 2400, 32, 64, 65536, 32, 4096, 262144, 8]
    assert all("ck_engine" not in ck.sources[f] and "feature_engine" in ck.sources[f] for f in FIGURES)
    recorded = ck_engine_hardware({"num_cus": 304, "lds_capacity": 163840})
    assert (recorded.num_cus, recorded.lds_bytes, recorded.max_clock_mhz) == (304, 163840, 2400)
    assert recorded.sources["num_cus"] == "recorded in the model's feature_spec.json"
    with pytest.raises(KeyError, match="unknown hardware figure"):
        ck_engine_hardware({"num_sms": 132})


def test_unknown_arch_is_refused():
    with pytest.raises(KeyError, match="no hardware profile for 'gfx1030'"):
        hardware("gfx1030")


def test_mfma_full_rate_k_is_the_family_s():
    assert dict(hardware("gfx950").mfma_full_rate_k) == {"fp16": 32, "bf16": 32, "fp8": 128, "bf8": 128}
    assert hardware("gfx942").mfma_full_rate_k["fp16"] == 16 and "rocm.blogs" in hardware("gfx942").sources[
        "mfma_full_rate_k.fp16"]
    assert hardware("gfx90a").mfma_full_rate_k == {} and ck_engine_hardware().mfma_full_rate_k["bf16"] == 32


CALIBRATION = load_toml(PATH)


@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_every_arch_has_a_calibration_with_a_source_for_every_constant(arch):
    cal = calibration(arch)
    assert cal.arch == (arch if arch in CALIBRATION["archs"] else CALIBRATION["fallback"])
    for name in CONSTANTS:
        assert getattr(cal, name) > 0 and cal.sources[name], name
    assert cal.pipeline_step and all(f"pipeline_step.{p}" in cal.sources for p, _ in cal.pipeline_step)


def test_mi355x_and_mi300x_are_calibrated_on_ck_measurements():
    assert set(CALIBRATION["archs"]) == {"gfx950", "gfx942"}
    mi355x, mi300x = calibration("gfx950"), calibration("gfx942")
    assert "grouped_conv_fwd_bf16_gfx950_train.csv" in mi355x.sources["wave_issue"]
    assert "gemm_fp16_rcr_gfx942_sweep_results.csv" in mi300x.sources["feed_bytes_per_clock"]
    assert "MI355X's" in mi300x.sources["base_vgprs"] and "MI300X's" in mi355x.sources["interwave_step"]
    assert "llvm.org" in mi355x.sources["vgprs_per_lane"] and mi355x.vgprs_per_lane == 512
    cited = {f["source"] for table in CALIBRATION["archs"].values()
             for f in (*table.values(), *table.get("pipeline_step", {}).values()) if "source" in f}
    assert cited == set(CALIBRATION["sources"])
    with pytest.raises(KeyError, match="no calibration"):
        calibration("gfx000")
