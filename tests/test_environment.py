"""Environment errors: `ckast check` without clang, without HIP headers or without network for the CK download,
and `ckast jit` without a working cppyy, each print one line on stderr (what to install or which option to
pass) and exit with status 1, without a traceback. The real command line runs in a subprocess whose environment
lacks the piece."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ckast.check import toolchain as tc

from .conftest import GOLDEN, ROOT
from .test_check_toolchain import make_fake_clang, make_hip_tree

HEADER = GOLDEN / "gemm" / "standard_ck-2025.11.hpp"
UNSET = ("CKAST_CLANG", "HIP_PATH", "ROCM_PATH", "CK_TILE_INCLUDE", "PYTHONPATH")


def ckast(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m ckast ARGS` with the user cache in `tmp_path`, no pip settings and `env` on top."""
    base = {k: v for k, v in os.environ.items() if k not in UNSET and not k.startswith("PIP_")}
    base["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env = {**base, **env}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (env.get("PYTHONPATH"), str(ROOT))))  # this checkout's ckast
    return subprocess.run([sys.executable, "-m", "ckast", *args], env=env, capture_output=True, text=True,
                          timeout=300)


def assert_one_line(result: subprocess.CompletedProcess[str], *says: str) -> None:
    assert result.returncode == 1, result
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and all(s in lines[0] for s in says), result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr


def test_check_without_clang_says_what_to_install(tmp_path):
    (tmp_path / "bin").mkdir()
    result = ckast(tmp_path, "check", "--compile", str(HEADER), PATH=str(tmp_path / "bin"))
    assert_one_line(result, "no clang++-19 or clang++ on PATH", "apt-get install clang-19 lld-19")


def test_check_without_hip_headers_says_what_to_install(tmp_path):
    (tmp_path / "hip").mkdir()
    result = ckast(tmp_path, "check", "--compile", str(HEADER), CKAST_CLANG=str(make_fake_clang(tmp_path / "bin")),
                   HIP_PATH=str(tmp_path / "hip"))
    assert_one_line(result, f"HIP_PATH {tmp_path / 'hip'} has no include/hip/hip_runtime.h",
                    "apt-get install libamdhip64-dev")


@pytest.mark.skipif((tc.ROCM_ROOT / "include" / "ck_tile" / "core.hpp").is_file(), reason="ROCm provides CK Tile")
def test_check_without_network_names_the_option_to_pass(tmp_path):
    # pip reads no config file and finds no index: as without network.
    result = ckast(tmp_path, "check", "--compile", str(HEADER), CKAST_CLANG=str(make_fake_clang(tmp_path / "bin")),
                   HIP_PATH=str(make_hip_tree(tmp_path / "hip")), PIP_CONFIG_FILE=os.devnull,
                   PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_RETRIES="0", PIP_DEFAULT_TIMEOUT="5")
    assert_one_line(result, f"could not download {tc.AITER_SPEC}", "pass --ck-include DIR or set CK_TILE_INCLUDE")
    assert not (tmp_path / "cache" / "ckast" / f"ck-aiter-{tc.AITER_VERSION}" / "include").exists()


def missing(tmp_path: Path, module: str) -> str:
    """A folder for PYTHONPATH in which `module` fails to import, as when it is not installed."""
    shim = tmp_path / "shim" / module
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(f'raise ImportError("No module named \'{module}\' (simulated)")\n')
    return str(shim.parent)


def test_jit_without_cppyy_says_which_extra_to_install(tmp_path):
    result = ckast(tmp_path, "jit", str(HEADER), PYTHONPATH=missing(tmp_path, "cppyy"))
    assert_one_line(result, "cppyy does not load (ImportError: No module named 'cppyy' (simulated))",
                    "pip install 'ckast[jit]'")


def test_emit_format_without_clang_format_says_which_extra_to_install(tmp_path):
    out = tmp_path / "out"
    result = ckast(tmp_path, "emit", "--config", str(ROOT / "examples" / "gemm_standard.json"), "-o", str(out),
                   "--format", PYTHONPATH=missing(tmp_path, "clang_format"))
    assert_one_line(result, "formatting needs the pinned clang-format: pip install 'ckast[format]'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shim"]  # nothing written, no cache either
