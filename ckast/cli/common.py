"""What the commands share: lazily loaded option choices, the selection options, and how a command
reports bad input (exit 2) or a failure that is not the input's (exit 1)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

import click

from . import HELP  # noqa: F401  (the command modules take it from here, with the other shared pieces)

EXIT_BAD_INPUT = 2
EXIT_UNSERVED = 3
"""Done, but some problems have no kernel (`select`, `list --for`, `generate --for`; `--allow-unserved`: 0)."""

# Defining the command line imports nothing but click: the names the options offer (rule sets, archs,
# API profiles) and ckast's version are loaded when a command, its --help or --version needs them, and each
# command imports what it runs inside its body.


class LazyChoice(click.Choice):
    """click.Choice (same validation, messages, help and completion) whose choices are loaded on first use."""

    def __init__(self, load: Callable[[], Iterable[str]]) -> None:
        # click.Choice.__init__ would store the choices; `choices` is computed on first use instead.
        self._load = load
        self.case_sensitive = True

    @functools.cached_property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self._load())


class LazyDefaultOption(click.Option):
    """An option whose default is a function (importing where the value lives), shown by --help as the value
    itself, like a plain default, instead of click's "(dynamic)"."""

    def get_default(self, ctx: click.Context, call: bool = True) -> Any:
        return super().get_default(ctx, call=True)


def rule_set_names() -> tuple[str, ...]:
    from ckast.library import rule_set_names

    return rule_set_names()


def arch_names() -> tuple[str, ...]:
    from ckast.arch import ARCH_NAMES

    return ARCH_NAMES


def profile_names() -> tuple[str, ...]:
    from ckast.catalog import profile_names

    return profile_names()


def default_profile() -> str:
    from ckast.catalog import DEFAULT_PROFILE

    return DEFAULT_PROFILE


def tree_profile(ck_include: Path, requested: str | None) -> str:
    """The API profile of the CK tree (`requested` must match it), named on stderr. None matching is bad input
    (exit 2, the mismatch table on stderr); a missing clang, HIP or libclang exits 1."""
    from ckast.api import ProfileMismatch, profile_for_tree

    try:
        profile = api_run(lambda: profile_for_tree(ck_include, requested))
    except ProfileMismatch as exc:
        bad_input(str(exc).splitlines())
    click.echo(f"ckast: {ck_include} matches CK API {profile}", err=True)
    return profile


def wait_message(message: str) -> None:
    click.echo(f"ckast: {message}", err=True)


def fail(exc: Exception) -> NoReturn:
    """A problem that is not the input's (the output directory, the environment): one line, exit 1 (or the
    error's own `exit_status`: 2 for an output directory no run may write into)."""
    click.echo(f"ckast: {exc}", err=True)
    sys.exit(getattr(exc, "exit_status", 1))


CK_API_HELP = ("The default is the API of the CK Tile headers `ckast check` compiles against (the amd-aiter "
               "wheel's, downloaded on first use), so its kernels check out of the box; a CK tree of 2026 needs "
               "ck-2026.06, which also accepts many more configs. `ckast api detect` names the profile of a CK tree.")
"""Why the default profile is the default: said once, by every --ck-api that has it."""


def jobs_option(what: str):
    """-j/--jobs: `what` runs at a time, by default as many as the cores ckast may run on (None)."""
    return click.option("-j", "--jobs", type=Integer(min=1), default=None,
                        help=f"{what}  [default: the cores ckast may run on]")


def selection_options(f):
    """--rule-set, --arch, --datatype, --ndim, --variant, --ck-api and --builder-conf."""
    for option in reversed((
        click.option("--rule-set", type=LazyChoice(rule_set_names), metavar="NAME",
                     help="Named rule set of the library (`ckast list --rule-sets` lists them)."),
        click.option("--arch", type=LazyChoice(arch_names), help="Target architecture of the library."),
        click.option("--datatype", "datatypes", multiple=True, help="Only these datatypes (repeatable; default: all)."),
        click.option("--ndim", "ndims", multiple=True, type=Integer(),
                     help="Only these spatial ranks (repeatable; default: 2 and 3)."),
        click.option("--variant", "variants", multiple=True, help="Only these variants (repeatable; default: all)."),
        click.option("--ck-api", cls=LazyDefaultOption, type=LazyChoice(profile_names), default=default_profile,
                     show_default=True, help="CK API profile the kernels are built for. " + CK_API_HELP),
        click.option("--builder-conf", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
                     help="Directory of CK Builder instance .conf files (rule sets profiler and tests)."),
        click.option("--config", "configs", multiple=True, type=click.Path(path_type=Path),
                     help="Take the candidates from a config file (ckast's or CK's formats) instead of a rule set "
                          "(repeatable)."),
    )):
        f = option(f)
    return f


def make_selection(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs):
    """The library request of the selection options, or exit 2 if it lacks a rule set or an arch."""
    from ckast.library.selection import Selection

    if not configs and (not rule_set or not arch):
        bad_input(["a library needs --rule-set and --arch (or --config FILE)"])
    return Selection(rule_set or "", arch or "", ck_api, tuple(datatypes), tuple(ndims), tuple(variants),
                     builder_conf, tuple(configs))


def load_library(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs):
    """The library of the selection options, or exit 2 naming what is wrong with the selection."""
    from ckast.library import SelectionError
    from ckast.workflow.libraries import build_library

    make_selection(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs)  # the options' message
    try:
        return build_library(rule_set, arch, datatypes=datatypes, ndims=ndims, variants=variants, ck_api=ck_api,
                             builder_conf=builder_conf, configs=configs)
    except SelectionError as exc:
        bad_input(str(exc).splitlines())


def bad_input(lines: list[str]) -> NoReturn:
    """Problems with the input: one line each, exit 2 (nothing written)."""
    for line in lines:
        click.echo(line, err=True)
    sys.exit(EXIT_BAD_INPUT)


def counts_line(counts) -> str:
    from ckast.workflow.libraries import counts_line

    return counts_line(counts)


def api_run(run: Callable[[], Any]) -> Any:
    """`run()`, with an unknown profile as bad input (exit 2) and a missing tool or tree as exit 1."""
    from ckast.api import ApiUnavailable
    from ckast.catalog import CatalogError
    from ckast.check import ToolchainError

    try:
        return run()
    except CatalogError as exc:
        bad_input([f"error: {exc}"])
    except (ApiUnavailable, ToolchainError) as exc:
        fail(exc)



def _ascii_int(value: Any) -> int:
    from ckast.number_text import parse_int

    return parse_int(value) if isinstance(value, str) else int(value)


class Integer(click.IntRange):
    """An integer option, in a range if one is given: ASCII digits only, as in the files ckast reads
    (`ckast.number_text`; Python's `int` also reads `1_0` and other scripts' digits)."""

    name = "integer"
    _number_class = staticmethod(_ascii_int)

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()  # no range, no "x<=None"


class Percent(click.ParamType):
    """A percentage: an ASCII decimal, optionally followed by `%` (`2` and `2%` are the same)."""

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        from ckast.number_text import parse_float

        if not isinstance(value, str):
            return click.FLOAT.convert(value, param, ctx)
        try:
            return parse_float(value.strip().removesuffix("%"))
        except ValueError:
            self.fail(f"{value!r} is not a percentage (a number, optionally followed by %)", param, ctx)


ALLOW_UNSERVED = click.option(
    "--allow-unserved", is_flag=True,
    help=f"Exit 0 when some problems have no kernel (default: exit status {EXIT_UNSERVED}, once everything else is "
         "done; the last line counts them).")


def unserved_end(unserved: int, problems: int, allowed: bool, err: bool = False) -> None:
    """The last line when `unserved` of `problems` have no kernel (on stderr when `err`: stdout holds JSON), and
    exit status EXIT_UNSERVED unless `allowed`; nothing when every problem is served."""
    if not unserved:
        return
    from ckast.wording import quantity

    click.echo(f"{unserved} of {quantity(problems, 'problem')} not served by any kernel", err=err)
    if not allowed:
        sys.exit(EXIT_UNSERVED)


def workload_options(f):
    """--for, --within, --budget, --model, --timings, --kernels and --allow-unserved: the kernels of the library a
    workload needs."""
    for option in reversed((
        click.option("--for", "workload", type=click.Path(path_type=Path), default=None, metavar="WORKLOAD",
                     help="Keep only the kernels this workload needs: a problems file (as `ckast select --problems` "
                          "reads), each problem with an optional weight column/field (default 1), and datatype and "
                          "layout where the selection holds several."),
        click.option("--within", type=Percent(), default=None, metavar="P",
                     help="With --for: the fewest kernels (greedy set cover) that keep every problem within P% of "
                          "the best kernel of the whole selection (`2` or `2%`)."),
        click.option("--budget", type=Integer(), default=None, metavar="N",
                     help="With --for: at most N kernels of the best weighted mean efficiency (greedy facility "
                          "location); more only if every problem the selection serves needs them."),
        click.option("--model", "model_dir", type=click.Path(path_type=Path), default=None,
                     help="With --for: a LightGBM model directory to predict with; default: the analytic model."),
        click.option("--timings", multiple=True, type=click.Path(path_type=Path),
                     help="With --for: score kernels by the measured TFLOPS of this timing table (repeatable)."),
        click.option("--kernels", "kernel_table", type=click.Path(path_type=Path), default=None,
                     help="With --timings: CK's kernel table naming the config each CK name was built as."),
        ALLOW_UNSERVED,
    )):
        f = option(f)
    return f


def workload_request(workload, within, budget, model_dir, timings, kernel_table):
    """The workload request of the options (None without --for), or exit 2 naming what is wrong."""
    if workload is None:
        given = [name for name, value in (("--within", within), ("--budget", budget), ("--model", model_dir),
                                           ("--timings", timings), ("--kernels", kernel_table)) if value]
        if given:
            bad_input([f"{given[0]}: chooses kernels for a workload; give --for WORKLOAD"])
        return None
    from ckast.select.reports.workload import WorkloadError
    from ckast.workflow.libraries import workload_request as request

    try:
        return request(workload, within=within, budget=budget, model=model_dir, timings=timings, kernels=kernel_table)
    except WorkloadError as exc:
        bad_input([str(exc)])


def workload_errors():
    """The errors of choosing kernels for a workload that are bad input (exit 2), and those that are not (exit 1)."""
    from ckast.select.models.forest import ModelError
    from ckast.select.serving.library import LibraryError
    from ckast.select.models.lightgbm_model import MissingPackage
    from ckast.select.tables.timings import TimingError
    from ckast.select.reports.workload import WorkloadError

    return (WorkloadError, LibraryError, ModelError, TimingError), (MissingPackage,)
