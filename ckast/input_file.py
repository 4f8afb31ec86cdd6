"""Reading a file a user names: a regular file only, of bounded size, in steps a signal can stop.

Every file ckast reads from its command line or from a manifest (configs, problems, timing and kernel
tables, models, manifests) goes through `read_input`. A FIFO, a device (`/dev/zero`), a socket or a
directory is refused before a byte is read (a symbolic link counts as what it points to); a file larger
than its limit is refused from its size, and a file that grows while it is read stops at the limit.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ckast.errors import CkastError

MIB = 1 << 20
DEFAULT_LIMIT = 256 * MIB
"""Largest file read unless the caller says otherwise (a million-problem CSV is about 30 MiB)."""
_CHUNK = MIB


class InputFileError(CkastError, ValueError):
    """A file ckast was asked to read cannot be read as a regular file within its size limit."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = str(path)
        self.message = message


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_input(path: Path | str, limit: int = DEFAULT_LIMIT) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them; InputFileError otherwise (missing,
    unreadable, not a regular file, or larger than `limit`)."""
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not wait; it is refused just below.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        try:  # a socket cannot be opened at all: say what it is
            mode = os.stat(path).st_mode
        except OSError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise InputFileError(path, f"{_kind(mode)}, not a regular file; give a file") from None
        raise InputFileError(path, f"cannot read: {exc.strerror}") from None
    try:
        mode = os.fstat(fd)
        if not stat.S_ISREG(mode.st_mode):
            raise InputFileError(path, f"{_kind(mode.st_mode)}, not a regular file; give a file")
        if mode.st_size > limit:
            raise InputFileError(path, f"{mode.st_size:,} bytes, more than the {limit:,} read")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, _CHUNK):
            size += len(chunk)
            if size > limit:
                raise InputFileError(path, f"grew beyond the {limit:,} bytes read while it was read")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputFileError(path, f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
