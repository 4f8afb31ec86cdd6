"""Tests for ckast.check.toolchain and ckast.check.runner.

All tests but the ``ck_compile`` one run without clang: they use temporary include
trees, a fake wheel and a fake compiler script.
"""

import os
import shutil
import stat
import sys
import zipfile
from pathlib import Path

import pytest

from ckast.check import toolchain as tc
from ckast.check.runner import CompileResult, compile_many, compile_one
from ckast.check.toolchain import (
    AITER_CK_PREFIX,
    Toolchain,
    ToolchainError,
    fetch_aiter_ck,
    find_ck_include,
    find_clang,
    find_hip,
)

# --------------------------------------------------------------------------- helpers


def make_ck_tree(root: Path) -> Path:
    (root / "ck_tile").mkdir(parents=True)
    (root / "ck_tile" / "core.hpp").write_text("#pragma once\n")
    return root


def make_hip_tree(root: Path) -> Path:
    (root / tc.HIP_RUNTIME).parent.mkdir(parents=True)
    (root / tc.HIP_RUNTIME).write_text("#pragma once\n")
    return root


def write_wheel(dest: Path, members: dict[str, str]) -> Path:
    wheel = dest / f"amd_aiter-{tc.AITER_VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return wheel


GOOD_WHEEL = {
    AITER_CK_PREFIX: "",  # directory entry
    AITER_CK_PREFIX + "ck_tile/core.hpp": "#pragma once // core\n",
    AITER_CK_PREFIX + "ck_tile/ops/gemm.hpp": "#pragma once // gemm\n",
    AITER_CK_PREFIX + "ck/ck.hpp": "#pragma once\n",
    "aiter/__init__.py": "",
    "aiter_meta/3rdparty/composable_kernel/README.md": "not under include/\n",
}

FAKE_CLANG = """\
#!{python} -S
# Fake clang: answers --version / -print-resource-dir; otherwise acts on directives
# in the TU (last argument): sleep=SECONDS, alloc=MIB, warn, fail.
import sys, time
args = sys.argv[1:]
if args == ["--version"]:
    print("Debian clang version {version} (fake)")
    sys.exit(0)
if args == ["-print-resource-dir"]:
    print("/fake/resource")
    sys.exit(0)
tu = args[-1]
trace = {trace!r}
if trace:
    with open(trace, "a") as f:
        f.write(f"start {{tu}} {{time.time()}}\\n")
directives = open(tu).read().split()
ballast = b""
for d in directives:
    if d.startswith("sleep="):
        time.sleep(float(d[6:]))
    elif d.startswith("alloc="):
        ballast = b"x" * (int(d[6:]) << 20)
if "-o" in args:
    out = args[args.index("-o") + 1]
    open(out, "w").write("; asm\\n")
    if trace:
        with open(trace, "a") as f:
            f.write(f"output {{out}}\\n")
if "warn" in directives:
    print(f"{{tu}}:2:3: warning: unused thing [-Wunused]")
if trace:
    with open(trace, "a") as f:
        f.write(f"end {{tu}} {{time.time()}}\\n")
if "fail" in directives:
    for i in range(10):
        print(f"{{tu}}:1:1: error: boom {{i}}")
    print("  some source line with error in it")
    print("10 errors generated.")
    sys.exit(1)
"""


def make_fake_clang(directory: Path, name: str = "clang++-19", version: str = "19.1.7",
                    trace: Path | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(FAKE_CLANG.format(python=sys.executable, version=version,
                                      trace=str(trace) if trace else ""))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def fake_toolchain(tmp_path: Path, trace: Path | None = None) -> Toolchain:
    return Toolchain(
        clang=make_fake_clang(tmp_path / "bin", trace=trace),
        resource_dir=tmp_path / "res",
        ck_include=tmp_path / "ck",
    )


def write_tu(directory: Path, name: str, *directives: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    tu = directory / name
    tu.write_text(" ".join(directives) + "\n")
    return tu


@pytest.fixture
def ck_env(tmp_path, monkeypatch):
    """Redirect ROCm root and user cache into tmp_path; forbid real downloads."""
    monkeypatch.setattr(tc, "ROCM_ROOT", tmp_path / "rocm")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CK_TILE_INCLUDE", raising=False)

    def no_download(dest: Path) -> Path:
        raise AssertionError("unexpected download")

    monkeypatch.setattr(tc, "download_aiter_wheel", no_download)
    return tmp_path


def cache_tree(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "ckast" / f"ck-aiter-{tc.AITER_VERSION}" / "include"


# --------------------------------------------------------------------------- CK include discovery


def test_include_explicit_beats_env_rocm_and_cache(ck_env, monkeypatch):
    explicit = make_ck_tree(ck_env / "explicit")
    monkeypatch.setenv("CK_TILE_INCLUDE", str(make_ck_tree(ck_env / "env")))
    make_ck_tree(ck_env / "rocm" / "include")
    make_ck_tree(cache_tree(ck_env))
    assert find_ck_include(explicit) == explicit


def test_include_env_beats_rocm_and_cache(ck_env, monkeypatch):
    env = make_ck_tree(ck_env / "env")
    monkeypatch.setenv("CK_TILE_INCLUDE", str(env))
    make_ck_tree(ck_env / "rocm" / "include")
    make_ck_tree(cache_tree(ck_env))
    assert find_ck_include() == env


def test_include_rocm_beats_cache(ck_env):
    rocm = make_ck_tree(ck_env / "rocm" / "include")
    make_ck_tree(cache_tree(ck_env))
    assert find_ck_include() == rocm


def test_include_rocm_without_ck_tile_is_skipped(ck_env):
    (ck_env / "rocm" / "include").mkdir(parents=True)
    cached = make_ck_tree(cache_tree(ck_env))
    assert find_ck_include(download=False) == cached


def test_include_existing_cache_used_without_download(ck_env):
    cached = make_ck_tree(cache_tree(ck_env))
    assert find_ck_include() == cached
    assert find_ck_include(download=False) == cached


def test_include_broken_cache_tree_is_reported(ck_env):
    cache_tree(ck_env).mkdir(parents=True)
    with pytest.raises(ToolchainError, match="delete it"):
        find_ck_include()


def test_include_downloads_into_cache_when_nothing_else(ck_env, monkeypatch):
    monkeypatch.setattr(tc, "download_aiter_wheel", lambda dest: write_wheel(dest, GOOD_WHEEL))
    found = find_ck_include()
    assert found == cache_tree(ck_env)
    assert (found / "ck_tile" / "core.hpp").is_file()


def test_include_nothing_and_no_download_raises(ck_env):
    with pytest.raises(ToolchainError, match="CK_TILE_INCLUDE"):
        find_ck_include(download=False)


def test_include_invalid_explicit_names_path(ck_env):
    bad = ck_env / "not-ck"
    bad.mkdir()
    make_ck_tree(ck_env / "rocm" / "include")
    with pytest.raises(ToolchainError, match=str(bad)):
        find_ck_include(bad)


def test_include_invalid_env_names_variable_and_path(ck_env, monkeypatch):
    bad = ck_env / "missing"
    monkeypatch.setenv("CK_TILE_INCLUDE", str(bad))
    with pytest.raises(ToolchainError, match=f"CK_TILE_INCLUDE.*{bad}"):
        find_ck_include()


# --------------------------------------------------------------------------- fetch_aiter_ck


def test_fetch_extracts_only_include_members(tmp_path, monkeypatch):
    calls = []

    def fake_download(dest: Path) -> Path:
        calls.append(dest)
        return write_wheel(dest, GOOD_WHEEL)

    monkeypatch.setattr(tc, "download_aiter_wheel", fake_download)
    root = tmp_path / "cache-root"
    got = fetch_aiter_ck(root)
    assert got == root / f"ck-aiter-{tc.AITER_VERSION}" / "include"
    files = sorted(p.relative_to(got).as_posix() for p in got.rglob("*") if p.is_file())
    assert files == ["ck/ck.hpp", "ck_tile/core.hpp", "ck_tile/ops/gemm.hpp"]
    assert (got / "ck_tile" / "ops" / "gemm.hpp").read_text() == "#pragma once // gemm\n"
    assert [p.name for p in got.parent.iterdir()] == ["include"]  # no staging left behind
    assert len(calls) == 1 and not calls[0].exists()  # download dir cleaned up


def test_fetch_default_root_follows_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(tc, "download_aiter_wheel", lambda dest: write_wheel(dest, GOOD_WHEEL))
    assert fetch_aiter_ck() == tmp_path / "xdg" / "ckast" / f"ck-aiter-{tc.AITER_VERSION}" / "include"


def test_fetch_reuses_existing_tree_without_download(tmp_path, monkeypatch):
    existing = make_ck_tree(tmp_path / f"ck-aiter-{tc.AITER_VERSION}" / "include")

    def no_download(dest: Path) -> Path:
        raise AssertionError("unexpected download")

    monkeypatch.setattr(tc, "download_aiter_wheel", no_download)
    assert fetch_aiter_ck(tmp_path) == existing


def _failing_download(dest: Path) -> Path:
    raise ToolchainError("could not download (simulated)")


def _wheel_without_core(dest: Path) -> Path:
    return write_wheel(dest, {AITER_CK_PREFIX + "ck_tile/half.hpp": "// only part of a tree\n"})


@pytest.mark.parametrize("download", [_failing_download, _wheel_without_core])
def test_fetch_failure_leaves_no_partial_tree(tmp_path, monkeypatch, download):
    monkeypatch.setattr(tc, "download_aiter_wheel", download)
    with pytest.raises(ToolchainError):
        fetch_aiter_ck(tmp_path)
    assert list((tmp_path / f"ck-aiter-{tc.AITER_VERSION}").iterdir()) == []


def test_fetch_rejects_member_escaping_the_tree(tmp_path, monkeypatch):
    members = dict(GOOD_WHEEL)
    members[AITER_CK_PREFIX + "../../evil.hpp"] = "x"
    monkeypatch.setattr(tc, "download_aiter_wheel", lambda dest: write_wheel(dest, members))
    with pytest.raises(ToolchainError, match="unsafe member"):
        fetch_aiter_ck(tmp_path / "root")
    assert list((tmp_path / "root").rglob("evil.hpp")) == []
    assert list((tmp_path / "root" / f"ck-aiter-{tc.AITER_VERSION}").iterdir()) == []


def test_fetch_lost_race_keeps_the_winners_tree(tmp_path, monkeypatch):
    target = tmp_path / f"ck-aiter-{tc.AITER_VERSION}" / "include"

    def download_while_another_run_finishes(dest: Path) -> Path:
        make_ck_tree(target)  # the parallel run renames its tree into place first
        (target / "winner").write_text("")
        return write_wheel(dest, GOOD_WHEEL)

    monkeypatch.setattr(tc, "download_aiter_wheel", download_while_another_run_finishes)
    assert fetch_aiter_ck(tmp_path) == target
    assert (target / "winner").exists()
    assert [p.name for p in target.parent.iterdir()] == ["include"]


# --------------------------------------------------------------------------- find_clang / Toolchain


@pytest.fixture
def clang_env(tmp_path, monkeypatch):
    """An empty PATH directory and no CKAST_CLANG."""
    bin_dir = tmp_path / "path-bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("CKAST_CLANG", raising=False)
    return bin_dir


def test_find_clang_explicit_path(tmp_path, clang_env):
    clang = make_fake_clang(tmp_path / "elsewhere", name="my-clang")
    assert find_clang(str(clang)) == clang


def test_find_clang_env_beats_path(tmp_path, clang_env, monkeypatch):
    make_fake_clang(clang_env, name="clang++-19")
    env_clang = make_fake_clang(tmp_path / "env", name="clang++")
    monkeypatch.setenv("CKAST_CLANG", str(env_clang))
    assert find_clang() == env_clang


def test_find_clang_prefers_clang19_over_clang(clang_env):
    make_fake_clang(clang_env, name="clang++")
    assert find_clang() == clang_env / "clang++"
    make_fake_clang(clang_env, name="clang++-19")
    assert find_clang() == clang_env / "clang++-19"


def test_find_clang_too_old(clang_env):
    make_fake_clang(clang_env, name="clang++", version="14.0.6")
    with pytest.raises(ToolchainError, match="clang 14.*>= 17"):
        find_clang()


def test_find_clang_missing_gives_install_hint(tmp_path, clang_env):
    with pytest.raises(ToolchainError, match="apt-get install clang-19 lld-19 libamdhip64-dev"):
        find_clang()
    with pytest.raises(ToolchainError, match="nope"):
        find_clang(str(tmp_path / "nope"))


def test_discover_builds_toolchain(tmp_path, clang_env, monkeypatch):
    clang = make_fake_clang(clang_env)
    ck = make_ck_tree(tmp_path / "ck")
    hip = make_hip_tree(tmp_path / "hip")
    monkeypatch.setenv("HIP_PATH", str(hip))
    toolchain = Toolchain.discover(ck_include=ck, arch="gfx90a")
    assert toolchain == Toolchain(clang=clang, resource_dir=Path("/fake/resource"),
                                  ck_include=ck, arch="gfx90a", hip=hip)
    assert f"--hip-path={hip}" in toolchain.command(Path("a.cpp"), "syntax", [], None)


@pytest.fixture
def hip_env(tmp_path, monkeypatch):
    """No HIP_PATH or ROCM_PATH; ROCm and system roots redirected into tmp_path."""
    for var in ("HIP_PATH", "ROCM_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(tc, "ROCM_ROOT", tmp_path / "rocm")
    monkeypatch.setattr(tc, "SYSTEM_ROOT", tmp_path / "usr")
    return tmp_path


def test_find_hip_order(hip_env, monkeypatch):
    system, rocm = make_hip_tree(hip_env / "usr"), make_hip_tree(hip_env / "rocm")
    assert find_hip() == rocm
    monkeypatch.setenv("ROCM_PATH", str(make_hip_tree(hip_env / "rocm-env")))
    assert find_hip() == hip_env / "rocm-env"
    monkeypatch.setenv("HIP_PATH", str(make_hip_tree(hip_env / "hip-env")))
    assert find_hip() == hip_env / "hip-env"
    shutil.rmtree(rocm)
    monkeypatch.delenv("HIP_PATH")
    monkeypatch.delenv("ROCM_PATH")
    assert find_hip() == system


def test_find_hip_missing_gives_install_hint(hip_env, monkeypatch):
    with pytest.raises(ToolchainError, match="no HIP headers .*apt-get install libamdhip64-dev"):
        find_hip()
    monkeypatch.setenv("HIP_PATH", str(hip_env))
    with pytest.raises(ToolchainError, match=f"HIP_PATH {hip_env} has no include/hip/hip_runtime.h"):
        find_hip()


def test_command_syntax_and_codegen():
    toolchain = Toolchain(clang=Path("/usr/bin/clang++-19"), resource_dir=Path("/res"),
                          ck_include=Path("/ck"))
    common = ["/usr/bin/clang++-19", "-x", "hip", "-std=c++20", "--offload-arch=gfx942",
              "--cuda-device-only", "-nogpulib", "-I/res", "-I/ck", "-I/gen"]
    syntax = toolchain.command(Path("/t/a.cpp"), "syntax", [Path("/gen")], None)
    assert syntax == [*common, "-fsyntax-only", "/t/a.cpp"]
    codegen = toolchain.command(Path("/t/a.cpp"), "codegen", [Path("/gen")], Path("/o/a.s"))
    assert codegen == [*common, "-O3", "-S", "-o", "/o/a.s", "/t/a.cpp"]


@pytest.mark.parametrize(("mode", "output"), [("syntax", Path("x.s")), ("codegen", None),
                                              ("obj", None)])
def test_command_rejects_bad_mode_or_output(mode, output):
    toolchain = Toolchain(clang=Path("c"), resource_dir=Path("r"), ck_include=Path("k"))
    with pytest.raises(ValueError):
        toolchain.command(Path("a.cpp"), mode, [], output)


# --------------------------------------------------------------------------- runner


def test_result_line_format():
    ok = CompileResult(source=Path("gen/x.hpp"), passed=True, seconds=14.23, peak_rss_mib=512.4,
                       errors=(), warnings=0, log="")
    assert ok.line() == "PASS  14.2s   512MiB  gen/x.hpp"
    bad = CompileResult(source=Path("y.hpp"), passed=False, seconds=3.96, peak_rss_mib=1536.0,
                        errors=("e",), warnings=0, log="")
    assert bad.line() == "FAIL   4.0s  1536MiB  y.hpp"


def test_compile_one_parses_failure(tmp_path):
    toolchain = fake_toolchain(tmp_path)
    tu = write_tu(tmp_path / "tus", "bad.cpp", "warn", "fail")
    result = compile_one(tu, toolchain, label=Path("gen/bad.hpp"))
    assert not result.passed
    assert result.source == Path("gen/bad.hpp")
    assert result.errors == tuple(f"{tu}:1:1: error: boom {i}" for i in range(8))
    assert result.warnings == 1
    assert "10 errors generated." in result.log
    assert result.peak_rss_mib > 0 and result.seconds > 0


def test_compile_one_codegen_removes_output(tmp_path):
    trace = tmp_path / "trace"
    toolchain = fake_toolchain(tmp_path, trace=trace)
    tu = write_tu(tmp_path / "tus", "ok.cpp")
    result = compile_one(tu, toolchain, mode="codegen")
    assert result.passed and result.errors == () and result.source == tu
    outputs = [line.split()[1] for line in trace.read_text().splitlines()
               if line.startswith("output ")]
    assert len(outputs) == 1 and outputs[0].endswith("ok.s")
    assert not Path(outputs[0]).exists() and not Path(outputs[0]).parent.exists()


def test_compile_one_reports_exit_status_without_error_lines(tmp_path):
    toolchain = Toolchain(clang=Path("/bin/false"), resource_dir=tmp_path, ck_include=tmp_path)
    result = compile_one(write_tu(tmp_path, "t.cpp"), toolchain)
    assert not result.passed
    assert result.errors == ("/bin/false exited with status 1",)


def _max_concurrency(trace: Path) -> int:
    events = []
    for line in trace.read_text().splitlines():
        kind, _, stamp = line.split()
        if kind in ("start", "end"):
            events.append((float(stamp), 1 if kind == "start" else -1))
    running = peak = 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        running += delta
        peak = max(peak, running)
    return peak


@pytest.mark.parametrize("parallel", [1, 2])
def test_compile_many_order_and_parallelism(tmp_path, parallel):
    trace = tmp_path / "trace"
    toolchain = fake_toolchain(tmp_path, trace=trace)
    specs = [
        ("slow.cpp", ["sleep=0.8"]),
        ("fail.cpp", ["sleep=0.05", "fail"]),
        ("big.cpp", ["sleep=0.05", "alloc=96"]),
        ("warn.cpp", ["sleep=0.05", "warn"]),
    ]
    jobs = [(write_tu(tmp_path / "tus", name, *d), Path("hdr") / name.replace(".cpp", ".hpp"))
            for name, d in specs]
    finished: list[Path] = []
    results = compile_many(jobs, toolchain, parallel=parallel,
                           on_result=lambda r: finished.append(r.source))

    assert [r.source for r in results] == [label for _, label in jobs]  # input order
    assert [r.passed for r in results] == [True, False, True, True]
    assert results[1].errors[0].endswith("error: boom 0") and len(results[1].errors) == 8
    assert results[3].warnings == 1
    assert results[0].seconds >= 0.8
    assert sorted(finished) == sorted(label for _, label in jobs)
    assert _max_concurrency(trace) == parallel
    # per-child peak RSS: only the allocating compile is large
    assert all(r.peak_rss_mib > 0 for r in results)
    assert results[2].peak_rss_mib > 96
    assert max(results[i].peak_rss_mib for i in (0, 1, 3)) < 64
    if parallel == 2:
        assert finished[-1] == jobs[0][1]  # the slow one ends last, though submitted first
    else:
        assert finished == [label for _, label in jobs]


def test_compile_many_rejects_zero_parallel(tmp_path):
    with pytest.raises(ValueError):
        compile_many([], fake_toolchain(tmp_path), parallel=0)


def test_compile_many_empty(tmp_path):
    assert compile_many([], fake_toolchain(tmp_path), parallel=2) == []


# --------------------------------------------------------------------------- real compile


@pytest.mark.ck_compile
def test_real_device_compile(tmp_path):
    try:
        clang = find_clang()
    except ToolchainError as exc:
        pytest.skip(f"no usable clang: {exc}")
    toolchain = Toolchain.discover(clang=str(clang))
    good = tmp_path / "good.cpp"
    good.write_text('#include "ck_tile/core.hpp"\n'
                    "[[maybe_unused]] static constexpr ck_tile::index_t x = 1;\n")
    bad = tmp_path / "bad.cpp"
    bad.write_text('#include "ck_tile/core.hpp"\n'
                   "[[maybe_unused]] static constexpr ck_tile::index_t x = ck_tile::no_such_name;\n")
    ok, broken = compile_many([(good, good), (bad, bad)], toolchain,
                              parallel=min(2, os.cpu_count() or 1))
    print(f"\n{ok.line()}\n{broken.line()}")
    assert ok.passed, ok.log
    assert ok.errors == () and ok.peak_rss_mib > 0
    assert not broken.passed
    assert broken.errors and "no_such_name" in broken.errors[0]
