"""One ckast run per output directory at a time.

The lock is `flock` on `.<name>.ckast-lock` beside the output directory (not in it: the directory
itself is replaced by each run). The file exists only while a run holds it: the holder deletes it
before it lets go, so nothing is left beside the directory. A run that waited on a file deleted
meanwhile holds a lock no one else sees, so it takes the lock again on the file now at that path;
a run holds the lock once its locked file is the one at the path. The kernel drops an `flock` when
its holder dies, however it dies: the file of a killed run is free at once (and deleted by the next
run); its content only tells a waiting run who holds it.
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
        told = False
        try:  # waiting may end in an error or a signal (ckast.interrupt): the descriptor is closed either way
            while True:
                self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
                _held.add(self.fd)
                try:
                    fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    if not self.wait:
                        raise
                    if self.on_wait and not told:
                        told = True
                        holder = os.pread(self.fd, 32, 0).decode(errors="replace").strip() or "?"
                        self.on_wait(f"waiting for the ckast run (pid {holder}) that is writing {self.out_dir}")
                    fcntl.flock(self.fd, fcntl.LOCK_EX)
                if self._at_path():
                    break
                self._close()  # its holder deleted it: lock the file now at the path
            self.locked = True
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, f"{os.getpid()}\n".encode(), 0)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _at_path(self) -> bool:
        """Whether the locked file is (still) the one at the lock's path."""
        mine = os.fstat(self.fd)
        try:
            there = os.stat(self.path)
        except FileNotFoundError:
            return False
        return (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino)

    def _close(self) -> None:
        fd, self.fd = self.fd, None
        _held.discard(fd)
        os.close(fd)  # closing drops the flock

    def __exit__(self, *exc: object) -> None:
        if self.fd is None:
            return
        if self.locked:
            self.locked = False
            try:  # deleted while still held: a run that opens the path now makes a new file
                os.unlink(self.path)
            except OSError:  # best effort: a file left behind is taken over and deleted by the next run
                pass
        self._close()
