"""`ckast select`: rank a library's kernels for problems; `select train`, `select eval` and `select emit`."""

from __future__ import annotations

from pathlib import Path

import click

from ckast.select.models.limits import MAX_TREES
from ckast.wording import quantity

from .common import ALLOW_UNSERVED, HELP, Integer, bad_input, fail, jobs_option, unserved_end

_LIBRARY = click.option("--library", "library_dir", type=click.Path(path_type=Path),
                        help="A generated library (the directory of its manifest.json).")
_MODEL = click.option("--model", "model_dir", type=click.Path(path_type=Path), default=None,
                      help="A LightGBM model directory (CK's layout), or one `select train` wrote for the analytic "
                           "model; default: the analytic model.")
_DATA = click.option("--data", "data", multiple=True, required=True, type=click.Path(path_type=Path),
                     help="A timing table: .csv, .parquet or .json (repeatable).")
_SKIP_BAD = click.option("--skip-bad", is_flag=True, help="Count and list bad rows instead of refusing the table.")
_KERNELS = click.option("--kernels", "kernels_file", type=click.Path(path_type=Path), default=None,
                        help="CK's kernel table (CSV: csv_kernel_name, built_tile, built_wave, ..., identical_to): "
                             "the config each CK name of the timing tables was built as.")
_KERNEL_ONLY = click.option("--kernel-only", is_flag=True,
                            help="Apply the kernels' own checks only (what a launcher called directly accepts); "
                                 "default: CK's dispatcher's check too, what a dispatcher user gets.")

_SHOWN_BAD = 20


@click.group("select", invoke_without_command=True, context_settings=HELP)
@_LIBRARY
@click.option("--problem", "problem_texts", multiple=True,
              help='A problem: "M=4096,N=4096,K=4096[,batch=8][,groups=8][,variant=preshuffle]" (or CK\'s m, n, k; '
                   'multi_d: variant=multi_d,num_d_tensors=2,d_layout=r,elementwise_op=MultiDAdd; block-scale: '
                   'variant=abquant,bquant_group_n=128) or CK\'s conv spellings '
                   '("G=1,N=32,C=64,K=64,Hi=56,Wi=56,Y=3,X=3,pad_h=1,pad_w=1[,direction=bwd_data]"; repeatable).')
@click.option("--problems", "problems_file", type=click.Path(path_type=Path), default=None,
              help="Many problems, each printed as it is ranked: a CSV with a header row and one problem per row, or "
                   "JSON (a list of objects or {\"problems\": [...]}, at most 32 MiB). A problem may name its "
                   "datatype and GEMM layout (as --datatype and --layout do for the others); a workload's `weight` "
                   "column is allowed and does not change a ranking.")
@_MODEL
@click.option("-k", "--top", "top", type=Integer(min=1), default=5, show_default=True,
              help="Kernels shown per problem.")
@click.option("--datatype", default=None,
              help="The kernels' datatype, when the library holds several (for the problems that name none).")
@click.option("--layout", default=None,
              help="The GEMM kernels' layout, when the library holds several (for the problems that name none).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (per kernel: name, applicable, predicted_tflops).")
@click.option("--features", "with_features", is_flag=True, help="Add each shown kernel's named feature vector (JSON).")
@click.option("--why-not", "why_not_names", multiple=True, metavar="NAME",
              help="Say which applicability condition (named by its layer: dispatcher.*, or the kernel's) refuses "
                   "kernel NAME for each problem (repeatable).")
@_KERNEL_ONLY
@ALLOW_UNSERVED
@click.pass_context
def select(ctx, library_dir, problem_texts, problems_file, model_dir, top, datatype, layout, as_json, with_features,
           why_not_names, kernel_only, allow_unserved):
    """Rank a library's applicable kernels for problems, best predicted first.

    Predictions come from the analytic model (tiles and padding, occupancy, wave quantization, matrix,
    feed and latency per k-step, split-K and pipeline factors, with constants calibrated per arch on CK's
    measurements) or from a LightGBM model (--model). Both are estimates. Ties are broken by kernel name.
    Each problem is printed as soon as it is ranked; a refused row of --problems ends the output there
    (exit 2, one line on stderr naming the row). When some problems have no applicable kernel, the last
    line counts them (on stderr with --json) and the exit status is 3, unless --allow-unserved.

    \b
    Examples:
      ckast select --library lib/ --problem "M=4096,N=4096,K=4096"
      ckast select --library lib/ --problem "G=1,N=32,C=64,K=64,Hi=56,Wi=56,Y=3,X=3,pad_h=1,pad_w=1" --json
      ckast select --library lib/ --problems shapes.csv --model model/ -k 3
      ckast select --library lib/ --problem "..." --why-not grouped_conv_fp16_..._1a2b3c4d5e
    """
    if ctx.invoked_subcommand is not None:
        return
    import sys

    from ckast.select.models.forest import ModelError
    from ckast.select.serving.library import LibraryError
    from ckast.select.models.domain import domain_line
    from ckast.select.problem import ProblemError
    from ckast.select.reports.report import json_chunks, text
    from ckast.workflow.choosing import select_kernels

    if library_dir is None:
        bad_input(["--library: missing (the generated library to select from)"])
    if not problem_texts and problems_file is None:
        bad_input(["--problem: missing (give --problem or --problems FILE)"])
    try:  # each problem is printed as it is ranked; a bad row of --problems stops the output there
        choices = select_kernels(library_dir, problem_texts, problems_file=problems_file, model=model_dir, top=top,
                                 datatype=datatype, layout=layout, features=with_features, why_not=why_not_names,
                                 kernel_only=kernel_only)
        counts = [0, 0]  # problems, those without an applicable kernel
        domains = []  # (part, kernels, domain entry) of each problem, for a model that records its training domain

        def counted(choice):
            counts[0] += 1
            counts[1] += not choice.applicable
            entry = choice.as_dict()
            if "domain" in entry:
                domains.append(((choice.arch, choice.datatype, choice.fields.get("kind"), choice.fields.get("direction")),
                                choice.kernels, entry["domain"]))
            return entry

        head, problems = choices.head(), map(counted, choices.stream())
        chunks = iter(json_chunks(head, problems) if as_json else ("\n".join(text(head, p)) + "\n" for p in problems))
        # Nothing is printed before the first problem is ranked: a model or problem refused there leaves no output.
        sys.stdout.write(next(chunks, "") + (next(chunks, "") if as_json else ""))
        for chunk in chunks:
            sys.stdout.write(chunk)
        if as_json:
            sys.stdout.write("\n")
        sys.stdout.flush()
    except (LibraryError, ProblemError, ModelError) as exc:
        sys.stdout.flush()
        bad_input([str(exc)])
    base = "analytic" if choices.predictor["name"] == "residual" else "none"
    line = domain_line(domains, base) if domains else None
    if line:
        click.echo(line, err=as_json)
    unserved_end(counts[1], counts[0], allow_unserved, err=as_json)


@select.command("train")
@_DATA
@_LIBRARY
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(path_type=Path),
              help="The model directory to write (model_tflops.lgbm, none for the analytic model; feature_spec.json, "
                   "cv_metrics.json; not the library's).")
@_SKIP_BAD
@_KERNELS
@click.option("--trees", type=Integer(1, MAX_TREES), default=400, show_default=True,
              help="Boosting rounds (the trees of the model).")
@click.option("--folds", type=Integer(min=0), default=5, show_default=True,
              help="GroupKFold folds for the CV metrics (0: no cross-validation, random or by family).")
@click.option("--predictor", default="best", show_default=True,
              help="The predictor to write: best (the one that does best on held-out families), or analytic, lightgbm "
                   "(LightGBM on log1p TFLOPS, as CK's models) or residual (LightGBM on the analytic model's error; "
                   "a problem choosing among kernels outside the training data is ranked by the analytic model alone).")
@click.option("--seed", type=Integer(), default=0, show_default=True)
@jobs_option("Fits at a time (the final model and each CV fold, one LightGBM thread each); the model is the same "
             "for any.")
def train(data, library_dir, out_dir, skip_bad, kernels_file, trees, folds, predictor, seed, jobs):
    """Train LightGBM models from timing tables of a library's kernels (on log1p TFLOPS, and on the analytic
    model's error), score them and the analytic model on held-out problems, and write the one that does best
    under shift.

    A table has a kernel column (kernel or kernel_name), the problem's fields (GEMM M, N, K; conv in CK's
    spellings), tflops or time_ms, and optionally arch and is_valid; CK's benchmark result JSON is read
    as well; CK's tile_engine tables with their kernel table (--kernels). One model per kind, conv direction,
    datatype and arch. Runs of kernels not applicable to their problem are set apart.

    Each predictor is scored on GroupKFold folds by problem shape and on folds that hold out a whole family
    of problems (conv stride, batch, filter, image size; GEMM M, N, K), trained on the others. The model
    written has the highest worst-family P10 (ties: the mean over families), and is a learned one only when it
    is below the analytic model on neither (with --folds 0: residual, not validated); feature_spec.json names
    it (predictor). An analytic model directory has no forest, and `select --model` ranks with the analytic
    model; a residual model ranks a problem whose kernels include one outside its training data by the analytic model
    alone (a problem outside it is corrected as one inside, and said so).

    \b
    Examples:
      ckast select train --data timings.csv --library lib/ -o model/
      ckast select train --data grouped_conv_fwd_bf16_gfx950_train.csv \\
          --kernels grouped_conv_fwd_bf16_gfx950_kernels.csv --library lib/ -o model/
    """
    import time

    from ckast.output.transaction import OutputError
    from ckast.select.models.lightgbm_model import MissingPackage
    from ckast.select.ranking.shift import report_rows
    from ckast.select.ranking.shift import table as shift_table
    from ckast.select.ranking.train import ONE_FOLD, TrainError
    from ckast.workflow.choosing import train_model

    start = time.perf_counter()
    if folds == 1:
        bad_input([f"--folds: {ONE_FOLD}"])
    runs = _read(library_dir, data, skip_bad, kernels_file, kernel_only=True)
    progress = _progress(trees)
    try:
        model = train_model(runs, out_dir, trees=trees, folds=folds, seed=seed, jobs=jobs,
                            progress=progress.tree if progress else None, predictor=predictor)
    except TrainError as exc:
        bad_input([str(exc)])
    except (MissingPackage, OutputError) as exc:
        fail(exc)
    finally:
        if progress:
            progress.close()
    spec, cv = model.spec, model.cv
    click.echo(f"{model.runs} runs, {model.pairs} (problem, kernel) pairs of {model.problems} problems "
               f"({spec['op_type']}"
               f"{' ' + spec['direction'] if 'direction' in spec else ''}, {spec['dtype']}, {spec['arch']})"
               f"{_dropped(runs.timings)}")
    if cv["folds"]:
        predictors = cv["predictors"]
        rmse = ", ".join(f"{name} {p['random']['rmse_log1p']:.4f}" for name, p in predictors.items())
        families = len(cv["families"])
        click.echo(f"{cv['folds']}-fold GroupKFold by problem shape (RMSE log1p(TFLOPS): {rmse}) and {families} "
                   f"{'family' if families == 1 else 'families'} held out whole, each trained on the others; "
                   "selection on the held-out problems:")
        click.echo("\n".join(shift_table(report_rows(predictors, f"{cv['folds']} random folds"))))
        for entry in cv["skipped"]:
            click.echo(f"not held out: {entry['name']} ({entry['where']}): {entry['reason']}")
        if cv["analytic_constants"]["fitted_on"]:
            click.echo(f"analytic constants: {cv['analytic_constants']['why']}")
    click.echo(f"model: {cv['chosen']['why']}")
    on = " (a correction of the analytic model)" if spec.get("predictor") == "residual" else ""
    what = (f"{trees} trees, {len(spec['feature_names'])} features{on}" if "feature_names" in spec
            else "the analytic model (no forest)")
    click.echo(f"{what} -> {out_dir} in {time.perf_counter() - start:.1f} s")


@select.command("eval")
@_DATA
@_LIBRARY
@_MODEL
@_SKIP_BAD
@_KERNELS
@_KERNEL_ONLY
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--best-of", "best_of", type=Integer(min=1), default=None, metavar="K",
              help="Also score the best of each problem's top k predicted kernels, k = 1 .. K: the fastest measured of "
                   "them over the best measured (what measuring each problem's top k on the GPU gets).")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write a picture (SVG): measured against predicted TFLOPS, and each predictor's efficiency over "
                   "the problems, sorted (with --model the analytic model's too; with --best-of K the best of the "
                   "top 2 .. K).")
def eval_(data, library_dir, model_dir, skip_bad, kernels_file, kernel_only, as_json, best_of, plot_file):
    """Selection quality against the oracle on timing tables, as CK's compare_ml_vs_oracle.py gives it: mean,
    P10, P50 and min efficiency (the measured TFLOPS of the predicted best over the best measured), top-1 (the
    pick is the best) and top-5 (the pick is among the five best) hit rates, per variant and shape family; then per
    family of problems `select train` holds out (stride, batch, filter, image size; GEMM M, N, K), the worst
    family and the mean over families, beside the analytic model's with --model, and which does better there.
    Names CK built as one kernel (--kernels) are one kernel; runs of kernels not applicable to their problem
    (by CK's dispatcher's check and the kernel's own, or with --kernel-only the kernel's alone) are set apart,
    counted and listed.

    \b
    Examples:
      ckast select eval --data heldout.csv --library lib/ --model model/
      ckast select eval --data gemm_fp16_rcr_gfx942_sweep_results_b.csv \\
          --kernels gemm_fp16_rcr_gfx942_kernels.csv --library lib/
      ckast select eval --data timings/gemm_fp16_rcr.csv --library lib/ --best-of 3 --plot eval.svg
    """
    from ckast.json_out import dumps
    from ckast.select.serving.applicability import describe_layers
    from ckast.select.ranking.evaluate import table
    from ckast.select.models.forest import ModelError
    from ckast.select.serving.library import LibraryError
    from ckast.select.ranking.shift import report_rows
    from ckast.select.ranking.shift import table as shift_table
    from ckast.workflow.choosing import evaluate_model

    runs = _read(library_dir, data, skip_bad, kernels_file, kernel_only)
    try:
        evaluation = evaluate_model(runs, model=model_dir)
    except (ModelError, LibraryError) as exc:
        bad_input([str(exc)])
    top_k = _top_k(evaluation.scored, best_of, plot_file)
    if as_json:
        click.echo(dumps({**evaluation.as_dict(), **({"best_of": top_k} if top_k else {})}, indent=2))
        return
    apart = evaluation.not_applicable
    click.echo(f"{quantity(evaluation.runs, 'run')} of {quantity(evaluation.kernels, 'kernel')} on "
               f"{quantity(evaluation.problems, 'problem')}"
               f"{_dropped(runs.timings)}; predictor: {evaluation.predictor}; applicability: "
               f"{describe_layers(evaluation.layers)}")
    for entry in apart[:_SHOWN_BAD]:
        click.echo(f"not applicable: {entry['label']}: {quantity(entry['runs'], 'run')} of "
                   f"{quantity(len(entry['kernels']), 'kernel')} "
                   f"({', '.join(entry['kernels'][:2])}{', ...' if len(entry['kernels']) > 2 else ''})")
    if len(apart) > _SHOWN_BAD:
        click.echo(f"not applicable: ... and {len(apart) - _SHOWN_BAD} more problems")
    click.echo("\n".join(table(evaluation.report)))
    if evaluation.domain is not None and evaluation.domain["line"]:
        click.echo(evaluation.domain["line"])
    shift = evaluation.families
    rows = report_rows(shift["predictors"], None, "all") if shift else []
    if shift and not rows:
        click.echo(f"by family of problems: none has enough problems to be scored apart "
                   f"({quantity(len(shift['skipped']), 'family', 'families')} tried; --json lists them)")
    elif shift:
        click.echo(f"by family of problems{', beside the analytic model' if len(shift['predictors']) > 1 else ''}:")
        click.echo("\n".join(shift_table(rows, "family")))
        for entry in shift["skipped"]:
            click.echo(f"not shown: {entry['name']} ({entry['where']}): {entry['reason']}")
        if len(shift["predictors"]) > 1:
            click.echo(f"under shift: {shift['best']['why']}")
    if top_k:
        from ckast.select.ranking.best_of import best_of_table

        click.echo("\n".join(best_of_table(top_k)))


def _top_k(scored, best_of, plot_file):
    """`--best-of` figures (None without it) and `--plot` (written here: `select.ranking.best_of`,
    `select.reports.eval_plot`), from the problems `select eval` scored."""
    if best_of is None and plot_file is None:
        return None
    from ckast.select.ranking.best_of import best_of_figures
    from ckast.select.reports.eval_plot import evaluation_svg, write_svg

    if plot_file is not None:
        try:
            write_svg(plot_file, evaluation_svg(scored, best_of or 1))
        except OSError as exc:
            fail(f"--plot: cannot write {plot_file}: {exc.strerror or exc}")
    return None if best_of is None else best_of_figures(scored[0][1], best_of)


def _read(library_dir, data, skip_bad, kernels_file, kernel_only):
    """The runs of the timing tables (with CK's kernel table; runs of kernels not applicable set apart), or exit
    2 naming the file, row and column."""
    from ckast.select.serving.library import LibraryError
    from ckast.select.models.lightgbm_model import MissingPackage
    from ckast.select.tables.timings import TimingError
    from ckast.workflow.choosing import read_timings

    if library_dir is None:
        bad_input(["--library: missing (the generated library the timings are of)"])
    try:
        runs = read_timings(data, library_dir, kernels=kernels_file, skip_bad=skip_bad, kernel_only=kernel_only)
    except (LibraryError, TimingError) as exc:
        bad_input([str(exc)])
    except MissingPackage as exc:
        fail(exc)
    bad = runs.timings.bad
    for line in bad[:_SHOWN_BAD]:
        click.echo(f"skipped: {line}", err=True)
    if len(bad) > _SHOWN_BAD:
        click.echo(f"skipped: ... and {len(bad) - _SHOWN_BAD} more bad rows", err=True)
    return runs


def _progress(trees: int):
    """A line on stderr showing the training's progress when stderr is a terminal, else None."""
    import sys

    if not sys.stderr.isatty():
        return None
    from ckast.select.reports.progress import Progress

    def show(line: str) -> None:
        sys.stderr.write(f"\r{line}\x1b[K")
        sys.stderr.flush()

    return Progress(trees, show)


def _dropped(timings) -> str:
    parts = [f"{quantity(len(timings.bad), 'bad row')} skipped"] if timings.bad else []
    if timings.failed:
        parts.append(f"{quantity(timings.failed, 'failed run')} (is_valid false) dropped")
    if timings.outside:
        parts.append(f"{quantity(len(timings.outside), 'run')} of kernels not applicable to their problem set apart "
                     f"({quantity(len({run.problem for run in timings.outside}), 'problem')})")
    return f"; {', '.join(parts)}" if parts else ""


@select.command("emit")
@_LIBRARY
@click.option("--model", "model_dirs", multiple=True, type=click.Path(path_type=Path),
              help="A LightGBM model directory (CK's layout) for the part its spec names (repeatable); parts "
                   "without one use the analytic model.")
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(path_type=Path),
              help="The directory to write the selector into (not the library's).")
@_KERNEL_ONLY
def emit(library_dir, model_dirs, out_dir, kernel_only):
    """Write the library's kernel selector as dependency-free C++: ckast_selector.hpp/.cpp (problem structs,
    features, applicability, the analytic model or the LightGBM forests as constant arrays, rank and
    select), ckast_selector_dispatcher.hpp (CK's dispatcher hook and the library's registration) and
    ckast_selector.cmake (include() it, then ckast_add_selector(<target>): a static library to link).

    \b
    Example:
      ckast select emit --library lib/ --model model/ -o selector/
    """
    from ckast.output.transaction import OutputError
    from ckast.select.models.forest import ModelError
    from ckast.select.serving.library import LibraryError
    from ckast.workflow.choosing import emit_selector

    if library_dir is None:
        bad_input(["--library: missing (the generated library to select from)"])
    try:
        result = emit_selector(library_dir, out_dir, models=model_dirs, kernel_only=kernel_only)
    except (LibraryError, ModelError) as exc:
        bad_input([str(exc)])
    except OutputError as exc:
        fail(exc)
    from ckast.select.serving.applicability import describe_layers

    click.echo(f"selector of {quantity(result.kernels, 'kernel')} in {quantity(result.parts, 'part')} "
               f"({result.forests} with a LightGBM forest; applicability: {describe_layers(result.layers)}) -> "
               f"{out_dir}: {quantity(result.written, 'file')} written, {result.unchanged} unchanged")
