"""Whether emitted headers fit the CK tree a compile check uses: each header's CK API profile (its manifest
entry's `ck_api`, else a `_<profile>.hpp` suffix) against the profile the tree matches (`ckast api detect`),
one line per folder and profile that does not fit, saying what to do.

A header whose profile is not recorded is not compared. The tree is parsed once with libclang (cached per
tree, see `ckast.api.parse`); without libclang the comparison cannot be made (`ApiUnavailable`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ckast.errors import CkastError

ALLOW_FLAG = "--allow-api-mismatch"
"""The `ckast check` flag that compiles headers whose profile the tree does not match (a warning each)."""


class ApiMismatch(CkastError):
    """Headers written for a CK API profile the CK tree they are to be compiled against does not match (one line
    per folder and profile)."""


def header_profiles(headers: Iterable[Path]) -> dict[tuple[str, str], list[Path]]:
    """The headers by (folder as given, profile), for the headers whose profile is recorded; ManifestError when a
    folder's manifest cannot be read."""
    from ckast.catalog import profile_names
    from ckast.output import manifest_in

    names = profile_names()
    recorded: dict[Path, dict[str, str]] = {}
    groups: dict[tuple[str, str], list[Path]] = {}
    for header in map(Path, headers):
        folder = header.resolve().parent
        if folder not in recorded:
            manifest = manifest_in(folder)
            recorded[folder] = {k.header: k.config.get("ck_api") for k in (manifest.kernels or ()) if k.header
                                } if manifest is not None else {}
        profile = recorded[folder].get(header.name)
        if profile not in names:
            profile = next((name for name in names if header.stem.endswith(f"_{name}")), None)
        if profile is not None:
            groups.setdefault((os.path.normpath(header.parent), profile), []).append(header)
    return groups


def mismatch_lines(headers: Iterable[Path], ck_include: Path) -> list[str]:
    """One line per folder and profile of `headers` that the tree `ck_include` does not match, naming the profile
    the tree matches (or the closest) and the fix; empty when every recorded profile matches. ApiUnavailable
    without libclang, ToolchainError without clang or HIP."""
    groups = header_profiles(headers)
    if not groups:
        return []
    from ckast.api.tree import detect

    reports = {r.profile: r for r in detect(ck_include)}
    matched = [name for name, r in reports.items() if not r.rows]
    lines = []
    for folder, profile in groups:
        if profile in matched:
            continue
        head = f"{folder}/ was written for CK API {profile}, but {ck_include}"
        if matched:
            lines.append(f"{head} matches {matched[0]}: emit again with --ck-api {matched[0]} (or --ck-include "
                         f"{ck_include}), or pass --ck-include a CK tree of {profile}")
        else:
            closest = next(iter(reports))
            lines.append(f"{head} matches no CK API profile ({len(reports[profile].rows)} mismatches with {profile}, "
                         f"listed by `ckast api check --ck-include {ck_include} --ck-api {profile}`"
                         f"{'' if closest == profile else f'; the closest is {closest}'}): pass --ck-include a CK "
                         f"tree of {profile}")
    return lines
