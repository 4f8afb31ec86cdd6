"""Run stamps: every file of an output tree is a function of the inputs (a committed tree stays clean when
a fresh run regenerates it), while the stamp kept outside the tree still lets an identical rerun skip
everything (`ckast.output.stamp`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from click.testing import CliRunner

from ckast.cli import main
from ckast.output.stamp import run_key, stamp_path, up_to_date
from ckast.output.transaction import OLD_STAMP

from .conftest import EXAMPLES
from .kernels import output_tree

SMALL = ["--rule-set", "default", "--arch", "gfx942", "--datatype", "fp16", "--ndim", "2", "--ck-api", "ck-2026.06"]


def run(*args: str | Path, env: dict | None = None):
    result = CliRunner().invoke(main, [str(a) for a in args], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


def test_fresh_runs_write_the_same_bytes_and_no_path_of_the_machine(tmp_path):
    trees = []
    for name, jobs in (("a", "1"), ("b", "2")):
        run("generate", *SMALL, "-j", jobs, "-o", tmp_path / name)
        trees.append(output_tree(tmp_path / name))
    assert trees[0] == trees[1]
    assert set(trees[0]) >= {"manifest.json", "ckast_kernels.cmake"} and OLD_STAMP not in trees[0]
    assert not [p for p, data in trees[0].items() if str(tmp_path).encode() in data or b"/root" in data]
    emitted = []
    for name in ("c", "d"):
        run("emit", "--config", EXAMPLES / "gemm_standard.json", "-o", tmp_path / name)
        emitted.append(output_tree(tmp_path / name))
    assert emitted[0] == emitted[1]


def test_a_committed_tree_shows_no_change_after_a_fresh_regenerate(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    run("generate", *SMALL, "-j", "2", "-o", repo / "lib")
    git(repo, "add", "-A")  # the tree and what lies beside it (the lock file)
    git(repo, "commit", "-q", "-m", "generated")
    shutil.rmtree(repo / "lib")
    assert "files written" in run("generate", *SMALL, "-j", "2", "-o", repo / "lib")
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert "(up to date)" in run("generate", *SMALL, "-j", "2", "-o", repo / "lib")
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_the_stamp_lives_outside_the_tree_and_a_rerun_skips_everything(tmp_path):
    out = tmp_path / "lib"
    run("generate", *SMALL, "-o", out)
    record = json.loads(stamp_path(out).read_text())
    assert record["dir"] == str(out.resolve()) and record["summary"]["kernels"] == 43
    assert set(record["files"]) == set(output_tree(out))  # every file of the tree, the manifest included
    times = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    assert "(up to date)" in run("generate", *SMALL, "-o", out)
    assert times == {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    off = {"CKAST_CACHE_DIR": "off"}  # no cache directory: no stamp, every run in full (and still writes nothing)
    assert "0 files written, 138 unchanged" in (again := run("generate", *SMALL, "-o", out, env=off))
    assert "(up to date)" not in again


def test_up_to_date_only_reads_and_the_command_cleans_up(tmp_path):
    out = tmp_path / "lib"
    args = ["emit", "--config", EXAMPLES / "gemm_standard.json", "-o", out]
    run(*args)
    leftover = tmp_path / ".lib.ckast-stage"
    leftover.mkdir()
    key = run_key("emit", {"ck_api": None, "format": False, "chunk_size": 25}, [EXAMPLES / "gemm_standard.json"])
    assert up_to_date(out, key) is not None  # the key emit builds, through the one function
    assert leftover.is_dir()
    assert "(up to date)" in run(*args)
    assert not leftover.exists()


def test_the_stamp_an_older_ckast_left_in_the_tree_is_removed(tmp_path):
    out = tmp_path / "lib"
    run("generate", *SMALL, "-o", out)
    (out / OLD_STAMP).write_text('{"key": "x", "files": {"manifest.json": [1, 2]}}')
    (out / "notes.txt").write_text("the user's\n")
    stamp_path(out).unlink()
    assert "0 files written, 138 unchanged, 1 removed" in run("generate", *SMALL, "-o", out)
    assert not (out / OLD_STAMP).exists() and (out / "notes.txt").exists()


def test_run_keys_follow_the_command_options_and_input_bytes(tmp_path):
    config = tmp_path / "c.json"
    config.write_text("{}")
    key = run_key("emit", {"chunk_size": 25}, [config])
    assert key == run_key("emit", {"chunk_size": 25}, [config])
    assert key != run_key("generate", {"chunk_size": 25}, [config])
    assert key != run_key("emit", {"chunk_size": 10}, [config])
    config.write_text("[]")
    assert key != run_key("emit", {"chunk_size": 25}, [config])
    os.utime(config, (0, 0))  # times do not count, bytes do
    assert run_key("emit", {"chunk_size": 25}, [config]) == run_key("emit", {"chunk_size": 25}, [config])


def test_generate_config_records_the_file_by_name_and_digest(tmp_path):
    """A config file given by an absolute path leaves no path of the machine in the tree."""
    config = tmp_path / "deep" / "cfg.json"
    config.parent.mkdir()
    shutil.copy(EXAMPLES / "gemm_standard.json", config)
    trees = []
    for name, given in (("a", config), ("b", os.path.relpath(config))):
        run("generate", "--config", given, "-j", "1", "-o", tmp_path / name)
        trees.append(output_tree(tmp_path / name))
    assert trees[0] == trees[1]
    assert not [p for p, data in trees[0].items() if str(tmp_path).encode() in data]
    [recorded] = json.loads(trees[0]["manifest.json"])["run"]["configs"]
    assert recorded["file"] == "cfg.json" and len(recorded["sha256"]) == 64
