"""The library a selector or benchmark driver was emitted for, as its manifest records it (`selector.library`,
`bench.library`), and the API profiles of a library's kernels: what `ckast jit` reads to check a selector or
driver against its library (its include folder and its API profile).

`ckast select emit` and `ckast bench emit` record the library's folder relative to their own, so the two can
move together.
"""

from __future__ import annotations

import os
from pathlib import Path

from ckast.config.errors import shown
from ckast.errors import CkastError
from ckast.output.manifest import Manifest, ManifestError, manifest_in


class RecordError(CkastError, ValueError):
    """A manifest that is unreadable or malformed, or records a library that is gone (bad input, exit 2)."""


def library_record(library_dir: Path, out_dir: Path) -> str:
    """`library_dir` as a selector's or driver's manifest records it: relative to their folder `out_dir`."""
    return Path(os.path.relpath(library_dir, out_dir)).as_posix()


def run_manifest(folder: Path) -> Manifest | None:
    """The manifest in `folder` (`ckast.output.manifest`; None when there is none), RecordError if it is not
    ckast's to read."""
    try:
        return manifest_in(folder)
    except ManifestError as exc:
        raise RecordError(str(exc)) from None


def recorded_library(folder: Path) -> Path | None:
    """The library folder the selector or benchmark driver in `folder` was emitted for; None when `folder` holds
    neither (no manifest, or the manifest of another run). RecordError when the recorded folder is gone or holds
    no library (a manifest listing kernels): a manifest cannot point `ckast jit` at any other folder."""
    manifest = run_manifest(folder)
    if manifest is None:
        return None
    for key, record, what in (("selector", manifest.selector, "selector"), ("bench", manifest.bench, "driver")):
        if record is not None:
            library = Path(os.path.normpath(manifest.root / record["library"]))
            if not library.is_dir():
                raise RecordError(f"{manifest.path}: {key}.library: {library} is not a folder (the library the "
                                  f"{what} was emitted for: emit it again, or give its folder with -I)")
            held = run_manifest(library)
            if held is None or not held.kernels:  # the record points elsewhere (/etc, ../..): nothing is read there
                raise RecordError(f"{manifest.path}: {key}.library: {library} holds no library (no manifest listing "
                                  f"kernels), so it is not the one the {what} was emitted for: emit it again, or "
                                  "give the library's folder with -I")
            return library
    return None


def kernel_profile(manifest: Manifest, i: int) -> str:
    """The API profile the manifest's kernel `i` was emitted for (its config's `ck_api`); RecordError unless it
    names one of ckast's profiles."""
    from ckast.catalog import profile_names

    api = manifest.kernels[i].config.get("ck_api") if manifest.kernels else None
    if api not in profile_names():
        raise RecordError(f"{manifest.path}: kernels[{i}].config.ck_api: {shown(api)} is not an API profile "
                          f"({', '.join(profile_names())})")
    return api


def library_profiles(folder: Path) -> set[str]:
    """The API profiles of the kernels the manifest in `folder` lists (none for a folder without one, or with
    the manifest of a run of no kernels, such as a selector)."""
    manifest = run_manifest(folder)
    if manifest is None or not manifest.kernels:
        return set()
    return {kernel_profile(manifest, i) for i in range(len(manifest.kernels))}
