"""The `ckast` command line: one module per command group, each importing what it runs inside its
commands, so that starting the CLI imports click and nothing else of weight. Every command runs under
`ckast.interrupt.handling()`: SIGINT or SIGTERM stops it with one line and exit status 130 or 143."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import click

from . import api, check, diff, emit, library, select


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from ckast import __version__

    click.echo(f"ckast, version {__version__}", color=ctx.color)
    ctx.exit()


class _Main(click.Group):
    def main(self, args: Any = None, *more: Any, **kwargs: Any) -> Any:
        from ckast.interrupt import Interrupted, handling

        try:
            with handling(process=args is None):  # no args: the process's own command line, not a CliRunner
                return super().main(args, *more, **kwargs)
        except Interrupted as exc:  # click would print "Aborted!" for a KeyboardInterrupt; this is one line
            click.echo(f"ckast: {exc}", err=True)
            sys.exit(exc.exit_status)


@click.group(cls=_Main)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
def main() -> None:
    """Generate CK Tile kernel-instance C++ from kernel configs."""
    warnings.formatwarning = lambda message, *_args, **_kw: f"warning: {message}\n"


for command in (emit.emit, check.check, check.jit, library.generate, library.list_, library.explain, diff.diff,
                api.api, select.select):
    main.add_command(command)
