"""Grouped-conv registration of one run, built from the run's own kernel list (never a directory glob).

Files (paths relative to the output root):
- `include_all_grouped_conv_{fwd,bwd_data,bwd_weight}_kernels.hpp`: this run's headers per direction;
- `dispatcher_wrappers/register_all_grouped_conv_kernels.hpp`: CK's declarations of
  `register_all_grouped_conv_<dir>_kernels(registry, arch)` and `(arch)`, plus kernel counts;
- `dispatcher_wrappers/register_grouped_conv_<dir>_chunk_<i>.cpp`: one TU per `chunk_size` kernels,
  registering those built for `arch` (parallel builds; kernels live in their own namespaces, so any
  number of them compile together);
- `dispatcher_wrappers/register_all_grouped_conv_kernels.cpp`: calls every chunk.

Kernels are sorted by name, so every file is byte-identical whatever order the run produced them in.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

import attrs

from ckast import nodes as n
from ckast.catalog import Profile

from .cxx import LICENSE
from .identity import WRAPPER_DIR
from .registration import KERNEL

DIRECTIONS = ("fwd", "bwd_data", "bwd_weight")
HEADER = f"{WRAPPER_DIR}/register_all_grouped_conv_kernels.hpp"
SOURCE = f"{WRAPPER_DIR}/register_all_grouped_conv_kernels.cpp"


@attrs.frozen
class ConvRegistered:
    name: str  # kernel name (its namespace under ckast::)
    direction: str  # fwd, bwd_data or bwd_weight
    arch: str
    header: str  # kernel header and wrapper header, relative to the output root
    wrapper: str


def include_all_path(direction: str) -> str:
    return f"include_all_grouped_conv_{direction}_kernels.hpp"


def chunk_path(direction: str, index: int) -> str:
    return f"{WRAPPER_DIR}/register_grouped_conv_{direction}_chunk_{index}.cpp"


def _ck_register(direction: str) -> str:
    """The catalog key (and name) of CK's function that registers a direction's kernels."""
    return f"register_all_grouped_conv_{direction}_kernels"


def _in_ck(profile: Profile, decls: list[n.Decl]) -> n.Decl:
    """`decls` in the namespace where CK declares its register functions (its profiler calls them there)."""
    for part in reversed(profile.symbol(_ck_register(DIRECTIONS[0])).qualname[:-1]):
        decls = [n.Namespace(part, decls)]
    return decls[0]


def _params(profile: Profile, direction: str, *names: str) -> list[n.FuncParam]:
    """The parameters of CK's register function overload `(names)`, as the catalog declares them."""
    return [n.FuncParam(a.node, a.name) for a in profile.call(_ck_register(direction), *names).args]


def _chunk_fn(direction: str, index: int, profile: Profile, body: list[n.Stmt] | None) -> n.FunctionDef:
    return n.FunctionDef(f"register_grouped_conv_{direction}_chunk_{index}", n.Builtin("void"),
                         _params(profile, direction, "registry", "arch"), body)


def _chunks(kernels: Sequence[ConvRegistered], size: int) -> dict[str, list[list[ConvRegistered]]]:
    out: dict[str, list[list[ConvRegistered]]] = {}
    for direction in DIRECTIONS:
        mine = sorted((k for k in kernels if k.direction == direction), key=lambda k: k.name)
        out[direction] = [mine[i:i + size] for i in range(0, len(mine), size)]
    return out


def registration_files(kernels: Sequence[ConvRegistered], profile: Profile, chunk_size: int) -> list[tuple[str, n.File]]:
    """Every per-run conv registration file, as (path, file)."""
    chunks = _chunks(kernels, chunk_size)
    files: list[tuple[str, n.File]] = []
    for direction in DIRECTIONS:
        headers = sorted(k.header for group in chunks[direction] for k in group)
        files.append((include_all_path(direction), n.File([], includes=[n.Header(h) for h in headers], preamble=LICENSE)))
    files.append((HEADER, _declarations(chunks, profile)))
    for direction in DIRECTIONS:
        for index, group in enumerate(chunks[direction]):
            files.append((chunk_path(direction, index), _chunk(direction, index, group, profile)))
    files.append((SOURCE, _register_all(chunks, profile)))
    return files


def _declarations(chunks: dict[str, list[list[ConvRegistered]]], profile: Profile) -> n.File:
    decls: list[n.Decl] = []
    for direction in DIRECTIONS:
        name = _ck_register(direction)
        count = sum(len(group) for group in chunks[direction])
        decls += [
            n.Comment(f"Registers this run's {direction} kernels built for `arch` (the run has {count} of them, all archs)."),
            n.FunctionDef(name, n.Builtin("void"), _params(profile, direction, "registry", "arch"), None),
            n.FunctionDef(name, n.Builtin("void"), _params(profile, direction, "arch"), None),
            n.FunctionDef(f"grouped_conv_{direction}_kernel_count", n.Builtin("int"), [], [n.Return(n.IntLit(count))],
                          inline=True, constexpr=True),
        ]
    body = [_in_ck(profile, decls)]
    return n.File(body, includes=n.required_headers(n.Namespace("x", body)), preamble=LICENSE)


def _chunk(direction: str, index: int, group: Sequence[ConvRegistered], profile: Profile) -> n.File:
    body: list[n.Stmt] = []
    method = profile.record("GroupedConvRegistry").method("GroupedConvRegistry", "register_kernel")
    args = method.bind("GroupedConvRegistry::register_kernel", key=n.call(f"ckast::{KERNEL}::dispatcher_key"),
                       instance=n.call(f"ckast::{KERNEL}::make_instance"))
    register = n.ExprStmt(n.call(n.Member(n.ident("registry"), method.name), *args))
    for arch, same_arch in groupby(sorted(group, key=lambda k: (k.arch, k.name)), key=lambda k: k.arch):
        body.append(n.If(n.BinOp("==", n.ident("arch"), n.StrLit(arch)),
                         [n.Repeated(register, KERNEL, [k.name for k in same_arch])]))
    decls = [_chunk_fn(direction, index, profile, body)]
    wrappers = [n.Header(k.wrapper) for k in sorted(group, key=lambda k: k.wrapper)]
    ns = [_in_ck(profile, decls)]
    return n.File(ns, includes=(*n.required_headers(n.Namespace("x", ns)), *wrappers), preamble=LICENSE, pragma_once=False)


def _register_all(chunks: dict[str, list[list[ConvRegistered]]], profile: Profile) -> n.File:
    decls: list[n.Decl] = []
    for direction in DIRECTIONS:
        decls += [_chunk_fn(direction, i, profile, None) for i in range(len(chunks[direction]))]
    method = profile.record("GroupedConvRegistry").method("GroupedConvRegistry", "instance")
    instance = n.Id(n.Name((profile.symbol("GroupedConvRegistry"), method.name)))
    for direction in DIRECTIONS:
        name = _ck_register(direction)
        calls = [n.ExprStmt(n.call(f"register_grouped_conv_{direction}_chunk_{i}", n.ident("registry"), n.ident("arch")))
                 for i in range(len(chunks[direction]))]
        decls += [
            n.FunctionDef(name, n.Builtin("void"), _params(profile, direction, "registry", "arch"), calls),
            n.FunctionDef(name, n.Builtin("void"), _params(profile, direction, "arch"),
                          [n.ExprStmt(n.call(name, n.Call(instance, []), n.ident("arch")))]),
        ]
    ns = [_in_ck(profile, decls)]
    includes = (*n.required_headers(n.Namespace("x", ns)), n.Header(HEADER))
    return n.File(ns, includes=includes, preamble=LICENSE, pragma_once=False)
