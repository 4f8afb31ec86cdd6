"""Exactness of the emitted selector: its rankings against `ckast select`'s, for many random problems.

For conv (`full` fp16 2-D gfx942 at ck-2026.06, every direction) and GEMM (`gemm-default` fp16 gfx942), with the
analytic model and with a LightGBM model (trained here on synthetic timings of the forward / GEMM part), it
emits the selector, then ranks N random problems per op

- compiled on the host (`clang++-19 -O2`, a driver built from nodes): per problem the count of ranked kernels
  and an FNV-1a hash of each ranked kernel's name order and predicted TFLOPS bits, against the same hash of
  Python's `rank`;
- JIT'd with cppyy (unoptimized, so on fewer problems): the full ranking, names and TFLOPS bits.

Prints mismatches (0 is the claim) and per-problem times (Python rank, C++ -O2 rank).

    python tools/exact_selector.py                       # 10,000 problems per op, 200-tree models
    python tools/exact_selector.py --problems 500 --jit-problems 100 --trees 50
    python tools/exact_selector.py --ops conv --direction forward --trees 2000 --problems 1000   # latency
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from ckast import nodes as n
from ckast.arch.hardware import hardware
from ckast.select.models.analytic import AnalyticPredictor
from ckast.select.cxx.problem_struct import problem_struct
from ckast.select.cxx.selector import write_selector
from ckast.select.serving.library import load_library
from ckast.select.models.lightgbm_model import load_model
from ckast.select.problem import ConvProblem, GemmProblem
from ckast.select.ranking.rank import rank

FNV_OFFSET, FNV_PRIME, MASK = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1
CLANG = "clang++-19"
SECONDS = n.Signature("duration", ("std", "chrono", "duration"), "struct", [n.Param("Rep", "type")])(
    Rep=n.Builtin("double"))


def fnv(values: list[int]) -> int:
    """FNV-1a over 64-bit words (the driver's `mix`)."""
    h = FNV_OFFSET
    for v in values:
        h = ((h ^ (v & MASK)) * FNV_PRIME) & MASK
    return h


DIRECTIONS = ["forward", "bwd_data", "bwd_weight"]


def conv_problem(rng: random.Random) -> ConvProblem:
    direction = rng.choice(DIRECTIONS)
    size, f = rng.choice([7, 14, 17, 28, 56, 112]), rng.choice([1, 3, 5])
    return ConvProblem(direction=direction, G=rng.choice([1, 2, 4, 32]), N=rng.choice([1, 2, 8, 32, 128]),
                       C=rng.choice([1, 3, 8, 16, 64, 96, 256]), K=rng.choice([1, 5, 8, 32, 64, 256]),
                       input=(size, rng.choice([size, 9])), filter=(f, f), stride=(rng.choice([1, 2]),) * 2,
                       dilation=(rng.choice([1, 1, 2]),) * 2, left_pad=(f // 2,) * 2, right_pad=(f // 2,) * 2,
                       k_batch=rng.choice([1, 1, 2, 4]) if direction == "bwd_weight" else 1)


def gemm_problem(rng: random.Random) -> GemmProblem:
    def size() -> int:
        return rng.choice([1, 7, 16, 100, 128, 500, 1024, 3000, 4096, 8192])

    return GemmProblem(M=size(), N=size(), K=size(), k_batch=rng.choice([1, 1, 2, 4]))


def python_rank(library, problem, predictors):
    """`ckast select`'s ranking of `problem` (its part, the part's predictor), and the seconds it took."""
    part = library.part(problem)
    predictor = predictors.get((problem.kind, getattr(problem, "direction", "gemm")), AnalyticPredictor())
    start = time.perf_counter()
    ranking = rank(problem, part, predictor, hardware(part.arch))
    return part, ranking, time.perf_counter() - start


def python_hash(library, problem, predictors) -> tuple[int, int, float]:
    part, ranking, seconds = python_rank(library, problem, predictors)
    words = []
    for i in ranking.order:
        words += [int(part.name_order[i]), int(np.float64(ranking.tflops[i]).view(np.uint64))]
    return len(ranking.order), fnv(words), seconds


def driver(kind: str, problems: list, repeat: int) -> n.File:
    """main(): ranks every problem `repeat` times; prints per problem `count hash`, then the seconds per problem."""
    struct = problem_struct(kind)
    values = [v for p in problems for v in struct.values(p)]
    int64, u64 = n.TypeName(n.Name(("std", "int64_t"))), n.TypeName(n.Name(("std", "uint64_t")))
    i, c, r = n.ident("i"), n.ident("c"), n.ident("r")
    h = n.ident("h")

    def mix(word: n.Expr) -> n.Stmt:
        return n.ExprStmt(n.BinOp("=", h, n.BinOp("*", n.BinOp("^", h, word), n.IntLit(FNV_PRIME, "ull"))))

    ranked = n.ident("ranked")
    item = n.Index(ranked, c)
    bits = n.VarDecl(u64, "bits")
    body = [
        n.VarDecl(n.Array(n.Const(int64), None), "values", n.BraceInit(None, [n.IntLit(v) for v in values]),
                  static=True, constexpr=True),
        n.VarDecl(n.Const(n.Builtin("auto")), "start", n.call("std::chrono::steady_clock::now")),
        n.VarDecl(n.TypeName(n.Name(("std", "size_t"))), "sink", n.IntLit(0)),
        n.For(n.VarDecl(n.Builtin("int"), "r", n.IntLit(0)), n.BinOp("<", r, n.IntLit(repeat)), n.UnOp("++", r), [
            n.For(n.VarDecl(n.Builtin("int"), "i", n.IntLit(0)), n.BinOp("<", i, n.IntLit(len(problems))),
                  n.UnOp("++", i), [
                n.ExprStmt(n.BinOp("+=", n.ident("sink"), n.call(n.Member(n.call("ckast_selector::rank", n.call(
                    "ckast_selector::read", n.BinOp("+", n.ident("values"), n.BinOp("*", i, n.IntLit(len(struct.fields)))))),
                    "size")))),
            ]),
        ]),
        n.VarDecl(n.Const(n.Builtin("double")), "seconds", n.call(n.Member(n.Call(n.Id(n.Name((SECONDS,))), [
            n.BinOp("-", n.call("std::chrono::steady_clock::now"), n.ident("start"))]), "count"))),
        n.For(n.VarDecl(n.Builtin("int"), "i", n.IntLit(0)), n.BinOp("<", i, n.IntLit(len(problems))), n.UnOp("++", i), [
            n.VarDecl(n.Const(n.Builtin("auto")), "ranked", n.call("ckast_selector::rank", n.call(
                "ckast_selector::read", n.BinOp("+", n.ident("values"), n.BinOp("*", i, n.IntLit(len(struct.fields))))))),
            n.VarDecl(u64, "h", n.IntLit(FNV_OFFSET, "ull")),
            n.For(n.VarDecl(n.TypeName(n.Name(("std", "size_t"))), "c", n.IntLit(0)),
                  n.BinOp("<", c, n.call(n.Member(ranked, "size"))), n.UnOp("++", c), [
                mix(n.StaticCast(u64, n.StaticCast(int64, n.Member(item, "order")))),
                bits,
                n.ExprStmt(n.call("std::memcpy", n.UnOp("&", n.ident("bits")), n.UnOp("&", n.Member(item, "tflops")),
                                  n.IntLit(8))),
                mix(n.ident("bits")),
            ]),
            n.ExprStmt(n.call("std::printf", n.StrLit("%zu %s\n"), n.call(n.Member(ranked, "size")),
                              n.call(n.Member(n.call("std::to_string", h), "c_str")))),
        ]),
        n.ExprStmt(n.call("std::printf", n.StrLit("seconds %.9f %zu\n"),
                          n.BinOp("/", n.ident("seconds"), n.IntLit(repeat * len(problems))), n.ident("sink"))),
        n.Return(n.IntLit(0)),
    ]
    headers = [n.Header(h_, system=True) for h_ in ("chrono", "cstdio", "cstring", "string")] + [n.Header("ckast_selector.hpp")]
    return n.File([n.Namespace("ckast_selector", [struct.reader("read")]),
                   n.FunctionDef("main", n.Builtin("int"), [], body)], includes=headers, pragma_once=False)


def host_check(kind, library, problems, predictors, selector: Path, work: Path) -> tuple[int, float, float]:
    (work / f"driver_{kind}.cpp").write_text(n.to_source(driver(problems[0].kind, problems, 3)))
    exe = work / f"driver_{kind}"
    start = time.perf_counter()
    subprocess.run([CLANG, "-O2", "-std=c++17", f"-I{selector}", str(selector / "ckast_selector.cpp"),
                    str(work / f"driver_{kind}.cpp"), "-o", str(exe)], check=True)
    print(f"  host build {time.perf_counter() - start:.1f} s")
    lines = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
    cxx_seconds = float(lines[-1].split()[1])
    bad, py_seconds = 0, 0.0
    for problem, line in zip(problems, lines[:-1]):
        count, digest, seconds = python_hash(library, problem, predictors)
        py_seconds += seconds
        bad += (int(line.split()[0]), int(line.split()[1])) != (count, digest)
    return bad, cxx_seconds, py_seconds / len(problems)


def jit_check(library, problems, predictors, selector: Path) -> int:
    from ckast.hostmodel.jit import session

    ns = session().compile([selector / "ckast_selector.cpp"], "ck-2026.06").lookup("ckast_selector")
    bad = 0
    for problem in problems:
        struct = problem_struct(problem.kind)
        value = getattr(ns, struct.name)()
        for field, v in zip(struct.fields, struct.values(problem)):
            setattr(value, field, v)
        got = [(str(c.kernel), int(np.float64(c.tflops).view(np.uint64))) for c in ns.rank(value)]
        part, ranking, _ = python_rank(library, problem, predictors)
        want = [(part.names[i], int(np.float64(ranking.tflops[i]).view(np.uint64))) for i in ranking.order]
        bad += got != want
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", type=int, default=10_000)
    ap.add_argument("--jit-problems", type=int, default=300)
    ap.add_argument("--trees", type=int, default=200)
    ap.add_argument("--ops", default="conv,gemm")
    ap.add_argument("--direction", choices=DIRECTIONS, help="conv problems of this direction only")
    args = ap.parse_args()
    if args.direction:
        DIRECTIONS[:] = [args.direction]
    from ckast.cli import main as cli
    from ckast.library.selection import Selection
    from tests.select_helpers import entries, synth_module, write_library

    work = Path(tempfile.mkdtemp(prefix="ckast-exact-"))
    synth = synth_module()
    sets = {"conv": (Selection("full", "gfx942", "ck-2026.06", ("fp16",), (2,), (), None, ()), "forward", conv_problem),
            "gemm": (Selection("gemm-default", "gfx942", "ck-2026.06", ("fp16",), (), (), None, ()), "gemm", gemm_problem)}
    for op in args.ops.split(","):
        selection, direction, draw = sets[op]
        lib = write_library(work / op, entries(selection))
        synth.write(synth.synthesize(lib, direction, 40, 200, 1, 0.02, 0.08), work / f"{op}.csv")
        model = work / f"{op}_model"
        try:
            cli(["select", "train", "--data", str(work / f"{op}.csv"), "--library", str(lib), "-o", str(model),
                 "--trees", str(args.trees), "--folds", "0"], standalone_mode=False)
        except SystemExit:
            pass
        for label, models in (("analytic", []), (f"lightgbm {args.trees} trees", [model])):
            start = time.perf_counter()
            counts = write_selector(lib, models, work / f"{op}_sel_{len(models)}")
            print(f"{op} {label}: {counts['kernels']} kernels in {counts['parts']} parts, emitted in "
                  f"{time.perf_counter() - start:.1f} s")
            library = load_library(lib)
            predictors = {}
            if models:
                kind = "gemm" if op == "gemm" else "grouped_conv"
                predictors[(kind, direction)] = load_model(model)
            rng = random.Random(7)
            problems = [draw(rng) for _ in range(args.problems)]
            bad, cxx, py = host_check(op, library, problems, predictors, work / f"{op}_sel_{len(models)}", work)
            print(f"  host -O2: {bad} of {len(problems)} problems differ; rank per problem {cxx * 1e3:.3f} ms "
                  f"(Python {py * 1e3:.3f} ms)")
            jit_bad = jit_check(library, problems[:args.jit_problems], predictors, work / f"{op}_sel_{len(models)}")
            print(f"  JIT: {jit_bad} of {min(args.jit_problems, len(problems))} problems differ (names and TFLOPS bits)")


if __name__ == "__main__":
    main()
