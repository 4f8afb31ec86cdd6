"""`ckast check` (real compiles against CK Tile) and `ckast jit` (in-process, against the host model)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import HELP, LazyChoice, arch_names, bad_input, fail, jobs_option, profile_names


def _print_ck_include(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from ckast.check import ToolchainError
    from ckast.check.toolchain import find_ck_include

    try:
        click.echo(find_ck_include())
    except ToolchainError as exc:
        fail(exc)
    ctx.exit()


@click.command(options_metavar="--compile HEADER [OPTIONS]", context_settings=HELP)
@click.option("--print-ck-include", is_flag=True, expose_value=False, is_eager=True, callback=_print_ck_include,
              help="Print the CK include root the checks compile against (as --ck-include defaults; downloaded "
                   "once), e.g. for a CMake build's -DCK_INCLUDE, and exit.")
@click.option("--compile", "headers", required=True, multiple=True, type=click.Path(exists=True, path_type=Path),
              metavar="HEADER", help="Emitted header to compile (repeatable; more headers may follow the options).")
@click.argument("more", nargs=-1, type=click.Path(exists=True, path_type=Path), metavar="[HEADER]...")
@click.option("--ck-include", type=click.Path(path_type=Path), default=None,
              help="CK include root (default: $CK_TILE_INCLUDE, ROCm, or the amd-aiter wheel's CK, downloaded once).")
@click.option("--arch", type=LazyChoice(arch_names), default="gfx942", show_default=True, help="Offload architecture.")
@click.option("--codegen", is_flag=True, help="Run the full backend (-O3 -S) instead of -fsyntax-only.")
@jobs_option("Parallel compiles (with --ninja: the -j the printed ninja command line suggests).")
@click.option("--ninja", "ninja_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the checks as a Ninja build file (run it with ninja -f FILE) instead of compiling.")
@click.option("--launcher", default="", help="With --ninja: command each compile runs through (e.g. ccache).")
@click.option("--allow-api-mismatch", is_flag=True,
              help="Compile headers whose CK API profile the CK tree does not match (a warning each) instead of "
                   "refusing them.")
def check(headers: tuple[Path, ...], more: tuple[Path, ...], ck_include: Path | None, arch: str,
          codegen: bool, jobs: int | None, ninja_file: Path | None, launcher: str, allow_api_mismatch: bool) -> None:
    """Compile emitted HEADERs (--compile HEADER, then any more) device-only against real CK Tile; print
    PASS/FAIL, time, peak memory.

    Before compiling, the CK API profile each header was written for (its manifest's ck_api) is compared
    with the profile the CK tree matches (`ckast api detect`): a mismatch is one line per folder naming the
    tree's profile and the fix, exit status 2, nothing compiled (--allow-api-mismatch: a warning, then the
    compiles).
    """
    from ckast.check import Toolchain, ToolchainError
    from ckast.check.profiles import ALLOW_FLAG, ApiMismatch
    from ckast.cores import default_jobs
    from ckast.input_file import InputFileError

    jobs = jobs or default_jobs()
    from ckast.output import ManifestError, entry_points_of
    from ckast.workflow.checks import api_fit, compile_check

    def warn(line: str) -> None:
        click.echo(f"ckast: warning: {line}", err=True)

    def report(result) -> None:
        click.echo(result.line())
        for error in result.errors:
            click.echo(f"    {error}")

    try:
        if ninja_file is None:
            results = compile_check([*headers, *more], ck_include=ck_include, arch=arch, codegen=codegen, jobs=jobs,
                                    on_result=report, allow_api_mismatch=allow_api_mismatch, on_warning=warn)
        else:
            points = entry_points_of([*headers, *more])  # a header's entry points, from the manifest beside it
            toolchain = Toolchain.discover(ck_include=ck_include, arch=arch)
            api_fit([*headers, *more], toolchain.ck_include, allow_api_mismatch=allow_api_mismatch, on_warning=warn)
    except (ManifestError, InputFileError) as exc:
        bad_input([str(exc)])
    except ApiMismatch as exc:
        bad_input([f"{line}; {ALLOW_FLAG} compiles them anyway" for line in exc.lines()])
    except ToolchainError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)

    if ninja_file is not None:
        from ckast.check.ninja import write_ninja

        outputs = write_ninja([*headers, *more], toolchain, lambda header: points[Path(header).resolve()], ninja_file,
                              mode="codegen" if codegen else "syntax", launcher=launcher)
        click.echo(f"{ninja_file}: {len(outputs)} checks; run: ninja -f {ninja_file} -j {jobs}")
        return
    failed = sum(not r.passed for r in results)
    click.echo(f"{len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


@click.command(context_settings=HELP)
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--ck-api", type=LazyChoice(profile_names), default=None,
              help="CK API profile (default: each file's manifest entry, a _<profile>.hpp suffix, the profile of "
                   "the library in the include folders, or ck-2025.11).")
@click.option("-I", "--include", "include_dirs", multiple=True, type=click.Path(path_type=Path), metavar="DIR",
              help="Folder searched for quoted includes after the including file's own and before the host "
                   "model's headers (repeatable; default: the library a selector or benchmark driver was emitted "
                   "for, from its manifest).")
def jit(paths: tuple[Path, ...], ck_api: str | None, include_dirs: tuple[Path, ...]) -> None:
    """JIT-compile emitted headers and sources in-process (cppyy: pip install 'ckast[jit]') against ckast's host
    model of CK Tile, each file a unit of its own.

    One line per file (PASS with the time, or FAIL followed by the compiler's diagnostics); exit status 1
    if any failed. Refused before any compile (exit 2): a file that is not C++ or defines main, an -I
    folder that does not exist, a selector or driver whose manifest does not record an existing library.

    \b
    Example:
      ckast jit -I lib/ selector/*.hpp selector/*.cpp
    """
    from ckast.hostmodel.sources import SourceError
    from ckast.select.cxx.record import RecordError
    from ckast.testing import JitUnavailable
    from ckast.workflow.checks import jit_check

    try:
        results = jit_check(paths, ck_api=ck_api, include=include_dirs,
                            on_result=lambda result: click.echo("\n".join(result.lines())))
    except (SourceError, RecordError) as exc:
        bad_input(str(exc).splitlines())
    except JitUnavailable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    failed = sum(not r.passed for r in results)
    click.echo(f"{len(paths) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
