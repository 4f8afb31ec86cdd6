"""What a newcomer meets first: nothing left beside an output folder, empty selections and refused configs
said and exit 2, a read-only parent explained, one shared --help vocabulary, extras for the heavy
packages, configure-time checks in the CMake files, and a template cache read only where a run needs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import tomllib

import pytest
from click.testing import CliRunner

import ckast
from ckast.catalog import load_profile
from ckast.cli import main
from ckast.config import load_data
from ckast.cores import default_jobs
from ckast.library import rule_set_names
from ckast.nodes.format import PINNED_VERSION
from ckast.output import OutputError, Transaction
from ckast.output.lock import DirectoryLock, lock_path
from ckast.render import Renderer, cache
from ckast.select.serving.problem_read import gemm_problem

from .conftest import EXAMPLES, ROOT

GEMM = EXAMPLES / "gemm_standard.json"
NO_GFX1100 = ("--rule-set", "fp16_rcr_essential", "--arch", "gfx1100")
"""A selection of 6 configs, every one refused on gfx1100 (by warp_tile.supported)."""


def run(*args: str, **env: str):
    return CliRunner().invoke(main, list(map(str, args)), env=env or None)


def one_line(result, status: int) -> str:
    """The one line a refused command printed on stderr (nothing on stdout)."""
    assert result.exit_code == status, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and result.stdout == "", result.output
    return lines[0]


# --- nothing left beside the output folder -------------------------------------------------------------

def test_a_run_leaves_nothing_beside_its_folder(tmp_path):
    assert run("emit", "--config", GEMM, "-o", tmp_path / "out").exit_code == 0
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    (tmp_path / "out" / "manifest.json").unlink()  # every file there is now the user's: the next run is refused
    assert "was not written by ckast" in one_line(run("emit", "--config", GEMM, "-o", tmp_path / "out"), 1)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_folder_never_created_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError), Transaction(tmp_path / "never"):
        raise RuntimeError("the run fails before it commits")
    assert list(tmp_path.iterdir()) == []


def test_a_waiting_run_never_holds_the_lock_beside_another_after_the_file_is_deleted(tmp_path):
    """The holder deletes the lock file as it lets go: the run that waited on it must take the lock on the
    file now at the path, which a third run may have made and locked meanwhile."""
    out = tmp_path / "out"
    first = DirectoryLock(out).__enter__()
    waiting, inside, leave = threading.Event(), threading.Event(), threading.Event()

    def second() -> None:
        with DirectoryLock(out, on_wait=lambda _: waiting.set()):
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=second)
    thread.start()
    assert waiting.wait(10)
    first.__exit__()
    try:
        with DirectoryLock(out, wait=False):
            assert not inside.wait(0.3), "two runs hold the lock"
    except BlockingIOError:  # the waiter took it first
        pass
    assert inside.wait(10)
    with pytest.raises(BlockingIOError):
        DirectoryLock(out, wait=False).__enter__()
    leave.set()
    thread.join(10)
    assert not lock_path(out).exists()


# --- a read-only parent --------------------------------------------------------------------------------

def test_a_read_only_parent_says_why(tmp_path):
    parent = tmp_path / "ro"
    (parent / "out").mkdir(parents=True)
    parent.chmod(0o555)
    try:
        line = one_line(run("emit", "--config", GEMM, "-o", parent / "out"), 1)
        assert f"its parent directory {parent} is read-only, and ckast writes there" in line
        assert "swaps the two in one step" in line and f"(e.g. {parent / 'out' / 'kernels'})" in line
        line = one_line(run("emit", "--config", GEMM, "-o", parent / "new"), 1)
        assert line.endswith(f"{parent / 'new'}: cannot be created: its parent directory {parent} is read-only")
    finally:
        parent.chmod(0o755)
    assert [p.name for p in parent.iterdir()] == ["out"] and not any((parent / "out").iterdir())


# --- empty results -------------------------------------------------------------------------------------

def test_a_selection_matching_no_config_is_refused():
    line = one_line(run("list", "--rule-set", "tiny", "--arch", "gfx942", "--ndim", "1"), 2)
    assert line == "no kernel of rule set tiny on gfx942, CK API ck-2025.11: no config matches --ndim 1"
    line = one_line(run("list", "--rule-set", "default", "--arch", "gfx942", "--ndim", "4"), 2)
    assert line == "ndim 4 is no spatial rank of a grouped convolution; known: 1, 2, 3"


def test_a_selection_whose_configs_are_all_refused_is_refused_with_the_main_rule(tmp_path):
    line = one_line(run("list", *NO_GFX1100), 2)
    assert line.startswith("no kernel of rule set fp16_rcr_essential on gfx1100, CK API ck-2025.11: 0 of 6 configs "
                           "accepted, 6 refused (all by rule warp_tile.supported: ")
    assert line.endswith("see `ckast list --rejected` with the same options")
    with pytest.raises(ckast.EmptyLibrary) as caught:  # from Python, what Python has to look at
        ckast.generate_library(tmp_path / "lib", "fp16_rcr_essential", "gfx1100")
    assert str(caught.value).endswith("see the `refused` of `ckast.build_library` with the same arguments")
    assert one_line(run("list", *NO_GFX1100, "--json"), 2) == line
    assert one_line(run("generate", *NO_GFX1100, "-o", tmp_path / "lib"), 2) == line
    assert list(tmp_path.iterdir()) == []
    rejected = run("list", *NO_GFX1100, "--rejected")  # what the line points to
    assert rejected.exit_code == 0 and "warp_tile.supported (6): " in rejected.stdout


def test_explain_says_accepted_or_refused(tmp_path):
    accepted = run("explain", GEMM, "--index", "0")
    assert accepted.exit_code == 0 and accepted.stdout.splitlines()[-1].startswith("accepted: gemm_fp16_rcr_")
    refused_cfg = tmp_path / "refused.json"
    refused_cfg.write_text(json.dumps(dict(json.loads(GEMM.read_text())["kernels"][0], arch="gfx1100")))
    refused = run("explain", refused_cfg)
    assert refused.exit_code == 2 and "FAIL waves.supported" in refused.stdout
    name = refused.stdout.split()[1]  # kernel NAME  (from FILE)
    assert refused.stderr.splitlines() == [
        f"refused: {name} fails rules waves.supported, warp_tile.supported, wmma.warp_tile_mn"]
    data = json.loads(run("explain", refused_cfg, "--json").stdout)
    assert data["refused_by"] == ["waves.supported", "warp_tile.supported", "wmma.warp_tile_mn"]
    assert [r["id"] for r in data["rules"] if r["status"] == "fail"] == data["refused_by"]
    assert data["config"]["arch"] == "gfx1100" and data["graph"][-1]["construct"] == "launch"
    assert json.loads(run("explain", GEMM, "--index", "0", "--json").stdout)["refused_by"] == []


# --- --help --------------------------------------------------------------------------------------------

def test_h_is_help_everywhere():
    for args in ([], ["emit"], ["select", "train"]):
        result = run(*args, "-h")
        assert result.exit_code == 0 and result.stdout.startswith("Usage: ") and "-h, --help" in result.stdout


def test_shared_options_say_one_thing_once():
    names = rule_set_names()
    listed = run("list", "--rule-sets").stdout.splitlines()
    assert [line.split()[0] for line in listed] == list(names)
    jobs = "[default: the cores ckast may run on]"
    for command in (["generate"], ["list"], ["explain"], ["diff"], ["select", "train"], ["check"]):
        text = " ".join(run(*command, "-h").stdout.split())
        assert "|".join(names[:3]) not in text
        if command[0] in ("generate", "list", "explain", "diff"):
            assert "--rule-set NAME" in text and "`ckast list --rule-sets` lists them" in text
            assert "`ckast check` compiles against" in text and "[default: ck-2025.11]" in text
        if command[0] in ("generate", "diff", "select", "check"):
            assert jobs in text, command
    assert default_jobs() == len(os.sched_getaffinity(0))


def test_usage_names_the_options_a_command_requires():
    emit = run("emit", "-h").stdout
    assert "emit --config FILE -o DIR [OPTIONS] [FILE]..." in emit and "CONFIG" not in emit and "MORE" not in emit
    assert "check --compile HEADER [OPTIONS] [HEADER]..." in run("check", "-h").stdout
    bad = run("check", "--compile", GEMM, "--arch", "gfx9999")
    assert bad.exit_code == 2 and "Invalid value for '--arch'" in bad.stderr


def test_shell_completion_is_documented_and_works():
    assert '_CKAST_COMPLETE=bash_source ckast' in run("-h").stdout
    result = CliRunner().invoke(main, [], prog_name="ckast",
                                env={"_CKAST_COMPLETE": "bash_complete", "COMP_WORDS": "ckast li", "COMP_CWORD": "1"})
    assert result.stdout.split() == ["plain,list"]


def test_a_problem_takes_ck_lowercase_sizes(tmp_path):
    assert gemm_problem({"m": "64", "n": "128", "k": "256"}) == gemm_problem({"M": 64, "N": 128, "K": 256})
    assert run("emit", "--config", GEMM, "-o", tmp_path / "lib").exit_code == 0
    select = ("select", "--library", tmp_path / "lib", "--layout", "rcr", "--problem")
    upper = run(*select, "M=4096,N=4096,K=4096")
    lower = run(*select, "m=4096,n=4096,k=4096")
    assert upper.exit_code == 0 and "gemm_fp16_rcr_" in upper.stdout  # the problem is echoed as given
    assert lower.stdout.replace("m=4096,n=4096,k=4096 (M=4096,N=4096,K=4096; ", "M=4096,N=4096,K=4096 (", 1) \
        == upper.stdout  # as given, then as read
    both = run(*select, "M=64,m=64,N=64,K=64")
    assert both.exit_code == 2 and "m: give m or M, not both" in both.stderr


def test_api_detect_without_a_tree_says_which_option_to_pass():
    line = one_line(run("api", "detect", CK_TILE_INCLUDE="/nonexistent"), 1)
    assert line == "ckast: CK_TILE_INCLUDE /nonexistent is not a CK include tree (no ck_tile/core.hpp)"


# --- install weight ------------------------------------------------------------------------------------

def test_cppyy_and_clang_format_are_extras_that_test_brings():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    assert "cppyy" not in core and "clang-format" not in core
    extras = project["optional-dependencies"]
    assert extras["jit"] == ["cppyy>=3.1"] and extras["format"] == [f"clang-format=={PINNED_VERSION}"]
    assert "ckast[api,select,jit,format,docs]" in extras["test"]


# --- CMake checks at configure time --------------------------------------------------------------------

needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")


def configure(project: str, tmp_path, *defines: str, **env: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "project"
    source.mkdir(exist_ok=True)
    (source / "CMakeLists.txt").write_text(project)
    return subprocess.run(["cmake", "-S", source, "-B", tmp_path / "build", *defines], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=60)


@needs_cmake
def test_ckast_add_kernels_checks_the_ck_include_it_is_given(tmp_path):
    from ckast.api.markers import marker_headers

    assert run("emit", "--config", GEMM, "-o", tmp_path / "lib").exit_code == 0
    (tmp_path / "ck" / "ck_tile").mkdir(parents=True)
    project = ("cmake_minimum_required(VERSION 3.21)\nproject(p LANGUAGES NONE)\n"
               f'include("{tmp_path / "lib"}/ckast_kernels.cmake")\n'
               "ckast_add_kernels(k ${ARGS})\n"
               "get_target_property(dirs k INCLUDE_DIRECTORIES)\nmessage(STATUS \"dirs ${dirs}\")\n")
    bad = configure(project, tmp_path, f"-DARGS=LANGUAGE;CXX;CK_INCLUDE;{tmp_path / 'ck'}")
    assert bad.returncode != 0 and "holds no ck_tile/core.hpp" in " ".join(bad.stderr.split())
    assert "`ckast check --print-ck-include` prints it" in " ".join(bad.stderr.split())
    (tmp_path / "ck" / "ck_tile" / "core.hpp").write_text("")
    for header in marker_headers(["ck-2025.11"]):  # a tree of the kernels' CK API (see test_output_cmake.py)
        (tmp_path / "ck" / header).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "ck" / header).write_text("")
    good = configure(project, tmp_path, f"-DARGS=LANGUAGE;CXX;CK_INCLUDE;{tmp_path / 'ck'}")
    assert f"-- dirs {tmp_path / 'lib'};{tmp_path / 'ck'}" in good.stdout  # configured (generating needs CXX)
    if not os.path.isfile("/opt/rocm/include/ck_tile/core.hpp"):  # HIP without CK_INCLUDE: ROCm's is searched
        hip = configure(project, tmp_path, "-DARGS=LANGUAGE;HIP", ROCM_PATH=str(tmp_path / "no-rocm"))
        assert "no CK Tile headers (ck_tile/core.hpp) where the HIP compiler looks" in " ".join(hip.stderr.split())


@needs_cmake
@pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")
def test_the_cmake_example_checks_the_device_library_at_configure_time(tmp_path):
    assert run("emit", "--config", GEMM, "-o", tmp_path / "lib").exit_code == 0
    result = subprocess.run(["cmake", "-S", ROOT / "examples" / "cmake", "-B", tmp_path / "build",
                             f"-DCKAST_OUTPUT={tmp_path / 'lib'}", f"-DCK_INCLUDE={tmp_path}",
                             f"-DCKAST_DEVICE_LIBS={tmp_path / 'none'}"], capture_output=True, text=True, timeout=60)
    said = " ".join(result.stderr.split())
    assert result.returncode != 0 and f"no ockl.bc in CKAST_DEVICE_LIBS '{tmp_path / 'none'}'" in said
    assert "apt-get install rocm-device-libs" in said


# --- the template cache --------------------------------------------------------------------------------

def test_a_render_reads_only_the_shapes_it_meets(tmp_path, monkeypatch):
    configs = [k.config for k in load_data(json.loads(GEMM.read_text()))]
    conv = [k.config for k in load_data(json.loads((EXAMPLES / "conv_directions.json").read_text()))]
    first = Renderer(cache_path=tmp_path)
    texts = [first.render(c, load_profile(c.ck_api)) for c in configs]
    for c in conv:
        first.render(c, load_profile(c.ck_api))
    first.save()
    shapes = len(list(tmp_path.iterdir())) - 1
    assert shapes >= len(configs) + len(conv) - 1  # at least one file per shape, and structural.json
    read = []
    monkeypatch.setattr(cache, "_read", lambda path, real=cache._read: read.append(path.name) or real(path))
    second = Renderer(cache_path=tmp_path)
    assert second.render(configs[0], load_profile(configs[0].ck_api)) == texts[0] and second.recorded == 0
    assert read[0] == cache.STRUCTURAL and len(read) == 2  # the structural knobs and the kernel's shape
