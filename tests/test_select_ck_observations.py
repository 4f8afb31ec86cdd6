"""CK's real observations replayed on ckast's selection (examples/ck-real/README.md).

CK's parity sweep built 32 unpadded fp16 rcr GEMM kernels for MI300X, measured them on four shapes, saw its
codegen refuse 16 more configs, and saw its dispatcher find no suitable kernel for M=257, N=1024, K=512: the
dispatcher layer of applicability (CK's `supports()`) refuses that problem where the kernels' own checks
accept it. And a GEMM problem says which GEMM it is: a plain one never runs on a preshuffle or multi-D kernel.
"""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from ckast.cli import main as cli
from ckast.config import ConfigError, load_data
from ckast.library.selection import Selection
from ckast.select.serving.applicability import KERNEL_ONLY, applicable, why_not
from ckast.select.serving.library import LibraryError, load_library
from ckast.select.problem import ProblemError
from ckast.select.serving.problem_read import gemm_problem

from .select_helpers import ROOT, entries, write_library

REAL = ROOT / "examples" / "ck-real"
SWEEP = REAL / "gemm_fp16_rcr_gfx942_sweep.json"
SHAPES = {(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (1536, 2048, 512)}


def _library(tmp_path, *configs):
    return write_library(tmp_path / "lib", [e for path in configs
                                            for e in entries(Selection("", "", "ck-2026.06", (), (), (), None, (path,)))])


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return _library(tmp_path_factory.mktemp("sweep"), SWEEP)


def _select(lib, *args):
    return CliRunner().invoke(cli, ["select", "--library", str(lib), *args])


def _json(lib, problem, *args):
    result = _select(lib, "--problem", problem, "--json", "-k", "100", *args)
    doc = json.loads(result.stdout)
    assert result.exit_code == (0 if doc["problems"][0]["applicable"] else 3), result.stderr  # 3: no kernel for it
    return doc


def test_m257_is_declined_by_ck_s_dispatcher_and_accepted_by_the_launchers(sweep):
    out = _json(sweep, "M=257,N=1024,K=512")
    assert out["layers"] == ["kernel", "dispatcher"]
    (problem,) = out["problems"]
    assert (problem["kernels"], problem["applicable"], problem["top"]) == (32, 0, [])
    assert problem["refused"] == {"dispatcher.pad_m": 32}  # 257 is no whole number of 64- or 128-row tiles
    text = _select(sweep, "--problem", "M=257,N=1024,K=512").output
    assert "0 of 32 kernels applicable (kernel and dispatcher checks)" in text
    assert "no kernel applicable; kernels refused, by the first condition refusing each: dispatcher.pad_m 32" in text

    # called directly, the launchers take it: a row-major A and C never need whole M tiles
    direct = _json(sweep, "M=257,N=1024,K=512", "--kernel-only")
    assert direct["layers"] == ["kernel"] and direct["problems"][0]["applicable"] == 32
    name = direct["problems"][0]["top"][0]["name"]
    why = _json(sweep, "M=257,N=1024,K=512", "--why-not", name)["problems"][0]["why_not"][0]["reason"]
    assert why.startswith("dispatcher.pad_m (dispatcher layer): without pad_m, CK's dispatcher takes M in whole tiles only")
    assert why.endswith("(M % tile_m) == 0 is false (M=257, tile_m=64)")
    assert _json(sweep, "M=257,N=1024,K=512", "--why-not", name, "--kernel-only")["problems"][0]["why_not"][0][
        "reason"] is None


def test_a_kernel_s_own_check_still_refuses_where_it_must(sweep):
    """An N that is no whole number of tiles: the launcher refuses (C is row-major), and so does the dispatcher,
    which asks first."""
    config = load_library(sweep).configs[0]
    problem = gemm_problem({"M": 256, "N": 1000, "K": 512})
    assert why_not(problem, config).startswith("dispatcher.pad_n (dispatcher layer):")
    assert why_not(problem, config, KERNEL_ONLY).startswith("gemm.pad_n (kernel layer):")


def test_the_swept_shapes_are_accepted_by_all_32(sweep):
    for name in ("gemm_fp16_rcr_gfx942_sweep_results.csv", "gemm_fp16_rcr_gfx942_sweep_results_b.csv"):
        with (REAL / name).open(newline="") as f:
            rows = list(csv.DictReader(f))
        assert {(int(r["M"]), int(r["N"]), int(r["K"])) for r in rows} == SHAPES
        assert len({r["kernel"] for r in rows}) == 32
    table = load_library(sweep).part(gemm_problem({"M": 1, "N": 1, "K": 1})).table
    for m, n, k in sorted(SHAPES):
        problem = gemm_problem({"M": m, "N": n, "K": k})
        assert applicable(problem, table).sum() == 32 == applicable(problem, table, KERNEL_ONLY).sum()


def test_the_16_configs_of_four_waves_of_32_wide_warp_tiles_are_refused_at_codegen():
    kernels = json.loads(SWEEP.read_text())["kernels"]
    refused = [dict(k, warp_tile_m=32, warp_tile_n=32, warp_tile_k=16) for k in kernels
               if (k["tile_m"], k["tile_n"], k["tile_k"], k["warp_m"], k["warp_n"], k["warp_k"]) == (64, 64, 64, 4, 1, 1)]
    assert len(refused) == 16 and len({json.dumps(k, sort_keys=True) for k in refused}) == 16
    with pytest.raises(ConfigError) as caught:
        load_data(refused)
    assert len(caught.value.issues) == 16
    assert {(i.path, i.rule) for i in caught.value.issues} == {(f"[{i}].tile_m", "tile.divisible") for i in range(16)}


# --- a problem says which GEMM it is ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    """fp16 rcr and rrr standard, fp16 and bf16 rcr preshuffle, fp16 rcr multi-D (1 D, MultiDAdd) and bf16 rrr
    multi-D (2 D, MultiDMultiply)."""
    return _library(tmp_path_factory.mktemp("variants"),
                    *(ROOT / "examples" / f"gemm_{v}.json" for v in ("standard", "preshuffle", "multi_d")))


@pytest.mark.parametrize(("problem", "args", "variant", "kernels"), [
    ("M=512,N=512,K=512", ("--datatype", "fp16", "--layout", "rcr"), "standard", 3),
    ("M=512,N=512,K=512,variant=preshuffle", ("--datatype", "fp16", "--layout", "rcr"), "preshuffle", 3),
    ("M=512,N=512,K=512,variant=multi_d", ("--datatype", "fp16", "--layout", "rcr"), "multi_d", 3),
    ("M=512,N=512,K=512,variant=multi_d,num_d_tensors=2,d_layout=r,elementwise_op=MultiDMultiply",
     ("--datatype", "bf16", "--layout", "rrr"), "multi_d", 1),
])
def test_a_problem_runs_on_the_kernels_of_its_variant_only(variants, problem, args, variant, kernels):
    """The fp16 rcr part holds a kernel of each variant; 512 is whole tiles of all of them."""
    (out,) = _json(variants, problem, *args)["problems"]
    configs = {n: c for n, c in zip(load_library(variants).names, load_library(variants).configs)}
    assert (out["applicable"], out["kernels"]) == (1, kernels)
    assert configs[out["top"][0]["name"]]["variant"] == variant
    assert out["fields"]["variant"] == variant and ("num_d_tensors" in out["fields"]) == (variant == "multi_d")


def test_why_not_names_the_variant_and_the_d_tensors(variants):
    library = load_library(variants)
    preshuffle = next(c for c in library.configs if c["variant"] == "preshuffle")
    multi_d = next(c for c in library.configs if c["variant"] == "multi_d" and c["datatype"] == "fp16")
    assert why_not(gemm_problem({"M": 512, "N": 512, "K": 512}), preshuffle) == (
        "gemm.variant (kernel layer): a kernel runs the GEMM of its variant: standard (C = A x B; also the stream_k, "
        "batched and grouped kernels), preshuffle (B pre-shuffled), multi_d (with D tensors) or a quantized family's "
        "(bquant, abquant, ...); kernel_gemm == variant is false (kernel_gemm=preshuffle, variant=standard)")
    two = gemm_problem({"M": 512, "N": 512, "K": 512, "variant": "multi_d", "num_d_tensors": 2})
    assert why_not(two, multi_d).startswith(
        "gemm.d_tensors (kernel layer): a multi-D kernel takes the problem's D tensors")
    assert why_not(two, multi_d, KERNEL_ONLY).startswith("gemm.d_tensors (kernel layer):")  # the op is no dispatcher matter


FP16_RCR = ("--datatype", "fp16", "--layout", "rcr")


@pytest.mark.parametrize(("problem", "args", "message"), [
    ("M=512,N=512,K=512,variant=multi_d,num_d_tensors=2", FP16_RCR,
     "the library holds no multi_d GEMM (2 D tensors r, MultiDAdd) kernel"),
    ("M=512,N=512,K=512,variant=preshuffle", ("--datatype", "fp16", "--layout", "rrr"),
     "the library holds no preshuffle GEMM kernel of datatype fp16 and layout rrr (it has some of: bf16 rcr, fp16 rcr)"),
    ("M=512,N=512,K=512,variant=plain", FP16_RCR,
     "--problem: variant: 'plain' is not one of standard, preshuffle, multi_d"),
    ("M=512,N=512,K=512,num_d_tensors=1", FP16_RCR,
     "num_d_tensors: only a multi_d problem has D tensors (this one is standard)"),
    ("M=512,N=512,K=512,variant=multi_d,num_d_tensors=3", FP16_RCR, "num_d_tensors: 3 is not one of 1, 2"),
])
def test_a_library_without_the_problem_s_gemm_says_so(variants, problem, args, message):
    result = _select(variants, "--problem", problem, *args)
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.splitlines()) == 1, result.output


def test_only_plain_gemm_kernels_library_refuses_other_variants(tmp_path):
    lib = _library(tmp_path, ROOT / "examples" / "gemm_standard.json")
    with pytest.raises(LibraryError, match="the library holds no preshuffle GEMM kernel$"):
        load_library(lib).part(gemm_problem({"M": 64, "N": 64, "K": 64, "variant": "preshuffle"}), layout="rcr")
    with pytest.raises(ProblemError, match="elementwise_op: 'Add' is not one of"):
        gemm_problem({"M": 64, "N": 64, "K": 64, "variant": "multi_d", "elementwise_op": "Add"})


def test_a_timing_row_s_gemm_is_its_kernel_s(variants, tmp_path):
    from ckast.select.tables.timings import TimingError, read_timings

    library = load_library(variants)
    names = {c["variant"] + c["datatype"]: n for n, c in zip(library.names, library.configs)}
    table = tmp_path / "t.csv"
    table.write_text(f"kernel,M,N,K,tflops\n{names['preshufflefp16']},512,512,512,10\n"
                     f"{names['multi_dbf16']},512,512,512,10\n")
    runs = read_timings([table], library).runs
    assert [(r.problem.variant, r.problem.num_d_tensors, r.problem.elementwise_op) for r in runs] == [
        ("preshuffle", 0, ""), ("multi_d", 2, "MultiDMultiply")]
    table.write_text(f"kernel,M,N,K,variant,tflops\n{names['preshufflefp16']},512,512,512,standard,10\n")
    with pytest.raises(TimingError, match=r"row 1: variant: standard is not the kernel's variant \(preshuffle\)"):
        read_timings([table], library)


def test_eval_scores_what_the_dispatcher_runs_unless_kernel_only(sweep, tmp_path):
    """Runs measured by calling the launchers directly, on a swept shape and on M=257: through CK's dispatcher
    the M=257 problem has no kernel, so eval sets its runs apart (and says so) unless --kernel-only."""
    names = load_library(sweep).names
    table = tmp_path / "runs.csv"
    table.write_text("kernel,M,N,K,tflops\n" + "".join(f"{name},{m},1024,512,{10 + i}\n" for i, name in enumerate(names)
                                                       for m in (257, 1024)))
    runner = CliRunner()
    both = runner.invoke(cli, ["select", "eval", "--data", str(table), "--library", str(sweep)])
    assert both.exit_code == 0, both.output
    assert ("32 runs of 32 kernels on 1 problem; 32 runs of kernels not applicable to their problem set apart "
            "(1 problem); predictor: analytic model; applicability: kernel and dispatcher checks") in both.output
    assert "not applicable: M=257,N=1024,K=512: 32 runs of 32 kernels" in both.output
    direct = runner.invoke(cli, ["select", "eval", "--data", str(table), "--library", str(sweep), "--kernel-only",
                                 "--json"])
    assert direct.exit_code == 0, direct.output
    report = json.loads(direct.output)
    assert (report["layers"], report["not_applicable"]["runs"], report["all"]["all"]["problems"]) == (["kernel"], 0, 2)
