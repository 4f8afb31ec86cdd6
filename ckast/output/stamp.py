"""Run stamps: skip a rerun that would change nothing, without enumerating or rendering anything.

A run's stamp holds the run key (a digest of everything the output depends on: ckast's own files, the
command, its options and the names and bytes of its input files), the summary the command prints, the
size and modification time of every file the run produced, and the digests of ckast's files and of the
manifest it wrote (`written_by_this_ckast`: a library read back needs no second check of its configs). A
rerun with the same key whose files all still have those sizes and times is up to date. A file changed or
removed by hand fails the check, and the run is done in full (which rewrites it).

The stamp is kept outside the output tree, in the cache directory (`ckast.data_files.cache_root`,
`runs/<digest of the tree's real path>.json`): the tree holds only what the inputs determine, so a
tree committed to git shows no change when a fresh run regenerates the same files. Without a cache
directory (`CKAST_CACHE_DIR=off`) every run is done in full.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from ckast.data_files import cache_root, keep_json, unchanged

_PACKAGE = Path(__file__).resolve().parent.parent


def package_paths(root: Path = _PACKAGE, folders: bool = False) -> list[str]:
    """The files under `root` (the ckast package) and, with `folders`, its folders (`.` for itself),
    bytecode aside, as sorted `/`-separated paths relative to `root`."""
    paths = []
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(top, root).replace(os.sep, "/")
        if folders:
            paths.append(rel)
        paths += [name if rel == "." else f"{rel}/{name}" for name in names]
    return sorted(paths)


@cache
def generator_digest() -> str:
    """Digest of every file of the ckast package (code, catalogs, rule-set data)."""
    h = hashlib.sha256()
    for rel in package_paths():
        with open(_PACKAGE / rel, "rb") as f:
            h.update(rel.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def run_key(command: str, options: Mapping[str, Any], inputs: Iterable[Path] = ()) -> str:
    """The key of a run of `command` (`emit`, `generate`): ckast's files, the command's options
    (JSON-able) and the names and bytes of its input files (config files, builder .conf files)."""
    h = hashlib.sha256()
    for path in inputs:
        h.update(str(path).encode() + b"\0" + (path.read_bytes() if path.is_file() else b"<missing>") + b"\0")
    text = json.dumps({"generator": generator_digest(), "command": command, "options": dict(options),
                       "inputs": h.hexdigest()}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def stamp_path(out_dir: Path | str) -> Path | None:
    """Where the stamp of the tree at `out_dir` is kept (None without a cache directory)."""
    root = cache_root()
    if root is None:
        return None
    return root / "runs" / f"{hashlib.sha256(os.fsencode(os.path.realpath(out_dir))).hexdigest()[:32]}.json"


def up_to_date(out_dir: Path | str, key: str) -> dict | None:
    """The summary recorded by the run that left `out_dir` as it is, if that run had `key` and every
    file it produced is still as it left it; else None. Reads only: changes nothing."""
    path = stamp_path(out_dir)
    try:
        stamp = json.loads(path.read_bytes()) if path is not None else None
    except (OSError, ValueError):
        return None
    if (not isinstance(stamp, dict) or stamp.get("key") != key or stamp.get("dir") != os.path.realpath(out_dir)
            or not isinstance(stamp.get("files"), dict) or not unchanged(out_dir, stamp["files"])):
        return None
    return stamp.get("summary")


def write_stamp(out_dir: Path | str, key: str, summary: Mapping[str, Any], files: Mapping[str, Any],
                manifest: str | None = None) -> None:
    """Record the run that produced the tree at `out_dir`: its key, `summary` (what to report when a
    rerun finds the tree up to date), `files` (`ckast.data_files.file_states` of what it produced) and
    `manifest` (`manifest_digest` of the manifest it wrote). Best effort, like every cache."""
    path = stamp_path(out_dir)
    if path is not None:
        keep_json(path, {"dir": os.path.realpath(out_dir), "key": key, "summary": dict(summary), "files": dict(files),
                         "generator": generator_digest(), "manifest": manifest})


def manifest_digest(data: bytes) -> str:
    """The digest of a manifest's bytes, as a stamp records it."""
    return hashlib.sha256(data).hexdigest()


def written_by_this_ckast(out_dir: Path | str, digest: str) -> bool:
    """Whether the stamp of `out_dir` records a manifest of `digest` (`manifest_digest`) written there by a run of
    this ckast (the same files: `generator_digest`). Reads only."""
    path = stamp_path(out_dir)
    try:
        stamp = json.loads(path.read_bytes()) if path is not None else None
    except (OSError, ValueError):
        return False
    return (isinstance(stamp, dict) and stamp.get("manifest") == digest
            and stamp.get("dir") == os.path.realpath(out_dir) and stamp.get("generator") == generator_digest())
