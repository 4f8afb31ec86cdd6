"""The `ckast` command line: one module per command group, each importing what it runs inside its
commands, so that starting the CLI imports click and nothing else of weight; a command's module is
imported when that command is looked up (`--help` of the group looks them all up). Every command runs under
`ckast.interrupt.handling()`: SIGINT or SIGTERM stops it with one line and exit status 130 or 143."""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any

import click

HELP = {"help_option_names": ["-h", "--help"]}
"""Context settings of every command: `-h` is `--help` (set on each command, so it holds however the
command is invoked)."""
COMMANDS = {"emit": ("emit", "emit"), "check": ("check", "check"), "jit": ("check", "jit"),
            "generate": ("library", "generate"), "list": ("library", "list_"), "explain": ("library", "explain"),
            "diff": ("diff", "diff"), "api": ("api", "api"), "select": ("select", "select"), "bench": ("bench", "bench")}
"""Command name -> (module of this package, attribute): the commands, imported on first use."""


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from ckast.version import version_line

    click.echo(version_line(), color=ctx.color)
    ctx.exit()


class _Main(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attribute = COMMANDS[cmd_name]
        from ckast import attrs_cache

        attrs_cache.install()  # before the command's module defines its classes
        return getattr(importlib.import_module(f".{module}", __name__), attribute)

    def main(self, args: Any = None, *more: Any, **kwargs: Any) -> Any:
        from ckast.interrupt import Interrupted, handling
        from ckast.output import replay

        replay.enabled = args is None
        try:
            with handling(process=args is None):  # no args: the process's own command line, not a CliRunner
                return super().main(args, *more, **kwargs)
        except Interrupted as exc:  # click would print "Aborted!" for a KeyboardInterrupt; this is one line
            click.echo(f"ckast: {exc}", err=True)
            sys.exit(exc.exit_status)


@click.group(cls=_Main, context_settings=HELP)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
def main() -> None:
    """Generate CK Tile kernel-instance C++ from kernel configs.

    Shell completion: eval "$(_CKAST_COMPLETE=bash_source ckast)" in ~/.bashrc (zsh_source in ~/.zshrc).
    """
    warnings.formatwarning = lambda message, *_args, **_kw: f"warning: {message}\n"
