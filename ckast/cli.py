"""The `ckast` command line."""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

import click

EXIT_BAD_INPUT = 2

# Defining the command line imports nothing but click: the names the options offer (rule sets, archs,
# API profiles) and ckast's version are loaded when a command, its --help or --version needs them, and each
# command imports what it runs inside its body.


class _LazyChoice(click.Choice):
    """click.Choice (same validation, messages, help and completion) whose choices are loaded on first use."""

    def __init__(self, load: Callable[[], Iterable[str]]) -> None:
        # click.Choice.__init__ would store the choices; `choices` is computed on first use instead.
        self._load = load
        self.case_sensitive = True

    @functools.cached_property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self._load())


class _LazyDefaultOption(click.Option):
    """An option whose default is a function (importing where the value lives), shown by --help as the value
    itself, like a plain default, instead of click's "(dynamic)"."""

    def get_default(self, ctx: click.Context, call: bool = True) -> Any:
        return super().get_default(ctx, call=True)


def _rule_set_names() -> tuple[str, ...]:
    from ckast.library import rule_set_names

    return rule_set_names()


def _arch_names() -> tuple[str, ...]:
    from ckast.arch import ARCH_NAMES

    return ARCH_NAMES


def _profile_names() -> tuple[str, ...]:
    from ckast.catalog import profile_names

    return profile_names()


def _default_profile() -> str:
    from ckast.catalog import DEFAULT_PROFILE

    return DEFAULT_PROFILE


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from ckast import __version__

    click.echo(f"ckast, version {__version__}", color=ctx.color)
    ctx.exit()


@click.group()
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
def main() -> None:
    """Generate CK Tile kernel-instance C++ from kernel configs."""
    warnings.formatwarning = lambda message, *_args, **_kw: f"warning: {message}\n"


@main.command()
@click.option("--config", "config_path", required=True, type=click.Path(path_type=Path), help="JSON kernel config.")
@click.argument("more", nargs=-1, type=click.Path(path_type=Path))
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--ck-api", type=_LazyChoice(_profile_names), default=None,
              help="CK API profile for kernels whose config does not set ck_api.")
@click.option("--format/--no-format", "run_format", default=False, help="Also run the pinned clang-format.")
@click.option("--chunk-size", type=click.IntRange(min=1), default=25, show_default=True,
              help="Grouped-conv kernels per registration translation unit.")
@click.option("--ck-include", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="CK include tree the kernels are for: its API profile (see `ckast api detect`) becomes the "
                   "default ck_api, and every kernel's ck_api must be it.")
def emit(config_path: Path, more: tuple[Path, ...], out_dir: Path, ck_api: str | None, run_format: bool,
         chunk_size: int, ck_include: Path | None) -> None:
    """Validate CONFIG (and MORE config files) and write the kernels of all of them as one run into OUTPUT.

    Invalid input: one line per problem on stderr, exit status 2, nothing written.
    """
    from ckast.output import stamp

    if ck_include is not None:
        ck_api = _tree_profile(ck_include, ck_api)
    paths = (config_path, *more)
    key = stamp.run_key({"command": "emit", "configs": stamp.files_digest(paths), "ck_api": ck_api,
                         "format": run_format, "chunk_size": chunk_size})
    last = stamp.up_to_date(out_dir, key)
    if last is not None:
        click.echo(f"{last['kernels']} kernels -> {out_dir}: 0 files written, {last['files']} unchanged, 0 removed "
                   "(up to date)")
        return

    from ckast.config import ConfigError, load_file
    from ckast.emit import render, write_outputs

    problems: list[str] = []
    kernels = []
    for path in paths:
        try:
            loaded = load_file(path, defaults={"ck_api": ck_api} if ck_api else None)
        except ConfigError as exc:
            problems += exc.lines()
            continue
        kernels += loaded
        if ck_include is not None:
            problems += [f"{path}: {k.path}.ck_api: {k.config.ck_api} is not the API profile of --ck-include "
                         f"{ck_include} ({ck_api})" for k in loaded if k.config.ck_api != ck_api]
    if not problems:
        try:
            emitted = render(kernels)
        except ConfigError as exc:
            problems += ConfigError(exc.issues, ", ".join(map(str, paths))).lines()
    if problems:
        _bad_input(problems)
    from ckast.output import OutputError, Transaction

    try:
        with Transaction(out_dir, on_wait=_wait_message) as tx:
            stats = write_outputs(emitted, tx, format=run_format, chunk_size=chunk_size,
                                  stamp=(key, {"kernels": len(emitted)}))
    except OutputError as exc:
        _fail(exc)
    click.echo(
        f"{len(emitted)} kernels -> {out_dir}: {stats['written']} files written, "
        f"{stats['unchanged']} unchanged, {stats['removed']} removed"
    )


def _tree_profile(ck_include: Path, requested: str | None) -> str:
    """The API profile of the CK tree (`requested` must match it). None matching is bad input (exit 2, the
    mismatch table on stderr); a missing clang, HIP or libclang exits 1."""
    from ckast.api import ProfileMismatch, profile_for_tree

    try:
        return _api_run(lambda: profile_for_tree(ck_include, requested))
    except ProfileMismatch as exc:
        _bad_input(str(exc).splitlines())


def _wait_message(message: str) -> None:
    click.echo(f"ckast: {message}", err=True)


def _fail(exc: Exception) -> NoReturn:
    """A problem that is not the input's (the output directory, the environment): one line, exit 1."""
    click.echo(f"ckast: {exc}", err=True)
    sys.exit(1)


@main.command()
@click.option("--compile", "headers", required=True, multiple=True, type=click.Path(exists=True, path_type=Path),
              help="Emitted header to compile (repeatable).")
@click.argument("more", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--ck-include", type=click.Path(path_type=Path), default=None,
              help="CK include root (default: $CK_TILE_INCLUDE, ROCm, or the amd-aiter wheel's CK, downloaded once).")
@click.option("--arch", default="gfx942", show_default=True, help="Offload architecture.")
@click.option("--codegen", is_flag=True, help="Run the full backend (-O3 -S) instead of -fsyntax-only.")
@click.option("-j", "--jobs", default=1, show_default=True, type=click.IntRange(1), help="Parallel compiles.")
@click.option("--ninja", "ninja_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the checks as a Ninja build file (run it with ninja -f FILE) instead of compiling.")
@click.option("--launcher", default="", help="With --ninja: command each compile runs through (e.g. ccache).")
def check(headers: tuple[Path, ...], more: tuple[Path, ...], ck_include: Path | None, arch: str,
          codegen: bool, jobs: int, ninja_file: Path | None, launcher: str) -> None:
    """Compile emitted headers device-only against real CK Tile; print PASS/FAIL, time, peak memory."""
    from ckast.check import Toolchain, ToolchainError, check_headers
    from ckast.output import entry_points_for

    try:
        toolchain = Toolchain.discover(ck_include=ck_include, arch=arch)
    except ToolchainError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)

    if ninja_file is not None:
        from ckast.check.ninja import write_ninja

        outputs = write_ninja([*headers, *more], toolchain, entry_points_for, ninja_file,
                              mode="codegen" if codegen else "syntax", launcher=launcher)
        click.echo(f"{ninja_file}: {len(outputs)} checks; run: ninja -f {ninja_file} -j {jobs}")
        return

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
@click.option("--ck-api", type=_LazyChoice(_profile_names), default=None,
              help="CK API profile (default: each file's manifest entry, a _<profile>.hpp suffix, or ck-2025.11).")
def jit(paths: tuple[Path, ...], ck_api: str | None) -> None:
    """JIT-compile emitted files in-process (cppyy) against ckast's host model of CK Tile.

    One line per file (PASS with the time, or FAIL followed by the compiler's diagnostics); exit status 1
    if any failed.
    """
    import time

    from ckast.testing import JitError, JitUnavailable, jit_header, profile_of

    failed = 0
    for path in paths:
        profile = ck_api or profile_of(path)
        start = time.perf_counter()
        try:
            jit_header(path, profile)
        except JitUnavailable as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        except JitError as exc:
            failed += 1
            click.echo(f"FAIL {path} [{profile}]")
            for line in str(exc).splitlines():
                click.echo(f"    {line}")
            continue
        click.echo(f"PASS {path} [{profile}] {(time.perf_counter() - start) * 1e3:.0f} ms")
    click.echo(f"{len(paths) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


def _selection_options(f):
    """--rule-set, --arch, --datatype, --ndim, --variant, --ck-api and --builder-conf."""
    for option in reversed((
        click.option("--rule-set", type=_LazyChoice(_rule_set_names), help="Named rule set of the library."),
        click.option("--arch", type=_LazyChoice(_arch_names), help="Target architecture of the library."),
        click.option("--datatype", "datatypes", multiple=True, help="Only these datatypes (repeatable; default: all)."),
        click.option("--ndim", "ndims", multiple=True, type=int, help="Only these spatial ranks (repeatable; default: 2 and 3)."),
        click.option("--variant", "variants", multiple=True, help="Only these variants (repeatable; default: all)."),
        click.option("--ck-api", cls=_LazyDefaultOption, type=_LazyChoice(_profile_names), default=_default_profile,
                     show_default=True, help="CK API profile the library is built for."),
        click.option("--builder-conf", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
                     help="Directory of CK Builder instance .conf files (rule sets profiler and tests)."),
        click.option("--config", "configs", multiple=True, type=click.Path(path_type=Path),
                     help="Take the candidates from a config file (ckast's or CK's formats) instead of a rule set "
                          "(repeatable)."),
    )):
        f = option(f)
    return f


def _selection(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs):
    """The library request of the selection options, or exit 2 if it lacks a rule set or an arch."""
    from ckast.library.selection import Selection

    if not configs and (not rule_set or not arch):
        _bad_input(["a library needs --rule-set and --arch (or --config FILE)"])
    return Selection(rule_set or "", arch or "", ck_api, tuple(datatypes), tuple(ndims), tuple(variants),
                     builder_conf, tuple(configs))


def _build(selection):
    """Build the selected library, or exit 2 naming what is wrong with the selection."""
    from ckast.library import SelectionError, build

    try:
        return build(selection)
    except SelectionError as exc:
        _bad_input(str(exc).splitlines())


def _library(*options):
    return _build(_selection(*options))


def _bad_input(lines: list[str]) -> NoReturn:
    """Problems with the input: one line each, exit 2 (nothing written)."""
    for line in lines:
        click.echo(line, err=True)
    sys.exit(EXIT_BAD_INPUT)


@main.command()
@_selection_options
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Rendering processes (default: cores).")
@click.option("--chunk-size", type=click.IntRange(min=1), default=25, show_default=True,
              help="Grouped-conv kernels per registration translation unit.")
@click.option("--ck-include", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="CK include tree the library is for: its API profile (see `ckast api detect`) replaces the "
                   "default --ck-api; a --ck-api given must match it.")
def generate(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs, out_dir, jobs, chunk_size,
             ck_include):
    """Write a whole kernel library: every accepted config of a rule set (or of --config files).

    Per kernel a header, a one-line TU and a dispatcher wrapper; per run the registration and
    manifest.json. Files are written only when they change; files of an earlier run into the same
    directory that this run does not produce are removed. Output is byte-identical for every -j.
    Refused configs are counted here and listed by `ckast list --rejected` with the same options.

    \b
    Examples:
      ckast generate --rule-set tiny --arch gfx942 -o lib/
      ckast generate --rule-set full --arch gfx942 --datatype fp16 --ndim 2 -o lib/ -j 2
      ckast generate --config examples/ck/gemm_default_config.json -o lib/
    """
    import time

    from ckast.output.stamp import up_to_date

    start = time.perf_counter()
    if ck_include is not None:
        given = click.get_current_context().get_parameter_source("ck_api") == click.core.ParameterSource.COMMANDLINE
        ck_api = _tree_profile(ck_include, ck_api if given else None)
    selection = _selection(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs)
    key = selection.run_key(chunk_size)
    last = up_to_date(out_dir, key)
    if last is not None:
        click.echo(f"{last['kernels']} kernels ({_counts(last)}) -> {out_dir}: 0 files written, {last['files']} "
                   f"unchanged, 0 removed in {time.perf_counter() - start:.1f} s (up to date)")
        return

    from ckast.config import ConfigError
    from ckast.emit import write_outputs
    from ckast.library.generate import default_jobs, render_into

    library = _build(selection)
    kernels = library.kernels()
    counts = {"proposed": len(library.entries), "refused": len(library.refused),
              "merged": len(library.with_status("merged"))}
    if not kernels and configs:  # the user's own configs, all refused: bad input, reported as emit does
        _bad_input(ConfigError([i for e in library.refused for i in e.issues]).lines())
    if not kernels:
        click.echo(f"nothing to generate ({_counts(counts)}); see `ckast list --rejected`", err=True)
        sys.exit(1)
    from ckast.output import OutputError, Transaction

    try:
        with Transaction(out_dir, on_wait=_wait_message) as tx:
            if sys.stderr.isatty():
                with click.progressbar(length=len(kernels), label="rendering", file=sys.stderr) as bar:
                    emitted, done = render_into(kernels, tx.stage, jobs or default_jobs(), progress=bar.update)
            else:
                emitted, done = render_into(kernels, tx.stage, jobs or default_jobs())
            stats = write_outputs(emitted, tx, chunk_size=chunk_size, run=selection.as_dict(),
                                  stamp=(key, {"kernels": len(emitted), **counts}), done=done)
    except ConfigError as exc:
        click.echo("\n".join(exc.lines()), err=True)
        sys.exit(1)
    except OutputError as exc:
        _fail(exc)
    click.echo(f"{len(emitted)} kernels ({_counts(counts)}) -> {out_dir}: {stats['written']} files written, "
               f"{stats['unchanged']} unchanged, {stats['removed']} removed in {time.perf_counter() - start:.1f} s")


def _counts(counts) -> str:
    return f"{counts['proposed']} proposed, {counts['refused']} refused, {counts['merged']} merged"


@main.command("list")
@_selection_options
@click.option("--names", is_flag=True, help="Print the accepted kernel names, one per line.")
@click.option("--rejected", is_flag=True, help="Print every refused config with its rule ids, grouped by rule.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (counts, and names or rejected when asked).")
def list_(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs, names, rejected, as_json):
    """What a rule set yields for a selection: counts per variant, datatype and rank.

    \b
    Examples:
      ckast list --rule-set full --arch gfx942 --datatype fp16 --ndim 2
      ckast list --rule-set full --arch gfx942 --ck-api ck-2025.11 --rejected
      ckast list --rule-set tiny --arch gfx942 --names
    """
    import json

    from ckast.library import listing

    library = _library(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs)
    if as_json:
        click.echo(json.dumps(listing.as_json(library, names=names, rejected=rejected), indent=2))
        return
    lines = listing.names(library) if names else listing.table(library)
    if rejected:
        lines += listing.rejected(library)
    click.echo("\n".join(lines))


@main.command()
@click.argument("target")
@_selection_options
@click.option("--dot", "dot_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the kernel's IR graph as Graphviz DOT.")
def explain(target, rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs, dot_file):
    """Why a config is accepted or refused: every rule with PASS/FAIL/SKIP, and its IR graph.

    TARGET is a config file holding one kernel, or a kernel name from `ckast list --names`
    (then give the same --rule-set/--arch selection).

    \b
    Examples:
      ckast explain examples/gemm_standard.json
      ckast explain grouped_conv_fp16_nhwgc_forward_gfx942_..._1a2b3c4d5e --rule-set tiny --arch gfx942
      ckast explain cfg.json --dot graph.dot
    """
    from ckast import explain as ex
    from ckast.config import ConfigError, kernel_objects, read_json, resolve_kernel
    from ckast.lower.identity import kernel_name

    path = Path(target)
    if path.is_file():
        try:
            objects = kernel_objects(read_json(path))
        except ConfigError as exc:
            _bad_input(exc.lines())
        if len(objects) != 1:
            _bad_input([f"{path}: holds {len(objects)} kernels; explain takes one"])
        where, obj = objects[0]
        resolved = resolve_kernel(obj, where, {"ck_api": ck_api})
        if resolved.config is None:
            _bad_input([issue.line(str(path)) for issue in resolved.issues])
        config, issues, origin = resolved.config, resolved.issues, str(path)
    else:
        library = _library(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs)
        found = [e for e in library.entries if e.name == target]
        if not found:
            _bad_input([f"no config of this selection is named {target!r} (see `ckast list --names`)"])
        config, issues, origin = found[0].config, found[0].issues, found[0].candidate.origin
    click.echo("\n".join(ex.report(config, issues, origin)))
    if dot_file:
        graph = ex.build_graph(config)
        if graph is None:
            _bad_input(["--dot: the config is refused, so it has no graph"])
        dot_file.write_text(ex.dot(graph, kernel_name(config)))


@main.group()
def api() -> None:
    """Check API profiles against a CK include tree, detect a tree's profile, diff and draft profiles.

    PROFILE is a packaged profile name or the path of a profile file (*.toml). Mismatches exit 1;
    a missing clang, HIP or libclang exits 1 with one line; an unknown profile exits 2.
    """


_CK_INCLUDE = click.option("--ck-include", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
                           help="CK include root (the directory holding ck_tile/).")


def _api_run(run: Callable[[], Any]) -> Any:
    """`run()`, with an unknown profile as bad input (exit 2) and a missing tool or tree as exit 1."""
    from ckast.api import ApiUnavailable
    from ckast.catalog import CatalogError
    from ckast.check import ToolchainError

    try:
        return run()
    except CatalogError as exc:
        _bad_input([f"error: {exc}"])
    except (ApiUnavailable, ToolchainError) as exc:
        _fail(exc)


@api.command("check")
@_CK_INCLUDE
@click.option("--ck-api", cls=_LazyDefaultOption, default=_default_profile, show_default=True,
              help="Profile to check: a packaged name or a profile file.")
def api_check(ck_include: Path, ck_api: str) -> None:
    """Compare every CK Tile entry of a profile with the tree's declarations (one libclang parse, cached):
    header, include, parameter count, order, names, kinds and defaults, enumerators, absent entries."""
    from ckast import api as a

    def run():
        catalog = a.load_catalog(a.profile_ref(ck_api))
        parsed = a.declarations(ck_include, [catalog])
        return a.report(catalog, parsed.declarations), parsed

    found, parsed = _api_run(run)
    click.echo("\n".join(found.lines(ck_include)))
    click.echo(f"ckast: {parsed.timing()}", err=True)
    sys.exit(1 if found.rows else 0)


@api.command("detect")
@_CK_INCLUDE
def api_detect(ck_include: Path) -> None:
    """Which packaged profile the tree matches, or the closest with its mismatches (exit 1)."""
    from ckast import api as a

    reports = _api_run(lambda: a.detect(ck_include))
    if not reports[0].rows:
        click.echo(f"{ck_include}: {reports[0].profile}")
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

    lines = _api_run(lambda: a.diff_lines(a.load_catalog(a.profile_ref(profile_a)),
                                          a.load_catalog(a.profile_ref(profile_b))))
    click.echo("\n".join(lines))


@api.command("new")
@click.argument("name")
@_CK_INCLUDE
@click.option("--from", "base", required=True, type=_LazyChoice(_profile_names),
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
        _bad_input([f"error: {path} exists; a draft never replaces a profile"])

    def run():
        catalog = a.load_catalog(base)
        return a.draft(name, catalog, a.declarations(ck_include, [catalog]).declarations, ck_include)

    written = _api_run(run)
    path.write_text(written.text)
    click.echo("\n".join(a.review_lines(written, path, base)))
