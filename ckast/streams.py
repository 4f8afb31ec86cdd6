"""What a command does when its standard output cannot be written: a reader that went away (`| head -1`)
ends it quietly, a full disk or another error is one line on stderr; either way the exit status is 1, as
click gives for a pipe closed while a command prints. Python would otherwise print a traceback, or report
the failure of its own flush at exit ("Exception ignored ...") and exit with 120."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_STREAM_ERRORS = frozenset({errno.EPIPE, errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})
"""What writing a stream fails with (an OSError without a file name: ckast reports the errors of the files
it writes itself, which carry one, as its own lines)."""


@contextmanager
def stdout_checked() -> Iterator[None]:
    """Run the block and flush stdout at its end (where a failure can still be reported, not at exit)."""
    try:
        try:
            yield
        finally:
            sys.stdout.flush()
    except OSError as exc:
        if exc.errno not in _STREAM_ERRORS or exc.filename is not None:
            raise
        _drop_stdout()
        if exc.errno != errno.EPIPE:
            try:
                print(f"ckast: cannot write the output: {exc.strerror}", file=sys.stderr, flush=True)
            except OSError:
                pass
        sys.exit(1)


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so that what is still buffered goes nowhere when Python flushes it at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
