"""Reruns answered before the command line is parsed (`ckast.output.replay`): the same line as the command's
own up-to-date check, and never when anything the run depended on changed."""

from __future__ import annotations

import re
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.data_files import file_states
from ckast.output import replay
from ckast.output.stamp import write_stamp

from .conftest import EXAMPLES

SMALL = ["--rule-set", "default", "--arch", "gfx942", "--datatype", "fp16", "--ndim", "2", "--ck-api", "ck-2026.06"]


def ckast(*args: str | Path, cache: Path, cwd: Path, env: dict | None = None) -> tuple[str, bool]:
    """Run `python -m ckast`; its stdout, and whether it was answered by a replay (it imported no click)."""
    env = {**os.environ, "CKAST_CACHE_DIR": str(cache), **(env or {})}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "ckast", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time")}
    return done.stdout, "click" not in imported


@pytest.fixture
def cache(tmp_path) -> Path:
    return tmp_path / "cache"


def test_a_generate_rerun_is_answered_with_the_line_the_command_prints(tmp_path, cache, monkeypatch):
    first, replayed = ckast("generate", *SMALL, "-o", "lib", cache=cache, cwd=tmp_path)
    assert not replayed and "138 files written" in first
    again, replayed = ckast("generate", *SMALL, "-o", "lib", cache=cache, cwd=tmp_path)
    assert replayed
    monkeypatch.chdir(tmp_path)  # the command's own check (CliRunner: no replay), from the same directory
    own = CliRunner().invoke(main, ["generate", *SMALL, "-o", "lib"], env={"CKAST_CACHE_DIR": str(cache)})
    def untimed(line: str) -> str:  # the seconds a run took vary with the machine's load
        return re.sub(r" in \d+\.\d s ", " in T s ", line)

    assert own.exit_code == 0 and untimed(own.output) == untimed(again)
    assert untimed(again).endswith("-> lib: 0 files written, 138 unchanged, 0 removed in T s (up to date)\n")


def test_an_emit_rerun_is_answered_and_a_changed_config_is_not(tmp_path, cache):
    config = tmp_path / "k.json"
    config.write_bytes((EXAMPLES / "gemm_standard.json").read_bytes())
    args = ("emit", "--config", config, "-o", tmp_path / "out")
    ckast(*args, cache=cache, cwd=tmp_path)
    again, replayed = ckast(*args, cache=cache, cwd=tmp_path)
    assert replayed and again == f"2 kernels -> {args[-1]}: 0 files written, 8 unchanged, 0 removed (up to date)\n"
    kernels = json.loads(config.read_text())["kernels"]
    config.write_text(json.dumps({"kernels": kernels[:1]}))
    changed, replayed = ckast(*args, cache=cache, cwd=tmp_path)
    assert not replayed and changed.startswith("1 kernel ->") and "removed" in changed


@pytest.mark.parametrize("change", ["file edited", "file removed", "staging tree", "environment", "directory",
                                    "options"])
def test_a_rerun_is_not_answered_when_something_changed(tmp_path, cache, change):
    ckast("generate", *SMALL, "-o", "lib", cache=cache, cwd=tmp_path)
    args, env, cwd = [*SMALL, "-o", "lib"], None, tmp_path
    header = next((tmp_path / "lib").glob("*.hpp"))
    if change == "file edited":
        header.write_text(header.read_text() + "// by hand\n")
    elif change == "file removed":
        header.unlink()
    elif change == "staging tree":  # a killed run's: the command removes it
        (tmp_path / ".lib.ckast-stage").mkdir()
    elif change == "environment":
        env = {"CKAST_TEST_KILL_AT": "none:1"}
    elif change == "directory":
        cwd = tmp_path / "elsewhere"
        cwd.mkdir()
        args[-1] = "../lib"
    else:
        args = ["--chunk-size", "7", *args]
    out, replayed = ckast("generate", *args, cache=cache, cwd=cwd, env=env)
    assert not replayed
    rewritten = change in ("file edited", "file removed", "options")
    assert ("(up to date)" in out) != rewritten, out
    assert not (tmp_path / ".lib.ckast-stage").exists()
    _, replayed = ckast("generate", *args, cache=cache, cwd=cwd, env=env)  # recorded by the run just made
    assert replayed


def test_a_changed_ckast_file_or_input_ends_the_replay(tmp_path, monkeypatch, capsys):
    """In-process: `record` and `replay` against a stand-in for ckast's package folder."""
    package, out, config = tmp_path / "pkg", tmp_path / "out", tmp_path / "c.json"
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "rules.toml").write_text("a = 1\n")
    out.mkdir()
    (out / "k.hpp").write_text("x\n")
    config.write_text("{}")
    monkeypatch.setenv("CKAST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(replay, "_PACKAGE", package)
    monkeypatch.setattr(replay, "enabled", True)
    argv = ["emit", "--config", str(config), "-o", str(out)]
    monkeypatch.setattr(sys, "argv", ["ckast", *argv])
    write_stamp(out, "KEY", {"kernels": 1}, file_states(out, ["k.hpp"]))
    replay.record("1 kernel -> out", False, "KEY", out, [config])
    assert replay.replay(argv) and capsys.readouterr().out == "1 kernel -> out (up to date)\n"
    assert not replay.replay([*argv, "-j", "2"])
    (package / "sub" / "new.py").write_text("")  # a file added: its folder's time changes
    assert not replay.replay(argv)
    replay.record("1 kernel -> out", False, "KEY", out, [config])
    assert replay.replay(argv)
    (package / "sub" / "rules.toml").write_text("a = 2\n")
    assert not replay.replay(argv)
    replay.record("1 kernel -> out", False, "KEY", out, [config])
    stat = config.stat()
    config.write_text("[]")  # same size and time, other bytes: the CRC tells
    os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert not replay.replay(argv)
    replay.record("1 kernel -> out", False, "KEY", out, [config])
    write_stamp(out, "OTHER", {"kernels": 1}, file_states(out, ["k.hpp"]))  # another run made the tree
    assert not replay.replay(argv)
    monkeypatch.setattr(replay, "enabled", False)  # a CliRunner call records nothing
    replay.record("1 kernel -> out", False, "OTHER", out, [config])
    assert not replay.replay(argv)
