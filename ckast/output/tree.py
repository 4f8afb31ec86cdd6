"""Writing one run's files into an output directory.

`write_tree` writes every file whose bytes differ from what is on disk (unchanged files keep their
mtime), writes `manifest.json` last, and removes the files the previous manifest lists that this
run did not produce. Files ckast never listed in a manifest are never touched.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ckast.lower.identity import EntryPoint

MANIFEST = "manifest.json"


def write_if_changed(path: Path, text: str) -> bool:
    """Atomically replace `path` with `text` unless it already holds exactly that; True if written."""
    data = text.encode()
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)
    return True


def write_tree(files: Iterable[tuple[str, str]], manifest: Mapping[str, Any], out_dir: Path,
               transform: Callable[[str, str], str] | None = None) -> dict[str, int]:
    """Write `files` (path relative to `out_dir`, text) and the manifest; remove stale files.

    `manifest` gets a sorted `files` list added. `transform(path, text)` may rewrite a file's text
    before it is compared (e.g. clang-format). Returns counts: written, unchanged, removed.
    """
    out_dir = Path(out_dir)
    old = load_manifest(out_dir)
    written = unchanged = 0
    current: set[str] = set()
    for path, text in files:
        current.add(path)
        if write_if_changed(out_dir / path, transform(path, text) if transform else text):
            written += 1
        else:
            unchanged += 1
    write_if_changed(out_dir / MANIFEST, json.dumps({**manifest, "files": sorted(current)}, indent=2, sort_keys=True) + "\n")
    removed = 0
    for path in old.get("files", []):
        if path not in current and (out_dir / path).is_file():
            (out_dir / path).unlink()
            removed += 1
    return {"written": written, "unchanged": unchanged, "removed": removed}


def load_manifest(out_dir: Path) -> dict:
    path = Path(out_dir) / MANIFEST
    if not path.is_file():
        return {}
    return json.loads(path.read_text())


def entry_points_for(header: Path) -> tuple[EntryPoint, ...]:
    """Launcher entry points of an emitted header, from the manifest beside it (empty if none)."""
    for entry in load_manifest(header.parent).get("kernels", []):
        if entry["header"] == header.name:
            return tuple(EntryPoint(**e) for e in entry["entry_points"])
    return ()
