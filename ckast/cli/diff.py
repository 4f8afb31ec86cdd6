"""`ckast diff`: review the change between two libraries."""

from __future__ import annotations

import sys
import traceback

import click

from .common import HELP, Integer, jobs_option, selection_options

EXIT_SAME, EXIT_DIFFERENT, EXIT_TROUBLE = 0, 1, 2


@click.command("diff", context_settings=HELP)
@click.argument("old")
@click.argument("new")
@selection_options
@click.option("--chunk-size", type=Integer(min=1), default=25, show_default=True,
              help="Grouped-conv kernels per registration TU, for sides rendered from a selection.")
@jobs_option("Rendering processes, for sides rendered from a selection.")
@click.option("--stat", is_flag=True, help="Counts and the change groups only, no code.")
@click.option("--json", "as_json", is_flag=True, help="Everything as JSON (one representative diff per way).")
def diff(old, new, rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs, chunk_size, jobs, stat,
         as_json):
    """What changed from library OLD to library NEW: kernels added, removed, renamed with identical code,
    and changed, grouped by their config change (knob: old -> new) and, within a group, by the way their
    code changed, each way shown by one representative unified diff.

    OLD and NEW are each a generated tree (a directory with manifest.json), a config file, REV:FILE (a
    config file at a git revision), or key=value changes to the selection options (`ck-api=ck-2026.06`).
    Exit status: 0 same, 1 different, 2 trouble.

    \b
    Examples:
      ckast diff lib_old/ lib_new/
      ckast diff --rule-set full --arch gfx942 --datatype fp16 --ndim 2 ck-api=ck-2025.11 ck-api=ck-2026.06 --stat
      ckast diff HEAD~1:configs/gemm.json configs/gemm.json
    """
    from ckast.review import SideError
    from ckast.review import report
    from ckast.workflow.libraries import diff_libraries

    try:
        result = diff_libraries(old, new, rule_set=rule_set, arch=arch, datatypes=datatypes, ndims=ndims,
                                variants=variants, ck_api=ck_api, builder_conf=builder_conf, configs=configs,
                                chunk_size=chunk_size, jobs=jobs)
        if as_json:
            lines = [report.as_json(result)]
        else:
            lines = report.stat_lines(result) if stat else report.text_lines(result)
    except SideError as exc:
        click.echo(f"ckast diff: {exc}", err=True)
        sys.exit(EXIT_TROUBLE)
    except Exception:  # diff's exit status 1 means "different": any other failure must not look like it
        traceback.print_exc()
        sys.exit(EXIT_TROUBLE)
    click.echo("\n".join(lines))
    sys.exit(EXIT_SAME if result.same else EXIT_DIFFERENT)
