"""`python -m ckast` and the `ckast` script: `ckast --version` is answered before anything else is imported,
and a rerun that would change nothing from its record (`ckast.output.replay`) before the command line is
built; anything else runs the command line."""

from __future__ import annotations

import sys


def run() -> None:
    if sys.argv[1:] == ["--version"]:
        from ckast.streams import stdout_checked
        from ckast.version import version_line

        with stdout_checked():
            print(version_line())
        return
    from ckast.interrupt import Interrupted, handling
    from ckast.streams import stdout_checked

    try:
        with handling(process=True), stdout_checked():  # no signal is lost from here (one block for all)
            from ckast.output.replay import replay

            if replay(sys.argv[1:]):
                return
            from ckast.cli import main

            main()
    except Interrupted as exc:
        print(f"ckast: {exc}", file=sys.stderr)
        sys.exit(exc.exit_status)


if __name__ == "__main__":
    run()
