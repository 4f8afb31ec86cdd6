"""The C++ AST: immutable typed nodes and the one printer that turns them into source.

Nothing outside this package writes C++ text. Build nodes (identifiers are validated on
construction, string literals are escaped when printed, template-ids are bound by parameter name
against catalog signatures), then print them with `to_source`.
"""

from .base import Decl, Expr, Node, Stmt, Type
from .decl import (
    Access,
    Comment,
    Define,
    EnumDecl,
    File,
    ForwardDecl,
    FunctionDef,
    IfDef,
    Include,
    Namespace,
    StaticAssert,
    Struct,
    TemplateDecl,
    UsingAlias,
    UsingDeclaration,
    UsingDirective,
    VarDecl,
)
from .expr import (
    BinOp,
    BoolLit,
    BraceInit,
    Call,
    Cond,
    EnumValue,
    FloatLit,
    FuncParam,
    Id,
    Index,
    IntLit,
    Lambda,
    Member,
    NullPtr,
    SizeOf,
    StaticCast,
    StrLit,
    UnOp,
    call,
    ident,
)
from .names import KEYWORDS, NameError_, header_path, identifier
from .printer import LINE_LIMIT, Printer, PrintError, c_string, required_headers, to_source
from .stmt import Break, Continue, ExprStmt, For, If, Repeated, Return, Throw, While
from .symbols import EnumSpec, Header, Symbol, split_qualname
from .templates import BindError, PackExpansion, Param, ParamRef, Signature, TemplateId
from .types import Array, Builtin, Const, LRef, Name, Ptr, TypeName, type_of

__all__ = [name for name in dir() if not name.startswith("_")]
