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
def emit(library_dir, problems_file, out_dir, chunk_kernels, kernel_only):
    """Write a C++ benchmark driver for a library and a problems file.

    Built with the library's ckast_kernels.cmake (one TU per chunk of kernels, so `cmake --build -j`
    compiles them in parallel) and run on an AMD GPU, the driver times every kernel
    of each problem's parts (CK Tile's stream_config timing; --warmup N, --repeat N) and writes one
    timing table per part (kind, direction, rank, datatype, layout) in the columns `ckast select train`
    reads. Conv kernels are asked is_supported first; GEMM kernels run where ckast's applicability
    accepts the problem (CK's dispatcher's check included unless --kernel-only); refused kernels give
    rows with is_valid false.

    \b
    Example:
      ckast bench emit --library lib/ --problems shapes.csv -o bench/
      cmake -S bench -B bench/build -DCK_INCLUDE=/opt/rocm/include && cmake --build bench/build -j
      bench/build/ckast_bench --warmup 5 --repeat 20 --output-dir timings/
    """
    from ckast.bench.files import write_driver
    from ckast.bench.plan import LEFT_OUT_VARIANTS, plan
    from ckast.output import OutputError
    from ckast.select.applicability import KERNEL_ONLY, LAYERS, describe_layers
    from ckast.output.places import refuse_inside
    from ckast.select.library import LibraryError
    from ckast.select.problem import ProblemError

    try:
        the_plan = plan(library_dir, problems_file, KERNEL_ONLY if kernel_only else LAYERS)
        refuse_inside(library_dir, out_dir, "the driver")
        counts = write_driver(the_plan, library_dir, out_dir, chunk_kernels, on_wait=wait_message)
    except (LibraryError, ProblemError, ValueError) as exc:
        bad_input([str(exc)])
    except OutputError as exc:
        fail(exc)
    for variant, count in sorted(the_plan.left_out.items()):
        click.echo(f"left out: {count} {variant} kernels ({LEFT_OUT_VARIANTS[variant]})", err=True)
    tables = sum(len(g.parts) for g in the_plan.groups)
    gemm = (f" (GEMM applicability: {describe_layers(the_plan.layers)})"
            if any(g.kind == "gemm" for g in the_plan.groups) else "")
    problems = sum(len(g.problems) for g in the_plan.groups)
    click.echo(f"{quantity(len(the_plan.kernels), 'kernel')} in {quantity(counts['chunks'], 'chunk')}, "
               f"{quantity(problems, 'problem')}, {quantity(tables, 'timing table')}{gemm} -> {out_dir}: "
               f"{quantity(counts['written'], 'file')} written, {counts['unchanged']} unchanged, "
               f"{counts['removed']} removed")
