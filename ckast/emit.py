"""`ckast emit`: validated configs -> kernel files, run files and a manifest, written only when changed.

Per kernel: `<name>.hpp` (the launcher), `<name>.cpp` (one-line TU) and
`dispatcher_wrappers/dispatcher_wrapper_<name>.hpp` (registry factory). Per run, built from this
run's kernel list: `dispatcher_wrappers/register_all_kernels.hpp` for GEMM, the grouped-conv
include-all headers and chunked registration (`ckast.lower.conv_registration`), and
`manifest.json`, written through `ckast.output`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, NamedTuple

import attrs

from ckast import nodes as n
from ckast.catalog import DEFAULT_PROFILE, load_profile
from ckast.config import ConfigError, ConfigIssue, LoadedKernel, as_dict
from ckast.arch import check_config
from ckast.arch.rules import QUANT_VARIANTS
from ckast.lower import conv_registration
from ckast.lower.identity import WRAPPER_DIR, EntryPoint, wrapper_path
from ckast.lower.registration import Registered, registration_header
from ckast.nodes.format import clang_format
from ckast.output import CMAKE_FILE, Transaction, kernels_cmake, write_tree
from ckast.render import Renderer, render_kernel, shared
from ckast.render.kernel import file_names
from ckast.variants import KEY_GAPS, KEY_RULE, conv, registry_key

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
    files: tuple[tuple[str, str | None], ...]  # (path, source) of every file of this kernel
    manifest_line: str | None = None  # its manifest entry, encoded by the process that rendered it

    def manifest_entry(self) -> str | dict[str, Any]:
        """The kernel's item of the manifest's `kernels` list."""
        if self.manifest_line is not None:
            return self.manifest_line
        return {"name": self.name, "header": self.header, "entry_points": [e.as_dict() for e in self.entry_points],
                "files": [path for path, _ in self.files], "config": self.config}


def render(kernels: Sequence[LoadedKernel], renderer: Renderer | None = None, save: bool = True,
           check_keys: bool = True) -> list[EmittedKernel]:
    """Build and print every kernel; raise ConfigError (nothing written) if any cannot be built.

    Identical configs deduplicate (one name); the result is sorted by name. Kernels render through
    `renderer` (default: this process's shared one); `save` keeps the templates it recorded.
    `check_keys` refuses kernels whose CK registry keys collide (a library's `build` has already).
    """
    issues: list[ConfigIssue] = []
    out: dict[str, EmittedKernel] = {}
    keyed: dict[object, list[tuple[str, str]]] = {}
    renderer = renderer or shared()
    for item in kernels:
        c = item.config
        waived = check_config(c)  # rules waived to emit it (`arch.waivers`): its header names them
        try:
            profile = load_profile(c.ck_api)
            text = render_kernel(c, profile, waived) if waived else renderer.render(c, profile)
        except (ValueError, n.PrintError) as exc:  # catalog refusals name the profile and reason
            issues.append(ConfigIssue(item.path, str(exc)))
            continue
        knobs = as_dict(c)
        if text.name in out and out[text.name].config != knobs:
            issues.append(ConfigIssue(item.path, f"name {text.name} already names a different kernel (hash collision)"))
            continue
        out[text.name] = EmittedKernel(text.name, text.header, text.entry_points, knobs, c.arch, text.files)
        if check_keys:
            keyed.setdefault(registry_key(c), []).append((item.path, c.kind, text.name))
    for users in keyed.values():
        names = sorted({name for _, _, name in users})
        if len(names) > 1:
            key_type, missing = KEY_GAPS[users[-1][1]]
            issues.append(ConfigIssue(users[-1][0], (
                f"kernels {', '.join(names)} differ only in fields CK's {key_type} does not hold ({missing}); "
                "its registry would keep one of them"), KEY_RULE))
    if save:
        renderer.save()
    if issues:
        raise ConfigError(issues)
    return [out[k] for k in sorted(out)]


class Registrable(NamedTuple):
    """What the run files read of a kernel (its header is `<name>.hpp`, `render.kernel.file_names`)."""

    name: str
    arch: str
    kind: str
    variant: str


class RunFiles(NamedTuple):
    """Run files printed ahead of `write_outputs` (`ckast.library.generate` has a rendering process
    print them while the others render), for the kernels `items` in `chunk_size` chunks."""

    items: tuple[Registrable, ...]
    chunk_size: int
    files: list[tuple[str, str]]


def registrables(kernels: Sequence[EmittedKernel]) -> tuple[Registrable, ...]:
    return tuple(Registrable(k.name, k.arch, k.config["kind"], k.config["variant"]) for k in kernels)


def run_files(kernels: Sequence[EmittedKernel], chunk_size: int = CHUNK_SIZE,
              printed: RunFiles | None = None) -> list[tuple[str, str]]:
    """Files that belong to the whole run: GEMM registration, conv include-all and chunked registration
    (`printed`, if they were printed for the same kernels and chunk size)."""
    items = registrables(kernels)
    if printed is not None and printed.chunk_size == chunk_size and printed.items == items:
        return printed.files
    return print_run_files(items, chunk_size)


def print_run_files(items: Sequence[Registrable], chunk_size: int) -> list[tuple[str, str]]:
    """`run_files` of the kernels `items` (sorted by name)."""
    profile = load_profile(DEFAULT_PROFILE)  # registration names only dispatcher entities, shared by all profiles
    gemms = [Registered(k.name, k.arch, wrapper_path(k.name)) for k in items
             if k.kind == "gemm" and k.variant not in QUANT_VARIANTS]  # quant GEMMs have no wrapper
    convs = [conv_registration.ConvRegistered(k.name, conv.direction(k.variant).short, k.arch,
                                              file_names(k.name)[0], wrapper_path(k.name))
             for k in items if k.kind == "grouped_conv"]
    files: list[tuple[str, n.File]] = []
    if gemms:
        files.append((REGISTRATION, registration_header(gemms, profile, "tile_gemm_kernels", "ckast")))
    if convs:
        files += conv_registration.registration_files(convs, profile, chunk_size)
    return [(path, n.to_source(file)) for path, file in files]


def tree_files(kernels: Sequence[EmittedKernel], chunk_size: int = CHUNK_SIZE,
               printed: RunFiles | None = None) -> list[tuple[str, str]]:
    """Every file of a run that no single kernel owns: `run_files` and `ckast_kernels.cmake`."""
    per_run = run_files(kernels, chunk_size, printed)
    paths = [path for k in kernels for path, _ in k.files] + [path for path, _ in per_run]
    cmake = kernels_cmake([p for k in kernels for p, _ in k.files if p.endswith(".cpp")],
                          [p for p, _ in per_run if p.endswith(".cpp")], [p for p in paths if p.endswith(".hpp")],
                          [k.arch for k in kernels], [k.config["ck_api"] for k in kernels])
    return per_run + [(CMAKE_FILE, cmake)]


def write_outputs(kernels: Sequence[EmittedKernel], out: Path | Transaction, *, format: bool = False,
                  chunk_size: int = CHUNK_SIZE, run: Mapping[str, Any] | None = None,
                  stamp: tuple[str, Mapping[str, Any]] | None = None,
                  done: Mapping[str, tuple[bool, list[int] | None]] | None = None,
                  printed: RunFiles | None = None) -> dict[str, int]:
    """Write every kernel's files, the run's aggregates and the manifest into `out` (a directory, or
    the transaction of a run that has already staged some files) and commit. `run` describes how the
    run was made (e.g. a rule set selection); files an earlier run generated and this one did not are
    gone; the run's `stamp` (key, summary) lets a rerun with the same key skip everything. Kernel files
    whose text is None were staged by a rendering process; `done` says which changed and their states;
    `printed`: the run files, if printed ahead (`run_files`)."""
    files = [f for k in kernels for f in k.files if f[1] is not None] + tree_files(kernels, chunk_size, printed)
    manifest = {"kernels": [k.manifest_entry() for k in kernels], **({"run": dict(run)} if run else {})}

    def formatted(path: str, text: str) -> str:
        return clang_format(text, assume_filename=path) if path.endswith((".hpp", ".cpp")) else text

    transform = formatted if format else None
    with nullcontext(out) if isinstance(out, Transaction) else Transaction(out) as tx:
        return write_tree(files, manifest, tx, transform, stamp, done)
