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
