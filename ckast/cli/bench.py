"""`ckast bench emit`: the C++ benchmark driver that measures a library's kernels for training."""

from __future__ import annotations

from pathlib import Path

import click

from .common import HELP, bad_input, fail


@click.group("bench", context_settings=HELP)
def bench() -> None:
    """Benchmark drivers for generated libraries."""


@bench.command("emit")
@click.option("--library", "library_dir", required=True, type=click.Path(path_type=Path),
              help="A generated library (the directory of its manifest.json).")
@click.option("--problems", "problems_file", required=True, type=click.Path(path_type=Path),
              help="The problems: a CSV with a header row, or JSON (as `ckast select --problems` reads them).")
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(path_type=Path),
              help="Where bench_driver.cpp and its CMakeLists.txt go.")
@click.option("--kernel-only", is_flag=True,
              help="Run a GEMM kernel wherever its own checks accept the problem (what its launcher takes when "
                   "called directly); default: where CK's dispatcher's check accepts it too.")
def emit(library_dir, problems_file, out_dir, kernel_only):
    """Write a C++ benchmark driver for a library and a problems file.

    Built with the library's ckast_kernels.cmake and run on an AMD GPU, the driver times every kernel
    of each problem's parts (CK Tile's stream_config timing; --warmup N, --repeat N) and writes one
    timing table per part (kind, direction, rank, datatype, layout) in the columns `ckast select train`
    reads. Conv kernels are asked is_supported first; GEMM kernels run where ckast's applicability
    accepts the problem (CK's dispatcher's check included unless --kernel-only); refused kernels give
    rows with is_valid false.

    \b
    Example:
      ckast bench emit --library lib/ --problems shapes.csv -o bench/
      cmake -S bench -B bench/build -DCK_INCLUDE=/opt/rocm/include && cmake --build bench/build
      bench/build/ckast_bench --warmup 5 --repeat 20 --output-dir timings/
    """
    from ckast import nodes as n
    from ckast.bench import CMAKE, DRIVER, driver_cmake, driver_file, plan
    from ckast.bench.plan import LEFT_OUT_VARIANTS
    from ckast.select.applicability import KERNEL_ONLY, LAYERS, describe_layers
    from ckast.select.library import LibraryError, refuse_output_in
    from ckast.select.problem import ProblemError

    try:
        the_plan = plan(library_dir, problems_file, KERNEL_ONLY if kernel_only else LAYERS)
        refuse_output_in(library_dir, out_dir, "the driver")
        source = n.to_source(driver_file(the_plan))
        cmake = driver_cmake(library_dir, out_dir)
    except (LibraryError, ProblemError, ValueError) as exc:
        bad_input([str(exc)])
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / DRIVER).write_text(source, encoding="utf-8")
        (out_dir / CMAKE).write_text(cmake, encoding="utf-8")
    except OSError as exc:
        fail(f"{out_dir}: cannot write the driver: {exc.strerror or exc}")
    for variant, count in sorted(the_plan.left_out.items()):
        click.echo(f"left out: {count} {variant} kernels ({LEFT_OUT_VARIANTS[variant]})", err=True)
    tables = sum(len(g.parts) for g in the_plan.groups)
    gemm = (f" (GEMM applicability: {describe_layers(the_plan.layers)})"
            if any(g.kind == "gemm" for g in the_plan.groups) else "")
    click.echo(f"{len(the_plan.kernels)} kernels, {sum(len(g.problems) for g in the_plan.groups)} problems, "
               f"{tables} timing tables{gemm} -> {out_dir / DRIVER}, {out_dir / CMAKE}")
