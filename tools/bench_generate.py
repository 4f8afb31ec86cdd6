"""Benchmark: generating CK-sized kernel libraries with `ckast generate`, next to CK's own generator.

For each selected set (rule set + arch + datatypes/ranks) and API profile it measures:

1. The command, as a user runs it: wall time of a fresh `python -m ckast generate ... -o DIR -j N` into
   an empty directory, and of a no-op rerun into the same directory (the files written / unchanged on
   the rerun are parsed from ckast's summary line); the library's kernels, files and bytes; the peak
   RSS of the largest process of the run (from `os.wait4`, like `/usr/bin/time -v`).
2. Its stages, by calling ckast's functions in a fresh process (so import cost is isolated):
   imports; enumeration (the rule set's candidate generator alone, cold) and validation (`build`
   minus a warm enumeration); rendering (`render_all` on N processes) with, on a sample of 50
   kernels, graph + AST build (`variants.lower_kernel`) against printing (`nodes.to_source`) of
   the kernel header; writing (`emit.write_outputs` into an empty directory).

Start-up is `python -c "import ckast.cli"`, `python -m ckast --version` and `python -m ckast emit` of one
kernel into an empty directory (its template cached), each in a fresh process.
Commands run as `sys.executable -m ckast`, so a pyenv shim's own start-up is not counted.
CK's figures are those of issue 12 and printed alongside, with the targets set there.

    python tools/bench_generate.py --quick                  # set a at ck-2026.06, one run
    python tools/bench_generate.py --set a --set c --runs 3 --jobs 2 --out-root /var/tmp/bench

Figures from a shared, busy machine are noisy: use --runs (medians are reported).

Against CK's own generator (`--ck DIR`): each round runs CK's generator for the set into an empty
directory, then `ckast generate` into an empty directory with an empty cache directory (cold) and
again with one primed before the first round (warm: the templates and the selection's index, so
no enumeration, validation or recording); it prints each wall's median (min-max) and
the ratios ckast/CK taken round by round, with kernels, files and peak RSS. Output directories are
emptied outside the timing. CK's generator is run as `python -c "import sys; sys.path.insert(0, DIR);
import MODULE; sys.exit(MODULE.main())" ARGS...`: importing the module once, by its own name, matters,
because running `unified_grouped_conv_codegen.py` as a script writes no kernel (its rule sets import
the module a second time and its isinstance filters reject their configs).

    python tools/bench_generate.py --ck /work/ckgen --runs 5                       # tmpfs
    python tools/bench_generate.py --ck /work/ckgen --runs 5 --out-root /var/tmp/bench  # disk

CK's generator cannot be committed here; rebuild it outside the repository from the public
ROCm/composable_kernel repository, files under `dispatcher/codegen/` at these commits (length in
characters), keeping the layout (`grouped_conv/` needs no `__init__.py`: it is imported as a
namespace package):

    unified_grouped_conv_codegen.py                   6edc0c0229889cb8c8b8b962f3cd87488d5ecebb  104,121
    unified_gemm_codegen.py                           907c6e94aef9b796f960cdd29513a8c92613ae07   58,923
    codegen_common.py                                 789a7f9c18c207f46002f923f5f9bc33c6c4c2ad   11,337
    arch_filter.py                                    304c1f924467c41b51d5a16944be6cb7b233e760   34,648
    arch_specs_generated.py                           60b276647b1fca38d41f7d9d38ea21e16a78166a   10,245
    grouped_conv/tile_math.py                         60b276647b1fca38d41f7d9d38ea21e16a78166a   21,051
    grouped_conv/grouped_config_rules_default.py      610e69bf523e1c89fe755b7a52c9189f7a50d4a2   19,348
    grouped_conv/grouped_config_rules_full.py         610e69bf523e1c89fe755b7a52c9189f7a50d4a2   86,367
    grouped_conv/grouped_config_rules_full_tests.py   54f25023e8af49decbd174c8a6154356e8f815d0    6,249

(A newer `arch_specs_generated.py` lacks `LDS_CAPACITY_LIMITS`, and `arch_filter.py` then falls back
to small built-in tables without saying so: keep the commit above.) CK's commands per set (its CLI
path, arch filter on: it writes no bwd_data kernel and 974 of 2,404 fp16 2-D bwd_weight configs):

    a  unified_grouped_conv_codegen --output OUT --datatype fp16 --ndim 2 --arch gfx942 --rule-set full
    b  unified_grouped_conv_codegen --output OUT --arch gfx942 --rule-set full
    c  unified_gemm_codegen --output-dir OUT --datatype fp16 --layout rcr --gpu-target gfx942
         --variants standard preshuffle multi_d
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import ckast as ckast_package

PROFILES = ("ck-2025.11", "ck-2026.06")
SAMPLE = 50
CHUNK_SIZE = 25  # `ckast generate`'s default --chunk-size


class LibrarySet(NamedTuple):
    key: str
    rule_set: str
    arch: str
    datatypes: tuple[str, ...]
    ndims: tuple[int, ...]
    label: str
    ck: str  # CK's figure (issue 12) for the comparable library
    ck_wall: tuple[float, float]  # CK's wall, seconds (best, worst)
    ck_module: str  # CK's generator module for the comparable library (`--ck`)
    ck_args: tuple[str, ...]  # its command-line arguments; "{out}" is the output directory

    def cli_args(self) -> list[str]:
        args = ["--rule-set", self.rule_set, "--arch", self.arch]
        args += [a for d in self.datatypes for a in ("--datatype", d)]
        args += [a for nd in self.ndims for a in ("--ndim", str(nd))]
        return args


SETS = {s.key: s for s in (
    LibrarySet("a", "full", "gfx942", ("fp16",), (2,), "full fp16 2-D",
               "conv full fp16 2-D gfx942: 1,649 kernels", (0.70, 0.93), "unified_grouped_conv_codegen",
               ("--output", "{out}", "--datatype", "fp16", "--ndim", "2", "--arch", "gfx942", "--rule-set", "full")),
    LibrarySet("b", "full", "gfx942", (), (), "full, all dtypes and ranks",
               "conv full fp16+bf16+fp32 2-D+3-D: 14,048 kernels", (4.2, 5.5), "unified_grouped_conv_codegen",
               ("--output", "{out}", "--arch", "gfx942", "--rule-set", "full")),
    LibrarySet("c", "gemm-default", "gfx942", ("fp16",), (), "gemm-default fp16",
               "GEMM standard+preshuffle+multi_d fp16 rcr: 14,364 configs", (2.9, 3.4), "unified_gemm_codegen",
               ("--output-dir", "{out}", "--datatype", "fp16", "--layout", "rcr", "--gpu-target", "gfx942",
                "--variants", "standard", "preshuffle", "multi_d")),
)}
BIG_CONV_SET = "b"
TARGETS = ("half of CK's wall; render <= 50 us/kernel (CK 17-30); no-op rerun <= 10% of fresh; "
           "start-up <= 0.15 s; peak RSS <= 500 MB for set b")

SUMMARY = re.compile(r"(?P<kernels>\d+) kernels \(.*\) -> .*: (?P<written>\d+) files written, "
                     r"(?P<unchanged>\d+) unchanged, (?P<removed>\d+) removed in [\d.]+ s( \(up to date\))?$",
                     re.MULTILINE)
CK_KERNELS = re.compile(r"Generated (\d+) grouped convolution kernel files|Kernels: (\d+)")


# ---------------------------------------------------------------------------------------------- runs


class Run(NamedTuple):
    wall: float
    peak_rss_mb: float
    output: str


def run_measured(argv: Sequence[str], cache: Path | None = None) -> Run:
    """Run a command (with `cache` as ckast's template cache); its wall time and the peak RSS of its
    largest process (it and its reaped children)."""
    env = {**os.environ, "CKAST_CACHE_DIR": str(cache)} if cache is not None else None
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{output}")
    return Run(wall, usage.ru_maxrss / 1024, output)  # ru_maxrss is in KiB on Linux


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def ckast(*args: str) -> list[str]:
    return [sys.executable, "-m", "ckast", *args]


def tree_size(root: Path) -> tuple[int, int]:
    """(files, bytes) under root."""
    files = [p for p in root.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


class CommandFigures(NamedTuple):
    fresh: float  # cold template cache
    warm: float  # a fresh output directory, templates cached by an earlier run
    noop: float
    written: int
    unchanged: int
    kernels: int
    files: int
    size_mb: float
    peak_rss_mb: float


def measure_command(lib: LibrarySet, profile: str, out: Path, jobs: int, runs: int) -> CommandFigures:
    """`runs` times: `ckast generate` into an empty directory with an empty template cache, again into an
    empty directory with the templates the first run cached, then again into the same directory."""
    argv = ckast("generate", *lib.cli_args(), "--ck-api", profile, "-o", str(out), "-j", str(jobs))
    fresh, warm, noop, rss = [], [], [], []
    cache = out.parent / "template-cache"
    for _ in range(runs):
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        first = run_measured(argv, cache)
        shutil.rmtree(out, ignore_errors=True)
        second = run_measured(argv, cache)
        again = run_measured(argv, cache)
        fresh.append(first.wall)
        warm.append(second.wall)
        noop.append(again.wall)
        rss.append(max(first.peak_rss_mb, second.peak_rss_mb))
    summary = SUMMARY.search(again.output)
    if summary is None:
        raise SystemExit(f"no summary line in the output of {' '.join(argv)}:\n{again.output}")
    files, size = tree_size(out)
    return CommandFigures(median(fresh), median(warm), median(noop), int(summary["written"]), int(summary["unchanged"]),
                          int(summary["kernels"]), files, size / 1e6, median(rss))


def measure_startup(runs: int, root: Path) -> dict[str, float]:
    """Median walls of bare Python, importing the command line, `ckast --version`, and `ckast emit` of one
    kernel (the first of examples/gemm_standard.json) into an empty directory with its template cached."""
    config = root / "one_kernel.json"
    kernels = json.loads((Path(__file__).parents[1] / "examples" / "gemm_standard.json").read_text())["kernels"]
    config.write_text(json.dumps({"kernels": kernels[:1]}))
    cache, out = root / "emit-cache", root / "emit-out"
    emit = ckast("emit", "--config", str(config), "-o", str(out))
    run_measured(emit, cache)  # records the kernel's template

    def emit_fresh() -> Run:
        shutil.rmtree(out, ignore_errors=True)
        return run_measured(emit, cache)

    commands = {
        "python -c pass": lambda: run_measured([sys.executable, "-c", "pass"]),
        "python -c 'import ckast.cli'": lambda: run_measured([sys.executable, "-c", "import ckast.cli"]),
        "python -m ckast --version": lambda: run_measured(ckast("--version")),
        "python -m ckast emit (one kernel)": emit_fresh,
    }
    return {name: median([run().wall for _ in range(max(runs, 5))]) for name, run in commands.items()}


# -------------------------------------------------------------------------------------------- stages


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def stage_times(lib: LibrarySet, profile: str, out: Path, jobs: int) -> dict[str, float]:
    """Run in a fresh process (see `--stages-of`): each stage of one `generate`, timed by calling ckast."""
    start = time.perf_counter()
    from ckast.catalog import load_profile
    from ckast.emit import render, write_outputs
    from ckast.library import Selection, build
    from ckast.library.build import Validator
    from ckast.library.generate import render_all
    from ckast.library.rulesets import RULE_SETS
    from ckast.nodes import to_source
    from ckast.render import Renderer
    from ckast.render.cache import cache_dir
    from ckast.variants import lower_kernel
    imports = time.perf_counter() - start

    selection = Selection(lib.rule_set, lib.arch, profile, lib.datatypes, lib.ndims)
    enumerate_ = lambda: RULE_SETS[lib.rule_set].candidates(selection, Validator(selection))  # noqa: E731
    candidates, enum_cold = timed(enumerate_)
    _, enum_warm = timed(enumerate_)
    library, built = timed(lambda: build(selection))
    kernels = library.kernels()
    emitted, render_cold = timed(lambda: render_all(kernels, jobs))  # cold cache: records every template
    warm_renderer = Renderer(cache_path=cache_dir())
    _, render_warm = timed(lambda: render(kernels, warm_renderer, save=False))

    sample = [k.config for k in kernels[::max(1, len(kernels) // SAMPLE)][:SAMPLE]]
    lower_kernel(sample[0], load_profile(sample[0].ck_api))  # warm caches outside the timing
    lower = print_ = 0.0
    for config in sample:
        unit, t_lower = timed(lambda: lower_kernel(config, load_profile(config.ck_api)))
        _, t_print = timed(lambda: to_source(unit.header))
        lower, print_ = lower + t_lower, print_ + t_print

    shutil.rmtree(out, ignore_errors=True)
    _, write = timed(lambda: write_outputs(emitted, out, chunk_size=CHUNK_SIZE, run=selection.as_dict()))
    return {
        "imports": imports, "enumerate": enum_cold, "validate": built - enum_warm, "render": render_cold,
        "render_warm": render_warm, "templates": warm_renderer.template_count,
        "write": write, "candidates": len(candidates), "kernels": len(emitted),
        "lower_us": lower / len(sample) * 1e6, "print_us": print_ / len(sample) * 1e6,
    }


def measure_stages(lib: LibrarySet, profile: str, out: Path, jobs: int, runs: int) -> dict[str, float]:
    """`stage_times` in `runs` fresh processes; the median of every figure."""
    argv = [sys.executable, __file__, "--stages-of", lib.key, "--profile", profile, "--out-root", str(out),
            "--jobs", str(jobs)]
    results = []
    for _ in range(runs):
        cache = out / "template-cache"
        shutil.rmtree(cache, ignore_errors=True)
        results.append(json.loads(run_measured(argv, cache).output.strip().splitlines()[-1]))
    return {key: median([r[key] for r in results]) for key in results[0]}


# -------------------------------------------------------------------------------------------- report


def print_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [list(map(str, header)), *[list(map(str, row)) for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for row in cells:
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))


def report(results: list[tuple[LibrarySet, str, CommandFigures, dict[str, float]]], startup: dict[str, float],
           jobs: int, runs: int) -> None:
    print(f"\nckast generate, -j {jobs}, median of {runs} run(s)")
    print_table(
        ("set", "profile", "kernels", "files", "MB", "fresh s", "warm s", "no-op s", "no-op %",
         "rerun written/unchanged", "peak RSS MB", "CK wall s", "target s"),
        [(f"{lib.key} {lib.label}", profile, c.kernels, c.files, f"{c.size_mb:.1f}", f"{c.fresh:.2f}",
          f"{c.warm:.2f}", f"{c.noop:.2f}", f"{c.noop / c.fresh * 100:.0f}", f"{c.written}/{c.unchanged}",
          f"{c.peak_rss_mb:.0f}",
          "{:.2f}-{:.2f}".format(*lib.ck_wall), "{:.2f}-{:.2f}".format(*(w / 2 for w in lib.ck_wall)))
         for lib, profile, c, _ in results])

    print(f"\nstages in a fresh process (-j {jobs}; render: cold cache, then warm in one process; "
          f"lower/print: the full path of one kernel header, what a template recording costs, sample of {SAMPLE})")
    print_table(
        ("set", "profile", "imports s", "enumerate s", "validate s", "render s", "warm s", "warm us/kernel",
         "templates", "lower us", "print us", "write s", "sum s"),
        [(f"{lib.key} {lib.label}", profile, f"{s['imports']:.2f}", f"{s['enumerate']:.2f}", f"{s['validate']:.2f}",
          f"{s['render']:.2f}", f"{s['render_warm']:.2f}", f"{s['render_warm'] / s['kernels'] * 1e6:.0f}",
          f"{s['templates']:.0f}", f"{s['lower_us']:.0f}", f"{s['print_us']:.0f}", f"{s['write']:.2f}",
          f"{sum(s[k] for k in ('imports', 'enumerate', 'validate', 'render', 'write')):.2f}")
         for lib, profile, _, s in results])

    print("\nstart-up (fresh process, median wall)")
    for name, wall in startup.items():
        print(f"  {name:32} {wall:.3f} s")

    print("\nCK's generator (issue 12)")
    for lib in {lib.key: lib for lib, *_ in results}.values():
        print(f"  {lib.key}: {lib.ck}, {lib.ck_wall[0]:.2f}-{lib.ck_wall[1]:.2f} s")
    print("  render: 17-30 us/kernel")
    print(f"targets: {TARGETS}")


# ------------------------------------------------------------------------------- against CK (--ck)


def ck_command(lib: LibrarySet, ck_dir: Path, out: Path) -> list[str]:
    """CK's generator for `lib`, imported once from `ck_dir` by its module name (see the docstring)."""
    code = f"import sys; sys.path.insert(0, {str(ck_dir)!r}); import {lib.ck_module} as m; sys.exit(m.main())"
    return [sys.executable, "-c", code, *(arg.format(out=out) for arg in lib.ck_args)]


class Comparison(NamedTuple):
    ck: list[float]  # walls per round
    cold: list[float]
    warm: list[float]
    ck_kernels: int
    ck_files: int
    kernels: int
    files: int
    ck_rss_mb: float
    rss_mb: float


def measure_vs_ck(lib: LibrarySet, profile: str, ck_dir: Path, root: Path, jobs: int, runs: int) -> Comparison:
    """`runs` rounds of CK's generator, ckast cold and ckast warm, each into an emptied directory."""
    ck_out, out, cold_cache, warm_cache = (root / name for name in ("ck", "ckast", "cache-cold", "cache-warm"))
    ck_argv = ck_command(lib, ck_dir, ck_out)
    argv = ckast("generate", *lib.cli_args(), "--ck-api", profile, "-o", str(out), "-j", str(jobs))

    def fresh(target: Path, command: list[str], cache: Path | None = None, empty_cache: bool = False) -> Run:
        shutil.rmtree(target, ignore_errors=True)
        if empty_cache and cache is not None:
            shutil.rmtree(cache, ignore_errors=True)
        return run_measured(command, cache)

    fresh(ck_out, ck_argv)  # warm-up: the OS caches CK's files as it does ckast's
    fresh(out, argv, warm_cache, empty_cache=True)  # primes the warm cache
    ck, cold, warm = [], [], []
    for _ in range(runs):
        ck.append(fresh(ck_out, ck_argv))
        cold.append(fresh(out, argv, cold_cache, empty_cache=True))
        warm.append(fresh(out, argv, warm_cache))
    found = CK_KERNELS.search(ck[-1].output)
    summary = SUMMARY.search(warm[-1].output)
    if found is None or summary is None:
        raise SystemExit(f"no kernel count in the output of CK's generator or of ckast for set {lib.key}")
    return Comparison([r.wall for r in ck], [r.wall for r in cold], [r.wall for r in warm],
                      int(found[1] or found[2]), tree_size(ck_out)[0], int(summary["kernels"]), tree_size(out)[0],
                      median([r.peak_rss_mb for r in ck]), median([r.peak_rss_mb for r in cold + warm]))


def spread(values: Sequence[float], digits: int = 2) -> str:
    return f"{median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def report_vs_ck(results: list[tuple[LibrarySet, Comparison]], ck_dir: Path, profile: str, root: Path,
                 jobs: int, runs: int) -> None:
    print(f"\nckast generate -j {jobs} --ck-api {profile} against CK's generator at {ck_dir}, output under {root}: "
          f"median (min-max) of {runs} round(s); ratios ckast/CK taken round by round")
    print_table(
        ("set", "CK kernels/files", "ckast kernels/files", "CK s", "ckast cold s", "ckast warm s",
         "cold/CK", "warm/CK", "CK RSS MB", "ckast RSS MB"),
        [(f"{lib.key} {lib.label}", f"{c.ck_kernels}/{c.ck_files}", f"{c.kernels}/{c.files}", spread(c.ck),
          spread(c.cold), spread(c.warm), spread([a / b for a, b in zip(c.cold, c.ck)]),
          spread([a / b for a, b in zip(c.warm, c.ck)]), f"{c.ck_rss_mb:.0f}", f"{c.rss_mb:.0f}")
         for lib, c in results])
    print(f"target: {TARGETS.split(';')[0]} (ratio <= 0.5)")


# ---------------------------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", dest="sets", action="append", choices=sorted(SETS),
                        help="set to run (repeatable; default: all): " +
                             "; ".join(f"{s.key} = {s.label}" for s in SETS.values()))
    parser.add_argument("--profile", dest="profiles", action="append", choices=PROFILES,
                        help="CK API profile (repeatable; default: both)")
    parser.add_argument("--out-root", type=Path, default=None,
                        help="where the libraries are written (default: a new directory under /dev/shm, tmpfs; "
                             "give a disk directory such as /var/tmp/bench to include disk writes)")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)), help="ckast generate -j")
    parser.add_argument("--runs", type=int, default=None,
                        help="runs per figure, median reported (default 3; 1 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help=f"only set a, at one profile (the first --profile; default {PROFILES[-1]})")
    parser.add_argument("--ck", type=Path, metavar="DIR",
                        help="only compare with CK's generator rebuilt in DIR (see this file's docstring; "
                             f"one profile, default {PROFILES[-1]}; --runs rounds, default 5)")
    parser.add_argument("--stages-of", choices=sorted(SETS), help=argparse.SUPPRESS)  # internal: stage worker
    return parser.parse_args(argv)


def compile_bytecode(dirs: Sequence[Path]) -> None:
    """Write the `.pyc` files of ckast (and CK's generator) before timing, as installing a package does:
    without them every process compiles its modules from source, and an environment with
    PYTHONDONTWRITEBYTECODE set (as this one) never keeps them."""
    import compileall

    for path in dirs:
        compileall.compile_dir(str(path), quiet=1)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    profiles = args.profiles or list(PROFILES)
    if args.stages_of:  # the fresh process of `measure_stages`: print the figures as one JSON line
        print(json.dumps(stage_times(SETS[args.stages_of], profiles[0], args.out_root, args.jobs)))
        return
    compile_bytecode([Path(ckast_package.__file__).parent] + ([args.ck] if args.ck else []))
    sets = ["a"] if args.quick else (args.sets or sorted(SETS))
    profiles = (args.profiles or [PROFILES[-1]])[:1] if args.quick or args.ck else profiles
    runs = args.runs or (1 if args.quick else 5 if args.ck else 3)
    own_root = args.out_root is None
    root = Path(tempfile.mkdtemp(prefix="ckast-bench-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)) \
        if own_root else args.out_root
    if args.ck:
        compared = []
        try:
            for key in sets:
                print(f"set {key} ({SETS[key].label}) against CK ...", file=sys.stderr, flush=True)
                compared.append((SETS[key], measure_vs_ck(SETS[key], profiles[0], args.ck.resolve(),
                                                          root / f"{key}-vs-ck", args.jobs, runs)))
                shutil.rmtree(root / f"{key}-vs-ck", ignore_errors=True)
        finally:
            if own_root:
                shutil.rmtree(root, ignore_errors=True)
        report_vs_ck(compared, args.ck.resolve(), profiles[0], root, args.jobs, runs)
        return
    results = []
    try:
        for key in sets:
            for profile in profiles:
                lib = SETS[key]
                print(f"set {key} ({lib.label}) at {profile} ...", file=sys.stderr, flush=True)
                out = root / f"{key}-{profile}"
                command = measure_command(lib, profile, out / "cli", args.jobs, runs)
                stages = measure_stages(lib, profile, out / "stages", args.jobs, runs)
                results.append((lib, profile, command, stages))
                shutil.rmtree(out, ignore_errors=True)
        startup = measure_startup(runs, root)
    finally:
        if own_root:
            shutil.rmtree(root, ignore_errors=True)
    report(results, startup, args.jobs, runs)


if __name__ == "__main__":
    main()
