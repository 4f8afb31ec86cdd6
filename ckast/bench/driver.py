"""The benchmark driver's translation unit, built from nodes.

`ckast_bench::run_benchmark(argc, argv)` parses `--warmup N`, `--repeat N` and `--output-dir DIR`
(bad flags: one line on stderr, status 2), opens one timing table per part, and for every problem of
every group allocates the three device buffers once (`ck_tile::DeviceMem`) and runs each kernel of each
part with CK Tile's `stream_config` timing (warm-up and repeat counts from the flags). A conv kernel is
asked `is_supported(param, k_batch)` first; a GEMM kernel runs where ckast's applicability accepts the
problem (the GEMM launchers have no `is_supported`): the plan's layers, by default CK's dispatcher's check
too, so a table holds the runs a dispatcher user gets. A kernel that refuses, or a run that reports no
time, writes a row with `is_valid` false. `main` (absent under `CKAST_BENCH_NO_MAIN`, which the JIT
defines) only calls `run_benchmark`. Problems, table cells, FLOPs and buffer sizes are static data.
"""

from __future__ import annotations

from ckast import nodes as n
from ckast.catalog import Profile, load_profile
from ckast.lower.cxx import LICENSE
from ckast.lower.identity import launcher

from .plan import Group, PartRun, Plan, gemm_applicable

NAMESPACE = "ckast_bench"
ENTRY = "run_benchmark"
NO_MAIN = "CKAST_BENCH_NO_MAIN"
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
_OFSTREAM = n.type_of("std", "ofstream")
_CHARS = n.Ptr(n.Const(n.Builtin("char")))
_CERR = n.ident("std", "cerr")


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


def _group_data(group: Group, profile: Profile, layers: tuple[str, ...]) -> list[n.Decl]:
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
    decls = [
        n.Comment(f"{group.stem}: {len(group.problems)} problems; table columns kernel,{','.join(group.columns)},"
                  f"{','.join(TABLE_COLUMNS)}"),
        _data(profile.type("index_t"), f"{stem}_problems", [_i(v) for v in values]),
        _data(_SIZE, f"{stem}_bytes", [_i(b) for p in group.problems for b in group.buffer_bytes(p)]),
        _data(n.Builtin("double"), f"{stem}_flops", [n.FloatLit(float(p.flops)) for p in group.problems]),
        n.VarDecl(n.Array(n.Const(_CHARS), None), f"{stem}_cells",
                  n.BraceInit(None, [n.StrLit(group.cells(p)) for p in group.problems]), static=True),
    ]
    if group.kind == "gemm":
        decls += [_data(n.Builtin("bool"), f"{run.stem}_applicable",
                        [n.BoolLit(v) for v in gemm_applicable(group, run, layers)]) for run in group.parts]
    return decls


def stride(group: Group) -> int:
    """Values per problem in the group's `_problems` array."""
    return 4 if group.kind == "gemm" else 5 + 6 * group.ndim


def _kernel(group: Group, run: PartRun, position: int, time: n.Expr) -> list[n.Stmt]:
    """`using K<position> = <launcher>;` and its row: `write_row(table, K<position>::kName, <cells of problem
    i>, time, <FLOPs of problem i>, "<arch>");`."""
    alias = f"K{position}"
    return [
        n.UsingAlias(alias, n.TypeName(n.Name(tuple(launcher(run.names[position]).split("::"))))),
        n.ExprStmt(n.call("write_row", n.ident("table"), n.ident(alias, "kName"),
                          n.Index(n.ident(f"{group.stem}_cells"), n.ident("i")), time,
                          n.Index(n.ident(f"{group.stem}_flops"), n.ident("i")), n.StrLit(run.part.arch))),
    ]


def _part_function(group: Group, run: PartRun, profile: Profile) -> n.FunctionDef:
    """`bench_<part>(table, stream, i, a, b, c)`: every kernel of the part on problem i."""
    index_t = profile.type("index_t")
    p = n.ident("p")

    def at(k: int) -> n.Expr:
        return n.Index(p, _i(k))

    body: list[n.Stmt] = [
        n.VarDecl(n.Ptr(n.Const(index_t)), "p",
                  n.BinOp("+", n.ident(f"{group.stem}_problems"), n.BinOp("*", _i(stride(group)), n.ident("i")))),
    ]
    zero = n.FloatLit(0.0)
    if group.kind == "gemm":
        m, n_, k = at(0), at(1), at(2)
        a_stride = k if run.layout[0] == "r" else m
        b_stride = n_ if run.layout[1] == "r" else k
        c_stride = n_ if run.layout[2] == "r" else m
        body += [
            n.VarDecl(n.Const(profile.type("GemmHostArgs")), "args",
                      n.BraceInit(profile.type("GemmHostArgs"), [n.ident("a"), n.ident("b"), n.ident("c"), at(3), m, n_,
                                                                 k, a_stride, b_stride, c_stride])),
            n.VarDecl(n.Ptr(n.Const(n.Builtin("bool"))), "applicable",
                      n.BinOp("+", n.ident(f"{run.stem}_applicable"), n.BinOp("*", _i(len(run.names)), n.ident("i")))),
        ]
        for position, name in enumerate(run.names):
            launch = n.call(n.ident(f"K{position}", "launch"), n.ident("args"), n.ident("stream"))
            body += _kernel(group, run, position, n.Cond(n.Index(n.ident("applicable"), _i(position)), launch, zero))
    else:
        nd = group.ndim
        spatial = [n.BraceInit(None, [at(5 + row * nd + a) for a in range(nd)]) for row in range(6)]
        body.append(n.VarDecl(n.Const(profile.type("ConvParam")), "param",
                              n.BraceInit(profile.type("ConvParam"), [_i(nd), at(0), at(1), at(2), at(3), *spatial])))
        args = n.BraceInit(None, [n.ident("param"), n.ident("a"), n.ident("b"), n.BraceInit(None, []), n.ident("c"),
                                  at(4)])
        for position, name in enumerate(run.names):
            launch = n.call(n.ident(f"K{position}", "launch"), args, n.ident("stream"))
            supported = n.call(n.ident(f"K{position}", "is_supported"), n.ident("param"), at(4))
            body += _kernel(group, run, position, n.Cond(supported, launch, zero))
    params = [n.FuncParam(n.LRef(_OFSTREAM), "table"),
              n.FuncParam(n.LRef(n.Const(profile.type("stream_config"))), "stream"),
              n.FuncParam(_SIZE, "i"),
              *(n.FuncParam(n.Ptr(n.Builtin("void")), x) for x in "abc")]
    return n.FunctionDef(f"bench_{run.stem}", n.Builtin("void"), params, body)


def _write_row() -> n.FunctionDef:
    """One table row: a time of 0 ms (refused, or not measured) is an invalid run."""
    table = n.ident("table")
    ms = n.ident("ms")
    return n.FunctionDef("write_row", n.Builtin("void"), [
        n.FuncParam(n.LRef(_OFSTREAM), "table"), n.FuncParam(_CHARS, "kernel"), n.FuncParam(_CHARS, "cells"),
        n.FuncParam(n.Builtin("float"), "ms"), n.FuncParam(n.Builtin("double"), "flops"),
        n.FuncParam(_CHARS, "arch")], [
        n.ExprStmt(_shift(table, n.ident("kernel"), n.StrLit(","), n.ident("cells"), n.StrLit(","))),
        n.If(n.BinOp(">", ms, n.FloatLit(0.0)),
             [n.ExprStmt(_shift(table, ms, n.StrLit(","), n.BinOp("/", n.BinOp("/", n.ident("flops"), ms),
                                                                    n.FloatLit(1e9)), n.StrLit(",true,")))],
             [n.ExprStmt(_shift(table, n.StrLit(",,false,")))]),
        n.ExprStmt(_shift(table, n.ident("arch"), n.StrLit("\n"))),
    ])


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


def _run_benchmark(plan: Plan, profile: Profile) -> n.FunctionDef:
    body: list[n.Stmt] = [
        n.VarDecl(n.Builtin("int"), "warmup", _i(DEFAULTS["--warmup"])),
        n.VarDecl(n.Builtin("int"), "repeat", _i(DEFAULTS["--repeat"])),
        n.VarDecl(_STRING, "dir", n.StrLit(".")),
        *_parse_flags(),
        n.VarDecl(n.Const(profile.type("stream_config")), "stream",
                  n.BraceInit(profile.type("stream_config"),
                              [n.NullPtr(), n.BoolLit(True), _i(0), n.ident("warmup"), n.ident("repeat")])),
    ]
    for group in plan.groups:
        for run in group.parts:
            table = n.ident(f"table_{run.stem}")
            path = f"/{run.stem}.csv"
            body += [
                n.VarDecl(_OFSTREAM, f"table_{run.stem}", n.BinOp("+", n.ident("dir"), n.StrLit(path)), brace=True),
                n.If(n.UnOp("!", table), [_say(n.ident("dir"), n.StrLit(f"{path}: cannot write\n")), n.Return(_i(1))]),
                n.ExprStmt(_shift(table, n.StrLit(",".join(("kernel", *group.columns, *TABLE_COLUMNS)) + "\n"))),
            ]
    for group in plan.groups:
        i = n.ident("i")
        buffers = [n.VarDecl(profile.type("DeviceMem"), x, n.Index(n.ident(f"{group.stem}_bytes"),
                                                                   n.BinOp("+", n.BinOp("*", _i(3), i), _i(k))),
                             brace=True) for k, x in enumerate(("a", "b", "c"))]
        calls = [n.ExprStmt(n.call(f"bench_{run.stem}", n.ident(f"table_{run.stem}"), n.ident("stream"), i,
                                   *(n.call(n.Member(n.ident(x), "GetDeviceBuffer")) for x in "abc")))
                 for run in group.parts]
        body.append(n.For(n.VarDecl(_SIZE, "i", _i(0)), n.BinOp("<", i, _i(len(group.problems))), n.UnOp("++", i),
                          [*buffers, *calls]))
    body += [n.ExprStmt(_shift(n.ident("std", "cout"), n.StrLit(f"{len(plan.kernels)} kernels, "
                                                                  f"{sum(len(g.problems) for g in plan.groups)} problems -> "),
                               n.ident("dir"), n.StrLit("\n"))),
             n.Return(_i(0))]
    return n.FunctionDef(ENTRY, n.Builtin("int"), [n.FuncParam(n.Builtin("int"), "argc"),
                                                   n.FuncParam(n.Ptr(n.Const(_CHARS)), "argv")], body)


def driver_file(plan: Plan) -> n.File:
    """The driver TU: the problems as data, one function per part, run_benchmark and a guarded main."""
    profile = load_profile(plan.library.configs[plan.library.index[plan.kernels[0]]]["ck_api"])
    decls: list[n.Decl] = []
    for group in plan.groups:
        decls += _group_data(group, profile, plan.layers)
    decls += [_write_row(), _parse_count()]
    decls += [_part_function(group, run, profile) for group in plan.groups for run in group.parts]
    decls.append(_run_benchmark(plan, profile))
    body: list[n.Decl] = [
        n.Namespace(NAMESPACE, decls),
        n.IfDef(NO_MAIN, [n.FunctionDef("main", n.Builtin("int"), [
            n.FuncParam(n.Builtin("int"), "argc"), n.FuncParam(n.Ptr(n.Ptr(n.Builtin("char"))), "argv")],
            [n.Return(n.call(f"{NAMESPACE}::{ENTRY}", n.ident("argc"), n.ident("argv")))])], negate=True),
    ]
    std = [n.Header(h, system=True) for h in ("cstddef", "fstream", "iostream", "string")]
    catalog = [h for h in n.required_headers(n.Namespace("x", body)) if not h.system]
    kernels = [n.Header(f"{name}.hpp") for name in plan.kernels]
    return n.File(body, includes=[*std, *catalog, *kernels], preamble=LICENSE.replace("a kernel config", "a library"),
                  pragma_once=False)
