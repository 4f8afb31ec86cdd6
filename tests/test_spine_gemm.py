"""The spine end to end for one GEMM launcher: golden per profile, clang-format clean, real compile."""

from __future__ import annotations

import pytest

from ckast.catalog import load_profile, profile_names
from ckast.check import Toolchain, check_headers
from ckast.config import load_data
from ckast.lower.identity import entry_points, kernel_name
from ckast.nodes import to_source
from ckast.variants.gemm import gemm_header

from .conftest import GOLDEN
from .cpp_tools import reformat

CONFIG = {"kind": "gemm", "variant": "standard", "datatype": "fp16", "layout": "rcr"}
GOLDENS = {name: GOLDEN / "spine" / f"gemm_standard_{name}.hpp" for name in profile_names()}


def header(profile: str) -> str:
    cfg = load_data(dict(CONFIG, ck_api=profile))[0].config
    return to_source(gemm_header(cfg, load_profile(profile)))


@pytest.mark.parametrize("profile", profile_names())
def test_golden(profile, file_regression):
    file_regression.check(header(profile), fullpath=GOLDENS[profile])


@pytest.mark.parametrize("profile", profile_names())
def test_clang_format_leaves_output_unchanged(profile):
    source = header(profile)
    assert reformat(source) == source


def test_every_golden_belongs_to_a_test():
    assert set(GOLDEN.rglob("*.hpp")) == set(GOLDENS.values())


def test_old_profile_dispatches_tail_and_memory_operation_at_compile_time():
    old, new = header("ck-2025.11"), header("ck-2026.06")
    assert "BaseGemmPipeline::TailHandler(dispatch, has_hot_loop, tail_num)" in old
    assert "ck_tile::memory_operation_enum::atomic_add" in old and "args.k_batch == 1" in old
    assert "TailHandler" not in new and "memory_operation_enum" not in new


@pytest.mark.ck_compile
@pytest.mark.parametrize("mode", ["syntax", "codegen"])
def test_real_compile_against_wheel_ck(tmp_path, mode):
    cfg = load_data(dict(CONFIG, ck_api="ck-2025.11"))[0].config
    path = tmp_path / f"{kernel_name(cfg)}.hpp"
    path.write_text(header("ck-2025.11"))
    [result] = check_headers([path], Toolchain.discover(), lambda _: entry_points(kernel_name(cfg)), mode=mode)
    assert result.passed, result.log
