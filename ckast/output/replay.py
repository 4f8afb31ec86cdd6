"""A rerun that would change nothing, answered before the command line is parsed.

`generate` and `emit` find a tree up to date through its stamp (`ckast.output.stamp`), but only after
click has built the command line, the selection or configs are read and the run key is computed. A
run that leaves a stamp, or finds one up to date, also records how it was asked for (`record`): its
arguments, working directory, `CKAST_*` environment and interpreter; the states of ckast's own files
and of its input files (with a CRC of their bytes); the stamp's path and key and where the output
tree is; and the line a rerun prints. `replay(argv)` (the first thing `python -m ckast` and the
`ckast` script do) prints that line when the same command line comes again and all of it still
holds, the stamp included: its key, its tree at the same real path, every file it lists unchanged,
and no staging tree or lock file beside it (a run under way, or one that was killed). Otherwise the command runs as usual.

Entries are `runs/argv-<CRC32 of the command line>.json` in the cache directory (the entry holds the
command line itself, so two that share a CRC only miss). Runs with `--builder-conf` or `--ck-include`
record none: their inputs are directory trees.
"""

from __future__ import annotations

import json
import os
import sys
import time
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ckast.data_files import cache_root, file_states, keep_json, unchanged

_PACKAGE = Path(__file__).resolve().parent.parent

enabled = False
"""Whether this process runs ckast's own command line (set by the CLI; a CliRunner call records nothing)."""


def noop_line(head: str, seconds: float | None) -> str:
    """What a command prints when it finds its tree up to date (`seconds`: how long it took to find out)."""
    return f"{head} in {seconds:.1f} s (up to date)" if seconds is not None else f"{head} (up to date)"


def replay(argv: Sequence[str]) -> bool:
    """Print the recorded line of the command line `argv` if its run's tree is still up to date."""
    start = time.perf_counter()
    call = _call(argv)
    path = _entry_path(call)
    if path is None:
        return False
    try:
        entry = json.loads(path.read_bytes())
        if entry["call"] != call or not _holds(entry):
            return False
        line = noop_line(entry["head"], time.perf_counter() - start if entry["timed"] else None)
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return False
    print(line)
    return True


def record(head: str, timed: bool, key: str, out_dir: Path | str, inputs: Iterable[Path]) -> None:
    """Record this process's command line as answered by the run of `key` into `out_dir` (whose stamp
    was just written or found up to date), read from the files `inputs`. Best effort."""
    root = cache_root()
    if not enabled or root is None:
        return
    from .stamp import package_paths, stamp_path
    from .lock import lock_path
    from .transaction import leftover_paths

    call = _call(sys.argv[1:])
    out = os.path.realpath(out_dir)
    inputs_states = {}
    try:
        for path in inputs:
            st = os.stat(path)
            inputs_states[os.path.abspath(path)] = [st.st_size, st.st_mtime_ns, _crc(path)]
    except OSError:
        return
    entry = {
        "call": call, "package": file_states(_PACKAGE, package_paths(_PACKAGE, folders=True)), "inputs": inputs_states,
        "stamp": str(stamp_path(out)), "key": key, "out": str(out_dir), "dir": out,
        "leftovers": [str(p) for p in (*leftover_paths(Path(out)), lock_path(Path(out)))], "head": head, "timed": timed,
    }
    keep_json(_entry_path(call), entry)


def _call(argv: Sequence[str]) -> dict[str, Any]:
    env = {name: value for name, value in sorted(os.environ.items()) if name.startswith("CKAST_")}
    return {"argv": list(argv), "cwd": os.getcwd(), "env": env, "python": sys.version, "ckast": str(_PACKAGE)}


def _entry_path(call: dict[str, Any]) -> Path | None:
    root = cache_root()
    crc = zlib.crc32(json.dumps(call, sort_keys=True).encode())
    return None if root is None else root / "runs" / f"argv-{crc:08x}.json"


def _holds(entry: dict[str, Any]) -> bool:
    """Whether ckast's files, the inputs and the stamp's tree are as the entry found them."""
    if not unchanged(_PACKAGE, entry["package"]):
        return False
    for path, (size, mtime, crc) in entry["inputs"].items():
        st = os.stat(path)
        if st.st_size != size or st.st_mtime_ns != mtime or _crc(path) != crc:
            return False
    if any(os.path.lexists(p) for p in entry["leftovers"]) or os.path.realpath(entry["out"]) != entry["dir"]:
        return False
    stamp = json.loads(Path(entry["stamp"]).read_bytes())
    return stamp["key"] == entry["key"] and stamp["dir"] == entry["dir"] and unchanged(entry["dir"], stamp["files"])


def _crc(path: Path | str) -> int:
    with open(path, "rb") as f:
        return zlib.crc32(f.read())
