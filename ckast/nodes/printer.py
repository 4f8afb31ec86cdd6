"""The one C++ printer: AST -> source text already in ckast's clang-format style.

Style (see style.clang-format): 4-space indent, attached braces, `T& x` / `T* x`, no column
limit for clang-format; the printer itself breaks a line longer than `LINE_LIMIT` at the last
bracketed list on it (template arguments, call arguments, parameters, braced initializers):
one item per line, each nesting level four columns deeper, the closing bracket on the last item.
clang-format keeps such breaks unchanged, which tests check on every golden and on random ASTs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Union

import attrs

from . import decl as d
from . import expr as e
from . import marks
from . import stmt as s
from . import types as t
from .base import Decl, Expr, Node, Stmt, Type, children
from .symbols import EnumSpec, Header, Symbol
from .templates import PackExpansion, Param, ParamRef, Signature, TemplateId

LINE_LIMIT = 100
INDENT = "    "


class PrintError(ValueError):
    """The AST is well-typed but has a shape the printer does not emit (e.g. a misplaced lambda)."""


@attrs.frozen
class Group:
    """A bracketed, comma-separated list that the layout may break one item per line (or, when
    `packed`, fill each line with as many items as fit: long lists of literals)."""

    open: str
    items: tuple[Doc, ...]
    close: str
    packed: bool = False


Doc = tuple[Union[str, Group], ...]


def flat(doc: Doc) -> str:
    """The doc on one line."""
    out = []
    for piece in doc:
        if isinstance(piece, str):
            out.append(piece)
        else:
            out.append(piece.open + ", ".join(flat(i) for i in piece.items) + piece.close)
    return "".join(out)


def layout(doc: Doc, indent: str) -> list[str]:
    """Lines for one logical line: flat if it fits, else break its last bracketed list."""
    text = flat(doc)
    last = max((i for i, p in enumerate(doc) if isinstance(p, Group)), default=None)
    if last is None or marks.fits(len(indent), text, LINE_LIMIT):
        return [indent + text]
    group = doc[last]
    assert isinstance(group, Group)
    lines = [indent + flat(doc[:last]) + group.open]
    tail = group.close + flat(doc[last + 1 :])
    inner = indent + INDENT
    if group.packed:
        return lines + _packed(group, tail, inner)
    for i, item in enumerate(group.items):
        trailer = "," if i < len(group.items) - 1 else tail
        lines.extend(layout(item + (trailer,), inner))
    return lines


def _packed(group: Group, tail: str, indent: str) -> list[str]:
    """The items of a packed group, as many per line as fit; the last one carries `tail`."""
    lines: list[str] = []
    line = ""
    last = len(group.items) - 1
    for i, item in enumerate(group.items):
        piece = flat(item) + ("," if i < last else tail)
        if line and len(indent) + len(line) + 1 + len(piece) > LINE_LIMIT:
            lines.append(indent + line)
            line = piece
        else:
            line = f"{line} {piece}" if line else piece
    return lines + [indent + line]


def group(open_: str, items: Iterable[Doc], close: str, packed: bool = False) -> Doc:
    """A group doc; an empty list is plain text (it can never need a break)."""
    items = tuple(items)
    return (Group(open_, items, close, packed),) if items else (open_ + close,)


def float_text(value: float) -> str:
    """A `double` literal (or, for NaN and infinities, an expression) that is exactly `value`."""
    if math.isnan(value):
        return "std::numeric_limits<double>::quiet_NaN()"
    if math.isinf(value):
        return ("-" if value < 0 else "") + "std::numeric_limits<double>::infinity()"
    text = repr(value)  # the shortest decimal that reads back as the same double
    return text if any(c in text for c in ".en") else text + ".0"


def c_string(text: str) -> str:
    """A C++ narrow string literal for `text`: ASCII only, octal escapes for everything else
    (slot marks, which hold identifier characters only, pass through while recording)."""
    if marks.OPEN in text and marks.current() is not None:
        pieces = marks.MARK.split(text)
        body = "".join(_escaped(p) if i % 3 == 0 else marks.mark(int(p), pieces[i + 1]) if i % 3 == 1 else ""
                       for i, p in enumerate(pieces))
        return '"' + body + '"'
    return '"' + _escaped(text) + '"'


def _escaped(text: str) -> str:
    simple = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in simple:
            out.append(simple[ch])
        elif 32 <= byte < 127:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


# Precedence of expression forms (higher binds tighter).
_PREC = {
    "* / %": 13, "+ -": 12, "<< >>": 11, "< <= > >=": 9, "== !=": 8, "&": 7, "^": 6, "|": 5,
    "&&": 4, "||": 3, "= += -= *= /=": 2,
}
BINARY_PREC = {op: prec for ops, prec in _PREC.items() for op in ops.split()}
PREC_POSTFIX, PREC_UNARY, PREC_COND, PREC_PRIMARY = 16, 15, 2, 17
_BIG_DECLS = (d.FunctionDef, d.Struct, d.Namespace, d.IfDef, d.TemplateDecl, d.EnumDecl)


class _Table:
    """Printing methods per node class: a dict lookup, the nearest base class for a subclass."""

    def __init__(self, refuse: str) -> None:
        self.methods: dict[type, Callable] = {}
        self.refuse = refuse

    def on(self, cls: type) -> Callable[[Callable], Callable]:
        def register(method: Callable) -> Callable:
            self.methods[cls] = method
            return method
        return register

    def find(self, cls: type) -> Callable:
        method = self.methods.get(cls)
        if method is None:
            base = next((b for b in cls.__mro__ if b in self.methods), None)
            if base is None:
                raise PrintError(self.refuse.format(cls.__name__))
            method = self.methods[cls] = self.methods[base]
        return method


_LINES = _Table("{} is not a statement or declaration")
_EXPR = _Table("no printer for expression {}")
_TYPE = _Table("no printer for type {}")


class Printer:
    """Prints nodes; `print` accepts a File, declaration, statement, expression or type."""

    def print(self, n: Node) -> str:
        if isinstance(n, d.File):
            return self.file(n)
        if isinstance(n, (Decl, Stmt)):
            return "\n".join(self.lines(n, "")) + "\n"
        if isinstance(n, Expr):
            return flat(self.expr(n))
        if isinstance(n, Type):
            return flat(self.type(n))
        raise PrintError(f"cannot print a {type(n).__name__} on its own")

    # ----- files and declarations -------------------------------------------------------------

    def file(self, f: d.File) -> str:
        lines: list[str] = []
        if f.preamble:
            lines += self.comment(f.preamble, "") + [""]
        if f.pragma_once:
            lines += ["#pragma once", ""]
        for system in (True, False):
            paths = marks.sorted_texts({h.path for h in f.includes if h.system == system})
            if paths:
                lines += [f"#include <{p}>" if system else f'#include "{p}"' for p in paths] + [""]
        lines += self.body(f.body, "")
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines) + "\n"

    def body(self, items: Iterable[Node], indent: str) -> list[str]:
        """Declarations or statements in order, with blank lines between unlike neighbours."""
        lines: list[str] = []
        prev: Node | None = None
        for item in items:
            if prev is not None and isinstance(item, Decl) and _blank_between(prev, item):
                lines.append("")
            lines += self.lines(item, indent)
            prev = item
        return lines

    def lines(self, n: Node, indent: str) -> list[str]:
        return _LINES.find(type(n))(self, n, indent)

    @_LINES.on(d.Comment)
    def _(self, n: d.Comment, indent: str) -> list[str]:
        return self.comment(n.text, indent)

    def comment(self, text: str, indent: str) -> list[str]:
        return [f"{indent}// {line}".rstrip() for line in text.split("\n")]

    @_LINES.on(d.UsingAlias)
    def _(self, n: d.UsingAlias, indent: str) -> list[str]:
        return layout((f"using {n.name} = ",) + self.type(n.type) + (";",), indent)

    @_LINES.on(d.UsingDirective)
    def _(self, n: d.UsingDirective, indent: str) -> list[str]:
        return [f"{indent}using namespace {flat(self.name(n.namespace))};"]

    @_LINES.on(d.UsingDeclaration)
    def _(self, n: d.UsingDeclaration, indent: str) -> list[str]:
        return [f"{indent}using {flat(self.name(n.name))};"]

    @_LINES.on(d.Include)
    def _(self, n: d.Include, indent: str) -> list[str]:
        path = n.header.path
        return [f"#include <{path}>" if n.header.system else f'#include "{path}"']

    @_LINES.on(d.Define)
    def _(self, n: d.Define, indent: str) -> list[str]:
        return [f"#define {n.macro}"]

    @_LINES.on(d.VarDecl)
    def _(self, n: d.VarDecl, indent: str) -> list[str]:
        specs = "".join(
            word
            for flag, word in (
                (n.maybe_unused, "[[maybe_unused]] "),
                (n.static, "static "),
                (n.inline, "inline "),
                (n.constexpr, "constexpr "),
            )
            if flag
        )
        head = (specs + self.declarator(n.type, n.name),)
        if isinstance(n.init, e.Lambda) and n.init.body:
            if n.brace:
                raise PrintError("a lambda initializer is printed with '=', not braces")
            return self.lambda_block(head + (" = ",), n.init, indent, ";")
        if n.brace:
            init = group("{", [self.expr(n.init)] if n.init else [], "}")
            return layout(head + init + (";",), indent)
        if n.init is None:
            return layout(head + (";",), indent)
        return layout(head + (" = ",) + self.expr(n.init) + (";",), indent)

    @_LINES.on(d.StaticAssert)
    def _(self, n: d.StaticAssert, indent: str) -> list[str]:
        args = [self.expr(n.cond)] + ([(c_string(n.message),)] if n.message is not None else [])
        return layout(("static_assert",) + group("(", args, ")") + (";",), indent)

    @_LINES.on(d.FunctionDef)
    def _(self, n: d.FunctionDef, indent: str) -> list[str]:
        specs = "".join(
            word
            for flag, word in ((n.static, "static "), (n.inline, "inline "), (n.constexpr, "constexpr "))
            if flag
        )
        head = (specs + flat(self.type(n.returns)) + " " + n.name,)
        head += group("(", (self.param(p) for p in n.params), ")")
        head += (" noexcept",) if n.noexcept else ()
        if n.body is None:
            return layout(head + (";",), indent)
        if not n.body:
            return layout(head + (" {}",), indent)
        return layout(head + (" {",), indent) + self.block(n.body, indent) + [indent + "}"]

    def block(self, stmts: Iterable[Stmt], indent: str) -> list[str]:
        out: list[str] = []
        for st in stmts:
            out += self.lines(st, indent + INDENT)
        return out

    def declarator(self, type_: Type, name: str) -> str:
        """`T name`, or `T name[N]` for an array type."""
        bounds = ""
        while isinstance(type_, t.Array):
            bounds += f"[{'' if type_.size is None else type_.size}]"
            type_ = type_.of
        return flat(self.type(type_)) + " " + name + bounds

    def param(self, p: e.FuncParam) -> Doc:
        text = self.declarator(p.type, p.name)
        if p.default is None:
            return (text,)
        return (text + " = ",) + self.expr(p.default)

    @_LINES.on(d.Access)
    def _(self, n: d.Access, indent: str) -> list[str]:
        return [indent[: -len(INDENT)] + n.level + ":"]

    @_LINES.on(d.Struct)
    def _(self, n: d.Struct, indent: str) -> list[str]:
        head = ("class " if n.is_class else "struct ") + n.name
        if n.bases:
            head += " : " + ", ".join(flat(self.type(b)) for b in n.bases)
        if not n.body:
            return [f"{indent}{head} {{}};"]
        return [f"{indent}{head} {{"] + self.body(n.body, indent + INDENT) + [indent + "};"]

    @_LINES.on(d.ForwardDecl)
    def _(self, n: d.ForwardDecl, indent: str) -> list[str]:
        return [f"{indent}{'class' if n.is_class else 'struct'} {n.name};"]

    @_LINES.on(d.EnumDecl)
    def _(self, n: d.EnumDecl, indent: str) -> list[str]:
        head = ("enum class " if n.scoped else "enum ") + n.name
        if n.underlying is not None:
            head += " : " + flat(self.type(n.underlying))
        if not n.values:
            return [f"{indent}{head} {{}};"]
        values = [f"{indent}{INDENT}{v}," for v in n.values]
        values[-1] = values[-1][:-1]
        return [f"{indent}{head} {{"] + values + [indent + "};"]

    @_LINES.on(d.TemplateDecl)
    def _(self, n: d.TemplateDecl, indent: str) -> list[str]:
        params = ", ".join(self.template_param(p) for p in n.params)
        return [f"{indent}template <{params}>"] + self.lines(n.decl, indent)

    def template_param(self, p: Param) -> str:
        if p.kind in ("type", "type_pack"):
            text = "typename... " if p.is_pack else "typename "
        elif p.kind == "bool":
            text = "bool "
        elif p.kind == "enum":
            text = "::".join(p.enum.qualname) + " "  # type: ignore[union-attr]
        else:
            assert p.ctype is not None, f"integral template parameter {p.name} needs a ctype"
            text = flat(self.type(p.ctype)) + ("... " if p.is_pack else " ")
        text += p.name
        if isinstance(p.default, ParamRef):
            text += " = " + p.default.name
        elif isinstance(p.default, Type):
            text += " = " + flat(self.type(p.default))
        elif isinstance(p.default, Expr):
            text += " = " + flat(self.expr(p.default))
        return text

    @_LINES.on(d.Namespace)
    def _(self, n: d.Namespace, indent: str) -> list[str]:
        label = f"namespace {n.name}" if n.name else "namespace"
        return [f"{indent}{label} {{"] + self.body(n.body, indent) + [f"{indent}}} // {label}"]

    @_LINES.on(d.IfDef)
    def _(self, n: d.IfDef, indent: str) -> list[str]:
        out = [("#ifndef " if n.negate else "#ifdef ") + n.macro] + self.body(n.then, indent)
        if n.else_:
            out += ["#else"] + self.body(n.else_, indent)
        return out + [f"#endif // {n.macro}"]

    # ----- statements ---------------------------------------------------------------------------

    @_LINES.on(s.ExprStmt)
    def _(self, n: s.ExprStmt, indent: str) -> list[str]:
        x = n.expr
        if isinstance(x, e.Lambda) and x.body:
            return self.lambda_block((), x, indent, ";")
        if isinstance(x, e.BinOp) and BINARY_PREC[x.op] == 2:
            lhs = self.operand(x.lhs, 3)
            return layout((lhs + f" {x.op} ",) + self.expr(x.rhs) + (";",), indent)
        return layout(self.expr(x) + (";",), indent)

    @_LINES.on(s.Repeated)
    def _(self, n: s.Repeated, indent: str) -> list[str]:
        # Print the body once with the name as a slot; each name whose width keeps every layout decision
        # is filled in, any other is printed in full.
        if not n.names:
            return []
        with marks.recording() as rec:
            form = marks.Form.of("\n".join(self.lines(n.with_name(rec.slot(("name",), n.names[0])), indent)))
        out: list[str] = []
        for name in n.names:
            if all(g.holds([name]) for g in rec.guards):
                out += form.fill([name]).split("\n")
            else:
                out += self.lines(n.with_name(name), indent)
        return out

    @_LINES.on(s.Return)
    def _(self, n: s.Return, indent: str) -> list[str]:
        if n.value is None:
            return [indent + "return;"]
        return layout(("return ",) + self.expr(n.value) + (";",), indent)

    @_LINES.on(s.Throw)
    def _(self, n: s.Throw, indent: str) -> list[str]:
        return layout(("throw ",) + self.expr(n.value) + (";",), indent)

    @_LINES.on(s.If)
    def _(self, n: s.If, indent: str) -> list[str]:
        out: list[str] = []
        node: s.If | None = n
        opener = f"{indent}if ("
        while node is not None:
            cond = flat(self.expr(node.cond))
            if not node.then and node.else_ is None:
                return out + [f"{opener}{cond}) {{}}"]
            out += [f"{opener}{cond}) {{"] + self.block(node.then, indent)
            if isinstance(node.else_, s.If):
                opener = f"{indent}}} else if ("
                node = node.else_
                continue
            if node.else_ is not None:
                out += [f"{indent}}} else {{"] + self.block(node.else_, indent)
            out.append(indent + "}")
            node = None
        return out

    @_LINES.on(s.For)
    def _(self, n: s.For, indent: str) -> list[str]:
        init = ""
        if n.init is not None:
            init = " ".join(line.strip() for line in self.lines(n.init, ""))[:-1]
        cond = "" if n.cond is None else flat(self.expr(n.cond))
        step = "" if n.step is None else flat(self.expr(n.step))
        head = f"for ({init};{' ' + cond if cond else ''};{' ' + step if step else ''})"
        return self.loop(head, n.body, indent)

    @_LINES.on(s.While)
    def _(self, n: s.While, indent: str) -> list[str]:
        return self.loop(f"while ({flat(self.expr(n.cond))})", n.body, indent)

    def loop(self, head: str, body: tuple[Stmt, ...], indent: str) -> list[str]:
        if not body:
            return [f"{indent}{head} {{}}"]
        return [f"{indent}{head} {{"] + self.block(body, indent) + [indent + "}"]

    @_LINES.on(s.Break)
    def _(self, n: s.Break, indent: str) -> list[str]:
        return [indent + "break;"]

    @_LINES.on(s.Continue)
    def _(self, n: s.Continue, indent: str) -> list[str]:
        return [indent + "continue;"]

    def lambda_block(self, head: Doc, lam: e.Lambda, indent: str, end: str) -> list[str]:
        first = flat(head) + self.lambda_head(lam) + " {"
        return [indent + first] + self.block(lam.body, indent) + [indent + "}" + end]

    def lambda_head(self, lam: e.Lambda) -> str:
        params = ", ".join(flat(self.param(p)) for p in lam.params)
        return f"[{', '.join(lam.captures)}]({params})"

    # ----- expressions --------------------------------------------------------------------------

    def operand(self, x: Expr, min_prec: int) -> str:
        """`x` flat, parenthesized when it binds more loosely than `min_prec` or is a `<`/`>`
        comparison (unparenthesized, `a < b > c` or `f(a < b, c > d)` reads as a template-id to
        clang-format and to people)."""
        text = flat(self.expr(x))
        return f"({text})" if _prec(x) < min_prec or _relational(x) else text

    def arg(self, x: Expr) -> Doc:
        """A call argument or braced-list item."""
        return ("(" + flat(self.expr(x)) + ")",) if _relational(x) else self.expr(x)

    def expr(self, n: Expr) -> Doc:
        return _EXPR.find(type(n))(self, n)

    @_EXPR.on(e.IntLit)
    def _(self, n: e.IntLit) -> Doc:
        return (f"{n.value}{n.suffix}",)

    @_EXPR.on(e.FloatLit)
    def _(self, n: e.FloatLit) -> Doc:
        return (float_text(n.value),)

    @_EXPR.on(e.BoolLit)
    def _(self, n: e.BoolLit) -> Doc:
        return ("true" if n.value else "false",)

    @_EXPR.on(e.StrLit)
    def _(self, n: e.StrLit) -> Doc:
        return (c_string(n.value),)

    @_EXPR.on(e.NullPtr)
    def _(self, n: e.NullPtr) -> Doc:
        return ("nullptr",)

    @_EXPR.on(e.EnumValue)
    def _(self, n: e.EnumValue) -> Doc:
        return ("::".join(n.spec.qualname + (n.value,)),)

    @_EXPR.on(e.Id)
    def _(self, n: e.Id) -> Doc:
        return self.name(n.name)

    @_EXPR.on(e.Call)
    def _(self, n: e.Call) -> Doc:
        callee = self.operand(n.fn, PREC_POSTFIX)
        return (callee,) + group("(", (self.arg(a) for a in n.args), ")")

    @_EXPR.on(e.Member)
    def _(self, n: e.Member) -> Doc:
        head = (self.operand(n.obj, PREC_POSTFIX) + ("->" if n.arrow else ".") + n.name,)
        return head + group("<", (self.template_arg(a) for a in n.targs), ">") if n.targs else head

    @_EXPR.on(e.Index)
    def _(self, n: e.Index) -> Doc:
        return (self.operand(n.obj, PREC_POSTFIX) + "[" + flat(self.expr(n.index)) + "]",)

    @_EXPR.on(e.BinOp)
    def _(self, n: e.BinOp) -> Doc:
        prec = BINARY_PREC[n.op]
        right_assoc = prec == 2
        lhs = self.operand(n.lhs, prec + 1 if right_assoc else prec)
        rhs = self.operand(n.rhs, prec if right_assoc else prec + 1)
        return (f"{lhs} {n.op} {rhs}",)

    @_EXPR.on(e.UnOp)
    def _(self, n: e.UnOp) -> Doc:
        inner = self.operand(n.operand, PREC_UNARY)
        if inner[:1] in "+-&*" and inner[:1] == n.op[-1:] or isinstance(n.operand, e.UnOp):
            inner = f"({inner})"
        return (n.op + inner,)

    @_EXPR.on(e.Cond)
    def _(self, n: e.Cond) -> Doc:
        # Nested conditionals are parenthesized: clang-format re-breaks unparenthesized chains.
        c, a, b = (self.operand(x, PREC_COND + 1) for x in (n.cond, n.then, n.else_))
        return (f"{c} ? {a} : {b}",)

    @_EXPR.on(e.BraceInit)
    def _(self, n: e.BraceInit) -> Doc:
        prefix = flat(self.type(n.type)) if n.type is not None else ""
        packed = all(isinstance(_unsigned(i), _LITERALS) for i in n.items)
        return (prefix,) + group("{", (self.arg(i) for i in n.items), "}", packed)

    @_EXPR.on(e.StaticCast)
    def _(self, n: e.StaticCast) -> Doc:
        return (f"static_cast<{flat(self.type(n.type))}>",) + group("(", [self.expr(n.value)], ")")

    @_EXPR.on(e.SizeOf)
    def _(self, n: e.SizeOf) -> Doc:
        return (f"sizeof({flat(self.type(n.type))})",)

    @_EXPR.on(PackExpansion)
    def _(self, n: PackExpansion) -> Doc:
        return self.pack_expansion(n)

    def pack_expansion(self, n: PackExpansion) -> Doc:
        inner = self.type(n.of) if isinstance(n.of, Type) else self.expr(n.of)
        return (flat(inner) + "...",)

    @_EXPR.on(e.Lambda)
    def _(self, n: e.Lambda) -> Doc:
        if n.body:
            raise PrintError("a lambda with a body may only initialize a variable or be a statement")
        return (self.lambda_head(n) + " {}",)

    # ----- names and types ----------------------------------------------------------------------

    def name(self, n: t.Name) -> Doc:
        out: list[str | Group] = []
        for i, part in enumerate(n.parts):
            sep = "::" if i else ""
            if isinstance(part, TemplateId):
                out.append(sep + "::".join(part.signature.qualname))
                out.extend(group("<", (self.template_arg(a) for a in part.positional()), ">"))
            elif isinstance(part, (Symbol, EnumSpec)):
                out.append(sep + "::".join(part.qualname))
            else:
                out.append(sep + part)
        return tuple(out)

    def template_arg(self, a: Node) -> Doc:
        if isinstance(a, Type):
            return self.type(a)
        if isinstance(a, (e.BinOp, e.Cond)):
            return ("(" + flat(self.expr(a)) + ")",)  # a `>` inside must not close the list
        return self.expr(a)  # type: ignore[arg-type]

    def type(self, n: Type) -> Doc:
        return _TYPE.find(type(n))(self, n)

    @_TYPE.on(PackExpansion)
    def _(self, n: PackExpansion) -> Doc:
        return self.pack_expansion(n)

    @_TYPE.on(t.Builtin)
    def _(self, n: t.Builtin) -> Doc:
        return (n.keyword,)

    @_TYPE.on(t.TypeName)
    def _(self, n: t.TypeName) -> Doc:
        return self.name(n.name)

    @_TYPE.on(t.Const)
    def _(self, n: t.Const) -> Doc:
        if isinstance(n.of, t.Ptr):
            return (flat(self.type(n.of)) + " const",)
        return ("const " + flat(self.type(n.of)),)

    @_TYPE.on(t.Ptr)
    def _(self, n: t.Ptr) -> Doc:
        return (flat(self.type(n.of)) + "*",)

    @_TYPE.on(t.Array)
    def _(self, n: t.Array) -> Doc:
        return (self.declarator(n, "").replace(" [", "["),)

    @_TYPE.on(t.LRef)
    def _(self, n: t.LRef) -> Doc:
        return (flat(self.type(n.of)) + "&",)


_LITERALS = (e.IntLit, e.FloatLit, e.BoolLit, e.StrLit, e.NullPtr, e.EnumValue)


def _unsigned(x: Expr) -> Expr:
    """`x` without a leading unary minus."""
    return x.operand if isinstance(x, e.UnOp) and x.op == "-" else x


def _prec(x: Expr) -> int:
    if isinstance(x, e.BinOp):
        return BINARY_PREC[x.op]
    if isinstance(x, e.Cond):
        return PREC_COND
    if isinstance(x, e.UnOp) or (isinstance(x, e.IntLit) and x.value < 0):
        return PREC_UNARY
    if isinstance(x, e.FloatLit):
        if math.copysign(1.0, x.value) < 0:
            return PREC_UNARY
        return PREC_PRIMARY if math.isfinite(x.value) else PREC_POSTFIX
    if isinstance(x, (e.Call, e.Member, e.Index)):
        return PREC_POSTFIX
    return PREC_PRIMARY


def _relational(x: Expr) -> bool:
    return isinstance(x, e.BinOp) and x.op in ("<", "<=", ">", ">=")


def _blank_between(prev: Node, cur: Node) -> bool:
    if isinstance(prev, (d.Comment, d.Access)):
        return False
    if isinstance(cur, d.Access):
        return True
    return isinstance(prev, _BIG_DECLS) or isinstance(cur, _BIG_DECLS) or type(prev) is not type(cur)


def to_source(n: Node) -> str:
    """Print any node with the standard printer."""
    return Printer().print(n)


LIMITS = Header("limits", system=True)
"""Where `std::numeric_limits` is: NaN and infinite `FloatLit`s print as its calls."""


def required_headers(root: Node) -> tuple[Header, ...]:
    """Headers of every catalog entity used below `root`, sorted and without duplicates.

    A signature contributes its own header; its parameter list (defaults included) is catalog
    data, not use, so the walk does not descend into it.
    """
    found = set()
    stack = [root]
    pop, extend = stack.pop, stack.extend
    while stack:
        current = pop()
        if isinstance(current, _CATALOG_ENTITIES):
            if current.header is not None:
                found.add(current.header)
        elif type(current) is e.FloatLit and not current.finite:
            found.add(LIMITS)
        else:
            extend(children(current))
    return tuple(sorted(found, key=lambda h: (not h.system, h.path)))


_CATALOG_ENTITIES = (Symbol, Signature, EnumSpec)
