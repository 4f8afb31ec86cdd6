"""`ckast bench emit`: the benchmark driver (a main TU and one TU per chunk of kernels), JIT'd against the host
model (whose timed launches return a deterministic stand-in time) and run; its timing tables read back by
`select.timings` and accepted by `ckast select train`. A `ck_compile` test compiles the driver's TUs
device-only for gfx942 against CK Tile."""

from __future__ import annotations

import csv
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckast import nodes as n
from ckast.cli import main
from ckast.select.serving.applicability import applicable
from ckast.select.serving.library import load_library
from ckast.select.tables.timings import read_timings

from .conftest import EXAMPLES

CONV_PROBLEMS = """\
G,N,C,K,Hi,Wi,Y,X,pad_h,pad_w,direction
1,4,64,64,14,14,3,3,1,1,forward
1,2,32,32,7,7,1,1,0,0,
2,2,32,64,8,8,3,3,1,1,bwd_weight
8,2,64,64,9,9,3,3,1,1,bwd_weight
"""
GEMM_PROBLEMS = '{"problems": [{"M": 256, "N": 256, "K": 256}, {"M": 256, "N": 256, "K": 100}, {"M": 512, "N": 512, "K": 512, "k_batch": 2}]}'
NEW = "ck-2026.06"
_runs = itertools.count()


def cli(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def conv_lib(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("conv") / "lib"
    assert cli("generate", "--rule-set", "tiny", "--arch", "gfx942", "--ck-api", "ck-2025.11", "-o", out).exit_code == 0
    return out


@pytest.fixture(scope="module")
def gemm_lib(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gemm") / "lib"
    assert cli("emit", "--config", EXAMPLES / "gemm_standard.json", "-o", out).exit_code == 0
    return out


def emit(lib: Path, problems: str, tmp_path: Path, suffix: str = ".csv", *more: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"problems{suffix}"
    path.write_text(problems)
    out = tmp_path / "bench"
    result = cli("bench", "emit", "--library", lib, "--problems", path, "-o", out, *more)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("bench_chunk_")) == [
        "CMakeLists.txt", "bench_chunks.hpp", "bench_driver.cpp", "manifest.json"]
    return out


def units(out: Path) -> list[Path]:
    """The driver's TUs: the main one, then the chunks in order."""
    return [out / "bench_driver.cpp", *sorted(out.glob("bench_chunk_*.cpp"))]


def run_driver(out: Path, *flags: str) -> int:
    """JIT the driver's TUs as one unit (main left out; the library and its API profile from the driver's manifest)
    and call run_benchmark with `flags`; its status."""
    from ckast import testing
    from ckast.hostmodel.jit import session

    session().cppdef(n.to_source(n.File([n.Define("CKAST_BENCH_NO_MAIN")], pragma_once=False)))
    unit = testing.jit_files(units(out))
    args = ["ckast_bench", *flags]
    argv = n.VarDecl(n.Array(n.Const(n.Ptr(n.Const(n.Builtin("char")))), None), "argv",
                     n.BraceInit(None, [n.StrLit(a) for a in args]))
    call = n.call("ckast_bench::run_benchmark", n.IntLit(len(args)), n.ident("argv"))
    return unit.function(n.Builtin("int"), [], [argv, n.Return(call)])()


def tables_of(directory: Path) -> dict[str, list[dict[str, str]]]:
    out = {}
    for path in sorted(directory.glob("*.csv")):
        with path.open(newline="") as f:
            out[path.stem] = list(csv.DictReader(f))
    return out


def check_round_trip(lib: Path, tables: Path) -> dict[str, list[dict[str, str]]]:
    """Every row is (problem, kernel of the problem's part); is_valid is the kernel's applicability; the
    tables holding a valid row read back with one run per valid row."""
    library = load_library(lib)
    rows = tables_of(tables)
    for stem, table in rows.items():
        valid = [r for r in table if r["is_valid"] == "true"]
        if valid:
            timings = read_timings([tables / f"{stem}.csv"], library)
            assert len(timings.runs) == len(valid) and timings.failed == len(table) - len(valid)
            for run, row in zip(timings.runs, valid):
                assert library.names[run.kernel] == row["kernel"] and run.tflops == pytest.approx(float(row["tflops"]))
        for row in table:
            config = library.config(row["kernel"])
            fields = {k: v for k, v in row.items() if k not in ("kernel", "time_ms", "tflops", "is_valid", "arch")}
            from ckast.select.tables.timings import _problem

            problem = _problem(fields, config, stem)
            assert bool(applicable(problem, [config])[0]) == (row["is_valid"] == "true"), (stem, row)
            assert row["arch"] == config["arch"] and (float(row["time_ms"]) > 0 if row["is_valid"] == "true" else True)
    return rows


def test_conv_driver_round_trip(conv_lib, tmp_path):
    out = emit(conv_lib, CONV_PROBLEMS, tmp_path)
    assert "ckast_add_kernels(ckast_bench_kernels NO_REGISTRATION" in (out / "CMakeLists.txt").read_text()
    tables = tmp_path / "tables"
    tables.mkdir()
    assert run_driver(out, "--warmup", "1", "--repeat", "2", "--output-dir", str(tables)) == 0
    rows = check_round_trip(conv_lib, tables)
    # forward and bwd_weight, 2-D, fp16 and bf16 (the tiny library's 2-D parts); rows = problems x kernels
    assert {s: len(r) for s, r in rows.items()} == {
        "grouped_conv_bwd_weight_2d_bf16": 4, "grouped_conv_bwd_weight_2d_fp16": 4,
        "grouped_conv_forward_2d_bf16": 2, "grouped_conv_forward_2d_fp16": 2}
    statuses = {r["is_valid"] for table in rows.values() for r in table}
    assert statuses == {"true", "false"}  # the 1x1 kernels refuse the 3x3 problem
    model = tmp_path / "model"
    result = cli("select", "train", "--data", tables / "grouped_conv_bwd_weight_2d_fp16.csv", "--library", conv_lib,
                 "-o", model, "--folds", "0", "--trees", "3")
    assert result.exit_code == 0, result.output
    assert (model / "model_tflops.lgbm").is_file()


def test_gemm_driver_round_trip_and_timing_flags(gemm_lib, tmp_path):
    from ckast import testing

    out = emit(gemm_lib, GEMM_PROBLEMS, tmp_path, ".json")
    tables = tmp_path / "tables"
    tables.mkdir()
    testing.clear_log()
    assert run_driver(out, "--warmup", "2", "--repeat", "3", "--output-dir", str(tables)) == 0
    timed = [e for e in testing.log() if e.kind == "timed"]
    assert timed and {e["iterations"] for e in timed} == {5}
    rows = check_round_trip(gemm_lib, tables)
    assert {s: len(r) for s, r in rows.items()} == {"gemm_fp16_rcr": 3, "gemm_fp16_rrr": 3}
    assert [r["is_valid"] for r in rows["gemm_fp16_rcr"]] == ["true", "false", "true"]  # K=100: no K padding
    assert [r["is_valid"] for r in rows["gemm_fp16_rrr"]] == ["true", "false", "false"]  # vector_a; no split-K
    # the stand-in time grows with the launched threads: the 512^3 GEMM takes longer than the 256^3 one
    assert float(rows["gemm_fp16_rcr"][2]["time_ms"]) > float(rows["gemm_fp16_rcr"][0]["time_ms"])
    result = cli("select", "train", "--data", tables / "gemm_fp16_rcr.csv", "--library", gemm_lib, "-o",
                 tmp_path / "model", "--folds", "0", "--trees", "3")
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def new_libs(tmp_path_factory) -> dict[str, Path]:
    """The conv and GEMM libraries above, generated for CK API profile ck-2026.06."""
    root = tmp_path_factory.mktemp("ck_2026_06")
    for args in (("generate", "--rule-set", "tiny", "--arch", "gfx942"),
                 ("emit", "--config", EXAMPLES / "gemm_standard.json")):
        result = cli(*args, "--ck-api", NEW, "-o", root / args[0])
        assert result.exit_code == 0, result.output
    return {"conv": root / "generate", "gemm": root / "emit"}


def test_drivers_of_ck_2026_06_libraries_run_as_ck_2025_11_ones(new_libs, tmp_path):
    """The driver's manifest records its library, so the JIT finds the library's headers and API profile (the
    default profile's model does not declare what ck-2026.06 kernels use); the tables round-trip as above, the GEMM
    ones with the same validity as the ck-2025.11 library's."""
    from ckast import testing

    for kind, problems, suffix in (("conv", CONV_PROBLEMS, ".csv"), ("gemm", GEMM_PROBLEMS, ".json")):
        lib = new_libs[kind]
        out = emit(lib, problems, tmp_path / kind, suffix)
        driver = out / "bench_driver.cpp"
        assert testing.recorded_includes(driver) == (lib,)
        assert testing.profile_of(driver, [lib]) == NEW and testing.profile_of(driver) != NEW
        tables = tmp_path / kind / "tables"
        tables.mkdir()
        assert run_driver(out, "--warmup", "1", "--repeat", "2", "--output-dir", str(tables)) == 0
        rows = check_round_trip(lib, tables)
        if kind == "conv":  # the 2-D forward and bwd_weight parts, fp32 too in this library
            assert sorted(rows) == [f"grouped_conv_{d}_2d_{t}" for d in ("bwd_weight", "forward")
                                    for t in ("bf16", "fp16", "fp32")]
            assert {r["is_valid"] for table in rows.values() for r in table} == {"true", "false"}
        else:
            assert [r["is_valid"] for r in rows["gemm_fp16_rcr"]] == ["true", "false", "true"]
            assert [r["is_valid"] for r in rows["gemm_fp16_rrr"]] == ["true", "false", "false"]


@pytest.mark.parametrize("flags", [("--repeat", "0"), ("--warmup", "x"), ("--warmup", "-1"), ("--warmup",),
                                   ("--bogus", "1"), ("--repeat", "10000000")])
def test_driver_refuses_bad_flags_before_writing(gemm_lib, tmp_path, flags):
    out = emit(gemm_lib, GEMM_PROBLEMS, tmp_path, ".json")
    tables = tmp_path / "tables"
    tables.mkdir()
    assert run_driver(out, "--output-dir", str(tables), *flags) == 2
    assert not list(tables.iterdir())


@pytest.mark.parametrize(("lib", "problems", "message"), [
    ("gemm_lib", "M,N,K\n0,4,4\n", "M: 0 is out of range"),
    ("gemm_lib", "M,N,Q\n4,4,4\n", "Q: unknown field"),
    ("gemm_lib", "M,N,K\n", "no problem given"),
    ("conv_lib", "G,N,C,K,Hi,Wi,Y,X,direction\n1,1,8,8,8,8,3,3,bwd_data\n", "holds no bwd_data 2-D grouped-conv kernel"),
    ("gemm_lib", "M,N,K,variant\n4,4,4,multi_d\n", "variant: multi_d problems are not measured (the driver allocates "
                                                    "no D tensors)"),
    ("gemm_lib", "M,N,K,batch\n4,4,4,1\n4,4,4,2\n", "row 2: batch: problems of batch > 1 are not measured (the driver "
                                                      "runs one GEMM per launch)"),
    ("gemm_lib", "M,N,K,groups\n4,4,4,8\n", "groups: problems of groups > 1 are not measured (the driver runs one "
                                             "GEMM per launch)"),
    ("gemm_lib", "M,N,K,variant\n4,4,128,bquant\n", "variant: bquant problems are not measured (the driver allocates "
                                                     "no scales)"),
])
def test_bad_problems_exit_2_writing_nothing(request, tmp_path, lib, problems, message):
    path = tmp_path / "p.csv"
    path.write_text(problems)
    result = CliRunner().invoke(main, ["bench", "emit", "--library", str(request.getfixturevalue(lib)), "--problems",
                                                       str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_gemm_kernels_run_where_ck_s_dispatcher_takes_the_problem_unless_kernel_only(gemm_lib, tmp_path):
    """M=100: the unpadded rcr kernel's launcher takes it (row-major A and C), CK's dispatcher does not."""
    (tmp_path / "p.csv").write_text("M,N,K\n100,256,256\n")
    for flags, rcr in (((), "false"), (("--kernel-only",), "true")):
        out = tmp_path / f"out{len(flags)}"
        result = cli("bench", "emit", "--library", gemm_lib, "--problems", tmp_path / "p.csv", "-o", out, *flags)
        checks = "kernel checks only" if flags else "kernel and dispatcher checks"
        assert result.exit_code == 0 and f"(GEMM applicability: {checks})" in result.output, result.output
        source = "".join(tu.read_text() for tu in units(out))
        assert f"gemm_fp16_rcr_applicable[] = {{{rcr}}};" in source and "gemm_fp16_rrr_applicable[] = {true};" in source


def files_of(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.parametrize("top", [(), ("--top", "1")])
def test_emitted_driver_is_deterministic_whatever_the_hash_seed(conv_lib, tmp_path, top):
    first = emit(conv_lib, CONV_PROBLEMS, tmp_path / "a", ".csv", "--chunk-kernels", "5", *top)
    second = tmp_path / "b" / "bench"
    second.parent.mkdir()
    env = dict(os.environ, PYTHONHASHSEED="12345")
    subprocess.run([sys.executable, "-m", "ckast", "bench", "emit", "--library", str(conv_lib), "--problems",
                    str(tmp_path / "a" / "problems.csv"), "-o", str(second), "--chunk-kernels", "5", *top],
                   check=True, env=env, capture_output=True)
    assert files_of(first).keys() == files_of(second).keys()
    # the CMake file names the library relative to the output directory: both are one level below tmp_path
    assert files_of(first) == files_of(second)
    text = (first / "bench_driver.cpp").read_text()
    assert "int main(" in text and "#ifndef CKAST_BENCH_NO_MAIN" in text


def kernel_headers(tu: Path) -> set[str]:
    """The kernels whose launcher header a TU includes."""
    return {line.split('"')[1][:-len(".hpp")] for line in tu.read_text().splitlines()
            if line.startswith('#include "') and line.endswith('.hpp"') and "/" not in line
            and not line.startswith('#include "bench_')}


@pytest.mark.parametrize("size", [1, 5])
def test_kernels_are_cut_into_chunks_each_holding_its_own(conv_lib, tmp_path, size):
    """6 kernels (forward 2-D fp16, bf16: one each; bwd_weight 2-D fp16, bf16: two each): ceil(6 / size) chunks,
    every kernel included and launched by exactly one, the main TU by none; the CMake file builds them all."""
    out = emit(conv_lib, CONV_PROBLEMS, tmp_path, ".csv", "--chunk-kernels", str(size))
    main_tu, *chunk_tus = units(out)
    from ckast.bench.plan import plan

    kernels = load_library(conv_lib).names
    used = sorted(plan(conv_lib, tmp_path / "problems.csv").kernels)
    assert len(used) == 6 and len(chunk_tus) == -(-6 // size)
    assert [tu.name for tu in chunk_tus] == [f"bench_chunk_{i:04d}.cpp" for i in range(len(chunk_tus))]
    assert not kernel_headers(main_tu) and "::Launcher" not in main_tu.read_text()
    held = [kernel_headers(tu) for tu in chunk_tus]
    assert sorted(k for h in held for k in h) == used  # each kernel in exactly one chunk
    for tu, own in zip(chunk_tus, held):
        text = tu.read_text()
        launched = {k for k in kernels if f"{k}::Launcher" in text}
        assert launched == own and 0 < len(own) <= size, tu.name
        assert f"void run_chunk_{tu.stem[-4:]}(" in text and f"void run_chunk_{tu.stem[-4:]}(" in (
            out / "bench_chunks.hpp").read_text()
        assert f"run_chunk_{tu.stem[-4:]}(problem, stream, tables);" in main_tu.read_text()
    cmake = (out / "CMakeLists.txt").read_text()
    listed = cmake[cmake.index("set(CKAST_BENCH_SOURCES"):cmake.index("add_executable")].split()[1:-1]
    assert listed == [tu.name for tu in units(out)]
    assert "set_source_files_properties(${CKAST_BENCH_SOURCES} PROPERTIES LANGUAGE HIP)" in cmake


def test_a_re_emit_with_larger_chunks_removes_the_surplus_and_keeps_the_rest(conv_lib, tmp_path):
    out = emit(conv_lib, CONV_PROBLEMS, tmp_path, ".csv", "--chunk-kernels", "1")
    assert len(units(out)) == 7
    (out / "build").mkdir()
    (out / "build" / "CMakeCache.txt").write_text("the user's")
    mtime = (out / "bench_chunk_0000.cpp").stat().st_mtime_ns
    result = cli("bench", "emit", "--library", conv_lib, "--problems", tmp_path / "problems.csv", "-o", out,
                 "--chunk-kernels", "1")
    assert result.exit_code == 0 and "0 files written, 9 unchanged, 0 removed" in result.output, result.output
    assert (out / "bench_chunk_0000.cpp").stat().st_mtime_ns == mtime  # unchanged: not rewritten
    result = cli("bench", "emit", "--library", conv_lib, "--problems", tmp_path / "problems.csv", "-o", out,
                 "--chunk-kernels", "4")
    assert result.exit_code == 0 and "6 kernels in 2 chunks" in result.output and "4 removed" in result.output, (
        result.output)
    assert [tu.name for tu in units(out)] == ["bench_driver.cpp", "bench_chunk_0000.cpp", "bench_chunk_0001.cpp"]
    assert (out / "build" / "CMakeCache.txt").read_text() == "the user's"


def test_chunk_size_0_is_refused(conv_lib, tmp_path):
    (tmp_path / "p.csv").write_text(CONV_PROBLEMS)
    result = cli("bench", "emit", "--library", conv_lib, "--problems", tmp_path / "p.csv", "-o", tmp_path / "out",
                 "--chunk-kernels", "0")
    assert result.exit_code == 2 and "--chunk-kernels" in result.output
    assert "0 is not in the range x>=1" in result.output
    assert not (tmp_path / "out").exists()


def test_chunked_and_whole_drivers_write_the_same_tables(conv_lib, tmp_path):
    tables = []
    for name, more in (("one", ("--chunk-kernels", "1")), ("default", ())):
        out = emit(conv_lib, CONV_PROBLEMS, tmp_path / name, ".csv", *more)
        assert len(units(out)) == (7 if more else 2)
        into = tmp_path / name / "tables"
        into.mkdir()
        assert run_driver(out, "--warmup", "0", "--repeat", "1", "--output-dir", str(into)) == 0
        tables.append(files_of(into))
    assert len(tables[0]) == 4 and tables[0] == tables[1]


@pytest.mark.ck_compile
def test_driver_compiles_device_only_against_ck_tile(conv_lib, gemm_lib, tmp_path):
    """Two kernels each: the tiny library's forward 2-D parts (fp16, bf16) and the GEMM example."""
    from ckast.check import Toolchain
    from ckast.check.runner import compile_one

    toolchain = Toolchain.discover()
    for lib, problems, suffix in ((conv_lib, "G,N,C,K,Hi,Wi,Y,X\n1,2,32,32,7,7,1,1\n", ".csv"),
                                  (gemm_lib, GEMM_PROBLEMS, ".json")):
        out = emit(lib, problems, tmp_path / lib.parent.name, suffix, "--chunk-kernels", "1")
        assert len(units(out)) == 3  # the main TU and a chunk per kernel
        for tu in units(out):
            result = compile_one(tu, toolchain, include_dirs=[lib])
            print(result.line())
            assert result.passed, result.log


TOP_PROBLEMS = "M,N,K\n1024,1024,1024\n2048,2048,2048\n1536,2048,512\n256,256,256\n"


@pytest.fixture(scope="module")
def sweep_lib(tmp_path_factory) -> Path:
    """CK's 32-kernel GEMM sweep library (fp16 rcr, gfx942): more kernels than a top K."""
    out = tmp_path_factory.mktemp("sweep") / "lib"
    assert cli("emit", "--config", EXAMPLES / "ck-real" / "gemm_fp16_rcr_gfx942_sweep.json", "-o", out).exit_code == 0
    return out


def test_a_top_k_driver_measures_each_problem_s_top_k_and_select_eval_reads_its_table(sweep_lib, tmp_path):
    """--top 2 of 32 kernels: each problem's rows are its two best as `ckast select` ranks them, the manifest says
    so, and `select eval` reads the table as the driver wrote it (the best of the two measured is the best)."""
    import json

    from ckast.workflow.choosing import select_kernels

    out = emit(sweep_lib, TOP_PROBLEMS, tmp_path, ".csv", "--top", "2")
    assert "4 kernels (each problem's top 2 by the analytic model: 8 runs) in 1 chunk, 4 problems" in cli(
        "bench", "emit", "--library", sweep_lib, "--problems", tmp_path / "problems.csv", "-o", out, "--top", "2").output
    run = json.loads((out / "manifest.json").read_text())["run"]
    assert (run["top"], run["ranking"], run["applicability"]) == (2, {"name": "analytic"}, ["kernel", "dispatcher"])
    tables = tmp_path / "tables"
    tables.mkdir()
    assert run_driver(out, "--warmup", "0", "--repeat", "1", "--output-dir", str(tables)) == 0
    rows = check_round_trip(sweep_lib, tables)["gemm_fp16_rcr"]
    measured: dict[tuple[str, ...], list[str]] = {}
    for row in rows:
        assert row["is_valid"] == "true"
        measured.setdefault((row["M"], row["N"], row["K"]), []).append(row["kernel"])
    ranked = {tuple(str(c.fields[f]) for f in "MNK"): sorted(k.name for k in c.top)
              for c in select_kernels(sweep_lib, problems_file=tmp_path / "problems.csv", top=2)}
    assert {p: sorted(names) for p, names in measured.items()} == ranked and len(ranked) == 4
    assert all(len(names) == 2 for names in ranked.values())
    result = cli("select", "eval", "--data", tables / "gemm_fp16_rcr.csv", "--library", sweep_lib, "--best-of", "2")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("8 runs of ") and "on 4 problems" in result.output
    assert result.output.splitlines()[-1].split() == ["2", "4", "100.0%", "100.0%", "100.0%", "100.0%"]
    model = tmp_path / "model"
    assert cli("select", "train", "--data", tables / "gemm_fp16_rcr.csv", "--library", sweep_lib, "-o", model,
               "--folds", "0", "--trees", "3").exit_code == 0
    by_model = tmp_path / "by_model"
    result = cli("bench", "emit", "--library", sweep_lib, "--problems", tmp_path / "problems.csv", "-o", by_model,
                 "--top", "1", "--model", model)
    assert result.exit_code == 0 and f"top 1 by the residual model {model} (analytic model, " in result.output, result.output
    ranking = json.loads((by_model / "manifest.json").read_text())["run"]["ranking"]
    assert ranking["name"] == "residual" and ranking["model"] == str(model)  # written unvalidated (--folds 0)
    picks = {c.top[0].name for c in select_kernels(sweep_lib, problems_file=tmp_path / "problems.csv", model=model,
                                                   top=1)}
    assert {k for tu in units(by_model) for k in kernel_headers(tu)} == picks


def test_a_top_k_above_the_applicable_kernels_measures_each_problem_s_applicable_ones(conv_lib, tmp_path):
    from ckast.bench.plan import plan

    path = tmp_path / "p.csv"
    path.write_text(CONV_PROBLEMS)
    cut = plan(conv_lib, path, top=50)
    assert cut.top == 50 and cut.ranking == {"name": "analytic"} and cut.unserved == 1  # the forward 3x3 problem
    pairs = 0
    for group in cut.groups:
        for run in group.parts:
            for i, problem in enumerate(group.problems):
                mask = applicable(problem, run.part.table)
                assert {run.names[k] for k in run.chosen[i]} == {run.part.names[j] for j in mask.nonzero()[0]}
                pairs += int(mask.sum())
    result = cli("bench", "emit", "--library", conv_lib, "--problems", path, "-o", tmp_path / "out", "--top", "50")
    assert result.exit_code == 0 and "not measured: 1 problem without an applicable kernel" in result.output, (
        result.output)
    assert (f"6 kernels (each problem's top 50 by the analytic model: {pairs} runs) in 1 chunk, 4 problems, "
            "4 timing tables") in result.output and cut.runs == pairs


@pytest.mark.parametrize(("more", "message"), [
    (("--model", "m"), "--model: ranks the kernels of --top K; give --top"),
    (("--top", "0"), "0 is not in the range x>=1"),
    (("--top", "1", "--model", "nowhere"), "nowhere"),
])
def test_bad_top_k_options_exit_2_writing_nothing(conv_lib, tmp_path, more, message):
    (tmp_path / "p.csv").write_text(CONV_PROBLEMS)
    result = cli("bench", "emit", "--library", conv_lib, "--problems", tmp_path / "p.csv", "-o", tmp_path / "out",
                 *more)
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "out").exists()
