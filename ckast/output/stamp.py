"""Run stamps: skip a rerun that would change nothing, without enumerating or rendering anything.

After a run, `.ckast-stamp.json` beside the manifest records the run key (a digest of everything
the output depends on: ckast's own files and the command's inputs, such as the selection and the
bytes of its config files) and the size and modification time of every file the run produced. A
rerun with the same key whose files all still have those sizes and times is up to date. A file
changed or removed by hand fails the check, and the run is done in full (which rewrites it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from ckast.data_files import file_states, unchanged

STAMP = ".ckast-stamp.json"
_PACKAGE = Path(__file__).resolve().parent.parent


@cache
def generator_digest() -> str:
    """Digest of every file of the ckast package (code, catalogs, rule-set data)."""
    h = hashlib.sha256()
    for path in sorted(p for p in _PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def files_digest(paths: Iterable[Path]) -> str:
    """Digest of the names and bytes of input files (config files, a directory's .conf files)."""
    h = hashlib.sha256()
    for path in paths:
        h.update(str(path).encode() + b"\0" + (path.read_bytes() if path.is_file() else b"<missing>") + b"\0")
    return h.hexdigest()


def run_key(inputs: Mapping[str, Any]) -> str:
    """The key of a run: ckast's files and the command's inputs (JSON-able)."""
    text = json.dumps({"generator": generator_digest(), **inputs}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def up_to_date(out_dir: Path, key: str) -> dict | None:
    """The summary recorded by the run that left `out_dir` as it is, if that run had `key` and
    every file it produced is still as it left it; else None. What a killed run left beside
    `out_dir` is deleted either way."""
    from .transaction import remove_leftovers

    remove_leftovers(out_dir)
    try:
        stamp = json.loads((Path(out_dir) / STAMP).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("key") != key or not unchanged(out_dir, stamp.get("files", {})):
        return None
    return stamp.get("summary")


def write_stamp(out_dir: Path, key: str, paths: Iterable[str], summary: Mapping[str, Any]) -> None:
    """Record the run: its key, `summary` (what to report when a rerun finds the tree up to date),
    and the size and time of each of `paths` (relative to `out_dir`, the manifest included)."""
    files = file_states(out_dir, paths)
    # Written into the run's staging tree, which becomes visible whole (`ckast.output.transaction`).
    text = json.dumps({"key": key, "summary": dict(summary), "files": files}, sort_keys=True)
    (Path(out_dir) / STAMP).write_text(text)
