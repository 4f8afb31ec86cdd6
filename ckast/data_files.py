"""Packaged TOML data (arch specs, API profiles, rule-set tables), parsed once per content.

`tomllib` takes tens of milliseconds for the larger files, on every start of the command line. The
parsed tables are kept as JSON under the cache directory, named by a digest of the file's bytes, so a
changed file is parsed again and a stale entry is never read. `cache_root()` is also where the
template cache lives (`ckast.render.cache`); `file_states`/`unchanged` tell whether the files a cache
entry or a run stamp recorded are still as they were.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ckast.json_out import dumps


def user_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/ckast` or `~/.cache/ckast` (also where `ckast check` keeps CK's headers)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ckast"


def cache_root() -> Path | None:
    """Where computed data is kept: `$CKAST_CACHE_DIR`, else `user_cache_dir()`; None when it is `off`."""
    root = os.environ.get("CKAST_CACHE_DIR")
    if root == "off":
        return None
    return Path(root) if root else user_cache_dir()


def load_toml(path: Path) -> dict[str, Any]:
    """The tables of the TOML file at `path`."""
    data = path.read_bytes()
    root = cache_root()
    if root is None:
        return _parse_toml(data)
    import hashlib  # not at the top: a rerun answered by `ckast.output.replay` needs no digest

    kept = root / "toml" / f"{hashlib.sha256(data).hexdigest()[:32]}.json"
    try:
        return json.loads(kept.read_bytes())
    except (OSError, ValueError):
        pass
    tables = _parse_toml(data)
    keep_json(kept, tables)
    return tables


def _parse_toml(data: bytes) -> dict[str, Any]:
    import tomllib  # only when a file is not cached yet

    return tomllib.loads(data.decode())


def keep_json(path: Path, data: Any) -> None:
    """Write `data` as JSON to the cache file `path` (`keep_bytes`); nothing if it is not strict JSON."""
    try:
        text = dumps(data)
    except ValueError:
        return
    keep_bytes(path, text.encode())


ENTRIES, BYTES = 1000, 256 << 20
"""What one directory of the cache holds at most: files, and bytes in them (`keep_bytes` removes the least
recently written past either when it adds a file)."""


def keep_bytes(path: Path, data: bytes) -> None:
    """Write `data` to the cache file `path`, replaced in one rename; best effort (a cache never fails
    a run). A file new to its directory bounds the directory (`ENTRIES`, `BYTES`)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        new = not path.exists()
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        if new:
            bound(path.parent, ENTRIES, BYTES)
    except OSError:
        pass


def bound(directory: Path, entries: int, size: int | None = None) -> None:
    """Remove the least recently written entries of `directory` (files, and folders with their files; not
    another process's staging files, `.*`) past the newest `entries`, or past `size` bytes of files if given."""
    import shutil  # not at the top: only when a cache directory gains a file

    found = []
    with os.scandir(directory) as scan:
        for entry in scan:
            if not entry.name.startswith("."):
                st = entry.stat(follow_symlinks=False)
                found.append((st.st_mtime_ns, st.st_size if entry.is_file(follow_symlinks=False) else 0, entry))
    found.sort(key=lambda f: f[0], reverse=True)
    total = 0
    for count, (_, nbytes, entry) in enumerate(found, 1):
        total += nbytes
        if count > entries or (size is not None and total > size and count > 1):
            try:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
            except OSError:
                continue


def file_states(root: Path | str, paths: Iterable[str]) -> dict[str, list[int] | None]:
    """[size, mtime] of each of `paths` under `root` (None for a missing one): what a cache entry or a
    run stamp records of the files it was made from or made, to tell later whether they changed."""
    states: dict[str, list[int] | None] = {}
    for path in sorted(paths):
        try:
            st = os.stat(os.path.join(root, path))
        except OSError:
            states[path] = None
        else:
            states[path] = [st.st_size, st.st_mtime_ns]
    return states


def unchanged(root: Path | str, recorded: Mapping[str, Any]) -> bool:
    """Whether the files `file_states` recorded under `root` (read back from JSON) are still as they were.
    Stops at the first difference; each file is looked up from an open `root` (a no-op rerun checks
    thousands)."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return all(state is None for state in recorded.values())
    try:
        for path, state in recorded.items():
            try:
                st = os.stat(path, dir_fd=fd)
            except OSError:
                if state is not None:
                    return False
                continue
            if state is None or st.st_size != state[0] or st.st_mtime_ns != state[1]:
                return False
        return True
    finally:
        os.close(fd)
