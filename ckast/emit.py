"""`ckast emit`: validated configs -> kernel headers and a manifest, written only when changed."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import attrs

from ckast import nodes as n
from ckast.catalog import load_profile
from ckast.config import ConfigError, ConfigIssue, LoadedKernel, as_dict
from ckast.lower.identity import entry_points, kernel_name
from ckast.nodes.format import clang_format
from ckast.variants import builder

MANIFEST = "manifest.json"


@attrs.frozen
class EmittedKernel:
    name: str
    header: str  # path relative to the output directory
    entry_points: tuple[str, ...]
    config: dict
    source: str


def render(kernels: Sequence[LoadedKernel]) -> list[EmittedKernel]:
    """Build and print every kernel; raise ConfigError (nothing written) if any cannot be built."""
    issues: list[ConfigIssue] = []
    out: dict[str, EmittedKernel] = {}
    for item in kernels:
        c = item.config
        build = builder(c.kind, c.variant)
        if build is None:
            issues.append(ConfigIssue(item.path, f"{c.kind} variant {c.variant!r} is not implemented yet"))
            continue
        try:
            source = n.to_source(build(c, load_profile(c.ck_api)))
        except (ValueError, n.PrintError) as exc:  # catalog refusals name the profile and reason
            issues.append(ConfigIssue(item.path, str(exc)))
            continue
        name = kernel_name(c)
        out[name] = EmittedKernel(name, f"{name}.hpp", entry_points(name), as_dict(c), source)
    if issues:
        raise ConfigError(issues)
    return [out[k] for k in sorted(out)]


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


def write_outputs(kernels: Sequence[EmittedKernel], out_dir: Path, *, format: bool = False) -> dict[str, int]:
    """Write headers and the manifest; remove files an earlier run generated and this one did not."""
    out_dir = Path(out_dir)
    old = load_manifest(out_dir)
    written = unchanged = 0
    for k in kernels:
        text = clang_format(k.source, assume_filename=k.header) if format else k.source
        if write_if_changed(out_dir / k.header, text):
            written += 1
        else:
            unchanged += 1
    manifest = {
        "kernels": [
            {"name": k.name, "header": k.header, "entry_points": list(k.entry_points), "config": k.config}
            for k in kernels
        ]
    }
    write_if_changed(out_dir / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    current = {k.header for k in kernels}
    removed = 0
    for entry in old.get("kernels", []):
        if entry["header"] not in current and (out_dir / entry["header"]).is_file():
            (out_dir / entry["header"]).unlink()
            removed += 1
    return {"written": written, "unchanged": unchanged, "removed": removed}


def load_manifest(out_dir: Path) -> dict:
    path = Path(out_dir) / MANIFEST
    if not path.is_file():
        return {}
    return json.loads(path.read_text())


def entry_points_for(header: Path) -> tuple[str, ...]:
    """Launcher entry points of an emitted header, from the manifest beside it (empty if none)."""
    manifest = load_manifest(header.parent)
    for entry in manifest.get("kernels", []):
        if entry["header"] == header.name:
            return tuple(entry["entry_points"])
    return ()
