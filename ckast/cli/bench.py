"""`ckast bench emit`: the C++ benchmark driver that measures a library's kernels for training."""

from __future__ import annotations

from pathlib import Path

import click

from ckast.bench.chunks import CHUNK_KERNELS
from ckast.wording import quantity

from .common import HELP, Integer, bad_input, fail, wait_message


@click.group("bench", context_settings=HELP)
def bench() -> None:
    """Benchmark drivers for generated libraries."""


@bench.command("emit")
@click.option("--library", "library_dir", required=True, type=click.Path(path_type=Path),
              help="A generated library (the directory of its manifest.json).")
@click.option("--problems", "problems_file", required=True, type=click.Path(path_type=Path),
              help="The problems: a CSV with a header row, or JSON (as `ckast select --problems` reads them).")
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(path_type=Path),
              help="Where the driver goes: bench_driver.cpp, bench_chunks.hpp, one bench_chunk_<N>.cpp per chunk of "
                   "kernels and a CMakeLists.txt (with a manifest.json listing them).")
@click.option("--chunk-kernels", type=Integer(min=1), default=CHUNK_KERNELS, show_default=True,
              help="Kernels per chunk TU. Each chunk compiles on its own, so `cmake --build -j` builds them in "
                   "parallel; the default keeps a chunk to a few CPU-minutes per GPU arch while CK Tile's headers "
                   "are parsed once per chunk, not once per kernel.")
@click.option("--kernel-only", is_flag=True,
              help="Run a GEMM kernel wherever its own checks accept the problem (what its launcher takes when "
                   "called directly); default: where CK's dispatcher's check accepts it too.")
@click.option("--top", "top", type=Integer(min=1), default=None,
              help="Measure only each problem's TOP best predicted kernels per part, ranked as `ckast select` ranks "
                   "them (applicable kernels, best predicted first, ties by name): the short-benchmark loop. "
                   "Default: every kernel.")
@click.option("--model", "model_dir", type=click.Path(path_type=Path), default=None,
              help="With --top: the LightGBM model directory that ranks (CK's layout); default: the analytic model.")
def emit(library_dir, problems_file, out_dir, chunk_kernels, kernel_only, top, model_dir):
    """Write a C++ benchmark driver for a library and a problems file.

    Built with the library's ckast_kernels.cmake (one TU per chunk of kernels, so `cmake --build -j`
    compiles them in parallel) and run on an AMD GPU, the driver times every kernel
    of each problem's parts (CK Tile's stream_config timing; --warmup N, --repeat N) and writes one
    timing table per part (kind, direction, rank, datatype, layout) in the columns `ckast select train`
    reads. Conv kernels are asked is_supported first; GEMM kernels run where ckast's applicability
    accepts the problem (CK's dispatcher's check included unless --kernel-only); refused kernels give
    rows with is_valid false. With --top K, each problem runs only its K best predicted kernels of each
    part (by the analytic model, or --model) and the driver holds only the kernels some problem runs; its
    tables go to `ckast select eval` and `select train` as they are.

    \b
    Examples:
      ckast bench emit --library lib/ --problems shapes.csv -o bench/
      ckast bench emit --library lib/ --problems shapes.csv --top 3 -o bench/
      cmake -S bench -B bench/build -DCK_INCLUDE=/opt/rocm/include && cmake --build bench/build -j
      bench/build/ckast_bench --warmup 5 --repeat 20 --output-dir timings/
    """
    from ckast.bench.files import write_driver
    from ckast.bench.plan import LEFT_OUT_VARIANTS, plan
    from ckast.output import OutputError
    from ckast.select.serving.applicability import KERNEL_ONLY, LAYERS, describe_layers
    from ckast.output.places import refuse_inside
    from ckast.select.models.forest import ModelError
    from ckast.select.serving.library import LibraryError
    from ckast.select.problem import ProblemError

    if model_dir is not None and top is None:
        bad_input(["--model: ranks the kernels of --top K; give --top"])
    try:
        the_plan = plan(library_dir, problems_file, KERNEL_ONLY if kernel_only else LAYERS, top, model_dir)
        refuse_inside(library_dir, out_dir, "the driver")
        counts = write_driver(the_plan, library_dir, out_dir, chunk_kernels, on_wait=wait_message)
    except (LibraryError, ProblemError, ModelError, ValueError) as exc:
        bad_input([str(exc)])
    except OutputError as exc:
        fail(exc)
    for variant, count in sorted(the_plan.left_out.items()):
        click.echo(f"left out: {count} {variant} kernels ({LEFT_OUT_VARIANTS[variant]})", err=True)
    if the_plan.unserved:
        click.echo(f"not measured: {quantity(the_plan.unserved, 'problem')} without an applicable kernel",
                   err=True)
    tables = sum(len(g.parts) for g in the_plan.groups)
    gemm = (f" (GEMM applicability: {describe_layers(the_plan.layers)})"
            if any(g.kind == "gemm" for g in the_plan.groups) else "")
    problems = sum(len(g.problems) for g in the_plan.groups)
    ranked = "" if top is None else (f" (each problem's top {top} by the {_model(the_plan.ranking)}: "
                                     f"{quantity(the_plan.runs, 'run')})")
    click.echo(f"{quantity(len(the_plan.kernels), 'kernel')}{ranked} in {quantity(counts['chunks'], 'chunk')}, "
               f"{quantity(problems, 'problem')}, {quantity(tables, 'timing table')}{gemm} -> {out_dir}: "
               f"{quantity(counts['written'], 'file')} written, {counts['unchanged']} unchanged, "
               f"{counts['removed']} removed")


def _model(ranking) -> str:
    """The predictor that ranked, as the summary line names it."""
    from ckast.select.reports.report import predictor_name

    return predictor_name(ranking["name"], None if ranking["name"] == "analytic" else ranking["model"],
                          ranking.get("trees"))
