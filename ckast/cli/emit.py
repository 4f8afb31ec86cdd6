"""`ckast emit`: config files -> one run of kernels in an output directory."""

from __future__ import annotations

from pathlib import Path

import click

from ckast.wording import quantity

from .common import HELP, CK_API_HELP, Integer, LazyChoice, bad_input, fail, profile_names, tree_profile, wait_message


@click.command(options_metavar="--config FILE -o DIR [OPTIONS]", context_settings=HELP)
@click.option("--config", "config_paths", required=True, multiple=True, type=click.Path(path_type=Path),
              metavar="FILE", help="JSON kernel config file (repeatable; more files may also follow the options).")
@click.argument("more", nargs=-1, type=click.Path(path_type=Path), metavar="[FILE]...")
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(path_type=Path), metavar="DIR",
              help="Output directory.")
@click.option("--ck-api", type=LazyChoice(profile_names), default=None,
              help="CK API profile for kernels whose config does not set ck_api. " + CK_API_HELP)
@click.option("--format/--no-format", "run_format", default=False,
              help="Also run the pinned clang-format (pip install 'ckast[format]').")
@click.option("--chunk-size", type=Integer(min=1), default=25, show_default=True,
              help="Grouped-conv kernels per registration translation unit.")
@click.option("--ck-include", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="CK include tree the kernels are for: its API profile (see `ckast api detect`) becomes the "
                   "default ck_api, and every kernel's ck_api must be it.")
@click.option("--waive", "waive", multiple=True, metavar="RULE",
              help="Emit kernels this waivable rule refuses (as CK's generators emit them), each warned of on stderr "
                   "and named in a banner atop its header (repeatable).")
def emit(config_paths: tuple[Path, ...], more: tuple[Path, ...], out_dir: Path, ck_api: str | None, run_format: bool,
         chunk_size: int, ck_include: Path | None, waive: tuple[str, ...]) -> None:
    """Validate the config FILEs (each --config FILE, then any more) and write the kernels of all of them as one
    run into DIR.

    Invalid input: one line per problem on stderr, exit status 2, nothing written.
    """
    from ckast.arch.waivers import checked_waivers
    from ckast.arguments import ArgumentError
    from ckast.output import replay
    from ckast.output.stamp import run_key, up_to_date
    from ckast.output.transaction import remove_leftovers

    try:
        waived = checked_waivers(waive)
    except ArgumentError as exc:
        bad_input([str(exc)])

    if run_format:  # before anything is read or written: the pinned clang-format is an extra
        from ckast.nodes.format import FormatError, executable

        try:
            executable()
        except FormatError as exc:
            fail(exc)
    if ck_include is not None:
        ck_api = tree_profile(ck_include, ck_api)
    paths = (*config_paths, *more)
    options = {"ck_api": ck_api, "format": run_format, "chunk_size": chunk_size}
    key = run_key("emit", {**options, "waive": sorted(waived)} if waived else options, paths)
    from ckast.output import OutputError

    try:
        remove_leftovers(out_dir)
    except OutputError as exc:
        fail(exc)
    last = up_to_date(out_dir, key)
    if last is not None:
        head = _up_to_date_head(last, out_dir)
        click.echo(replay.noop_line(head, None))
        if ck_include is None:  # see ckast.output.replay
            replay.record(head, False, key, out_dir, paths)
        return

    from ckast.config import ConfigError, load_file
    from ckast.workflow.configs import emit_kernels

    problems: list[str] = []
    warnings: list[str] = []
    kernels = []
    for path in paths:
        try:
            loaded = load_file(path, defaults={"ck_api": ck_api} if ck_api else None, waive=waived)
        except ConfigError as exc:
            problems += exc.lines()
            continue
        kernels += loaded
        warnings += [f"warning: {issue.line(str(path))} (waived)" for k in loaded for issue in k.waived]
        if ck_include is not None:
            problems += [f"{path}: {k.path}.ck_api: {k.config.ck_api} is not the API profile of --ck-include "
                         f"{ck_include} ({ck_api})" for k in loaded if k.config.ck_api != ck_api]
    if problems:
        bad_input(problems)
    for line in warnings:
        click.echo(line, err=True)
    try:
        result = emit_kernels(kernels, out_dir, format=run_format, chunk_size=chunk_size, on_wait=wait_message,
                              run_key=key)
    except ConfigError as exc:
        bad_input(ConfigError(exc.issues, ", ".join(map(str, paths))).lines())
    except OutputError as exc:
        fail(exc)
    click.echo(
        f"{quantity(len(result.kernels), 'kernel')} -> {out_dir}: {quantity(result.written, 'file')} written, "
        f"{result.unchanged} unchanged, {result.removed} removed"
    )
    if ck_include is None:
        summary = {"kernels": len(result.kernels), "files": result.written + result.unchanged}
        replay.record(_up_to_date_head(summary, out_dir), False, key, out_dir, paths)


def _up_to_date_head(summary: dict, out_dir: Path) -> str:
    """The line of a rerun that finds the tree of the run with `summary` (its stamp's) up to date."""
    return (f"{quantity(summary['kernels'], 'kernel')} -> {out_dir}: 0 files written, {summary['files']} unchanged, "
            "0 removed")

