"""The registration header of one run, built from the run's own kernel list (never a directory glob).

`register_all_<what>(gfx_arch, priority)` registers, through each kernel's wrapper factory, the
kernels of this run that were built for `gfx_arch`, and returns how many the registry accepted;
`<what>_count()` is the number of kernels in the run. Kernels are sorted by name, so the header
is byte-identical whatever order the run produced them in.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

import attrs

from ckast import nodes as n
from ckast.catalog import Profile

from .cxx import LICENSE

KERNEL = "ckast_kernel_name"
"""Stands for each kernel's name in the statement that registers it (`nodes.Repeated`)."""


@attrs.frozen
class Registered:
    name: str  # kernel name (its namespace under ckast::)
    arch: str
    wrapper: str  # wrapper header path, relative to the output root


def registration_header(kernels: Sequence[Registered], profile: Profile, what: str, namespace: str) -> n.File:
    """`register_all_<what>()` and `<what>_count()` for `kernels`."""
    ordered = sorted(kernels, key=lambda k: (k.arch, k.name))
    priority = profile.enum("DispatcherPriority")
    params = [
        n.FuncParam(n.LRef(n.Const(profile.type("string"))), "gfx_arch"),
        n.FuncParam(n.type_of(priority), "priority", profile.enum_value("DispatcherPriority", "Normal")),
    ]
    members = profile.record("Registry")
    registry = n.Id(n.Name((profile.symbol("Registry"), members.method("Registry", "instance").name)))
    body: list[n.Stmt] = [
        n.VarDecl(n.LRef(n.Builtin("auto")), "registry", n.Call(registry, [])),
        n.VarDecl(n.Builtin("int"), "registered", n.IntLit(0), brace=True),
    ]
    method = members.method("Registry", "register_kernel")
    args = method.bind("Registry::register_kernel", instance=n.call(f"{KERNEL}::make_instance"),
                       priority=n.ident("priority"))
    register = n.If(n.call(n.Member(n.ident("registry"), method.name), *args),
                    [n.ExprStmt(n.UnOp("++", n.ident("registered")))])
    for arch, group in groupby(ordered, key=lambda k: k.arch):
        body.append(n.If(n.BinOp("==", n.ident("gfx_arch"), n.StrLit(arch)),
                         [n.Repeated(register, KERNEL, [k.name for k in group])]))
    body.append(n.Return(n.ident("registered")))
    register = n.FunctionDef(f"register_all_{what}", n.Builtin("int"), params, body, inline=True)
    count = n.FunctionDef(f"{what}_count", n.Builtin("int"), [], [n.Return(n.IntLit(len(ordered)))],
                          inline=True, constexpr=True)
    decls = [
        n.Comment("Registers this run's kernels built for gfx_arch; returns how many the registry accepted."),
        register,
        n.Comment("Number of kernels in this run (all archs)."),
        count,
    ]
    body_ns = [n.Namespace(namespace, decls)]
    includes = (*n.required_headers(n.Namespace("x", body_ns)), *(n.Header(k.wrapper) for k in sorted(kernels, key=lambda k: k.wrapper)))
    return n.File(body_ns, includes=includes, preamble=LICENSE)
