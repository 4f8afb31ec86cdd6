"""Config files as a library source: every kernel object of each file (ckast's forms or CK's own
formats, `ckast.config.ck_formats`) is one candidate, validated like a rule set's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ckast.config import ConfigError, kernel_objects, read_json

from .selection import Candidate, SelectionError


def candidates(paths: Sequence[Path]) -> list[Candidate]:
    """Candidates of the files, origin `file:json.path`; a file that cannot be read as a config
    (not JSON, a structural error of CK's format, a kernel that is not an object) is a SelectionError."""
    out: list[Candidate] = []
    for path in paths:
        try:
            objects = kernel_objects(read_json(path))
        except ConfigError as exc:
            raise SelectionError("\n".join(ConfigError(exc.issues, exc.source or str(path)).lines())) from None
        for where, obj in objects:
            if not isinstance(obj, dict):
                raise SelectionError(f"{path}: {where or '<root>'}: a kernel must be a JSON object")
            out.append(Candidate(f"{path}:{where}" if where else str(path), obj))
    return out
