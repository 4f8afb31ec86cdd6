"""The benchmark driver's main translation unit and the header its chunks share, built from nodes.

The driver is one main TU (`bench_driver.cpp`), one TU per chunk of kernels (`launch.py`, cut by
`chunks.py`) and `bench_chunks.hpp`, which declares what the two sides share: the `Problem` the main loop
hands to a chunk, the row writer and every chunk's entry point (`run_chunk_<index>`). Declaring them once
in a header every TU includes makes the compiler check each chunk's definition against the declaration the
main TU calls.

`ckast_bench::run_benchmark(argc, argv)` parses `--warmup N`, `--repeat N` and `--output-dir DIR`
(bad flags: one line on stderr, status 2), opens one timing table per part, and for every problem of
every group allocates the three device buffers once (`ck_tile::DeviceMem`) and calls each chunk that
runs kernels of the group, which times its kernels with CK Tile's `stream_config` (warm-up and repeat
counts from the flags) and writes their rows. `main` (absent under `CKAST_BENCH_NO_MAIN`, which the JIT
defines) only calls `run_benchmark`. Problems, table cells, FLOPs and buffer sizes are static data.
"""

from __future__ import annotations

import attrs

from ckast import nodes as n
from ckast.catalog import Profile, load_profile
from ckast.lower.cxx import LICENSE

from .chunks import Chunk
from .plan import Group, Plan

NAMESPACE = "ckast_bench"
ENTRY = "run_benchmark"
NO_MAIN = "CKAST_BENCH_NO_MAIN"
HEADER = "bench_chunks.hpp"
FLAGS = ("--warmup", "--repeat", "--output-dir")
DEFAULTS = {"--warmup": 5, "--repeat": 20}
MAX_COUNT = 1_000_000
USAGE = (f"usage: ckast_bench [--warmup N] [--repeat N] [--output-dir DIR]\n"
         f"  --warmup N      untimed runs before timing (default {DEFAULTS['--warmup']})\n"
         f"  --repeat N      timed runs, averaged (default {DEFAULTS['--repeat']}, at least 1)\n"
         f"  --output-dir D  where the timing tables (one CSV per part) go (default .)\n")
TABLE_COLUMNS = ("time_ms", "tflops", "is_valid", "arch")


def _i(value: int) -> n.IntLit:
    return n.IntLit(value)


_SIZE = n.type_of("std", "size_t")
_STRING = n.type_of("std", "string")
OFSTREAM = n.type_of("std", "ofstream")
_CHARS = n.Ptr(n.Const(n.Builtin("char")))
ROW_WRITER = "write_row"
PROBLEM = n.type_of("Problem")
"""What a chunk gets of one problem (`_problem_struct`)."""
_CERR = n.ident("std", "cerr")


def driver_profile(plan: Plan) -> Profile:
    """The API profile of the driver's kernels (the first kernel's)."""
    return load_profile(plan.library.configs[plan.library.index[plan.kernels[0]]]["ck_api"])


def _shift(*items: n.Expr) -> n.Expr:
    """`a << b << c ...`."""
    out = items[0]
    for item in items[1:]:
        out = n.BinOp("<<", out, item)
    return out


def _say(*items: n.Expr) -> n.Stmt:
    return n.ExprStmt(_shift(_CERR, n.StrLit("ckast_bench: "), *items))


def _data(type_: n.Type, name: str, values: list[n.Expr]) -> n.VarDecl:
    """`static constexpr T name[] = {values};`."""
    return n.VarDecl(n.Array(type_, None), name, n.BraceInit(None, values), static=True, constexpr=True)


def _group_data(group: Group, profile: Profile) -> list[n.Decl]:
    """The group's problems (GEMM: M, N, K, k_batch; conv: G, N, K, C per group, k_batch, then filter,
    input, stride, dilation, left and right pads, as ConvParam takes them), cells, FLOPs and bytes."""
    stem = group.stem
    values: list[int] = []
    for p in group.problems:
        if group.kind == "gemm":
            values += [p.M, p.N, p.K, p.k_batch]
        else:
            values += [p.G, p.N, p.K, p.C, p.k_batch, *p.filter, *p.input, *p.stride, *p.dilation, *p.left_pad,
                       *p.right_pad]
    return [
        n.Comment(f"{group.stem}: {len(group.problems)} problems; table columns kernel,{','.join(group.columns)},"
                  f"{','.join(TABLE_COLUMNS)}"),
        _data(profile.type("index_t"), f"{stem}_problems", [_i(v) for v in values]),
        _data(_SIZE, f"{stem}_bytes", [_i(b) for p in group.problems for b in group.buffer_bytes(p)]),
        _data(n.Builtin("double"), f"{stem}_flops", [n.FloatLit(float(p.flops)) for p in group.problems]),
        n.VarDecl(n.Array(n.Const(_CHARS), None), f"{stem}_cells",
                  n.BraceInit(None, [n.StrLit(group.cells(p)) for p in group.problems]), static=True),
    ]


def stride(group: Group) -> int:
    """Values per problem in the group's `_problems` array."""
    return 4 if group.kind == "gemm" else 5 + 6 * group.ndim


def _problem_struct(profile: Profile) -> n.Struct:
    """`struct Problem`: one problem of a group as the main loop hands it to a chunk."""
    fields = [(_SIZE, "group"), (_SIZE, "i"), (n.Ptr(n.Const(profile.type("index_t"))), "values"),
              (_CHARS, "cells"), (n.Builtin("double"), "flops"), *((n.Ptr(n.Builtin("void")), x) for x in "abc")]
    return n.Struct("Problem", [
        n.Comment("group: which group (its number in the main TU); i: the problem's number in the group;\n"
                  "values: its problem values; cells: its table cells; flops; a, b, c: its operands' device buffers"),
        *(n.VarDecl(type_, name) for type_, name in fields)])


def write_row() -> n.FunctionDef:
    """One table row: a time of 0 ms (refused, or not measured) is an invalid run."""
    table = n.ident("table")
    ms = n.ident("ms")
    return n.FunctionDef(ROW_WRITER, n.Builtin("void"), [
        n.FuncParam(n.LRef(OFSTREAM), "table"), n.FuncParam(_CHARS, "kernel"), n.FuncParam(_CHARS, "cells"),
        n.FuncParam(n.Builtin("float"), "ms"), n.FuncParam(n.Builtin("double"), "flops"),
        n.FuncParam(_CHARS, "arch")], [
        n.ExprStmt(_shift(table, n.ident("kernel"), n.StrLit(","), n.ident("cells"), n.StrLit(","))),
        n.If(n.BinOp(">", ms, n.FloatLit(0.0)),
             [n.ExprStmt(_shift(table, ms, n.StrLit(","), n.BinOp("/", n.BinOp("/", n.ident("flops"), ms),
                                                                    n.FloatLit(1e9)), n.StrLit(",true,")))],
             [n.ExprStmt(_shift(table, n.StrLit(",,false,")))]),
        n.ExprStmt(_shift(table, n.ident("arch"), n.StrLit("\n"))),
    ])


def entry_point(chunk: Chunk, profile: Profile, body: list[n.Stmt] | None = None) -> n.FunctionDef:
    """`void run_chunk_<index>(const Problem& problem, const stream_config& stream, std::ofstream* tables)`:
    the chunk's kernels of the problem's group on the problem, a row each in `tables` (one per part, in plan
    order); declared (`body` None) in the header, defined in the chunk's TU."""
    return n.FunctionDef(chunk.entry, n.Builtin("void"), [
        n.FuncParam(n.LRef(n.Const(PROBLEM)), "problem"),
        n.FuncParam(n.LRef(n.Const(profile.type("stream_config"))), "stream"),
        n.FuncParam(n.Ptr(OFSTREAM), "tables")], body)


def _parse_count() -> n.FunctionDef:
    """A count of at most MAX_COUNT written in decimal digits, or -1."""
    text = n.ident("text")
    bad = n.BinOp("||", n.BinOp("||", n.call(n.Member(text, "empty")),
                                n.BinOp(">", n.call(n.Member(text, "size")), _i(len(str(MAX_COUNT))))),
                  n.BinOp("!=", n.call(n.Member(text, "find_first_not_of"), n.StrLit("0123456789")),
                          n.ident("std", "string", "npos")))
    value = n.call("std::stoi", text)
    return n.FunctionDef("parse_count", n.Builtin("int"), [n.FuncParam(n.LRef(n.Const(_STRING)), "text")], [
        n.Return(n.Cond(bad, _i(-1), n.Cond(n.BinOp(">", value, _i(MAX_COUNT)), _i(-1), value)))])


def _parse_flags() -> list[n.Stmt]:
    """The flag loop of run_benchmark: sets warmup, repeat and dir, or returns 2."""
    flag, value, count = n.ident("flag"), n.ident("value"), n.ident("count")
    i = n.ident("i")
    known = None
    for f in FLAGS:
        test = n.BinOp("!=", flag, n.StrLit(f))
        known = test if known is None else n.BinOp("&&", known, test)
    return [n.For(n.VarDecl(n.Builtin("int"), "i", _i(1)), n.BinOp("<", i, n.ident("argc")), n.BinOp("+=", i, _i(2)), [
        n.VarDecl(n.Const(_STRING), "flag", n.Index(n.ident("argv"), i)),
        n.If(n.BinOp("==", flag, n.StrLit("--help")),
             [n.ExprStmt(_shift(n.ident("std", "cout"), n.StrLit(USAGE))), n.Return(_i(0))]),
        n.If(known, [_say(flag, n.StrLit(f": unknown flag; allowed: {', '.join(FLAGS)}, --help\n")), n.Return(_i(2))]),
        n.If(n.BinOp("==", n.BinOp("+", i, _i(1)), n.ident("argc")),
             [_say(flag, n.StrLit(": missing value\n")), n.Return(_i(2))]),
        n.VarDecl(n.Const(_STRING), "value", n.Index(n.ident("argv"), n.BinOp("+", i, _i(1)))),
        n.If(n.BinOp("==", flag, n.StrLit("--output-dir")),
             [n.ExprStmt(n.BinOp("=", n.ident("dir"), value)), n.Continue()]),
        n.VarDecl(n.Const(n.Builtin("int")), "count", n.call("parse_count", value)),
        n.If(n.BinOp("||", n.BinOp("<", count, _i(0)),
                     n.BinOp("&&", n.BinOp("==", flag, n.StrLit("--repeat")), n.BinOp("==", count, _i(0)))),
             [_say(flag, n.StrLit(": '"), value, n.StrLit(f"' is not a count (0-{MAX_COUNT}; --repeat at least 1)\n")),
              n.Return(_i(2))]),
        n.If(n.BinOp("==", flag, n.StrLit("--warmup")), [n.ExprStmt(n.BinOp("=", n.ident("warmup"), count))],
             [n.ExprStmt(n.BinOp("=", n.ident("repeat"), count))]),
    ])]


def _run_benchmark(plan: Plan, chunks: tuple[Chunk, ...], profile: Profile) -> n.FunctionDef:
    body: list[n.Stmt] = [
        n.VarDecl(n.Builtin("int"), "warmup", _i(DEFAULTS["--warmup"])),
        n.VarDecl(n.Builtin("int"), "repeat", _i(DEFAULTS["--repeat"])),
        n.VarDecl(_STRING, "dir", n.StrLit(".")),
        *_parse_flags(),
        n.VarDecl(n.Const(profile.type("stream_config")), "stream",
                  n.BraceInit(profile.type("stream_config"),
                              [n.NullPtr(), n.BoolLit(True), n.IntLit(0), n.ident("warmup"), n.ident("repeat")])),
        n.VarDecl(n.Array(OFSTREAM, sum(len(g.parts) for g in plan.groups)), "tables"),
    ]
    runs = [(group, run) for group in plan.groups for run in group.parts]
    for number, (group, run) in enumerate(runs):
        table = n.Index(n.ident("tables"), _i(number))
        path = f"/{run.stem}.csv"
        body += [
            n.ExprStmt(n.call(n.Member(table, "open"), n.BinOp("+", n.ident("dir"), n.StrLit(path)))),
            n.If(n.UnOp("!", table), [_say(n.ident("dir"), n.StrLit(f"{path}: cannot write\n")), n.Return(_i(1))]),
            n.ExprStmt(_shift(table, n.StrLit(",".join(("kernel", *group.columns, *TABLE_COLUMNS)) + "\n"))),
        ]
    for number, group in enumerate(plan.groups):
        i = n.ident("i")
        buffers = [n.VarDecl(profile.type("DeviceMem"), x, n.Index(n.ident(f"{group.stem}_bytes"),
                                                                   n.BinOp("+", n.BinOp("*", _i(3), i), _i(k))),
                             brace=True) for k, x in enumerate(("a", "b", "c"))]
        problem = n.VarDecl(n.Const(PROBLEM), "problem", n.BraceInit(None, [
            _i(number), i, n.BinOp("+", n.ident(f"{group.stem}_problems"), n.BinOp("*", _i(stride(group)), i)),
            n.Index(n.ident(f"{group.stem}_cells"), i), n.Index(n.ident(f"{group.stem}_flops"), i),
            *(n.call(n.Member(n.ident(x), "GetDeviceBuffer")) for x in "abc")]))
        calls = [n.ExprStmt(n.call(chunk.entry, n.ident("problem"), n.ident("stream"), n.ident("tables")))
                 for chunk in chunks if any(s.group == number for s in chunk.slices)]
        body.append(n.For(n.VarDecl(_SIZE, "i", _i(0)), n.BinOp("<", i, _i(len(group.problems))), n.UnOp("++", i),
                          [*buffers, problem, *calls]))
    body += [n.ExprStmt(_shift(n.ident("std", "cout"), n.StrLit(f"{len(plan.kernels)} kernels, "
                                                                  f"{sum(len(g.problems) for g in plan.groups)} problems -> "),
                               n.ident("dir"), n.StrLit("\n"))),
             n.Return(_i(0))]
    return n.FunctionDef(ENTRY, n.Builtin("int"), [n.FuncParam(n.Builtin("int"), "argc"),
                                                   n.FuncParam(n.Ptr(n.Const(_CHARS)), "argv")], body)


def source_file(body: list[n.Decl], std: tuple[str, ...], more: list[n.Header], pragma_once: bool = False) -> n.File:
    """A file of the driver: the standard headers `std`, the catalog headers `body` uses, then `more`."""
    catalog = [h for h in n.required_headers(n.Namespace("x", body)) if not h.system]
    return n.File(body, includes=[*(n.Header(h, system=True) for h in std), *catalog, *more],
                  preamble=LICENSE.replace("a kernel config", "a library"), pragma_once=pragma_once)


def header_file(plan: Plan, chunks: tuple[Chunk, ...], profile: Profile) -> n.File:
    """`bench_chunks.hpp`: the Problem struct, the row writer's and every chunk's entry point's declarations."""
    tables = ", ".join(f"{number} {run.stem}" for number, run in enumerate(r for g in plan.groups for r in g.parts))
    body: list[n.Decl] = [n.Namespace(NAMESPACE, [
        n.Comment(f"groups: {', '.join(f'{number} {g.stem}' for number, g in enumerate(plan.groups))}\n"
                  f"tables: {tables}"),
        _problem_struct(profile),
        attrs.evolve(write_row(), body=None),
        *(entry_point(chunk, profile) for chunk in chunks),
    ])]
    return source_file(body, ("cstddef", "fstream"), [], pragma_once=True)


def driver_file(plan: Plan, chunks: tuple[Chunk, ...], profile: Profile) -> n.File:
    """The main TU: the problems as data, the row writer, run_benchmark (which calls the chunks) and a
    guarded main."""
    decls: list[n.Decl] = []
    for group in plan.groups:
        decls += _group_data(group, profile)
    decls += [write_row(), _parse_count(), _run_benchmark(plan, chunks, profile)]
    body: list[n.Decl] = [
        n.Namespace(NAMESPACE, decls),
        n.IfDef(NO_MAIN, [n.FunctionDef("main", n.Builtin("int"), [
            n.FuncParam(n.Builtin("int"), "argc"), n.FuncParam(n.Ptr(n.Ptr(n.Builtin("char"))), "argv")],
            [n.Return(n.call(f"{NAMESPACE}::{ENTRY}", n.ident("argc"), n.ident("argv")))])], negate=True),
    ]
    return source_file(body, ("cstddef", "fstream", "iostream", "string"), [n.Header(HEADER)])
