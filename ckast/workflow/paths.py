"""How the API takes file and directory names: one or several, as `str` or any path object."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

PathLike = str | os.PathLike[str]
"""A file or directory name."""


def path_list(value: PathLike | Iterable[PathLike]) -> list[Path]:
    """One name or several, as a list of paths."""
    return [Path(value)] if isinstance(value, (str, os.PathLike)) else [Path(p) for p in value]
