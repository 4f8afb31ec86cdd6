"""One ckast run per output directory at a time.

The lock is `flock` on `.<name>.ckast-lock` beside the output directory (not in it: the directory
itself is replaced by each run). The kernel drops an `flock` when its holder dies, however it dies,
so a lock left by a killed run is free at once; the file only tells a waiting run who holds it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

_held: set[int] = set()


def _forget_in_child() -> None:
    # A forked process (a rendering worker) must not keep its parent's lock alive after the parent dies.
    for fd in _held:
        os.close(fd)
    _held.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def lock_path(out_dir: Path) -> Path:
    return out_dir.parent / f".{out_dir.name}.ckast-lock"


class DirectoryLock:
    """Exclusive lock on an output directory; `on_wait(message)` is told once when another run holds it.
    With `wait=False` a held lock raises BlockingIOError instead."""

    def __init__(self, out_dir: Path, on_wait: Callable[[str], None] | None = None, wait: bool = True) -> None:
        self.path = lock_path(out_dir)
        self.out_dir = out_dir
        self.on_wait = on_wait
        self.wait = wait
        self.fd: int | None = None
        self.locked = False

    def __enter__(self) -> DirectoryLock:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        _held.add(self.fd)
        try:  # waiting may end in an error or a signal (ckast.interrupt): the descriptor is closed either way
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not self.wait:
                    raise
                if self.on_wait:
                    holder = os.pread(self.fd, 32, 0).decode(errors="replace").strip() or "?"
                    self.on_wait(f"waiting for the ckast run (pid {holder}) that is writing {self.out_dir}")
                fcntl.flock(self.fd, fcntl.LOCK_EX)
            self.locked = True
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, f"{os.getpid()}\n".encode(), 0)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            _held.discard(fd)
            if self.locked:
                self.locked = False
                os.ftruncate(fd, 0)
            os.close(fd)  # closing drops the flock
