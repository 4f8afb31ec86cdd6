"""Stopping on SIGINT and SIGTERM: quickly, in one line, with nothing left half done.

`handling()` (the command line runs every command inside it) turns either signal into `Interrupted`,
which unwinds the command (each `with` cleans up) and which the command line reports as one line with
exit status 128 + the signal's number. `deferred()` holds a signal back over a step that must finish
once started (the swap of an output tree, a cleanup) and raises it when the step is done.

Processes forked while `handling()` is active (the rendering workers) ignore SIGINT, which a terminal
sends to the whole process group (their parent stops them), end quietly on SIGTERM (no traceback), and
are killed when their parent dies, however it dies (`PR_SET_PDEATHSIG`).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TypeVar

SIGNALS = (signal.SIGINT, signal.SIGTERM)
T = TypeVar("T")
_PR_SET_PDEATHSIG = 1


class Interrupted(BaseException):
    """A signal asked the command to stop. A BaseException, so `except Exception` does not take it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.where = _settled
        """What the run left where it was writing (e.g. `lib: unchanged`): added on the way out, or what
        a step that completed before the signal recorded with `settled`."""

    @property
    def exit_status(self) -> int:
        return 128 + self.signum

    def __str__(self) -> str:
        verb = "interrupted" if self.signum == signal.SIGINT else "terminated"
        return f"{verb} by {signal.Signals(self.signum).name}" + (f"; {self.where}" if self.where else "")


_active = False
_owner = 0
_held = 0
_pending: int | None = None
_settled = ""
_raised: Interrupted | None = None
"""The `Interrupted` the handler raised, kept in case it was lost (see `check`)."""


def _raise(signum: int, _frame: FrameType | None) -> None:
    global _pending, _raised
    if _held:
        _pending = _pending or signum
        return
    _raised = Interrupted(signum)
    raise _raised


def check() -> None:
    """Raise again the `Interrupted` of a signal that came before, if there was one. CPython may run a signal's
    handler from C code that drops what it raises and goes on (the compile of a module that has no bytecode yet
    does): the signal is then in `_raised` only. `handling()` calls this when its block ends with status 0, and a
    `Transaction` before it starts and before its swap, so that no signal is lost."""
    if _raised is not None:
        raise _raised


def _unraisable(info: sys.UnraisableHookArgs) -> None:
    """Python's report of an exception it had to drop (raised in a `__del__` or a weakref callback), but
    silent for `Interrupted`: `check` raises it again."""
    if not isinstance(info.exc_value, Interrupted):
        sys.__unraisablehook__(info)


@contextmanager
def handling(process: bool = False) -> Iterator[None]:
    """SIGINT and SIGTERM raise `Interrupted` inside the block (only in the main thread, where Python
    runs signal handlers; elsewhere the block runs as it is). The previous handlers come back after,
    unless the block is the whole `process` (a command line): then the signals are ignored from there
    on, so that one arriving while the interpreter exits after a completed run changes nothing. A block
    that would end with status 0 (no exception, or `SystemExit` 0) after a signal raises its `Interrupted`
    (`check`)."""
    global _active, _owner, _pending, _settled, _raised
    if threading.current_thread() is not threading.main_thread() or _active:
        yield
        return
    previous = {sig: signal.signal(sig, _raise) for sig in SIGNALS}
    _active, _owner, _pending, _settled, _raised = True, os.getpid(), None, "", None
    unraisable, sys.unraisablehook = sys.unraisablehook, _unraisable
    try:
        yield
        check()
    except SystemExit as exc:
        if not exc.code:  # a command that completed: status 0 only if no signal came
            check()
        raise
    finally:
        _active, _raised, sys.unraisablehook = False, None, unraisable
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_IGN if process else handler)


@contextmanager
def deferred() -> Iterator[None]:
    """Run the block to its end: a signal that arrives meanwhile raises `Interrupted` after it."""
    global _held, _pending
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if not _held and _pending is not None:
            signum, _pending = _pending, None
            raise Interrupted(signum)


def settled(where: str) -> None:
    """Record what a step that cannot be undone left (`lib: the new tree is in place`): a signal that
    stops the command after it (while it prints its summary) says so instead of nothing."""
    global _settled
    _settled = where


def interruptible(call: Callable[[], T]) -> T:
    """`call()`, a long call into C that takes no signal until it returns (a libclang parse), in a daemon
    thread while the main thread waits in short joins: a signal then stops the command at once, and the
    thread is abandoned with the process. Outside `handling()` (or off the main thread) it is a plain call."""
    if not _active or threading.current_thread() is not threading.main_thread():
        return call()
    outcome: list = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # handed to the main thread as it is
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name="ckast-call", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.05)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def _in_child() -> None:
    global _active, _held, _pending, _raised
    if not _active:
        return
    _active, _held, _pending, _raised = False, 0, None, None
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: workers end when their queue closes
        return
    if os.getppid() != _owner:  # the parent died before prctl took effect
        os._exit(1)


os.register_at_fork(after_in_child=_in_child)
