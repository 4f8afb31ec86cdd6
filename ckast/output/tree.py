"""Writing one run's files into an output directory.

`write_tree` writes every file whose bytes differ from what is on disk (unchanged files keep their
mtime), writes `manifest.json` last, and removes the files the previous manifest lists that this
run did not produce. Files ckast never listed in a manifest are never touched.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ckast.lower.identity import EntryPoint

from .stamp import clear_stamp, write_stamp

MANIFEST = "manifest.json"
TMP_SUFFIX = ".ckast-tmp"


def write_if_changed(path: str | Path, text: str, made_dirs: set[str] | None = None) -> bool:
    """Atomically replace `path` with `text` unless it already holds exactly that; True if written.

    The bytes go to `.<name>.ckast-tmp` beside it first, then replace it in one rename. `made_dirs`
    remembers directories already created in this run (one mkdir each).
    """
    data = text.encode()
    try:
        with open(path, "rb") as fh:
            if fh.read() == data:
                return False
    except FileNotFoundError:
        pass
    parent, name = os.path.split(path)
    if made_dirs is None or parent not in made_dirs:
        os.makedirs(parent or ".", exist_ok=True)
        if made_dirs is not None:
            made_dirs.add(parent)
    tmp = os.path.join(parent, f".{name}{TMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return True


def write_tree(files: Iterable[tuple[str, str]], manifest: Mapping[str, Any], out_dir: Path,
               transform: Callable[[str, str], str] | None = None,
               stamp: tuple[str, Mapping[str, Any]] | None = None, done: Mapping[str, bool] | None = None,
               ) -> dict[str, int]:
    """Write `files` (path relative to `out_dir`, text) and the manifest; remove stale files.

    `manifest` gets a sorted `files` list added. `transform(path, text)` may rewrite a file's text
    before it is compared (e.g. clang-format). `stamp` = (run key, summary) records the run for
    `ckast.output.stamp.up_to_date`. `done` lists files of this run already written elsewhere (True)
    or found up to date (False). Returns counts: written, unchanged, removed.
    """
    out_dir = Path(out_dir)
    clear_stamp(out_dir)
    old = load_manifest(out_dir)
    done = done or {}
    written = sum(done.values())
    unchanged = len(done) - written
    current: set[str] = set(done)
    made_dirs: set[str] = set()
    root = str(out_dir)
    for path, text in files:
        current.add(path)
        if write_if_changed(os.path.join(root, path), transform(path, text) if transform else text, made_dirs):
            written += 1
        else:
            unchanged += 1
    write_if_changed(out_dir / MANIFEST, manifest_text({**manifest, "files": sorted(current)}))
    removed = 0
    for path in old.get("files", []):
        if path not in current and (out_dir / path).is_file():
            (out_dir / path).unlink()
            removed += 1
    if stamp is not None:
        write_stamp(out_dir, stamp[0], [*current, MANIFEST], {**stamp[1], "files": len(current)})
    return {"written": written, "unchanged": unchanged, "removed": removed}


def manifest_text(manifest: Mapping[str, Any]) -> str:
    """JSON, keys sorted, one line per item of a top-level list (a kernel's entry is one line):
    readable and diffable, and written by the C encoder (indented JSON takes the slow Python one)."""
    lines = ["{"]
    for i, key in enumerate(sorted(manifest)):
        value, comma = manifest[key], "," if i < len(manifest) - 1 else ""
        head = f"  {json.dumps(key)}: "
        if isinstance(value, list) and value:
            items = [f"    {json.dumps(item, sort_keys=True)}" for item in value]
            lines += [head + "[", ",\n".join(items), "  ]" + comma]
        else:
            lines.append(head + json.dumps(value, sort_keys=True) + comma)
    return "\n".join(lines + ["}"]) + "\n"


def load_manifest(out_dir: Path) -> dict:
    path = Path(out_dir) / MANIFEST
    if not path.is_file():
        return {}
    return json.loads(path.read_text())


def entry_points_for(header: Path) -> tuple[EntryPoint, ...]:
    """Launcher entry points of an emitted header, from the manifest beside it (empty if none)."""
    from ckast.lower.identity import EntryPoint

    for entry in load_manifest(header.parent).get("kernels", []):
        if entry["header"] == header.name:
            return tuple(EntryPoint(**e) for e in entry["entry_points"])
    return ()
