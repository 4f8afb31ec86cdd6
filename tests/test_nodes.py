"""Unit tests of nodes: validation, structural identity, binding by name, printing details."""

from __future__ import annotations

import attrs
import pytest

from ckast import nodes as n
from ckast.nodes.parse import ParseError, parse_type

from .cpp_tools import reformat

SCHED = n.EnumSpec("Sched", ("ns", "Sched"), ("Intra", "Inter"), profile="p")
OTHER = n.EnumSpec("Other", ("ns", "Other"), ("Intra",), profile="p")
TPL = n.Signature(
    "Tpl",
    ("ns", "Tpl"),
    "struct",
    [
        n.Param("A_", "type"),
        n.Param("N_", "int", ctype=n.Builtin("int"), default=n.IntLit(1)),
        n.Param("B_", "bool", default=n.BoolLit(False)),
        n.Param("S_", "enum", enum=SCHED, default=n.EnumValue(SCHED, "Intra")),
        n.Param("C_", "type", default=n.ParamRef("A_")),
    ],
    profile="p-1",
)


@pytest.mark.parametrize("bad", ["", "1x", "a-b", "class", "int", "__x", "_Upper", "a b", "é"])
def test_identifiers_are_validated(bad):
    with pytest.raises(n.NameError_):
        n.identifier(bad)


def test_nodes_refuse_bad_identifiers_at_construction():
    with pytest.raises(n.NameError_):
        n.UsingAlias("new", n.Builtin("int"))
    with pytest.raises(n.NameError_):
        n.Namespace("a::b", [])


@pytest.mark.parametrize("bad", ["/abs.hpp", "../x.hpp", 'a"b.hpp', "a>b", "a//b.hpp", "x\n.hpp"])
def test_header_paths_are_validated(bad):
    with pytest.raises(n.NameError_):
        n.Header(bad)


def test_nodes_are_immutable_and_structural():
    a = n.UsingAlias("X", n.type_of("Y"))
    b = n.UsingAlias("X", n.type_of("Y"))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        a.name = "Z"  # type: ignore[misc]


def test_binding_orders_by_signature_and_fills_skipped_defaults():
    tid = TPL(B_=True, A_=n.Builtin("float"))
    assert [name for name, _ in tid.args] == ["A_", "B_"]
    assert n.to_source(n.type_of(tid)) == "ns::Tpl<float, 1, true>"
    later = TPL(A_=n.Builtin("int"), C_=n.Builtin("char"))
    assert n.to_source(n.type_of(later)) == "ns::Tpl<int, 1, false, ns::Sched::Intra, char>"


def test_param_ref_default_repeats_the_referenced_argument():
    tid = TPL(A_=n.type_of("X"), S_=n.EnumValue(SCHED, "Inter"))
    assert n.to_source(n.type_of(tid)) == "ns::Tpl<X, 1, false, ns::Sched::Inter>"
    assert tid == TPL(S_=n.EnumValue(SCHED, "Inter"), A_=n.type_of("X"))


@pytest.mark.parametrize(
    "args, words",
    [
        ({"A_": n.Builtin("int"), "Q_": 1}, "unknown parameter 'Q_'"),
        ({"N_": 3}, "missing argument for A_"),
        ({"A_": n.IntLit(1)}, "parameter A_ expects a type"),
        ({"A_": n.Builtin("int"), "N_": n.Builtin("int")}, "parameter N_ expects an integral"),
        ({"A_": n.Builtin("int"), "N_": True}, "parameter N_ expects an integral"),
        ({"A_": n.Builtin("int"), "B_": 1}, "parameter B_ expects a bool"),
        ({"A_": n.Builtin("int"), "S_": n.EnumValue(OTHER, "Intra")}, "enum Sched"),
    ],
)
def test_binding_refuses_naming_template_parameter_and_profile(args, words):
    with pytest.raises(n.BindError) as info:
        TPL(**args)
    assert "ns::Tpl" in str(info.value) and "profile p-1" in str(info.value)
    assert words in str(info.value)


def test_absent_parameter_is_refused_with_reason():
    sig = attrs.evolve(TPL, absent_params=(("X_", "gone in this CK (D1)"),))
    with pytest.raises(n.BindError, match="X_ does not exist in this profile: gone in this CK"):
        sig(A_=n.Builtin("int"), X_=1)


def test_enum_value_is_checked():
    with pytest.raises(ValueError, match="has no enumerator 'Bogus'"):
        n.EnumValue(SCHED, "Bogus")


def test_string_literals_are_escaped_to_ascii():
    text = n.to_source(n.StrLit('a"b\\c\nd\té\x00?'))
    assert text == '"a\\"b\\\\c\\nd\\t\\303\\251\\000?"'
    assert text.isascii()


def test_comments_refuse_line_splices_and_control_characters():
    with pytest.raises(ValueError):
        n.Comment("ends with \\")
    with pytest.raises(ValueError):
        n.Comment("bell\a")
    assert n.to_source(n.Comment("two\nlines")) == "// two\n// lines\n"


@pytest.mark.parametrize(
    "expr, text",
    [
        (n.BinOp("*", n.BinOp("+", n.ident("a"), n.ident("b")), n.ident("c")), "(a + b) * c"),
        (n.BinOp("-", n.ident("a"), n.BinOp("-", n.ident("b"), n.ident("c"))), "a - (b - c)"),
        (n.BinOp("&&", n.BinOp("<", n.ident("a"), n.ident("b")), n.ident("c")), "(a < b) && c"),
        (n.UnOp("-", n.IntLit(-1)), "-(-1)"),
        (n.UnOp("!", n.call("f", n.ident("x"))), "!f(x)"),
        (n.Cond(n.ident("a"), n.ident("b"), n.Cond(n.ident("c"), n.ident("d"), n.ident("e"))), "a ? b : (c ? d : e)"),
        (n.call("f", n.BinOp(">", n.ident("a"), n.ident("b"))), "f((a > b))"),
    ],
)
def test_expression_parenthesization(expr, text):
    assert n.to_source(expr) == text


def test_template_argument_with_greater_than_is_parenthesized():
    tid = TPL(A_=n.Builtin("int"), B_=n.BinOp(">", n.ident("x"), n.IntLit(2)))
    assert n.to_source(n.type_of(tid)) == "ns::Tpl<int, 1, (x > 2)>"


def test_long_lists_break_one_item_per_line_at_the_last_list():
    long_args = [n.ident(f"argument_number_{i}") for i in range(8)]
    text = n.to_source(n.ExprStmt(n.call("ns::function", *long_args)))
    lines = text.splitlines()
    assert lines[0] == "ns::function(" and lines[-1] == "    argument_number_7);"
    assert all(len(line) <= 100 for line in lines)


def test_lambda_with_body_only_as_initializer_or_statement():
    lam = n.Lambda(["&"], [], [n.Return(n.IntLit(1))])
    with pytest.raises(n.PrintError):
        n.to_source(n.ExprStmt(n.call(n.ident("f"), lam)))


def test_parse_type_escape_hatch_yields_nodes_or_refuses():
    def resolve(q):
        return TPL if q == ("ns", "Tpl") else None

    t = parse_type("const ns::Tpl<float, 3>*", resolve)
    assert t == n.Ptr(n.Const(n.type_of(TPL(A_=n.Builtin("float"), N_=3))))
    for bad in ["ns::Tpl", "foo<int>", "int;", "a::", "x y", "f(1)"]:
        with pytest.raises((ParseError, ValueError)):
            parse_type(bad, resolve)


def test_required_headers_are_collected_sorted():
    sig = n.Signature("S", ("a", "S"), "struct", [n.Param("T", "type")], header=n.Header("z/s.hpp"))
    sym = n.Symbol("v", ("std", "vector"), n.Header("vector", system=True))
    body = n.UsingAlias("X", n.type_of(sig(T=n.type_of(sym))))
    assert n.required_headers(body) == (n.Header("vector", system=True), n.Header("z/s.hpp"))


def test_clang_format_is_the_pinned_version():
    from ckast.nodes.format import PINNED_VERSION, version

    assert version() == PINNED_VERSION


def test_host_model_declarations_print_in_style():
    """Nodes the host model uses: includes inside bodies, inheriting constructors, forward and variable
    template declarations, pack expansions."""
    pack = n.Signature("Pack", ("ns", "Pack"), "struct", [n.Param("Ts", "type_pack")])
    base = TPL(A_=n.type_of("A_"))
    decls = [
        n.Include(n.Header("dir/part.hpp")),
        n.Include(n.Header("vector", system=True)),
        n.TemplateDecl([n.Param("A_", "type")], n.ForwardDecl("Fwd")),
        n.TemplateDecl([n.Param("Ts", "type_pack")], n.Struct("Derived", [
            n.UsingDeclaration(n.Name((base, "Tpl"))),
        ], bases=[n.type_of(pack(Ts=(n.PackExpansion(n.type_of("Ts")),)))])),
        n.TemplateDecl([n.Param("N_", "int", ctype=n.Builtin("int"))],
                       n.VarDecl(n.type_of("Callable"), "fn", brace=True, inline=True, constexpr=True)),
    ]
    text = n.to_source(n.Namespace("ns", decls))
    assert text == (
        "namespace ns {\n"
        '#include "dir/part.hpp"\n'
        "#include <vector>\n"
        "\n"
        "template <typename A_>\n"
        "struct Fwd;\n"
        "\n"
        "template <typename... Ts>\n"
        "struct Derived : ns::Pack<Ts...> {\n"
        "    using ns::Tpl<A_>::Tpl;\n"
        "};\n"
        "\n"
        "template <int N_>\n"
        "inline constexpr Callable fn{};\n"
        "} // namespace ns\n"
    )
    assert reformat(text) == text


def test_pack_expansion_of_values_and_template_decl_kinds():
    seq = n.Signature("Seq", ("ns", "Seq"), "struct", [n.Param("Is", "int_pack", ctype=n.Builtin("int"))])
    assert n.to_source(n.type_of(seq(Is=(n.IntLit(1), n.PackExpansion(n.ident("Is")))))) == "ns::Seq<1, Is...>"
    with pytest.raises(TypeError):
        n.TemplateDecl([n.Param("T", "type")], n.Include(n.Header("x.hpp")))


@pytest.mark.parametrize("value, text", [
    (0.1, "0.1"), (100.0, "100.0"), (1e-35, "1e-35"), (1e300, "1e+300"), (-2.5, "-2.5"), (-0.0, "-0.0"),
    (5e-324, "5e-324"), (float("nan"), "std::numeric_limits<double>::quiet_NaN()"),
    (float("-inf"), "-std::numeric_limits<double>::infinity()"),
])
def test_float_literals_print_the_shortest_round_trip_form(value, text):
    assert n.to_source(n.FloatLit(value)) == text
    if value == value and abs(value) != float("inf"):
        assert float(text) == value


def test_float_literals_refuse_bools_and_strings_and_negatives_are_unary():
    for bad in (True, "1.0"):
        with pytest.raises(TypeError):
            n.FloatLit(bad)
    assert n.to_source(n.BinOp("-", n.IntLit(1), n.FloatLit(-2.0))) == "1 - -2.0"
    assert n.to_source(n.UnOp("-", n.FloatLit(-2.0))) == "-(-2.0)"
    assert n.required_headers(n.FloatLit(float("inf"))) == (n.Header("limits", system=True),)
    assert n.required_headers(n.FloatLit(1.0)) == ()


def test_arrays_print_their_bounds_after_the_name_and_pack_long_literal_lists():
    table = n.VarDecl(n.Array(n.Const(n.Builtin("double")), None), "x",
                      n.BraceInit(None, [n.FloatLit(i / 4) for i in range(60)]), static=True, constexpr=True)
    source = n.to_source(table)
    lines = source.splitlines()
    assert lines[0] == "static constexpr const double x[] = {"
    assert 3 <= len(lines) <= 6 and all(len(line) <= n.LINE_LIMIT for line in lines)
    assert lines[-1].endswith("14.75};") and reformat(source) == source
    assert n.to_source(n.Array(n.Builtin("int"), 3)) == "int[3]"
    param = n.FunctionDef("f", n.Builtin("void"), [n.FuncParam(n.Array(n.Builtin("int"), 2), "a")], None)
    assert n.to_source(param) == "void f(int a[2]);\n"
    with pytest.raises(ValueError):
        n.Array(n.Builtin("int"), 0)


def test_loops_print_in_the_project_style():
    i = n.ident("i")
    body = [n.If(n.BinOp("==", i, n.IntLit(3)), [n.Break()]), n.Continue()]
    loop = n.For(n.VarDecl(n.Builtin("int"), "i", n.IntLit(0)), n.BinOp("<", i, n.IntLit(9)), n.UnOp("++", i), body)
    f = n.FunctionDef("f", n.Builtin("void"), (), [loop, n.While(n.BoolLit(True), [n.Break()]), n.For(None, None, None, [])])
    source = n.to_source(f)
    assert source == (
        "void f() {\n    for (int i = 0; i < 9; ++i) {\n        if (i == 3) {\n            break;\n        }\n"
        "        continue;\n    }\n    while (true) {\n        break;\n    }\n    for (;;) {}\n}\n")
    assert reformat(source) == source
    with pytest.raises(TypeError):
        n.For(n.Return(), None, None, [])
