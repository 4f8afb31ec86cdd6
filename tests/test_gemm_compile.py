"""Real compiles (marked ck_compile): one emitted header per GEMM variant against the wheel's CK Tile."""

from __future__ import annotations

import pytest

from ckast.check import Toolchain, check_headers
from ckast.config import load_data
from ckast.emit import render, write_outputs
from ckast.output import entry_points_for

from .goldens import GEMM_CASES, QUANT_CASES

pytestmark = pytest.mark.ck_compile

SAMPLE = ("standard", "preshuffle", "multi_d_2d", "standard_persistent")


@pytest.fixture(scope="module")
def emitted(tmp_path_factory):
    out = tmp_path_factory.mktemp("gemm")
    kernels = render(load_data([dict(GEMM_CASES[c], ck_api="ck-2025.11") for c in SAMPLE]))
    write_outputs(kernels, out)
    return {k.config["variant"] + ("_persistent" if k.config["persistent"] else ""): out / k.header for k in kernels}


def test_one_header_per_variant_compiles(emitted):
    results = check_headers(sorted(emitted.values()), Toolchain.discover(), entry_points_for, parallel=2)
    assert all(r.passed for r in results), "\n".join(r.log for r in results if not r.passed)
    assert len(results) == len(SAMPLE)


def test_codegen_of_the_standard_header(emitted):
    [result] = check_headers([emitted["standard"]], Toolchain.discover(), entry_points_for, mode="codegen")
    assert result.passed, result.log


def test_batched_header_compiles(tmp_path):
    """The batched kernel and its plain-arguments `launch` against the wheel's BatchedGemmKernel, device code
    generated (one header, ~20 s)."""
    kernels = render(load_data([dict(GEMM_CASES["batched"], ck_api="ck-2025.11")]))
    write_outputs(kernels, tmp_path)
    [result] = check_headers([tmp_path / kernels[0].header], Toolchain.discover(), entry_points_for, mode="codegen")
    assert result.passed, result.log
def test_stream_k_compiles_with_each_reduction_of_the_profile(tmp_path):
    """Stream-K with the atomic reduction (its epilogue adds into C) and the linear one (a workspace), persistent."""
    configs = [dict(GEMM_CASES["streamk"], ck_api="ck-2025.11"),
               dict(GEMM_CASES["streamk"], streamk_reduction="atomic", persistent=False, datatype="bf16",
                    pipeline="mem", pad_m=True, pad_n=True, pad_k=True, ck_api="ck-2025.11")]
    kernels = render(load_data(configs))
    write_outputs(kernels, tmp_path)
    results = check_headers([tmp_path / k.header for k in kernels], Toolchain.discover(), entry_points_for, parallel=2)
    assert len(results) == 2 and all(r.passed for r in results), "\n".join(r.log for r in results if not r.passed)


def test_grouped_compiles_non_persistent_and_persistent(tmp_path):
    """The grouped kernel, its descriptor workspace and both `launch` overloads against the wheel's GroupedGemmKernel:
    non-persistent (the launcher picks the tail) with device code generated, and persistent (the kernel loops over
    the groups' tiles)."""
    kernels = render(load_data([dict(GEMM_CASES[c], ck_api="ck-2025.11") for c in ("grouped", "grouped_persistent")]))
    write_outputs(kernels, tmp_path)
    toolchain = Toolchain.discover()
    [codegen] = check_headers([tmp_path / kernels[0].header], toolchain, entry_points_for, mode="codegen")
    [persistent] = check_headers([tmp_path / kernels[1].header], toolchain, entry_points_for)
    assert codegen.passed, codegen.log
    assert persistent.passed, persistent.log


BQUANT_HEADERS = tuple(f"ck_tile/ops/gemm_quant/{h}.hpp" for h in (
    "pipeline/tile_gemm_quant_traits", "pipeline/gemm_group_quant_utils", "pipeline/gemm_quant_pipeline_problem",
    "block/block_universal_gemm_as_bs_bquant_cr", "block/block_universal_gemm_ar_flatbr_bquant_cr",
    "pipeline/gemm_bquant_pipeline_ag_bg_cr_policy", "pipeline/gemm_bquant_pipeline_ag_bg_cr_v3",
    "pipeline/gemm_wp_bquant_pipeline_ag_bg_cr_base_policy", "pipeline/gemm_wp_bquant_pipeline_ag_bg_cr_v2",
    "kernel/gemm_quant_kernel"))
"""The wheel's BQuant headers in dependency order. Its aggregate `gemm_quant.hpp` also pulls in the AQuant block
GEMM, whose `decltype(threadIdx.x) lane = 0` does not compile against this HIP's coordinate types (found by
compiling): the sample includes what a BQuant kernel uses instead."""


def test_bquant_compiles_against_the_wheel(tmp_path):
    """Block-scale bquant of ck-2025.11: fp8 with B scales (compv3) and int4 weights with preshuffled B and B
    scales (the weight-preshuffle quant pipeline), device code generated for gfx942 (~2 min on 2 cores)."""
    configs = [dict(QUANT_CASES[c][0], ck_api="ck-2025.11") for c in ("bquant", "bquant_fp8i4_preshuffleb")]
    kernels = render(load_data(configs))
    write_outputs(kernels, tmp_path)
    headers = [tmp_path / k.header for k in kernels]
    for h in headers:
        text = h.read_text()
        assert '#include "ck_tile/ops/gemm_quant.hpp"\n' in text
        h.write_text(text.replace('#include "ck_tile/ops/gemm_quant.hpp"\n',
                                  "".join(f'#include "{i}"\n' for i in BQUANT_HEADERS)))
    results = check_headers(headers, Toolchain.discover(), entry_points_for, mode="codegen", parallel=2)
    assert len(results) == 2 and all(r.passed for r in results), "\n".join(r.log for r in results if not r.passed)
