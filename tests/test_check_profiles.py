"""`ckast check` compares the CK API profile of the headers (their manifest's `ck_api`) with the profile the CK
tree matches before it compiles anything: a mismatch is one line per folder with the fix and exit status 2, or,
with --allow-api-mismatch, a warning before the compiles. A fake clang compiles; the CK trees are fake too
(one matches no profile, as libclang parses it), or the tree's reports are given (the line naming the profile
it matches)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckast.api import Report
from ckast.api.compare import Row
from ckast.check.profiles import header_profiles, mismatch_lines
from ckast.cli import main

from .conftest import GOLDEN, ROOT
from .test_check_toolchain import make_ck_tree, make_fake_clang, make_hip_tree
from .test_environment import ckast, missing

GEMM = ROOT / "examples" / "gemm_standard.json"
needs_libclang = pytest.mark.skipif(importlib.util.find_spec("clang") is None, reason="pip install libclang")


def emit(out: Path, profile: str) -> list[Path]:
    run = CliRunner().invoke(main, ["emit", "--config", str(GEMM), "--ck-api", profile, "-o", str(out)])
    assert run.exit_code == 0, run.output
    return sorted(out.glob("*.hpp"))


@pytest.fixture
def fake(tmp_path: Path) -> dict[str, str]:
    """The environment of a fake clang (which logs each compile), fake HIP headers and a fake CK tree."""
    make_ck_tree(tmp_path / "ck")
    return {"CKAST_CLANG": str(make_fake_clang(tmp_path / "bin", trace=tmp_path / "trace")),
            "HIP_PATH": str(make_hip_tree(tmp_path / "hip"))}


def compiles(tmp_path: Path) -> int:
    trace = tmp_path / "trace"
    return trace.read_text().count("start ") if trace.exists() else 0


@needs_libclang
@pytest.mark.parametrize("ninja", [False, True])
def test_headers_the_tree_does_not_fit_are_refused_before_any_compile(tmp_path, fake, ninja):
    emit(tmp_path / "gemm", "ck-2025.11")
    ninja_args = ["--ninja", str(tmp_path / "checks.ninja")] if ninja else []
    result = ckast(tmp_path, "check", "--compile", *map(str, sorted((tmp_path / "gemm").glob("*.hpp"))),
                   "--ck-include", str(tmp_path / "ck"), *ninja_args, **fake)
    assert result.returncode == 2 and result.stdout == "", result
    assert result.stderr.splitlines() == [
        f"{tmp_path / 'gemm'}/ was written for CK API ck-2025.11, but {tmp_path / 'ck'} matches no CK API profile "
        f"(136 mismatches with ck-2025.11, listed by `ckast api check --ck-include {tmp_path / 'ck'} --ck-api "
        f"ck-2025.11`): pass --ck-include a CK tree of ck-2025.11; --allow-api-mismatch compiles them anyway"]
    assert compiles(tmp_path) == 0 and not (tmp_path / "checks.ninja").exists()


@needs_libclang
def test_allow_api_mismatch_warns_and_compiles(tmp_path, fake):
    headers = emit(tmp_path / "gemm", "ck-2025.11")
    result = ckast(tmp_path, "check", "--compile", *map(str, headers), "--ck-include", str(tmp_path / "ck"),
                   "--allow-api-mismatch", **fake)
    assert result.returncode == 0, result
    warning, = result.stderr.splitlines()
    assert warning.startswith(f"ckast: warning: {tmp_path / 'gemm'}/ was written for CK API ck-2025.11, but ")
    assert warning.endswith("pass --ck-include a CK tree of ck-2025.11")
    assert result.stdout.splitlines()[-1] == "2 passed, 0 failed" and compiles(tmp_path) == 2


def test_without_libclang_the_profile_is_not_compared_and_that_is_said(tmp_path, fake):
    headers = emit(tmp_path / "gemm", "ck-2025.11")
    result = ckast(tmp_path, "check", "--compile", *map(str, headers), "--ck-include", str(tmp_path / "ck"),
                   PYTHONPATH=missing(tmp_path, "clang"), **fake)
    assert result.returncode == 0, result
    assert result.stderr.startswith(f"ckast: warning: the CK API profile of {tmp_path / 'ck'} is not compared with "
                                    "the headers': libclang's Python bindings are not installed")
    assert len(result.stderr.splitlines()) == 1 and compiles(tmp_path) == 2


def reports(matching: str, other: str) -> list[Report]:
    """What `detect` gives for a tree that matches `matching` and not `other` (closest first)."""
    row = Row("ck_tile::CShuffleEpilogueProblem", "", "count", "24", "26")
    return [Report(matching, [], 114, 0, 15, 30), Report(other, [row], 123, 0, 15, 30)]


def test_the_line_names_the_profile_the_tree_matches_and_the_fix(tmp_path, fake, monkeypatch):
    from ckast.api import tree

    headers = emit(tmp_path / "gemm", "ck-2026.06")
    monkeypatch.setattr(tree, "detect", lambda ck_include: reports("ck-2025.11", "ck-2026.06"))
    for key, value in fake.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke(main, ["check", "--compile", "gemm/" + headers[0].name, "gemm/" + headers[1].name,
                                    "--ck-include", "ck"])
    assert run.exit_code == 2 and run.stdout == ""
    assert run.stderr.splitlines() == [
        "gemm/ was written for CK API ck-2026.06, but ck matches ck-2025.11: emit again with --ck-api ck-2025.11 (or "
        "--ck-include ck), or pass --ck-include a CK tree of ck-2026.06; --allow-api-mismatch compiles them anyway"]
    assert compiles(tmp_path) == 0
    monkeypatch.setattr(tree, "detect", lambda ck_include: reports("ck-2026.06", "ck-2025.11"))
    assert mismatch_lines(headers, tmp_path / "ck") == []  # the tree of their profile


def test_the_profile_of_a_header_is_its_manifests_or_its_suffix(tmp_path):
    headers = emit(tmp_path / "new", "ck-2026.06") + emit(tmp_path / "old", "ck-2025.11")
    loose = tmp_path / "loose"
    loose.mkdir()
    shutil.copy(headers[0], loose / "kernel.hpp")  # no manifest: not compared
    shutil.copy(GOLDEN / "gemm" / "standard_ck-2025.11.hpp", loose)
    found = header_profiles([*headers, loose / "kernel.hpp", loose / "standard_ck-2025.11.hpp"])
    assert found == {(str(tmp_path / "new"), "ck-2026.06"): headers[:2],
                     (str(tmp_path / "old"), "ck-2025.11"): headers[2:],
                     (str(loose), "ck-2025.11"): [loose / "standard_ck-2025.11.hpp"]}
    assert mismatch_lines([loose / "kernel.hpp"], tmp_path / "no-tree") == []  # nothing to compare: no parse


@pytest.mark.ck_compile
def test_the_readme_gemm_against_the_downloaded_ck_is_one_line_about_the_profile(tmp_path, monkeypatch):
    """The README's gemm/ (ck-2026.06) against the wheel's CK (ck-2025.11): the profile line, not clang's errors
    (nothing compiles); emitted with --ck-include that tree, the same config fits it."""
    from ckast.check.toolchain import find_ck_include

    ck = find_ck_include()
    monkeypatch.chdir(tmp_path)
    result = ckast(tmp_path, "check", "--compile", "gemm/" + emit(tmp_path / "gemm", "ck-2026.06")[0].name,
                   CK_TILE_INCLUDE=str(ck))
    assert (result.returncode, result.stdout) == (2, ""), result
    assert result.stderr.splitlines() == [
        f"gemm/ was written for CK API ck-2026.06, but {ck} matches ck-2025.11: emit again with --ck-api ck-2025.11 "
        f"(or --ck-include {ck}), or pass --ck-include a CK tree of ck-2026.06; --allow-api-mismatch compiles them "
        "anyway"]
    run = CliRunner().invoke(main, ["emit", "--config", str(GEMM), "--ck-include", str(ck), "-o",
                                    str(tmp_path / "fit")])
    assert run.exit_code == 0 and run.stderr == f"ckast: {ck} matches CK API ck-2025.11\n"
    fits = ckast(tmp_path, "check", "--compile", *map(str, sorted((tmp_path / "fit").glob("*.hpp"))), "--ninja",
                 str(tmp_path / "checks.ninja"), CK_TILE_INCLUDE=str(ck))  # written, not compiled
    assert fits.returncode == 0 and fits.stderr == "", fits
