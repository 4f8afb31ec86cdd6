"""The output directory is changed whole or not at all, one run at a time, and only in ckast's files.

Runs are real `ckast` processes. Kills are real SIGKILLs: at a named point of the run
(`CKAST_TEST_KILL_AT`, see `ckast.output.transaction._checkpoint`) or, in the slow test, after a
random delay. `tests/test_interrupt.py` sends SIGINT and SIGTERM.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ckast.output.lock import DirectoryLock

ROOT = Path(__file__).resolve().parent.parent
OLD = ROOT / "examples" / "gemm_standard.json"
NEW = ROOT / "examples" / "conv_directions.json"


def ckast(*args: str | Path, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ckast", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, **kw)


def emit(config: Path, out: Path, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return ckast("emit", "--config", config, "-o", out, env=env, **kw)


def snapshot(root: Path) -> dict[str, object]:
    """Every entry under `root`: file bytes, symlink targets, directories."""
    out: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = ("link", os.readlink(path))
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = path.read_bytes()
    return out


@pytest.fixture(scope="module")
def trees(tmp_path_factory) -> tuple[Path, dict, dict]:
    """An output directory as the OLD run left it (plus a user's files), and the snapshots of it
    before and after a complete NEW run."""
    base = tmp_path_factory.mktemp("trees")
    old = base / "old"
    assert emit(OLD, old).returncode == 0
    (old / "notes.txt").write_text("mine\n")
    (old / "mine").mkdir()
    (old / "mine" / "kernel_like.hpp").write_text("// looks generated, is not\n")
    (old / "link.hpp").symlink_to("notes.txt")
    new = base / "new"
    shutil.copytree(old, new, symlinks=True)
    assert emit(NEW, new).returncode == 0
    return old, snapshot(old), snapshot(new)


def fresh_copy(old: Path, dst: Path) -> Path:
    shutil.copytree(old, dst, symlinks=True, copy_function=shutil.copy2)
    return dst


def test_a_run_keeps_the_users_files_and_unchanged_files(trees, tmp_path):
    old, before, after = trees
    assert after["notes.txt"] == b"mine\n" and after["mine/kernel_like.hpp"] == before["mine/kernel_like.hpp"]
    assert after["link.hpp"] == ("link", "notes.txt")
    assert not any(k.startswith("gemm_") for k in after)  # the old run's kernels are gone
    out = fresh_copy(old, tmp_path / "out")
    header = next(out.glob("gemm_*.hpp"))
    (out / "notes.txt").touch()
    st = header.stat()
    assert emit(OLD, out, env={"CKAST_CACHE_DIR": "off"}).returncode == 0  # same files: nothing rewritten
    (out / "extra.cpp").write_text("x")
    cfg = json.loads(OLD.read_text())
    cfg["kernels"] = cfg["kernels"][:1]
    (tmp_path / "one.json").write_text(json.dumps(cfg))
    result = emit(tmp_path / "one.json", out)
    assert result.returncode == 0, result.stderr
    kept = out / header.name
    if kept.exists():
        assert (kept.stat().st_ino, kept.stat().st_mtime_ns) == (st.st_ino, st.st_mtime_ns)
    assert (out / "extra.cpp").read_text() == "x" and (out / "notes.txt").read_text() == "mine\n"
    assert len(list(out.glob("gemm_*.hpp"))) == 1


@pytest.mark.parametrize("point", ["write:1", "write:2", "write:9", "write:17", "commit:1", "commit:2", "commit:3"])
def test_a_killed_run_leaves_the_old_tree_or_the_new_one(trees, tmp_path, point):
    old, before, after = trees
    out = fresh_copy(old, tmp_path / "out")
    result = emit(NEW, out, env={"CKAST_TEST_KILL_AT": point})
    assert result.returncode == -signal.SIGKILL, (point, result.stderr)
    got = snapshot(out)
    assert got in (before, after), point
    assert got == (after if point.startswith(("commit:2", "commit:3")) else before)
    result = emit(NEW, out)  # the next run cleans up after the dead one
    assert result.returncode == 0 and "waiting" not in result.stderr, result.stderr
    assert snapshot(out) == after
    assert not list(tmp_path.glob(".out.ckast-stage*")) and not list(tmp_path.glob(".out.ckast-old"))


@pytest.mark.slow
def test_runs_killed_at_every_write_and_at_random_times(trees, tmp_path):
    old, before, after = trees
    for n in range(1, 40):
        out = fresh_copy(old, tmp_path / f"w{n}")
        result = emit(NEW, out, env={"CKAST_TEST_KILL_AT": f"write:{n}"})
        assert snapshot(out) == (after if result.returncode == 0 else before), n
        if result.returncode == 0:
            break
    else:
        pytest.fail("the run never finished")
    generate = ["generate", "--config", str(NEW), "-j", "2", "-o"]
    done = fresh_copy(old, tmp_path / "done")
    assert ckast(*generate, done).returncode == 0
    generated = snapshot(done)
    rng = random.Random(13)
    outcomes = []
    for i in range(20):
        out = fresh_copy(old, tmp_path / f"t{i}")
        proc = subprocess.Popen([sys.executable, "-m", "ckast", *generate, str(out)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 2.0))
        proc.kill()
        proc.wait()
        got = snapshot(out)
        assert got in (before, generated), i
        outcomes.append(got == generated)
    print(f"{outcomes.count(False)} kills left the old tree, {outcomes.count(True)} the new one")


def test_a_second_run_waits_for_the_first(trees, tmp_path):
    old, _, after = trees
    out = fresh_copy(old, tmp_path / "out")
    with DirectoryLock(out):
        proc = subprocess.Popen([sys.executable, "-m", "ckast", "emit", "--config", str(NEW), "-o", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        assert proc.poll() is None  # still waiting
        assert snapshot(out) != after
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert f"waiting for the ckast run (pid {os.getpid()}) that is writing" in stderr
    assert snapshot(out) == after


def test_two_runs_at_once_never_interleave(trees, tmp_path):
    old, before, after = trees
    out = fresh_copy(old, tmp_path / "out")
    procs = [subprocess.Popen([sys.executable, "-m", "ckast", "emit", "--config", str(cfg), "-o", str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for cfg in (NEW, OLD)]
    for p in procs:
        p.communicate(timeout=120)
        assert p.returncode == 0
    assert snapshot(out) in (before, after)


def test_a_lock_left_by_a_killed_run_is_taken_over(trees, tmp_path):
    old, _, after = trees
    out = fresh_copy(old, tmp_path / "out")
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from ckast.output.lock import DirectoryLock\n"
        f"with DirectoryLock(Path({str(out)!r})):\n    print('held', flush=True); time.sleep(600)")],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    holder.kill()
    holder.wait()
    result = emit(NEW, out, timeout=60)
    assert result.returncode == 0 and "waiting" not in result.stderr
    assert snapshot(out) == after


def _refused(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ckast: "), result.stderr
    return lines[0]


def test_read_only_directory(trees, tmp_path):
    old, before, _ = trees
    out = fresh_copy(old, tmp_path / "out")
    out.chmod(0o555)
    try:
        assert "read-only" in _refused(emit(NEW, out))
    finally:
        out.chmod(0o755)
    assert snapshot(out) == before


def test_full_disk(trees, tmp_path):
    old, before, _ = trees
    out = fresh_copy(old, tmp_path / "out")
    limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # noqa: E731
    line = _refused(emit(NEW, out, preexec_fn=limit))
    assert "File too large" in line and "unchanged" in line
    assert snapshot(out) == before
    assert not list(tmp_path.glob(".out.ckast-stage*"))


def test_output_path_is_a_file_or_has_no_parent(tmp_path):
    (tmp_path / "file").write_text("x")
    assert "not a directory" in _refused(emit(OLD, tmp_path / "file"))
    assert (tmp_path / "file").read_text() == "x"
    assert "does not exist" in _refused(emit(OLD, tmp_path / "missing" / "out"))
    assert not (tmp_path / "missing").exists()


def test_a_users_file_where_a_kernel_goes_is_refused(trees, tmp_path):
    old, before, after = trees
    out = fresh_copy(old, tmp_path / "out")
    name = next(k for k in after if k.startswith("grouped_conv_") and k.endswith(".hpp"))
    (out / name).write_text("// the user's\n")
    line = _refused(emit(NEW, out))
    assert name in line and "not written by ckast" in line
    assert (out / name).read_text() == "// the user's\n"


# --- places: where a run may write -------------------------------------------------------------------------------


def cli(*args: str | Path) -> subprocess.CompletedProcess:
    """`ckast ARGS` run in this process (click's runner): a CompletedProcess as `ckast` gives."""
    from click.testing import CliRunner

    from ckast.cli import main

    result = CliRunner().invoke(main, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def _place_refused(result: subprocess.CompletedProcess, *needles: str) -> str:
    """The one line of a run refused for its output directory: exit 2 (bad input), nothing on stdout."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ckast: ") and result.stdout == "", result.stderr
    assert all(needle in lines[0] for needle in needles), lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory) -> Path:
    """A kernel tree `emit` wrote, used as the library of `select emit` and `bench emit`."""
    out = tmp_path_factory.mktemp("kernels") / "lib"
    assert emit(OLD, out).returncode == 0
    return out


def _commands(lib: Path, problems: Path) -> dict[str, list[str | Path]]:
    return {"emit": ["emit", "--config", OLD], "generate": ["generate", "--config", OLD],
            "select emit": ["select", "emit", "--library", lib],
            "bench emit": ["bench", "emit", "--library", lib, "--problems", problems]}


@pytest.mark.parametrize("command", ["emit", "generate", "select emit", "bench emit"])
@pytest.mark.parametrize(("out", "where"), [(".", "is the current directory"), ("", "is the current directory"),
                                            ("..", "holds the current directory")])
def test_the_current_directory_is_no_output_directory(kernels, tmp_path, monkeypatch, command, out, where):
    """`-o .` (or `-o ''`, or a directory above): the swap would take the directory from under the shell (it was
    left in a deleted directory, and emit and generate then crashed in os.getcwd()): refused, nothing changed."""
    here = tmp_path / "d" / "here"
    here.mkdir(parents=True)
    (here / "mine.txt").write_text("x")
    problems = tmp_path / "problems.csv"
    problems.write_text("M,N,K\n256,256,256\n")
    inode = here.stat().st_ino
    monkeypatch.chdir(here)
    _place_refused(cli(*_commands(kernels, problems)[command], "-o", out), where,
                   "would leave your shell in a deleted directory")
    assert here.stat().st_ino == inode and sorted(p.name for p in here.iterdir()) == ["mine.txt"]
    assert sorted(p.name for p in here.parent.iterdir()) == ["here"]


@pytest.mark.parametrize("name", ["a" * 250, "a" * 256, f"{'b' * 300}/out"])
def test_a_name_too_long_for_the_file_system_is_one_line(tmp_path, name):
    """ENAMETOOLONG (the output directory's own name, or the staging tree's beside it) was a traceback."""
    line = _place_refused(emit(OLD, tmp_path / name), "a name of the path is too long", "at most 242 bytes")
    assert line.count("\n") == 0 and not list(tmp_path.iterdir())


def test_a_path_too_long_for_the_file_system_is_one_line(tmp_path):
    deep = tmp_path / "/".join(["d" * 200] * 21)  # each name allowed, the path longer than PATH_MAX
    _place_refused(emit(OLD, deep / "out"), "the path is too long")


def test_one_command_does_not_write_over_anothers_output(kernels, tmp_path):
    """A directory holding another command's output (its manifest says which) is refused with one line naming
    what is there: the files of the earlier run were deleted. A rerun of the same kind replaces its own."""
    problems = tmp_path / "problems.csv"
    problems.write_text("M,N,K\n256,256,256\n")
    commands = _commands(kernels, problems)
    made = {"emit": tmp_path / "tree", "select emit": tmp_path / "selector", "bench emit": tmp_path / "bench"}
    for command, out in made.items():
        assert cli(*commands[command], "-o", out).returncode == 0, command
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "feature_spec.json").write_text("{}")
    made["select train"] = tmp_path / "model"
    names = {"emit": "a kernel tree (written by ckast emit or ckast generate)",
             "select emit": "a selector (written by ckast select emit)",
             "bench emit": "a benchmark driver (written by ckast bench emit)",
             "select train": "a model (written by ckast select train)"}
    before = {out: snapshot(out) for out in made.values()}
    for command in commands:
        own = "emit" if command == "generate" else command  # both write a kernel tree
        for other, out in made.items():
            if other != own:
                _place_refused(cli(*commands[command], "-o", out), f"{out}: holds {names[other]}")
    assert {out: snapshot(out) for out in made.values()} == before
    for command, out in (("select emit", made["select emit"]), ("bench emit", made["bench emit"]),
                         ("generate", made["emit"])):  # a run of the same kind replaces its files
        assert cli(*commands[command], "-o", out).returncode == 0, command


def test_a_model_goes_outside_the_library_and_into_no_other_output(kernels, tmp_path):
    """`select train -o` inside the library, which `select emit` and `bench emit` refuse, is refused by the same
    rule, before any training; so is a directory holding another command's output."""
    from ckast.output.places import PlaceError
    from ckast.workflow.choosing import TimingRuns, train_model

    runs = TimingRuns(kernels, None, None, ())  # nothing of the runs is read before the places are checked
    for out, message in ((kernels, "is the library's own directory; the model goes into a directory of its own"),
                         (kernels / "model", "inside the library")):
        with pytest.raises(PlaceError, match=message):
            train_model(runs, out)
    cwd = os.getcwd()
    os.chdir(kernels)
    try:
        with pytest.raises(PlaceError, match="holds the current directory"):
            train_model(runs, "..")
    finally:
        os.chdir(cwd)
    other = tmp_path / "other"
    assert emit(OLD, other).returncode == 0
    with pytest.raises(PlaceError, match="holds a kernel tree"):
        train_model(TimingRuns(tmp_path / "lib", None, None, ()), other)
    assert not (kernels / "model").exists()


def test_the_model_marker_is_the_models_spec_file():
    from ckast.output.places import MODEL_SPEC
    from ckast.select.models.lightgbm_model import SPEC_FILE

    assert MODEL_SPEC == SPEC_FILE
