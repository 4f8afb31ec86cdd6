"""Kernel configs from keyword arguments, parsed data or config files (ckast's format or CK's), and emitting
them into an output directory (what `ckast emit` does)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from ckast.config import ConfigError, ConfigIssue, KernelConfig, LoadedKernel, load_data, load_file, resolve_kernel

from ckast.arch.waivers import checked_waivers
from ckast.arguments import checked

from .paths import PathLike


def kernel(**knobs: Any) -> KernelConfig:
    """One validated kernel config from keyword arguments.

    The keywords are knob names (`kind`, `datatype`, `tile_m`, ...; CK's spellings of them are read too);
    knobs left out take their defaults.

    Example:
        `ckast.kernel(kind="gemm", datatype="fp16", tile_m=256, tile_n=128, arch="gfx942")`

    Raises:
        ConfigError: a knob is unknown, of the wrong type or not allowed, or an arch rule refuses the
            kernel; one line per problem, naming the knob.
    """
    resolved = resolve_kernel(knobs, "", hint=True)
    if not resolved.ok:
        raise ConfigError(resolved.issues)
    return resolved.config


@checked(ck_api="optional name", waive="names")
def parse_configs(data: Any, *, ck_api: str | None = None, waive: str | Iterable[str] = ()) -> list[KernelConfig]:
    """Every kernel of parsed JSON data: one kernel object, a list of them, `{"kernels": [...]}`, or one of CK's
    kernel-set configs (its GEMM generator config, GEMM or grouped-conv kernel-set config; see
    `ckast.config.ck_formats`), expanded as CK expands them.

    `ck_api` is the API profile of kernels that do not name one (default: ckast's default profile). `waive`
    names rules that refuse nothing here (waivable ones only: `ckast.arch.waivers`); `emit_kernels` opens the
    header of a kernel that breaks them with a banner naming them.

    Raises:
        ConfigError: one line per problem, each naming its JSON path.
        ArgumentError: `waive` names a rule that does not exist or cannot be waived.
    """
    return [k.config for k in load_data(data, _defaults(ck_api), checked_waivers(waive))]


@checked(path="path", ck_api="optional name", waive="names")
def load_configs(path: PathLike, *, ck_api: str | None = None, waive: str | Iterable[str] = ()) -> list[KernelConfig]:
    """Every kernel of a config file (as `parse_configs` reads its JSON, `waive` too).

    Raises:
        ConfigError: the file cannot be read or parsed, or its kernels are invalid; one line per problem,
            each naming the file and JSON path.
        ArgumentError: `waive` names a rule that does not exist or cannot be waived.
    """
    return [k.config for k in load_file(Path(path), _defaults(ck_api), checked_waivers(waive))]


def _defaults(ck_api: str | None) -> Mapping[str, Any] | None:
    return {"ck_api": ck_api} if ck_api else None


@attrs.frozen
class EmitResult:
    """What `emit_kernels` wrote into `output`."""

    output: Path
    kernels: tuple[str, ...]
    """The kernels' names, sorted (identical configs are one kernel)."""
    headers: tuple[Path, ...]
    """Each kernel's launcher header, in the order of `kernels`."""
    written: int
    """Files written (new or changed)."""
    unchanged: int
    """Files left as they were (the same bytes)."""
    removed: int
    """Files of an earlier run into `output` that this run does not produce."""


@checked(configs="several ckast.config:KernelConfig|LoadedKernel", output="path", format="flag",
         chunk_size="optional count", on_wait="optional callable", run_key="optional name")
def emit_kernels(configs: KernelConfig | Iterable[KernelConfig | LoadedKernel], output: PathLike, *,
                 format: bool = False, chunk_size: int | None = None, on_wait: Callable[[str], None] | None = None,
                 run_key: str | None = None) -> EmitResult:
    """Render kernels and write them as one run into the directory `output`: per kernel a header, a one-line
    TU and a dispatcher wrapper; per run the registration, `ckast_kernels.cmake` and `manifest.json`.

    Files are written only when their bytes change; files an earlier run wrote there and this one does not
    are removed; files that are not ckast's are kept. The directory changes as a whole or not at all.

    Args:
        configs: the kernels (`kernel`, `load_configs`); a `ckast.config.LoadedKernel` is named in messages
            by its JSON path.
        output: the output directory (created if missing).
        format: also run the pinned clang-format over the C++ files.
        chunk_size: grouped-conv kernels per registration translation unit (default: CK's, 25).
        on_wait: called with a message when another run holds `output` and this one waits for it.
        run_key: the key `ckast.output.stamp` records with the tree, so that a rerun of the same key can
            find it up to date without rendering.

    Raises:
        ConfigError: a kernel cannot be rendered (nothing is written).
        OutputError: the output directory cannot take the run (nothing is changed).
    """
    from ckast.emit import CHUNK_SIZE, render, write_outputs
    from ckast.output import Transaction

    items = [configs] if isinstance(configs, KernelConfig) else list(configs)
    if not items:
        raise ConfigError([ConfigIssue("configs", "no kernels given")])
    kernels = [c if isinstance(c, LoadedKernel) else LoadedKernel(f"configs[{i}]", c) for i, c in enumerate(items)]
    emitted = render(kernels)
    out = Path(output)
    with Transaction(out, on_wait=on_wait) as tx:
        stats = write_outputs(emitted, tx, format=format, chunk_size=CHUNK_SIZE if chunk_size is None else chunk_size,
                              stamp=None if run_key is None else (run_key, {"kernels": len(emitted)}))
    return EmitResult(out, tuple(k.name for k in emitted), tuple(out / k.header for k in emitted),
                      stats["written"], stats["unchanged"], stats["removed"])
