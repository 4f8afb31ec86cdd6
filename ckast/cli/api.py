"""`ckast api`: API profiles against CK include trees."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import HELP, LazyChoice, LazyDefaultOption, api_run, bad_input, default_profile, fail, profile_names


@click.group(context_settings=HELP)
def api() -> None:
    """Check API profiles against a CK include tree, detect a tree's profile, diff and draft profiles.

    PROFILE is a packaged profile name or the path of a profile file (*.toml). Mismatches exit 1;
    a missing clang, HIP or libclang exits 1 with one line; an unknown profile exits 2.
    """


CK_INCLUDE = click.option("--ck-include", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
                           help="CK include root (the directory holding ck_tile/).")


@api.command("check")
@CK_INCLUDE
@click.option("--ck-api", cls=LazyDefaultOption, default=default_profile, show_default=True,
              help="Profile to check: a packaged name or a profile file.")
def api_check(ck_include: Path, ck_api: str) -> None:
    """Compare every CK Tile entry of a profile with the tree's declarations (one libclang parse, cached):
    header, include, parameter count, order, names, kinds and defaults, enumerators, absent entries; and,
    when the tree has ck_tile/dispatcher/ (or a CK checkout's dispatcher/include beside it), the
    dispatcher entries with their fields, constructors, methods, signatures, aliases and bases."""
    from ckast import api as a

    def run():
        catalog = a.load_catalog(a.profile_ref(ck_api))
        parsed = a.declarations(ck_include, [catalog])
        return a.report(catalog, parsed.declarations), parsed

    found, parsed = api_run(run)
    click.echo("\n".join(found.lines(ck_include)))
    click.echo(f"ckast: {parsed.timing()}", err=True)
    sys.exit(1 if found.rows else 0)


@api.command("detect")
@click.option("--ck-include", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="CK include root (the directory holding ck_tile/); default: the tree `ckast check` compiles "
                   "against ($CK_TILE_INCLUDE, ROCm's, or the amd-aiter wheel's CK it downloaded).")
def api_detect(ck_include: Path | None) -> None:
    """Which packaged profile a CK tree matches: the --ck-api to build its kernels with (emit and generate
    given --ck-include DIR pick it themselves). Else the closest, with its mismatches (exit 1)."""
    from ckast import api as a

    if ck_include is None:
        from ckast.check import ToolchainError
        from ckast.check.toolchain import find_ck_include

        try:
            ck_include = find_ck_include(download=False)
        except ToolchainError as exc:
            fail(exc)
    reports = api_run(lambda: a.detect(ck_include))
    if not reports[0].rows:
        click.echo(f"{ck_include}: {reports[0].profile}")
        click.echo(f"ckast: build its kernels with --ck-api {reports[0].profile} (emit and generate also take "
                   f"--ck-include {ck_include}, which picks it)", err=True)
        return
    click.echo(f"no CK API profile matches {ck_include}; the closest:")
    click.echo("\n".join(reports[0].lines(ck_include)))
    for other in reports[1:]:
        click.echo(other.summary(ck_include))
    sys.exit(1)


@api.command("diff")
@click.argument("profile_a")
@click.argument("profile_b")
def api_diff(profile_a: str, profile_b: str) -> None:
    """The drift from PROFILE_A to PROFILE_B: entries added and removed, names, headers, parameters,
    enumerators and feature flags."""
    from ckast import api as a

    lines = api_run(lambda: a.diff_lines(a.load_catalog(a.profile_ref(profile_a)),
                                          a.load_catalog(a.profile_ref(profile_b))))
    click.echo("\n".join(lines))


@api.command("new")
@click.argument("name")
@CK_INCLUDE
@click.option("--from", "base", required=True, type=LazyChoice(profile_names),
              help="Packaged profile the draft is a delta on.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Draft file (default: the packaged profiles directory, NAME.toml).")
def api_new(name: str, ck_include: Path, base: str, output: Path | None) -> None:
    """Draft profile NAME for the tree as a delta on --from: matching entries are inherited, the others
    written from the tree's declarations and listed for review. Check it with `ckast api check --ck-api FILE`."""
    from ckast import api as a
    from ckast.catalog.names import PROFILES_DIR

    path = output or PROFILES_DIR / f"{name}.toml"
    if path.exists():
        bad_input([f"error: {path} exists; a draft never replaces a profile"])

    def run():
        catalog = a.load_catalog(base)
        return a.draft(name, catalog, a.declarations(ck_include, [catalog]).declarations, ck_include)

    written = api_run(run)
    path.write_text(written.text)
    click.echo("\n".join(a.review_lines(written, path, base)))
