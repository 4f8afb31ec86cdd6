"""The library a selector was emitted for, as its manifest records it (`selector.library`), and the API
profiles of a library's kernels: what `ckast jit` reads to check a selector against its library.

`ckast select emit` records the library's folder relative to the selector's, so the two can move together.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ckast.output import MANIFEST


class RecordError(ValueError):
    """A manifest that is unreadable or malformed, or records a library that is gone (bad input, exit 2)."""


def library_record(library_dir: Path, selector_dir: Path) -> str:
    """`library_dir` as the selector's manifest records it: relative to `selector_dir`."""
    return Path(os.path.relpath(library_dir, selector_dir)).as_posix()


def _manifest(folder: Path) -> tuple[Path, dict[str, Any]]:
    """The manifest in `folder` and its contents ({} when there is none)."""
    manifest = Path(folder) / MANIFEST
    if not manifest.is_file():
        return manifest, {}
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecordError(f"{manifest}: cannot read the manifest: {exc.strerror}") from None
    except ValueError as exc:
        raise RecordError(f"{manifest}: not a ckast manifest ({exc})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{manifest}: not a ckast manifest (expected a JSON object)")
    return manifest, data


def recorded_library(folder: Path) -> Path | None:
    """The library folder the selector in `folder` was emitted for; None when `folder` holds no selector (no
    manifest, or the manifest of another run)."""
    manifest, data = _manifest(folder)
    if "selector" not in data:
        return None
    record = data["selector"].get("library") if isinstance(data["selector"], dict) else None
    if not isinstance(record, str) or not record:
        raise RecordError(f"{manifest}: selector.library: expected the path of the library the selector was "
                          "emitted for (emit the selector again)")
    library = Path(os.path.normpath(manifest.parent / record))
    if not library.is_dir():
        raise RecordError(f"{manifest}: selector.library: {library} is not a folder (the library the selector "
                          "was emitted for: emit it again, or give its folder with -I)")
    return library


def library_profiles(folder: Path) -> set[str]:
    """The API profiles of the kernels the manifest in `folder` lists (none for a folder without one, or with
    the manifest of a run of no kernels, such as a selector)."""
    manifest, data = _manifest(folder)
    kernels = data.get("kernels", [])
    if not isinstance(kernels, list):
        raise RecordError(f"{manifest}: kernels: expected a list")
    profiles = set()
    for i, entry in enumerate(kernels):
        config = entry.get("config") if isinstance(entry, dict) else None
        if not isinstance(config, dict) or not isinstance(config.get("ck_api"), str):
            raise RecordError(f"{manifest}: kernels[{i}]: expected an object with a config naming its ck_api")
        profiles.add(config["ck_api"])
    return profiles
