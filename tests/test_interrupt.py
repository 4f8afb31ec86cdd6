"""SIGINT and SIGTERM stop a `ckast` run with one line and exit status 130 or 143, the output directory
as it was before the swap or whole after it, no staging tree, the lock free and no process left.

Runs are real `ckast generate -j 2` processes in their own process group. Signals are real: sent by the
test to the parent alone or to the whole group (as a terminal's Ctrl-C is) while the workers render,
or sent by the run to itself at a named step (`CKAST_TEST_KILL_AT=<step>:<n>:<SIGNAL>[:group]`, see
`ckast.output.transaction._checkpoint`).
"""

from __future__ import annotations

import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ckast.check.runner import compile_many
from ckast.interrupt import Interrupted, deferred, handling
from ckast.library import workers
from ckast.output.lock import DirectoryLock

from .test_check_toolchain import fake_toolchain, write_tu
from .test_output_tree import OLD, ckast, emit, snapshot

BIG = ["--rule-set", "full", "--arch", "gfx942", "--datatype", "fp16", "--ndim", "2", "--ck-api", "ck-2026.06"]
"""2,021 kernels: the workers render for a second or more."""
SMALL = ["--rule-set", "default", "--arch", "gfx942", "--datatype", "fp16", "--ndim", "2", "--ck-api", "ck-2026.06"]
HANG = 20
"""Seconds after which a run that has not stopped counts as hanging (it should take well under one;
`tools/bench_interrupt.py` measures it)."""
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}


@pytest.fixture(scope="module")
def old_tree(tmp_path_factory) -> tuple[Path, dict]:
    """An output directory as an earlier run left it, and its snapshot."""
    old = tmp_path_factory.mktemp("old") / "lib"
    assert emit(OLD, old).returncode == 0
    return old, snapshot(old)


@pytest.fixture(scope="module")
def small_tree(tmp_path_factory, old_tree) -> dict:
    """The snapshot of a complete SMALL run into the old tree."""
    out = copy(old_tree[0], tmp_path_factory.mktemp("small") / "lib")
    assert ckast("generate", *SMALL, "-j", "2", "-o", out).returncode == 0
    return snapshot(out)


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True, copy_function=shutil.copy2)
    return dst


def start(*args: str | Path, env: dict | None = None) -> subprocess.Popen:
    """A `ckast` process in a process group of its own (the group a terminal would signal)."""
    return subprocess.Popen([sys.executable, "-m", "ckast", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, **(env or {})})


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of the process group."""
    members = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(pid))
    return members


def assert_gone(pgid: int) -> None:
    deadline = time.monotonic() + 5
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not group_members(pgid), "a process of the run outlived it"


def stopped(proc: subprocess.Popen, sig: int, out: Path, lock: bool = True) -> str:
    """Wait for a signalled run; check its exit status, its one line, the staging tree, the process
    group and (`lock`) that the lock is free; return the line."""
    _, stderr = proc.communicate(timeout=HANG)
    lines = stderr.strip().splitlines()
    assert proc.returncode == STATUS[sig], stderr
    assert lines and lines[-1].startswith("ckast: "), stderr
    assert "Traceback" not in stderr and "Aborted" not in stderr, stderr
    assert len([line for line in lines if not line.startswith("ckast: waiting")]) == 1, stderr
    assert_gone(proc.pid)
    assert not [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.ckast-")
                and not p.name.endswith("-lock")]
    if lock:
        with DirectoryLock(out, wait=False):  # raises BlockingIOError if held
            pass
    return lines[-1]


def wait_for_staged_kernels(proc: subprocess.Popen, out: Path, count: int) -> None:
    """Until the workers have staged `count` files and the parent has not yet written the manifest."""
    staging = out.parent / f".{out.name}.ckast-stage"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            names = os.listdir(staging)
        except FileNotFoundError:
            names = []
        assert "manifest.json" not in names, "rendering ended before the signal"
        if len(names) >= count:
            return
        time.sleep(0.01)
    pytest.fail(f"the run staged fewer than {count} files: {proc.poll()}")


@pytest.mark.parametrize(("sig", "group"), [(signal.SIGINT, False), (signal.SIGINT, True),
                                            (signal.SIGTERM, False), (signal.SIGTERM, True)],
                         ids=["INT", "INT-group", "TERM", "TERM-group"])
def test_a_signal_while_the_workers_render(old_tree, tmp_path, sig, group):
    old, before = old_tree
    out = copy(old, tmp_path / "lib")
    proc = start("generate", *BIG, "-j", "2", "-o", out)
    wait_for_staged_kernels(proc, out, 60)
    (os.killpg if group else os.kill)(proc.pid, sig)
    line = stopped(proc, sig, out)
    assert line == f"ckast: {'interrupted' if sig == signal.SIGINT else 'terminated'} by {sig.name}; {out}: unchanged"
    assert snapshot(out) == before


@pytest.mark.parametrize(("at", "jobs", "whole"), [
    ("write:1:INT", 2, False),       # the parent's first file, after the workers' files
    ("write:3:TERM:group", 2, False),
    ("write:20:INT:group", 1, False),  # one process renders and stages everything
    ("commit:1:INT:group", 2, False),  # the user's files carried over, just before the swap
    ("commit:1:TERM", 2, False),
    ("commit:2:INT", 2, True),       # right after the swap: the swap's part runs to its end
    ("commit:2:TERM:group", 2, True),
    ("commit:3:INT:group", 2, True),  # the old tree not yet deleted
    ("commit:4:TERM", 2, True),      # the transaction ended: the summary line was not printed yet
])
def test_a_signal_at_each_step(old_tree, small_tree, tmp_path, at, jobs, whole):
    old, before = old_tree
    out = copy(old, tmp_path / "lib")
    (out / "notes.txt").write_text("the user's\n")
    sig = signal.Signals[f"SIG{at.split(':')[2]}"]
    proc = start("generate", *SMALL, "-j", str(jobs), "-o", out, env={"CKAST_TEST_KILL_AT": at})
    line = stopped(proc, sig, out)
    got = snapshot(out)
    assert got.pop("notes.txt") == b"the user's\n"
    assert got == (small_tree if whole else before)
    assert line.endswith(f"{out}: the new tree is in place" if whole else f"{out}: unchanged")
    rerun = ckast("generate", *SMALL, "-j", "2", "-o", out)
    # the stamp is recorded with the swap
    assert rerun.returncode == 0 and ("(up to date)" in rerun.stdout) == whole, rerun.stdout


@pytest.mark.parametrize(("command", "sig"), [("generate", signal.SIGINT), ("emit", signal.SIGTERM)],
                         ids=["generate-INT", "emit-TERM"])
def test_a_signal_while_waiting_for_the_lock(old_tree, tmp_path, command, sig):
    old, before = old_tree
    out = copy(old, tmp_path / "lib")
    args = ["generate", *SMALL, "-o", out] if command == "generate" else ["emit", "--config", OLD, "-o", out]
    with DirectoryLock(out):
        proc = start(*args, "--chunk-size", "7")
        assert "waiting for the ckast run" in proc.stderr.readline()
        os.killpg(proc.pid, sig)
        line = stopped(proc, sig, out, lock=False)  # this test holds it
        assert line == f"ckast: {'interrupted' if sig == signal.SIGINT else 'terminated'} by {sig.name}"
    assert snapshot(out) == before
    with DirectoryLock(out, wait=False):
        pass


def test_a_killed_run_takes_its_workers_along(tmp_path):
    out = tmp_path / "lib"
    proc = start("generate", *BIG, "-j", "2", "-o", out)
    wait_for_staged_kernels(proc, out, 60)
    proc.kill()  # the parent alone, as the OOM killer would
    proc.wait()
    assert_gone(proc.pid)


def test_deferred_holds_a_signal_until_its_block_ends():
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN when the test run was started in the background
    steps = []
    with pytest.raises(Interrupted) as raised, handling():
        with deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            steps.append("after the signal")
        steps.append("after the block")
    assert steps == ["after the signal"] and raised.value.exit_status == 143
    with pytest.raises(Interrupted), handling():
        os.kill(os.getpid(), signal.SIGINT)
        steps.append("not reached")
    assert steps == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is before  # restored


def test_forked_processes_ignore_sigint_and_end_on_sigterm():
    with handling():
        pid = os.fork()
        if pid == 0:
            ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os._exit(0 if ignored and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def _square_or_fail(n: int) -> int:
    if n == 5:
        raise ValueError("item 5")
    if n == 7:
        os.kill(os.getpid(), signal.SIGKILL)  # as a SIGTERM to the group or the OOM killer would
    return n * n


@pytest.mark.parametrize(("items", "error"), [(range(5), None), (range(6), ValueError),
                                              ([7, 1, 2, 3], workers.WorkerDied)])
def test_workers_return_every_result_or_stop(items, error):
    got: dict[int, int] = {}
    if error is None:
        workers.run(_square_or_fail, list(items), 2, got.__setitem__)
        assert got == {i: n * n for i, n in enumerate(items)}
    else:
        with pytest.raises(error):
            workers.run(_square_or_fail, list(items), 2, got.__setitem__)
    assert not multiprocessing.active_children()


def test_a_signal_kills_the_compiles_of_check(tmp_path):
    """`ckast check -j 2` waits for no compile: each runs in a process group of its own, killed on a signal."""
    jobs = [(write_tu(tmp_path / "tus", f"{i}.cpp", "sleep=60"), Path(f"{i}.hpp")) for i in range(3)]
    threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()  # the main thread takes the signal
    start = time.monotonic()
    with pytest.raises(Interrupted), handling():
        compile_many(jobs, fake_toolchain(tmp_path), parallel=2)
    assert time.monotonic() - start < HANG
    fake = str(tmp_path / "bin")
    alive = subprocess.run(["pgrep", "-f", fake], capture_output=True, text=True, check=False).stdout.split()
    assert not alive, "a compile outlived the check"


@pytest.mark.slow
def test_signals_at_random_times(old_tree, tmp_path):
    old, before = old_tree
    done = copy(old, tmp_path / "done")
    begin = time.monotonic()
    assert ckast("generate", *BIG, "-j", "2", "-o", done).returncode == 0
    duration = time.monotonic() - begin  # signals are drawn over the whole run and a little after it
    after = snapshot(done)
    rng = random.Random(20)
    outcomes = []
    for i in range(24):
        sig, group = rng.choice([signal.SIGINT, signal.SIGTERM]), rng.random() < 0.5
        out = copy(old, tmp_path / f"r{i}")
        proc = start("generate", *BIG, "-j", "2", "-o", out)
        time.sleep(rng.uniform(0.2, 1.2 * duration))
        (os.killpg if group else os.kill)(proc.pid, sig)
        if proc.wait(timeout=HANG) == 0:  # the signal came after the run: ignored while the interpreter exits
            outcomes.append("done")
            assert_gone(proc.pid)
            assert "Traceback" not in proc.stderr.read()
        else:
            line = stopped(proc, sig, out)  # "...; lib: unchanged", "...; lib: the new tree is in place" or no "; "
            outcomes.append(line.rsplit(": ", 1)[1] if "; " in line else "before the transaction")
        assert snapshot(out) == (after if outcomes[-1] in ("done", "the new tree is in place") else before), i
    print(f"run {duration:.1f} s; outcomes: {sorted(outcomes)}")


def test_a_long_call_into_c_is_left_behind_on_a_signal():
    """`interruptible` runs the call in a thread the process does not wait for: the signal stops the
    command at once (a libclang parse takes no signal until it returns); values and errors come through."""
    code = ("import os, signal, threading, time\n"
            "from ckast.interrupt import Interrupted, handling, interruptible\n"
            "with handling():\n"
            "    assert interruptible(lambda: 7) == 7\n"
            "    try:\n"
            "        interruptible(lambda: 1 // 0)\n"
            "    except ZeroDivisionError:\n"
            "        print('error passed')\n"
            "threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
            "start = time.monotonic()\n"
            "try:\n"
            "    with handling():\n"
            "        interruptible(lambda: threading.Event().wait(30))\n"
            "except Interrupted as exc:\n"
            "    print(exc.signum, time.monotonic() - start < 2)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG)
    assert done.stdout.split("\n")[:2] == ["error passed", f"{int(signal.SIGINT)} True"], done.stderr


@pytest.mark.ck_compile
def test_a_signal_during_the_api_parse():
    """`ckast api check` stops within a second of a signal while libclang parses the real CK tree."""
    from ckast.check.toolchain import find_ck_include

    proc = subprocess.Popen([sys.executable, "-m", "ckast", "api", "check", "--ck-include", str(find_ck_include())],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "CKAST_CACHE_DIR": "off"})
    maps = Path(f"/proc/{proc.pid}/maps")
    deadline = time.monotonic() + HANG
    while "libclang" not in maps.read_text() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)  # the parse begins once libclang is loaded into the process
    time.sleep(0.3)
    if proc.poll() is not None:
        pytest.skip("the parse ended before the signal (a machine faster than this test assumes)")
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=HANG)[1]
    assert proc.returncode == 130 and err.strip() == "ckast: interrupted by SIGINT"
    assert time.monotonic() - sent < 1.0


DROPPED = """
import os, signal, sys
from pathlib import Path
from ckast.interrupt import Interrupted, handling
from ckast.output import Transaction

class Dropper:
    def __del__(self):  # Python drops what the handler raises here, as it does in a compile
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass

try:
    with handling(process=True):
        Dropper()
        print("went on", flush=True)
        if len(sys.argv) > 1:
            with Transaction(Path(sys.argv[1])) as tx:
                tx.commit(set())
except Interrupted as exc:
    print(f"ckast: {exc}", file=sys.stderr)
    sys.exit(exc.exit_status)
"""


@pytest.mark.parametrize("writes", [False, True])
def test_a_signal_whose_exception_python_dropped_still_stops_the_command(tmp_path, writes):
    """CPython drops what a signal's handler raises where it runs the handler from C code that cannot pass
    an exception on (a `__del__`, a weakref callback of the import system, the compile of a module without
    bytecode): the command went on and ended with status 0. It now ends with 130 when its block ends, or
    before an output directory is touched; Python's "Exception ignored" report is left out."""
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-c", DROPPED, *([str(out)] if writes else [])],
                            capture_output=True, text=True, timeout=HANG)
    assert result.returncode == 130 and result.stdout == "went on\n"
    assert result.stderr == "ckast: interrupted by SIGINT\n"
    assert not out.exists()


def signal_mask(pid: int, field: str) -> int:
    """A signal mask of /proc/PID/status (SigCgt: caught, SigIgn: ignored); 0 once the process is gone."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return 0
    return next(int(line.split()[1], 16) for line in lines if line.startswith(f"{field}:"))


def caught(pid: int, sig: int, field: str = "SigCgt") -> bool:
    return bool(signal_mask(pid, field) >> (sig - 1) & 1)


def sigint_while_modules_compile(tmp_path: Path, delays: list[float]) -> list[str]:
    """`emit` runs whose every module compiles (no bytecode to read or write: the window where CPython drops
    what a signal's handler raises), each sent SIGINT `delay` seconds after ckast's handler is in place (SIGTERM
    caught: Python itself catches SIGINT from the start). A run may end with status 0 only if it had completed
    (its signals ignored while the interpreter exits) before the signal was sent; the outcome of each run."""
    outcomes = []
    for i, delay in enumerate(delays):
        out = tmp_path / f"o{i}"
        env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(tmp_path / f"pyc{i}"),
               "CKAST_CACHE_DIR": str(tmp_path / f"cache{i}")}
        proc = start("emit", "--config", OLD, "-o", out, env=env)
        deadline = time.monotonic() + HANG
        while not caught(proc.pid, signal.SIGTERM) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        assert proc.poll() is None, proc.communicate()
        time.sleep(delay)
        done = caught(proc.pid, signal.SIGINT, "SigIgn")  # the run has completed
        os.kill(proc.pid, signal.SIGINT)
        if proc.wait(timeout=HANG) == 0:
            assert done, f"SIGINT {delay:.3f} s after the handler was lost: {proc.communicate()}"
            outcomes.append("done")
        else:
            outcomes.append(stopped(proc, signal.SIGINT, out))
            assert not out.exists() or "the new tree is in place" in outcomes[-1], outcomes[-1]
    return outcomes


def test_no_sigint_is_lost_while_modules_compile(tmp_path):
    outcomes = sigint_while_modules_compile(tmp_path, [0.0, 0.15, 0.35])
    assert outcomes.count("done") < len(outcomes), "no run took the signal: the test proves nothing"


@pytest.mark.slow
def test_no_sigint_is_lost_at_any_time_of_a_run(tmp_path):
    rng = random.Random(36)
    outcomes = sigint_while_modules_compile(tmp_path, [rng.uniform(0, 1.5) for _ in range(36)])
    print(f"outcomes: {sorted(outcomes)}")
    assert outcomes.count("done") < len(outcomes)
