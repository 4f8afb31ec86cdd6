"""`CkastError`: the base of every error ckast raises about its input or its environment.

Each module keeps its own error class (`ckast.config.ConfigError`, `ckast.output.OutputError`,
`ckast.select.problem.ProblemError`, ...); each derives from `CkastError`, so a caller of the Python API
catches them all with one `except ckast.CkastError`. The message is what the command line prints: one line,
or one line per problem (`lines()`).
"""

from __future__ import annotations


class CkastError(Exception):
    """Bad input or an unusable environment (not a fault of ckast's).

    `str(exc)` is the message the `ckast` command prints for it (after its prefix, where it adds one): one
    line, or one line per problem.
    """

    def lines(self) -> list[str]:
        """The message, one line per problem."""
        return str(self).splitlines()
