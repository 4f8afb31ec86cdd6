"""Library commands: `ckast generate`, `ckast list` and `ckast explain`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ckast.wording import quantity

from .common import (HELP, Integer, bad_input, counts_line, fail, jobs_option, load_library, make_selection,
                     selection_options, tree_profile, unserved_end, wait_message, workload_errors, workload_options,
                     workload_request)


@click.command(context_settings=HELP)
@selection_options
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@jobs_option("Rendering processes.")
@click.option("--chunk-size", type=Integer(min=1), default=25, show_default=True,
              help="Grouped-conv kernels per registration translation unit.")
@click.option("--ck-include", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="CK include tree the library is for: its API profile (see `ckast api detect`) replaces the "
                   "default --ck-api; a --ck-api given must match it.")
@workload_options
def generate(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs, out_dir, jobs, chunk_size,
             ck_include, workload, within, budget, model_dir, timings, kernel_table, allow_unserved):
    """Write a whole kernel library: every accepted config of a rule set (or of --config files).

    Per kernel a header, a one-line TU and a dispatcher wrapper; per run the registration and
    manifest.json. Files are written only when they change; files of an earlier run into the same
    directory that this run does not produce are removed. Output is byte-identical for every -j.
    Refused configs are counted here and listed by `ckast list --rejected` with the same options; a
    selection that yields no kernel is refused with one line saying why (exit status 2). With --for, a
    workload some of whose problems no kernel serves is still written, with exit status 3 (unless
    --allow-unserved) and their count on the last line.

    \b
    Examples:
      ckast generate --rule-set tiny --arch gfx942 -o lib/
      ckast generate --rule-set full --arch gfx942 --datatype fp16 --ndim 2 -o lib/ -j 2
      ckast generate --config examples/ck/gemm_default_config.json -o lib/
      ckast generate --rule-set full --arch gfx942 --datatype fp16 --ndim 2 --for shapes.csv --within 2 -o lib/
    """
    import contextlib
    import time

    from ckast.output import replay

    start = time.perf_counter()
    if ck_include is not None:
        given = click.get_current_context().get_parameter_source("ck_api") == click.core.ParameterSource.COMMANDLINE
        ck_api = tree_profile(ck_include, ck_api if given else None)
    selection = make_selection(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs)
    request = workload_request(workload, within, budget, model_dir, timings, kernel_table)
    replayable = builder_conf is None and ck_include is None and model_dir is None  # see ckast.output.replay
    inputs = (*selection.input_files(), *(request.input_files() if request is not None else ()))

    from ckast.errors import CkastError
    from ckast.library import SelectionError
    from ckast.output import OutputError
    from ckast.workflow.libraries import EmptyLibrary, generate_library

    with contextlib.ExitStack() as bars:
        shown = []

        def progress(done: int, total: int) -> None:
            if not shown:
                shown.append(bars.enter_context(click.progressbar(length=total, label="rendering", file=sys.stderr)))
            shown[0].update(done - shown[0].pos)

        try:
            result = generate_library(out_dir, rule_set, arch, datatypes=datatypes, ndims=ndims, variants=variants,
                                      ck_api=ck_api, builder_conf=builder_conf, configs=configs, jobs=jobs,
                                      chunk_size=chunk_size, progress=progress if sys.stderr.isatty() else None,
                                      on_wait=wait_message, workload=request)
        except workload_errors()[0] as exc:
            bad_input([str(exc)])
        except workload_errors()[1] as exc:
            fail(exc)
        except SelectionError as exc:
            bad_input(str(exc).splitlines())
        except EmptyLibrary as exc:  # nothing to generate: said in one line (the configs' own problems, each)
            bad_input(exc.lines())
        except OutputError as exc:
            fail(exc)
        except CkastError as exc:  # an accepted kernel that could not be rendered (ckast.config was imported)
            from ckast.config import ConfigError

            if not isinstance(exc, ConfigError):
                raise
            click.echo("\n".join(exc.lines()), err=True)
            sys.exit(1)
    summary = {"kernels": result.kernels, **result.counts, "files": result.written + result.unchanged}
    problems = [] if result.workload is None else result.workload["problems"]
    unserved = sum(p["efficiency"] is None for p in problems)
    replayable = replayable and not unserved  # a replay exits 0: a rerun must say what is not served, and exit so
    if result.up_to_date:
        head = _up_to_date_head(summary, out_dir, result.workload)
        click.echo(replay.noop_line(head, time.perf_counter() - start))
        if replayable:
            replay.record(head, True, result.run_key, out_dir, inputs)
        unserved_end(unserved, len(problems), allow_unserved)
        return
    if result.workload is not None:
        from ckast.select.reports.workload import choice_lines

        click.echo("\n".join(choice_lines(result.workload)))
    click.echo(f"{quantity(result.kernels, 'kernel')} ({counts_line(result.counts)}) -> {out_dir}: "
               f"{quantity(result.written, 'file')} written, {result.unchanged} unchanged, {result.removed} removed in "
               f"{time.perf_counter() - start:.1f} s")
    if replayable:
        replay.record(_up_to_date_head(summary, out_dir, result.workload), True, result.run_key, out_dir, inputs)
    unserved_end(unserved, len(problems), allow_unserved)


def _up_to_date_head(summary: dict, out_dir: Path, workload: dict | None) -> str:
    """What a rerun that finds the tree of the run with `summary` (its stamp's) up to date prints before its
    time: the workload's choice, if any, and the counts line."""
    head = (f"{quantity(summary['kernels'], 'kernel')} ({counts_line(summary)}) -> {out_dir}: 0 files written, "
            f"{summary['files']} unchanged, 0 removed")
    if workload is None:
        return head
    from ckast.select.reports.workload import choice_lines

    return "\n".join([*choice_lines(workload), head])


def _print_rule_sets(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from ckast.library.rulesets import RULE_SETS

    width = max(map(len, RULE_SETS))
    click.echo("\n".join(f"{r.name.ljust(width)}  {r.kind}: {r.summary}" for r in RULE_SETS.values()))
    ctx.exit()


@click.command("list", context_settings=HELP)
@click.option("--rule-sets", is_flag=True, expose_value=False, is_eager=True, callback=_print_rule_sets,
              help="Print the rule sets (name, kind and what each holds) and exit.")
@selection_options
@click.option("--names", is_flag=True, help="Print the accepted kernel names, one per line.")
@click.option("--rejected", is_flag=True, help="Print every refused config with its rule ids, grouped by rule.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON (counts, and names or rejected when asked; with --for, the choice: kept kernels, "
                   "every problem's efficiency and best kept kernel, build estimates).")
@workload_options
def list_(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs, names, rejected, as_json, workload,
          within, budget, model_dir, timings, kernel_table, allow_unserved):
    """What a rule set yields for a selection: counts per variant, datatype and rank.

    A selection that yields no kernel is refused with one line saying why (exit status 2); with --rejected
    its refused configs are listed. With --for, what a workload keeps of the library: the kernels, the
    efficiency they offer its problems (against the whole library's best) and the problems it cannot serve;
    if there are such, the last line counts them and the exit status is 3 (unless --allow-unserved).

    \b
    Examples:
      ckast list --rule-set full --arch gfx942 --datatype fp16 --ndim 2
      ckast list --rule-set full --arch gfx942 --datatype fp16 --ndim 2 --for shapes.csv --budget 20
      ckast list --rule-set full --arch gfx942 --ck-api ck-2025.11 --rejected
      ckast list --rule-set tiny --arch gfx942 --names
    """
    from ckast.json_out import dumps
    from ckast.library import listing

    request = workload_request(workload, within, budget, model_dir, timings, kernel_table)
    if request is not None and (names or rejected):
        bad_input(["--for: prints the kept kernels; --names and --rejected list the whole library"])
    library = load_library(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs)
    empty = listing.empty_reason(library)
    if empty and not (rejected and library.refused):  # --rejected shows why every config was refused
        bad_input([empty])
    if request is not None:
        from ckast.workflow.libraries import choose_for_workload

        try:
            choice = choose_for_workload(library, request)
        except workload_errors()[0] as exc:
            bad_input([str(exc)])
        except workload_errors()[1] as exc:
            fail(exc)
        click.echo(dumps(choice.as_json(), indent=2) if as_json else "\n".join(choice.lines()))
        unserved_end(choice.unserved, len(choice.workload.problems), allow_unserved, err=as_json)
        return
    if as_json:
        click.echo(dumps(listing.as_json(library, names=names, rejected=rejected), indent=2))
        return
    lines = listing.names(library) if names else listing.table(library)
    if rejected:
        lines += listing.rejected(library)
    click.echo("\n".join(lines))


@click.command(context_settings=HELP)
@click.argument("target")
@selection_options
@click.option("--index", type=Integer(min=0), default=None,
              help="In a config file of several kernels: the kernel at this 0-based index (kernels[N] in messages).")
@click.option("--kernel", "kernel", default=None, metavar="NAME",
              help="In a config file of several kernels: the kernel of this name (see `ckast list --config FILE "
                   "--names`).")
@click.option("--dot", "dot_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the kernel's IR graph as Graphviz DOT.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON (kernel, origin, config, rules with status and findings, refused_by, graph).")
def explain(target, rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs, index, kernel,
            dot_file, as_json):
    """Why a config is accepted or refused: every rule with PASS/FAIL/SKIP, and its IR graph.

    An accepted config ends with the line "accepted: ..."; a refused one with "refused: ... fails rule ..."
    on stderr and exit status 2.

    TARGET is a config file (of several kernels: pick one with --index or --kernel), or a kernel name from
    `ckast list --names` (then give the same --rule-set/--arch selection).

    \b
    Examples:
      ckast explain examples/gemm_standard.json --index 1
      ckast explain examples/gemm_standard.json --kernel gemm_fp16_rcr_standard_gfx942_..._1a2b3c4d5e
      ckast explain grouped_conv_fp16_nhwgc_forward_gfx942_..._1a2b3c4d5e --rule-set tiny --arch gfx942
      ckast explain cfg.json --dot graph.dot
    """
    from ckast import explain as ex
    from ckast.config import ConfigError, kernel_objects, read_json, resolve_kernel
    from ckast.config.errors import MAX_REPORTED
    from ckast.json_out import dumps
    from ckast.lower.identity import kernel_name

    path = Path(target)
    if index is not None and kernel is not None:
        bad_input(["give --index or --kernel, not both"])
    if path.is_file():
        try:
            objects = kernel_objects(read_json(path))
        except ConfigError as exc:
            bad_input(exc.lines())

        def resolve(i: int):
            where, obj = objects[i]
            return resolve_kernel(obj, where, {"ck_api": ck_api})

        def named(i: int) -> str:
            config = resolve(i).config
            return kernel_name(config) if config is not None else "(no name: a knob is refused)"

        if index is not None:
            if index >= len(objects):
                bad_input([f"--index {index}: {path} holds {len(objects)} kernel{'s' * (len(objects) > 1)} "
                           f"(indexes 0 to {len(objects) - 1})"])
            chosen = index
        elif kernel is not None:
            chosen = next((i for i in range(len(objects)) if named(i) == kernel), None)
            if chosen is None:
                bad_input([f"--kernel {kernel}: no kernel of {path} has this name "
                           f"(see `ckast list --config {path} --names`)"])
        elif len(objects) == 1:
            chosen = 0
        else:
            shown = min(len(objects), MAX_REPORTED)
            more = [f"  ... and {len(objects) - shown} more"] if len(objects) > shown else []
            bad_input([f"{path}: holds {len(objects)} kernels; explain takes one: give --index N or --kernel NAME",
                       *(f"  [{i}] {named(i)}" for i in range(shown)), *more])
        resolved = resolve(chosen)
        if resolved.config is None:
            bad_input([issue.line(str(path)) for issue in resolved.issues])
        config, issues, origin = resolved.config, resolved.issues, str(path) + (f":{objects[chosen][0]}"
                                                                               if objects[chosen][0] else "")
    else:
        if index is not None or kernel is not None:
            bad_input([f"--index and --kernel pick a kernel of a config file; {target!r} is no file"])
        library = load_library(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs)
        found = [e for e in library.entries if e.name == target]
        if not found:
            bad_input([f"no config of this selection is named {target!r} (see `ckast list --names`)"])
        config, issues, origin = found[0].config, found[0].issues, found[0].candidate.origin
    explained = ex.explanation(config, issues, origin)
    click.echo(dumps(explained, indent=2) if as_json else "\n".join(ex.lines(explained)))
    if dot_file:
        graph = ex.build_graph(config)
        if graph is None:
            bad_input(["--dot: the config is refused, so it has no graph"])
        dot_file.write_text(ex.dot(graph, kernel_name(config)))
    if explained["refused_by"]:
        bad_input([ex.verdict(explained)])
