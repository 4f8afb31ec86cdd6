"""`ckast emit`: validated configs -> kernel files, run files and a manifest, written only when changed.

Per kernel: `<name>.hpp` (the launcher), `<name>.cpp` (one-line TU) and
`dispatcher_wrappers/dispatcher_wrapper_<name>.hpp` (registry factory). Per run, built from this
run's kernel list: `dispatcher_wrappers/register_all_kernels.hpp` for GEMM, the grouped-conv
include-all headers and chunked registration (`ckast.lower.conv_registration`), and
`manifest.json`. Files an earlier run wrote (per its manifest) and this run does not are removed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import attrs

from ckast import nodes as n
from ckast.catalog import DEFAULT_PROFILE, load_profile
from ckast.config import ConfigError, ConfigIssue, LoadedKernel, as_dict
from ckast.lower import conv_registration
from ckast.lower.identity import WRAPPER_DIR, EntryPoint, wrapper_path
from ckast.lower.registration import Registered, registration_header
from ckast.nodes.format import clang_format
from ckast.variants import conv, conv_wrapper, lower_kernel, unit_source, wrapper_header

MANIFEST = "manifest.json"
REGISTRATION = f"{WRAPPER_DIR}/register_all_kernels.hpp"
CHUNK_SIZE = 25
"""Kernels per grouped-conv registration TU (CK's default)."""


@attrs.frozen
class EmittedKernel:
    name: str
    header: str  # paths relative to the output directory
    entry_points: tuple[EntryPoint, ...]
    config: dict
    arch: str
    files: tuple[tuple[str, str], ...]  # (path, source) of every file of this kernel


def render(kernels: Sequence[LoadedKernel]) -> list[EmittedKernel]:
    """Build and print every kernel; raise ConfigError (nothing written) if any cannot be built.

    Identical configs deduplicate (one name); the result is sorted by name.
    """
    issues: list[ConfigIssue] = []
    out: dict[str, EmittedKernel] = {}
    keyed: dict[object, list[tuple[str, str]]] = {}
    for item in kernels:
        c = item.config
        try:
            profile = load_profile(c.ck_api)
            unit = lower_kernel(c, profile)
            header = f"{unit.name}.hpp"
            files = (
                (header, n.to_source(unit.header)),
                (f"{unit.name}.cpp", n.to_source(unit_source(header))),
                (wrapper_path(unit.name), n.to_source(wrapper_header(c, profile, header))),
            )
        except (ValueError, n.PrintError) as exc:  # catalog refusals name the profile and reason
            issues.append(ConfigIssue(item.path, str(exc)))
            continue
        if unit.name in out and out[unit.name].config != as_dict(c):
            issues.append(ConfigIssue(item.path, f"name {unit.name} already names a different kernel (hash collision)"))
            continue
        out[unit.name] = EmittedKernel(unit.name, header, unit.entry_points, as_dict(c), c.arch, files)
        if c.kind == "grouped_conv":
            keyed.setdefault(conv_wrapper.key_of(c), []).append((item.path, unit.name))
    for users in keyed.values():
        names = sorted({name for _, name in users})
        if len(names) > 1:
            issues.append(ConfigIssue(users[-1][0], (
                f"kernels {', '.join(names)} differ only in fields CK's GroupedConvKernelKey does not hold "
                "(two_stage, explicit_gemm, double_smem_buffer, lds_policy); its registry would keep one of them"),
                "registry.key_unique"))
    if issues:
        raise ConfigError(issues)
    return [out[k] for k in sorted(out)]


def run_files(kernels: Sequence[EmittedKernel], chunk_size: int = CHUNK_SIZE) -> list[tuple[str, str]]:
    """Files that belong to the whole run: GEMM registration, conv include-all and chunked registration."""
    profile = load_profile(DEFAULT_PROFILE)  # registration names only dispatcher entities, shared by all profiles
    gemms = [Registered(k.name, k.arch, wrapper_path(k.name)) for k in kernels if k.config["kind"] == "gemm"]
    convs = [conv_registration.ConvRegistered(k.name, conv.direction(k.config["variant"]).short, k.arch, k.header,
                                              wrapper_path(k.name))
             for k in kernels if k.config["kind"] == "grouped_conv"]
    files: list[tuple[str, n.File]] = []
    if gemms:
        files.append((REGISTRATION, registration_header(gemms, profile, "tile_gemm_kernels", "ckast")))
    if convs:
        files += conv_registration.registration_files(convs, profile, chunk_size)
    return [(path, n.to_source(file)) for path, file in files]


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


def write_outputs(kernels: Sequence[EmittedKernel], out_dir: Path, *, format: bool = False,
                  chunk_size: int = CHUNK_SIZE) -> dict[str, int]:
    """Write every file and the manifest; remove files an earlier run generated and this one did not."""
    out_dir = Path(out_dir)
    old = load_manifest(out_dir)
    files = [f for k in kernels for f in k.files] + run_files(kernels, chunk_size)
    written = unchanged = 0
    for path, source in files:
        text = clang_format(source, assume_filename=path) if format else source
        if write_if_changed(out_dir / path, text):
            written += 1
        else:
            unchanged += 1
    manifest = {
        "kernels": [
            {"name": k.name, "header": k.header, "entry_points": [e.as_dict() for e in k.entry_points],
             "files": [path for path, _ in k.files], "config": k.config}
            for k in kernels
        ],
        "files": sorted(path for path, _ in files),
    }
    write_if_changed(out_dir / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    current = {path for path, _ in files}
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
    manifest = load_manifest(header.parent)
    for entry in manifest.get("kernels", []):
        if entry["header"] == header.name:
            return tuple(EntryPoint(**e) for e in entry["entry_points"])
    return ()
