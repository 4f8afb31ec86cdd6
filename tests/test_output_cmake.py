"""`ckast_kernels.cmake`: the run's file lists, relative, read back by CMake itself."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.output.stamp import stamp_path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def emit(config: Path, out: Path) -> None:
    result = CliRunner().invoke(main, ["emit", "--config", str(config), "-o", str(out)])
    assert result.exit_code == 0, result.output


def test_lists_match_the_manifest_and_hold_no_path_of_this_machine(tmp_path):
    out = tmp_path / "out"
    emit(EXAMPLES / "conv_directions.json", out)
    text = (out / "ckast_kernels.cmake").read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert str(tmp_path) not in text and "/root" not in text and "/home" not in text
    for path in manifest["files"]:
        if path.endswith((".cpp", ".hpp")):
            assert f'"${{CMAKE_CURRENT_LIST_DIR}}/{path}"' in text
    assert "ckast_kernels.cmake" in manifest["files"]


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_cmake_reads_it(tmp_path):
    out = tmp_path / "out"
    emit(EXAMPLES / "gemm_standard.json", out)
    script = tmp_path / "read.cmake"
    script.write_text(f'include("{out}/ckast_kernels.cmake")\n'
                      'foreach(v CKAST_GPU_TARGETS CKAST_KERNEL_SOURCES CKAST_REGISTRATION_SOURCES CKAST_HEADERS)\n'
                      '  list(LENGTH ${v} n)\n  message(STATUS "${v} ${n}")\nendforeach()\n'
                      'list(GET CKAST_KERNEL_SOURCES 0 first)\nmessage(STATUS "first ${first}")\n')
    result = subprocess.run(["cmake", "-P", str(script)], capture_output=True, text=True, check=True)
    lines = [line.removeprefix("-- ") for line in result.stdout.splitlines()]
    assert lines[:4] == ["CKAST_GPU_TARGETS 1", "CKAST_KERNEL_SOURCES 2", "CKAST_REGISTRATION_SOURCES 0",
                         "CKAST_HEADERS 5"]
    first = Path(lines[4].removeprefix("first "))
    assert first.is_file() and first.parent == out and first.suffix == ".cpp"


def test_unchanged_kernel_list_keeps_the_file(tmp_path):
    out = tmp_path / "out"
    emit(EXAMPLES / "gemm_standard.json", out)
    before = (out / "ckast_kernels.cmake").stat().st_mtime_ns
    stamp_path(out).unlink()  # a full rerun, not the up-to-date shortcut
    emit(EXAMPLES / "gemm_standard.json", out)
    assert (out / "ckast_kernels.cmake").stat().st_mtime_ns == before


def configure(tmp_path: Path, lib: Path, ck: Path, *defines: str) -> subprocess.CompletedProcess[str]:
    """Configure a project that builds `lib` against the CK tree `ck` (the languages left out: nothing compiles)."""
    source = tmp_path / "project"
    source.mkdir(exist_ok=True)
    (source / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.21)\nproject(p LANGUAGES NONE)\n"
                                           f'include("{lib}/ckast_kernels.cmake")\n'
                                           f'ckast_add_kernels(k LANGUAGE CXX CK_INCLUDE "{ck}")\n')
    shutil.rmtree(tmp_path / "build", ignore_errors=True)
    return subprocess.run(["cmake", "-S", source, "-B", tmp_path / "build", *defines], capture_output=True, text=True,
                          timeout=60)


def ck_tree(root: Path, headers) -> Path:
    """A CK include tree holding `ck_tile/core.hpp` and `headers` (empty files)."""
    for header in ("ck_tile/core.hpp", *headers):
        (root / header).parent.mkdir(parents=True, exist_ok=True)
        (root / header).write_text("")
    return root


def test_the_headers_that_tell_the_profiles_apart():
    from ckast.api.markers import marker_headers

    assert marker_headers(["ck-2025.11"]) == ("ck_tile/ops/gemm/kernel/streamk_gemm_kernel.hpp",
                                              "ck_tile/ops/gemm/kernel/streamk_gemm_tile_partitioner.hpp")
    newer = marker_headers(["ck-2026.06"])
    assert {"ck_tile/ops/epilogue/tdm_epilogue.hpp", "ck_tile/ops/epilogue/permuten_epilogue.hpp"} <= set(newer)
    assert len(newer) == 12  # with the block-scale pipelines (abquant, microscale) only ck-2026.06 has
    assert not set(newer) & set(marker_headers(["ck-2025.11"]))
    assert marker_headers(["ck-2025.11", "ck-2026.06"]) == tuple(sorted({*newer, *marker_headers(["ck-2025.11"])}))


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_configure_stops_at_a_ck_tree_of_another_profile(tmp_path):
    from ckast.api.markers import marker_headers

    old, new = tmp_path / "old", tmp_path / "new"
    for lib, profile in ((old, "ck-2025.11"), (new, "ck-2026.06")):
        run = CliRunner().invoke(main, ["emit", "--config", str(EXAMPLES / "gemm_standard.json"), "--ck-api", profile,
                                        "-o", str(lib)])
        assert run.exit_code == 0, run.output
    ck_old = ck_tree(tmp_path / "ck-old", marker_headers(["ck-2025.11"]))
    ck_new = ck_tree(tmp_path / "ck-new", marker_headers(["ck-2026.06"]))
    for lib, ck in ((old, ck_old), (new, ck_new)):
        fits = configure(tmp_path, lib, ck)
        assert "Configuring done" in fits.stdout and "ckast" not in fits.stderr  # (generating needs a language)
    refused = configure(tmp_path, new, ck_old)
    said = " ".join(refused.stderr.split())
    assert refused.returncode != 0 and "Configuring incomplete" in refused.stdout + refused.stderr
    assert (f"ckast: {new} was written for CK API ck-2026.06, but {ck_old} is a CK tree of another API (it has no "
            "ck_tile/ops/epilogue/permuten_epilogue.hpp): generate it again with --ck-include "
            f"{ck_old}, which picks the tree's profile (`ckast api detect --ck-include {ck_old}` names it), or pass a "
            "CK tree of ck-2026.06; -DCKAST_ALLOW_API_MISMATCH=ON configures anyway") in said
    refused = configure(tmp_path, old, ck_new)
    assert refused.returncode != 0 and "written for CK API ck-2025.11" in refused.stderr
    allowed = configure(tmp_path, new, ck_old, "-DCKAST_ALLOW_API_MISMATCH=ON")
    assert "Configuring done" in allowed.stdout and "CMake Warning" in allowed.stderr
    assert "written for CK API ck-2026.06" in allowed.stderr


def test_a_generated_library_records_its_profile(tmp_path):
    """Rendering processes send each kernel's ck_api back for the CMake input (it was a KeyError)."""
    run = CliRunner().invoke(main, ["generate", "--rule-set", "tiny", "--arch", "gfx942", "--datatype", "fp16",
                                    "--ndim", "2", "--ck-api", "ck-2026.06", "-j", "2", "-o", str(tmp_path / "lib")])
    assert run.exit_code == 0, run.output
    text = (tmp_path / "lib" / "ckast_kernels.cmake").read_text()
    assert 'set(CKAST_CK_API "ck-2026.06")' in text and '    "ck_tile/ops/epilogue/tdm_epilogue.hpp"' in text
