"""Hypothesis strategies for random, well-formed C++ ASTs.

Every generated file is meant to compile: names are declared before use, integer expressions
stay small and avoid division and shifts, and each `static_assert` compares an expression with
the value Python computes for it, so a precedence or parenthesisation bug in the printer shows
up as a compile error. A small "prelude" of templates is itself printed from signatures.
"""

from __future__ import annotations

import itertools
import struct

from hypothesis import strategies as st

from ckast import nodes as n

INT = n.Builtin("int")
BOOL = n.Builtin("bool")
COLOR = n.EnumSpec("Color", ("pre", "Color"), ("Red", "Green", "Blue"))
BOX = n.Signature(
    "Box",
    ("pre", "Box"),
    "struct",
    [
        n.Param("T_", "type"),
        n.Param("N_", "int", ctype=INT, default=n.IntLit(1)),
        n.Param("B_", "bool", default=n.BoolLit(False)),
        n.Param("E_", "enum", enum=COLOR, default=n.EnumValue(COLOR, "Red")),
        n.Param("U_", "type", default=n.ParamRef("T_")),
    ],
)
SEQ = n.Signature("Seq", ("pre", "Seq"), "struct", [n.Param("Is", "int_pack", ctype=INT)])
LIST = n.Signature("List", ("pre", "List"), "struct", [n.Param("Ts", "type_pack")])
PRELUDE = n.Namespace(
    "pre",
    [
        n.EnumDecl("Color", COLOR.values),
        *(
            n.TemplateDecl(sig.params, n.Struct(sig.qualname[-1], [n.VarDecl(INT, "value", n.IntLit(1), static=True, constexpr=True)]))
            for sig in (BOX, SEQ, LIST)
        ),
    ],
)

_INT_OPS = ["+", "-", "*", "&", "|", "^"]
_CMP_OPS = ["<", "<=", ">", ">=", "==", "!="]


def c_eval(e: n.Expr, env: dict[str, int]) -> int:
    """Value of an integer expression under C++ rules (operands are small, no overflow)."""
    if isinstance(e, n.IntLit):
        return e.value
    if isinstance(e, n.BoolLit):
        return int(e.value)
    if isinstance(e, n.Id):
        return env[e.name.parts[-1]]
    if isinstance(e, n.UnOp):
        v = c_eval(e.operand, env)
        return {"-": -v, "+": v, "!": int(not v), "~": ~v}[e.op]
    if isinstance(e, n.Cond):
        return c_eval(e.then, env) if c_eval(e.cond, env) else c_eval(e.else_, env)
    assert isinstance(e, n.BinOp)
    a, b = c_eval(e.lhs, env), c_eval(e.rhs, env)
    ops = {
        "+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b,
        "<": int(a < b), "<=": int(a <= b), ">": int(a > b), ">=": int(a >= b),
        "==": int(a == b), "!=": int(a != b), "&&": int(bool(a) and bool(b)), "||": int(bool(a) or bool(b)),
    }
    return ops[e.op]


class Scope:
    """Names declared so far, with the values of integer constants."""

    def __init__(self, counter: itertools.count) -> None:
        self.counter = counter
        self.consts: dict[str, int] = {}
        self.types: list[str] = []

    def fresh(self, stem: str, pad: int) -> str:
        return f"{stem}{next(self.counter)}" + "_x" * pad


@st.composite
def int_expr(draw, scope: Scope, depth: int = 3) -> n.Expr:
    leaves = [st.integers(-20, 20).map(n.IntLit), st.booleans().map(n.BoolLit)]
    if scope.consts:
        leaves.append(st.sampled_from(sorted(scope.consts)).map(lambda name: n.ident(name)))
    if depth <= 0:
        return draw(st.one_of(leaves))
    choice = draw(st.integers(0, 5))
    sub = int_expr(scope, depth - 1)
    if choice == 0:
        return draw(st.one_of(leaves))
    if choice == 1:
        return n.UnOp(draw(st.sampled_from(["-", "!", "~", "+"])), draw(sub))
    if choice == 2:
        return n.Cond(draw(sub), draw(sub), draw(sub))
    op = draw(st.sampled_from(_INT_OPS + _CMP_OPS + ["&&", "||"]))
    return n.BinOp(op, draw(sub), draw(sub))


def int_arg(scope: Scope, depth: int):
    """An integral template argument (a bool literal would be refused by binding)."""
    return int_expr(scope, depth).map(lambda x: n.IntLit(int(x.value)) if isinstance(x, n.BoolLit) else x)


@st.composite
def a_type(draw, scope: Scope, depth: int = 2) -> n.Type:
    simple = [st.just(INT), st.just(BOOL), st.just(n.Builtin("float")), st.just(n.Builtin("char"))]
    if scope.types:
        simple.append(st.sampled_from(scope.types).map(lambda name: n.type_of(name)))
    if depth <= 0:
        return draw(st.one_of(simple))
    sub = a_type(scope, depth - 1)
    choice = draw(st.integers(0, 5))
    if choice <= 1:
        return draw(st.one_of(simple))
    if choice == 2:
        args = {"T_": draw(sub)}
        for name, strat in (
            ("N_", int_arg(scope, 2)),
            ("B_", st.booleans().map(n.BoolLit) | int_expr(scope, 1).map(lambda x: n.BinOp("<", x, n.IntLit(3)))),
            ("E_", st.sampled_from(COLOR.values).map(lambda v: n.EnumValue(COLOR, v))),
            ("U_", sub),
        ):
            if draw(st.booleans()):
                args[name] = draw(strat)
        return n.type_of(BOX(**args))
    if choice == 3:
        return n.type_of(SEQ(Is=draw(st.lists(int_arg(scope, 1), max_size=12))))
    if choice == 4:
        return n.type_of(LIST(Ts=draw(st.lists(sub, max_size=6))))
    return n.Ptr(n.Const(draw(sub)))


comment_text = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FFF, exclude_categories=("Cs", "Cc")),
    max_size=60,
).filter(lambda t: not t.endswith("\\"))
string_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40)


@st.composite
def const_decl(draw, scope: Scope, static: bool) -> list[n.Decl]:
    expr = draw(int_expr(scope))
    value = c_eval(expr, scope.consts)
    name = scope.fresh("c", draw(st.integers(0, 12)))
    scope.consts[name] = value
    var = n.VarDecl(INT, name, expr, constexpr=True, static=static)
    check = n.StaticAssert(n.BinOp("==", n.ident(name), n.IntLit(value)), draw(st.none() | string_text))
    return [var, check]


@st.composite
def function(draw, scope: Scope, static: bool) -> n.FunctionDef:
    params = [n.FuncParam(INT, scope.fresh("p", draw(st.integers(0, 8)))) for _ in range(draw(st.integers(0, 4)))]
    local = Scope(scope.counter)
    local.consts = dict(scope.consts)
    local.types = list(scope.types)
    for p in params:
        local.consts[p.name] = 0  # value unknown; only used where values do not matter
    body: list[n.Stmt] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 6))
        if kind == 5:
            body += draw(double_table(local))
            continue
        if kind == 6:
            body.append(draw(loop(local)))
            continue
        if kind == 0:
            name = local.fresh("v", draw(st.integers(0, 10)))
            body.append(n.VarDecl(n.Const(INT), name, draw(int_expr(local, 2)), brace=draw(st.booleans())))
            local.consts[name] = 0
        elif kind == 1:
            body.append(n.If(draw(int_expr(local, 1)), [n.Return(draw(int_expr(local, 2)))],
                             draw(st.none() | st.just([n.Return(n.IntLit(0))]))))
        elif kind == 2:
            name = local.fresh("f", 0)
            lam = n.Lambda(["&"], [n.FuncParam(n.Const(n.Builtin("auto")), "q")],
                           [n.Return(n.BinOp("+", n.ident("q"), draw(int_expr(local, 1))))])
            body.append(n.VarDecl(n.Const(n.Builtin("auto")), name, lam))
            body.append(n.ExprStmt(n.call(name, n.IntLit(draw(st.integers(0, 9))))))
        elif kind == 3:
            body.append(n.Comment(draw(comment_text)))
        else:
            name = local.fresh("s", 0)
            body.append(n.VarDecl(n.Ptr(n.Const(n.Builtin("char"))), name, n.StrLit(draw(string_text))))
            body.append(n.ExprStmt(n.StaticCast(n.Builtin("void"), n.ident(name))))
    body.append(n.Return(draw(int_expr(local, 2))))
    return n.FunctionDef(scope.fresh("fn", draw(st.integers(0, 6))), INT, params, body, static=static, inline=not static)


BIT_CAST = n.Signature("bit_cast", ("std", "bit_cast"), "function", [n.Param("To", "type")],
                       header=n.Header("bit", system=True))
doubles = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.1, -0.0, 1e-35, 2.0**60, 5e-324])


@st.composite
def double_table(draw, scope: Scope) -> list[n.Stmt]:
    """A constexpr array of doubles and, per element, a static_assert on its bit pattern: a literal
    that does not read back as exactly its value fails to compile."""
    values = draw(st.lists(doubles, min_size=1, max_size=40))
    name = scope.fresh("d", 0)
    table = n.VarDecl(n.Array(n.Const(n.Builtin("double")), None), name,
                      n.BraceInit(None, [n.FloatLit(v) for v in values]), static=True, constexpr=True)
    checks = []
    for i, v in enumerate(values):
        bits = n.Call(n.Id(n.Name((BIT_CAST(To=n.type_of("std", "uint64_t")),))), [n.Index(n.ident(name), n.IntLit(i))])
        if v != v:  # any NaN: the payload is the quiet NaN's, not Python's
            checks.append(n.StaticAssert(n.BinOp("!=", n.Index(n.ident(name), n.IntLit(i)),
                                                 n.Index(n.ident(name), n.IntLit(i)))))
        else:
            pattern = struct.unpack("<Q", struct.pack("<d", v))[0]
            checks.append(n.StaticAssert(n.BinOp("==", bits, n.IntLit(pattern, "ull"))))
    return [table, *checks]


@st.composite
def loop(draw, scope: Scope) -> n.Stmt:
    """A counted for-loop (or a while loop) whose body breaks and continues."""
    i = scope.fresh("i", 0)
    stop = n.IntLit(draw(st.integers(0, 9)))
    body = [n.If(n.BinOp("==", n.ident(i), stop), [n.Break()]), n.Continue()]
    if draw(st.booleans()):
        return n.For(n.VarDecl(INT, i, n.IntLit(0)), n.BinOp("<", n.ident(i), n.IntLit(10)),
                     n.UnOp("++", n.ident(i)), body)
    return n.While(n.BoolLit(False), [n.Break()] if draw(st.booleans()) else [])


@st.composite
def decls(draw, scope: Scope, in_struct: bool, depth: int = 2) -> list[n.Decl]:
    out: list[n.Decl] = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.integers(0, 6 if depth > 0 else 4))
        if kind == 0:
            out += draw(const_decl(scope, static=in_struct))
        elif kind == 1:
            name = scope.fresh("T", draw(st.integers(0, 10)))
            out.append(n.UsingAlias(name, draw(a_type(scope))))
            scope.types.append(name)
        elif kind == 2:
            out.append(draw(function(scope, static=in_struct)))
        elif kind == 3:
            out.append(n.Comment(draw(comment_text)))
        elif kind == 4:
            name = scope.fresh("k", 0)
            out.append(n.VarDecl(n.Ptr(n.Const(n.Builtin("char"))), name, n.StrLit(draw(string_text)),
                                 static=in_struct, constexpr=True))
        elif kind == 5:
            inner = Scope(scope.counter)
            inner.consts, inner.types = dict(scope.consts), list(scope.types)
            out.append(n.Struct(scope.fresh("S", 0), draw(decls(inner, True, depth - 1))))
        else:
            inner = Scope(scope.counter)
            inner.consts, inner.types = dict(scope.consts), list(scope.types)
            macro = scope.fresh("CKAST_TEST_MACRO_", 0)
            if in_struct:
                out.append(n.IfDef(macro, draw(decls(inner, True, depth - 1))))
            else:
                out.append(n.Namespace(scope.fresh("ns", 0), draw(decls(inner, False, depth - 1))))
    return out


@st.composite
def files(draw) -> n.File:
    scope = Scope(itertools.count())
    body = draw(decls(scope, False))
    return n.File(
        [PRELUDE, n.Namespace(scope.fresh("gen", 0), body)],
        includes=[n.Header("cstddef", system=True), n.Header("cstdint", system=True),
                  n.Header("limits", system=True), n.Header("bit", system=True)],
        preamble=draw(comment_text),
        pragma_once=False,
    )
