"""The `ckast` command line."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ckast import __version__
from ckast.catalog import profile_names

EXIT_BAD_INPUT = 2


@click.group()
@click.version_option(__version__, prog_name="ckast")
def main() -> None:
    """Generate CK Tile kernel-instance C++ from kernel configs."""


@main.command()
@click.option("--config", "config_path", required=True, type=click.Path(path_type=Path), help="JSON kernel config.")
@click.argument("more", nargs=-1, type=click.Path(path_type=Path))
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--ck-api", type=click.Choice(profile_names()), default=None,
              help="CK API profile for kernels whose config does not set ck_api.")
@click.option("--format/--no-format", "run_format", default=False, help="Also run the pinned clang-format.")
@click.option("--chunk-size", type=click.IntRange(min=1), default=25, show_default=True,
              help="Grouped-conv kernels per registration translation unit.")
def emit(config_path: Path, more: tuple[Path, ...], out_dir: Path, ck_api: str | None, run_format: bool,
         chunk_size: int) -> None:
    """Validate CONFIG (and MORE config files) and write the kernels of all of them as one run into OUTPUT.

    Invalid input: one line per problem on stderr, exit status 2, nothing written.
    """
    from ckast.config import ConfigError, load_file
    from ckast.emit import render, write_outputs

    problems: list[str] = []
    kernels = []
    for path in (config_path, *more):
        try:
            kernels += load_file(path, defaults={"ck_api": ck_api} if ck_api else None)
        except ConfigError as exc:
            problems += exc.lines()
    if not problems:
        try:
            emitted = render(kernels)
        except ConfigError as exc:
            problems += ConfigError(exc.issues, ", ".join(map(str, (config_path, *more)))).lines()
    if problems:
        for line in problems:
            click.echo(line, err=True)
        sys.exit(EXIT_BAD_INPUT)
    stats = write_outputs(emitted, out_dir, format=run_format, chunk_size=chunk_size)
    click.echo(
        f"{len(emitted)} kernels -> {out_dir}: {stats['written']} files written, "
        f"{stats['unchanged']} unchanged, {stats['removed']} removed"
    )


@main.command()
@click.option("--compile", "headers", required=True, multiple=True, type=click.Path(exists=True, path_type=Path),
              help="Emitted header to compile (repeatable).")
@click.argument("more", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--ck-include", type=click.Path(path_type=Path), default=None,
              help="CK include root (default: $CK_TILE_INCLUDE, ROCm, or the amd-aiter wheel's CK, downloaded once).")
@click.option("--arch", default="gfx942", show_default=True, help="Offload architecture.")
@click.option("--codegen", is_flag=True, help="Run the full backend (-O3 -S) instead of -fsyntax-only.")
@click.option("-j", "--jobs", default=1, show_default=True, type=click.IntRange(1), help="Parallel compiles.")
def check(headers: tuple[Path, ...], more: tuple[Path, ...], ck_include: Path | None, arch: str,
          codegen: bool, jobs: int) -> None:
    """Compile emitted headers device-only against real CK Tile; print PASS/FAIL, time, peak memory."""
    from ckast.check import Toolchain, ToolchainError, check_headers
    from ckast.emit import entry_points_for

    try:
        toolchain = Toolchain.discover(ck_include=ck_include, arch=arch)
    except ToolchainError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)

    def report(result) -> None:
        click.echo(result.line())
        for error in result.errors:
            click.echo(f"    {error}")

    results = check_headers([*headers, *more], toolchain, entry_points_for,
                            mode="codegen" if codegen else "syntax", parallel=jobs, on_result=report)
    failed = sum(not r.passed for r in results)
    click.echo(f"{len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--ck-api", type=click.Choice(profile_names()), default=None,
              help="CK API profile (default: each file's manifest entry, a _<profile>.hpp suffix, or ck-2025.11).")
def jit(paths: tuple[Path, ...], ck_api: str | None) -> None:
    """JIT-compile emitted files in-process (cppyy) against ckast's host model of CK Tile.

    One line per file (PASS with the time, or FAIL followed by the compiler's diagnostics); exit status 1
    if any failed.
    """
    import time

    from ckast.testing import JitError, jit_header, profile_of

    failed = 0
    for path in paths:
        profile = ck_api or profile_of(path)
        start = time.perf_counter()
        try:
            jit_header(path, profile)
        except JitError as exc:
            failed += 1
            click.echo(f"FAIL {path} [{profile}]")
            for line in str(exc).splitlines():
                click.echo(f"    {line}")
            continue
        click.echo(f"PASS {path} [{profile}] {(time.perf_counter() - start) * 1e3:.0f} ms")
    click.echo(f"{len(paths) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
