"""Exactness of the C++ features and applicability (ckast/select/cxx) against the Python tables.

For random problems per op on a generated library (conv: the `full` fp16 2-D library on gfx942,
2,021 kernels; GEMM: `gemm-default` fp16 rcr on gfx942), the lowered feature code and
applicability test are run (a) JIT'd with cppyy, every problem against `FeatureSet.matrix` and
`applicable` bit for bit, and (b) compiled with `clang++-19 -O2` as a host program built from nodes,
which prints per problem one 64-bit digest per feature column (and one of the applicability flags)
that Python recomputes from its own values. Prints mismatch counts and timings.

    python tools/exact_select_features.py [--problems 10000] [--ops gemm,grouped_conv] [--seed 0]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ckast import nodes as n
from ckast.select.cxx import numeric as num
from ckast.select.cxx.lower_expr import lower_features
from ckast.select.cxx.lower_predicate import lower_applicability
from ckast.select.cxx.problem_struct import problem_struct
from ckast.select.features import KernelTable, hw_columns
from ckast.select.models.inputs import model_features
from ckast.select.problem import DIRECTIONS, ConvProblem, GemmProblem
from ckast.select.serving.validity import broken, values

GOLDEN = 0x9E3779B97F4A7C15
U64 = n.TypeName(n.Name(("std", "uint64_t")))
U8 = n.TypeName(n.Name(("std", "uint8_t")))
I64 = num.INT64


def multipliers(size: int) -> np.ndarray:
    """The digest's per-kernel multipliers: (2k + 1) * golden ratio, mod 2**64."""
    return (np.arange(size, dtype=np.uint64) * np.uint64(2) + np.uint64(1)) * np.uint64(GOLDEN)


def digest(bits: np.ndarray) -> np.ndarray:
    """Per column of a (kernels, columns) uint64 array: sum of bits * multiplier, mod 2**64."""
    with np.errstate(over="ignore"):
        return (bits * multipliers(len(bits))[:, None]).sum(axis=0, dtype=np.uint64)


def _id(name: str) -> n.Id:
    return n.ident(name)


def _for(var: str, bound: n.Expr, body: list[n.Stmt]) -> n.For:
    return n.For(n.VarDecl(I64, var, n.IntLit(0)), n.BinOp("<", _id(var), bound), n.UnOp("++", _id(var)), body)


def unit(kind: str, table: KernelTable, hw) -> list[n.Decl]:
    """Helpers, the problem struct and `run(rows, count, features, ok)`: for `count` problems (rows of the
    struct's fields), every feature of `model_features(kind)` for every kernel (row-major problem, kernel,
    feature) and each kernel's applicability."""
    struct = problem_struct(kind)
    trees = [f.expr for f in model_features(kind).features]
    p, k = _id("p"), _id("k")
    feats = lower_features(trees, table, hw_columns(hw), problem=p, kernel=k, prefix="f")
    app = lower_applicability(table, kind, problem=p, kernel=k, prefix="a")
    kernels, width = n.IntLit(len(table)), len(trees)
    base = n.BinOp("*", n.BinOp("+", n.BinOp("*", _id("r"), kernels), k), n.IntLit(width))
    stores = [n.ExprStmt(n.BinOp("=", n.Index(_id("features"), n.BinOp("+", base, n.IntLit(j))), v))
              for j, v in enumerate(feats.values)]
    ok = n.ExprStmt(n.BinOp("=", n.Index(_id("ok"), n.BinOp("+", n.BinOp("*", _id("r"), kernels), k)),
                            n.StaticCast(U8, app.value)))
    row = n.BinOp("+", _id("rows"), n.BinOp("*", _id("r"), n.IntLit(len(struct.fields))))
    body = [_for("r", _id("count"), [
        n.VarDecl(n.Const(struct.type), "p", n.call("read_problem", row)),
        *app.per_problem, *feats.per_problem,
        _for("k", kernels, [*feats.per_kernel, *stores, ok])])]
    run = n.FunctionDef("run", n.Builtin("void"), [
        n.FuncParam(n.Ptr(n.Const(I64)), "rows"), n.FuncParam(I64, "count"),
        n.FuncParam(n.Ptr(num.DOUBLE), "features"), n.FuncParam(n.Ptr(U8), "ok")], body)
    return [*num.DEFINITIONS, struct.decl(), struct.reader("read_problem"), *feats.decls, *app.decls, run]


def host_main(kind: str, table: KernelTable, width: int, count: int) -> n.FunctionDef:
    """`main`: reads `count` problem rows from stdin, prints per problem the digests of every feature column
    and of the applicability flags (hex, space-separated)."""
    fields, size = len(problem_struct(kind).fields), len(table)
    cin = n.ident("std", "cin")

    def index(array: str, *terms: n.Expr) -> n.Index:
        return n.Index(_id(array), terms[0] if len(terms) == 1 else n.BinOp("+", *terms))

    multiplier = n.BinOp("*", n.BinOp("+", n.BinOp("*", n.StaticCast(U64, _id("k")), n.IntLit(2, "ull")),
                                      n.IntLit(1, "ull")), n.IntLit(GOLDEN, "ull"))
    feature_bits = n.call("std::memcpy", n.UnOp("&", _id("bits")),
                          n.UnOp("&", index("features", n.BinOp("*", _id("k"), n.IntLit(width)), _id("j"))),
                          n.IntLit(8))
    return n.FunctionDef("main", n.Builtin("int"), [], [
        n.VarDecl(n.Array(I64, count * fields), "rows", static=True),
        _for("i", n.IntLit(count * fields), [n.ExprStmt(n.BinOp(">>", cin, index("rows", _id("i"))))]),
        n.VarDecl(n.Array(num.DOUBLE, size * width), "features", static=True),
        n.VarDecl(n.Array(U8, size), "ok", static=True),
        _for("r", n.IntLit(count), [
            n.ExprStmt(n.call("run", n.BinOp("+", _id("rows"), n.BinOp("*", _id("r"), n.IntLit(fields))), n.IntLit(1),
                              _id("features"), _id("ok"))),
            _for("j", n.IntLit(width + 1), [
                n.VarDecl(U64, "h", n.IntLit(0, "ull")),
                _for("k", n.IntLit(size), [
                    n.VarDecl(U64, "bits", n.IntLit(0, "ull")),
                    n.If(n.BinOp("<", _id("j"), n.IntLit(width)), [n.ExprStmt(feature_bits)],
                         [n.ExprStmt(n.BinOp("=", _id("bits"), index("ok", _id("k"))))]),
                    n.ExprStmt(n.BinOp("+=", _id("h"), n.BinOp("*", _id("bits"), multiplier)))]),
                n.ExprStmt(n.call("std::printf", n.StrLit("%016lx "), _id("h")))]),
            n.ExprStmt(n.call("std::printf", n.StrLit("\n")))]),
        n.Return(n.IntLit(0))])


def library(kind: str) -> list[dict]:
    """The benchmark's library: conv `full` fp16 2-D, GEMM `gemm-default` fp16 (gfx942, ck-2026.06)."""
    from ckast.config import as_dict
    from ckast.library import build
    from ckast.library.selection import Selection

    rule_set, ndims = ("full", (2,)) if kind == "grouped_conv" else ("gemm-default", ())
    selection = Selection(rule_set, "gfx942", "ck-2026.06", ("fp16",), ndims, (), None, ())
    return [as_dict(k.config) for k in build(selection).kernels()]


def draw_gemm(rng: np.random.Generator) -> GemmProblem:
    def size() -> int:
        if rng.random() < 0.5:
            return int(rng.choice([16, 32, 64, 128, 256])) * int(rng.integers(1, 64))
        return int(rng.integers(1, 20000))

    return GemmProblem(size(), size(), size(), int(rng.choice([1, 1, 1, 2, 3, 4, 8, 16])))


def draw_conv(rng: np.random.Generator, ndims: tuple[int, ...] = (1, 2, 2, 2, 3)) -> ConvProblem:
    """A valid conv problem: any direction, channels often multiples of 2-8, depthwise-shaped now and then."""
    while True:
        ndim = int(rng.choice(ndims))
        depthwise = rng.random() < 0.15

        def channels() -> int:
            return 1 if depthwise else int(rng.choice([1, 2, 3, 4, 8, 16])) * int(rng.integers(1, 17))

        filt = [int(rng.choice([1, 1, 3, 3, 5, 7])) for _ in range(ndim)]
        stride = [int(rng.choice([1, 1, 2, 3])) for _ in range(ndim)]
        dilation = [int(rng.choice([1, 1, 2])) for _ in range(ndim)]
        left = [int(rng.choice([0, 0, 1, 2, 3])) for _ in range(ndim)]
        right = [int(rng.choice([0, 0, 1, 2, 3])) for _ in range(ndim)]
        image = [int(rng.integers(1, {1: 4096, 2: 160, 3: 40}[ndim])) for _ in range(ndim)]
        p = ConvProblem(str(rng.choice(DIRECTIONS)), int(rng.choice([1, 1, 2, 4, 8, 16, 32, 64])),
                        int(rng.choice([1, 2, 4, 8, 16, 32, 3, 7])), channels(), channels(), tuple(image), tuple(filt),
                        tuple(stride), tuple(dilation), tuple(left), tuple(right),
                        int(rng.choice([1, 1, 1, 2, 4, 8, 129, 256])))
        if broken(p.kind, values(p)) is None:
            return p


def jit(kind: str, table: KernelTable, hw, name: str):
    """The unit JIT'd (namespace `name`): returns its `run` function."""
    import cppyy

    from ckast.hostmodel.jit import session

    session().cppdef(n.to_source(n.File([n.Namespace(name, unit(kind, table, hw))], includes=num.HEADERS,
                                        pragma_once=False)))
    return getattr(cppyy.gbl, name).run


def python_side(problem, configs_table: KernelTable, hw) -> tuple[np.ndarray, np.ndarray]:
    from ckast.select.serving.applicability import applicable

    return model_features(problem.kind).matrix(problem, configs_table, hw), applicable(problem, configs_table)


def jit_mismatches(run, kind: str, problems, table: KernelTable, hw) -> tuple[int, int, float, float]:
    """(feature columns that differ, applicability flags that differ, seconds in C++, seconds in Python)."""
    struct, width = problem_struct(kind), len(model_features(kind).features)
    features = np.empty(len(table) * width)
    ok = np.empty(len(table), dtype=np.uint8)
    bad_features = bad_ok = 0
    cxx = py = 0.0
    for problem in problems:
        row = np.array(struct.values(problem), dtype=np.int64)
        start = time.perf_counter()
        run(row, 1, features, ok)
        middle = time.perf_counter()
        matrix, flags = python_side(problem, table, hw)
        py += time.perf_counter() - middle
        cxx += middle - start
        got = features.reshape(len(table), width).view(np.uint64)
        bad_features += int(np.sum(np.any(got != matrix.view(np.uint64), axis=0)))
        bad_ok += int(np.sum(ok.astype(bool) != flags))
    return bad_features, bad_ok, cxx, py


def host_mismatches(kind: str, problems, table: KernelTable, hw, work: Path) -> tuple[int, int, float, float]:
    """Built with clang++-19 -O2 and run: (digest columns that differ for features, problems whose
    applicability digest differs, compile seconds, run seconds)."""
    width = len(model_features(kind).features)
    decls = [*unit(kind, table, hw), host_main(kind, table, width, len(problems))]
    source = work / f"exact_{kind}.cpp"
    source.write_text(n.to_source(n.File(decls, includes=(*num.HEADERS, n.Header("cstdio", system=True),
                                                          n.Header("cstring", system=True),
                                                          n.Header("iostream", system=True)), pragma_once=False)))
    start = time.perf_counter()
    subprocess.run(["clang++-19", "-std=c++17", "-O2", "-o", str(work / kind), str(source)], check=True)
    compiled = time.perf_counter()
    struct = problem_struct(kind)
    rows = "\n".join(" ".join(map(str, struct.values(p))) for p in problems)
    out = subprocess.run([str(work / kind)], input=rows, capture_output=True, text=True, check=True).stdout
    ran = time.perf_counter()
    bad_features = bad_ok = 0
    for problem, line in zip(problems, out.splitlines(), strict=True):
        got = np.array([int(h, 16) for h in line.split()], dtype=np.uint64)
        matrix, flags = python_side(problem, table, hw)
        want = digest(np.concatenate([matrix.view(np.uint64), flags.astype(np.uint64)[:, None]], axis=1))
        bad_features += int(np.sum(got[:-1] != want[:-1]))
        bad_ok += int(got[-1] != want[-1])
    return bad_features, bad_ok, compiled - start, ran - compiled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=10000)
    parser.add_argument("--ops", default="gemm,grouped_conv")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from ckast.arch.hardware import hardware

    hw = hardware("gfx942")
    for kind in args.ops.split(","):
        rng = np.random.default_rng(args.seed)
        start = time.perf_counter()
        table = KernelTable.of(library(kind))
        built = time.perf_counter()
        draw = draw_gemm if kind == "gemm" else draw_conv
        problems = [draw(rng) for _ in range(args.problems)]
        run = jit(kind, table, hw, f"exact_{kind}")
        jitted = time.perf_counter()
        print(f"{kind}: {len(table)} kernels, {len(model_features(kind).features)} features, {len(problems)} problems "
              f"(library {built - start:.1f} s, lower + JIT {jitted - built:.1f} s)", flush=True)
        features, ok, cxx, py = jit_mismatches(run, kind, problems, table, hw)
        print(f"  JIT:   feature columns differing {features}, applicability flags differing {ok}; "
              f"per problem C++ {cxx / len(problems) * 1e3:.3f} ms, Python {py / len(problems) * 1e3:.3f} ms",
              flush=True)
        with tempfile.TemporaryDirectory() as work:
            features, ok, compile_s, run_s = host_mismatches(kind, problems, table, hw, Path(work))
        print(f"  clang++-19 -O2: feature column digests differing {features}, applicability digests differing {ok}; "
              f"compile {compile_s:.1f} s, run {run_s / len(problems) * 1e3:.3f} ms per problem", flush=True)
        applicable = sum(python_side(p, table, hw)[1].sum() for p in problems[:200]) / min(200, len(problems))
        print(f"  mean applicable kernels per problem (first 200): {applicable:.1f} of {len(table)}")


if __name__ == "__main__":
    sys.exit(main())
