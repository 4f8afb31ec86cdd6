"""A chunk's translation unit, built from nodes: the code that launches and times the chunk's kernels.

The TU includes the chunk's kernels' launchers only, so compiling it instantiates those kernels alone. Its
entry point `run_chunk_<index>(problem, stream, tables)` (declared in `bench_chunks.hpp`) runs, for the
problem's group, each of the chunk's parts' kernels on the problem and writes a row each. A conv kernel is
asked `is_supported(param, k_batch)` first; a GEMM kernel runs where ckast's applicability accepts the
problem (the GEMM launchers have no `is_supported`): the plan's layers, by default CK's dispatcher's check
too, so a table holds the runs a dispatcher user gets. A kernel that refuses, or a run that reports no time,
writes a row with `is_valid` false. A part cut to each problem's top K (`PartRun.chosen`) runs a kernel on
a problem only where it is in the problem's top K (the slice's `<part>_measured` flags), and writes no row
for the others. Everything the chunk's own functions and data are named lives in the
namespace `ckast_bench::chunk_<index>`, so no two chunks define one name (the JIT reads them as one unit).
"""

from __future__ import annotations

from collections.abc import Mapping

from ckast import nodes as n
from ckast.catalog import Profile
from ckast.lower.identity import launcher

from .chunks import Chunk, Slice
from .driver import (
    HEADER,
    NAMESPACE,
    OFSTREAM,
    PROBLEM,
    ROW_WRITER,
    entry_point,
    source_file,
)
from .plan import Group, PartRun, Plan, gemm_applicable


def applicability(plan: Plan) -> dict[tuple[int, int], list[bool]]:
    """Per GEMM part (group and part index): `gemm_applicable` of its kernels on the group's problems."""
    return {(g, p): gemm_applicable(group, run, plan.layers) for g, group in enumerate(plan.groups)
            if group.kind == "gemm" for p, run in enumerate(group.parts)}


def _flags(run: PartRun, what: str, count: int) -> n.VarDecl:
    """`const bool* <what> = <part>_<what> + <count> * problem.i;`: the problem's flags of the slice's kernels."""
    return n.VarDecl(n.Ptr(n.Const(n.Builtin("bool"))), what,
                     n.BinOp("+", n.ident(f"{run.stem}_{what}"), n.BinOp("*", n.IntLit(count),
                                                                        n.Member(n.ident("problem"), "i"))))


def _kernel(run: PartRun, s: Slice, position: int, time: n.Expr) -> list[n.Stmt]:
    """`using K<position> = <launcher>;` (position in the slice) and its row: `write_row(table, K<position>::kName,
    problem.cells, time, problem.flops, "<arch>");`; for a part cut to a top K, under `if (measured[position])`."""
    alias = f"K{position}"
    problem = n.ident("problem")
    stmts: list[n.Stmt] = [
        n.UsingAlias(alias, n.TypeName(n.Name(tuple(launcher(run.names[s.lo + position]).split("::"))))),
        n.ExprStmt(n.call(ROW_WRITER, n.ident("table"), n.ident(alias, "kName"), n.Member(problem, "cells"),
                          time, n.Member(problem, "flops"), n.StrLit(run.part.arch))),
    ]
    if run.chosen is None:
        return stmts
    return [n.If(n.Index(n.ident("measured"), n.IntLit(position)), stmts)]


def _part_function(group: Group, run: PartRun, s: Slice, profile: Profile) -> n.FunctionDef:
    """`bench_<part>(problem, stream, table)`: the slice's kernels of the part on the problem."""
    index_t = profile.type("index_t")
    p = n.ident("p")
    problem = n.ident("problem")
    count = s.hi - s.lo

    def at(k: int) -> n.Expr:
        return n.Index(p, n.IntLit(k))

    body: list[n.Stmt] = [n.VarDecl(n.Ptr(n.Const(index_t)), "p", n.Member(problem, "values"))]
    if run.chosen is not None:
        body.append(_flags(run, "measured", count))
    buffers = [n.Member(problem, x) for x in "abc"]
    zero = n.FloatLit(0.0)
    if group.kind == "gemm":
        m, n_, k = at(0), at(1), at(2)
        a_stride = k if run.layout[0] == "r" else m
        b_stride = n_ if run.layout[1] == "r" else k
        c_stride = n_ if run.layout[2] == "r" else m
        body += [
            n.VarDecl(n.Const(profile.type("GemmHostArgs")), "args",
                      n.BraceInit(profile.type("GemmHostArgs"), [*buffers, at(3), m, n_, k, a_stride, b_stride,
                                                                 c_stride])),
            _flags(run, "applicable", count),
        ]
        for position in range(count):
            launch = n.call(n.ident(f"K{position}", "launch"), n.ident("args"), n.ident("stream"))
            body += _kernel(run, s, position, n.Cond(n.Index(n.ident("applicable"), n.IntLit(position)), launch, zero))
    else:
        nd = group.ndim
        spatial = [n.BraceInit(None, [at(5 + row * nd + a) for a in range(nd)]) for row in range(6)]
        body.append(n.VarDecl(n.Const(profile.type("ConvParam")), "param",
                              n.BraceInit(profile.type("ConvParam"),
                                          [n.IntLit(nd), at(0), at(1), at(2), at(3), *spatial])))
        args = n.BraceInit(None, [n.ident("param"), buffers[0], buffers[1], n.BraceInit(None, []), buffers[2], at(4)])
        for position in range(count):
            launch = n.call(n.ident(f"K{position}", "launch"), args, n.ident("stream"))
            supported = n.call(n.ident(f"K{position}", "is_supported"), n.ident("param"), at(4))
            body += _kernel(run, s, position, n.Cond(supported, launch, zero))
    params = [n.FuncParam(n.LRef(n.Const(PROBLEM)), "problem"),
              n.FuncParam(n.LRef(n.Const(profile.type("stream_config"))), "stream"),
              n.FuncParam(n.LRef(OFSTREAM), "table")]
    return n.FunctionDef(f"bench_{run.stem}", n.Builtin("void"), params, body)


def _flag_array(name: str, values: list[bool]) -> n.VarDecl:
    """`static constexpr bool name[] = {...};`: per problem, per kernel of a slice."""
    return n.VarDecl(n.Array(n.Builtin("bool"), None), name, n.BraceInit(None, [n.BoolLit(v) for v in values]),
                     static=True, constexpr=True)


def chunk_file(plan: Plan, chunk: Chunk, profile: Profile,
               applicable: Mapping[tuple[int, int], list[bool]]) -> n.File:
    """The chunk's TU: per slice, the GEMM applicability of its kernels, for a part cut to a top K which of them
    each problem runs, and a function running them; the entry point calls, for the problem's group, the
    functions of the group's slices. `applicable`: `applicability`."""
    own: list[n.Decl] = []
    calls: dict[int, list[n.Stmt]] = {}
    for s in chunk.slices:
        group = plan.groups[s.group]
        run = group.parts[s.part]
        own.append(n.Comment(f"{run.stem}: kernels {s.lo + 1}-{s.hi} of {len(run.names)}"))
        if group.kind == "gemm":
            flags = applicable[s.group, s.part]
            width = len(run.names)
            values = [flags[i * width + k] for i in range(len(group.problems)) for k in range(s.lo, s.hi)]
            own.append(_flag_array(f"{run.stem}_applicable", values))
        if run.chosen is not None:
            own.append(_flag_array(f"{run.stem}_measured", [run.runs(i, k) for i in range(len(group.problems))
                                                            for k in range(s.lo, s.hi)]))
        own.append(_part_function(group, run, s, profile))
        calls.setdefault(s.group, []).append(n.ExprStmt(n.call(
            n.ident(chunk.stem, f"bench_{run.stem}"), n.ident("problem"), n.ident("stream"),
            n.Index(n.ident("tables"), n.IntLit(s.table)))))
    body = [n.If(n.BinOp("==", n.Member(n.ident("problem"), "group"), n.IntLit(g)), stmts)
            for g, stmts in calls.items()]
    decls: list[n.Decl] = [n.Namespace(NAMESPACE, [n.Namespace(chunk.stem, own), entry_point(chunk, profile, body)])]
    kernels = [n.Header(f"{name}.hpp") for name in sorted(chunk.names(plan))]
    return source_file(decls, ("fstream",), [n.Header(HEADER), *kernels])
