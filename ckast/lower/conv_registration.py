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
CK_NAMESPACE = ("ck_tile", "dispatcher")
"""CK's profiler declares and calls the register functions in `ck_tile::dispatcher`."""


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


def _in_ck(decls: list[n.Decl]) -> n.Namespace:
    return n.Namespace(CK_NAMESPACE[0], [n.Namespace(CK_NAMESPACE[1], decls)])


def _registry_params(profile: Profile) -> list[n.FuncParam]:
    return [n.FuncParam(n.LRef(profile.type("GroupedConvRegistry")), "registry"),
            n.FuncParam(n.LRef(n.Const(profile.type("string"))), "arch")]


def _arch_param(profile: Profile) -> list[n.FuncParam]:
    return [n.FuncParam(n.LRef(n.Const(profile.type("string"))), "arch")]


def _chunk_fn(direction: str, index: int, profile: Profile, body: list[n.Stmt] | None) -> n.FunctionDef:
    return n.FunctionDef(f"register_grouped_conv_{direction}_chunk_{index}", n.Builtin("void"), _registry_params(profile), body)


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
        name = f"register_all_grouped_conv_{direction}_kernels"
        count = sum(len(group) for group in chunks[direction])
        decls += [
            n.Comment(f"Registers this run's {direction} kernels built for `arch` (the run has {count} of them, all archs)."),
            n.FunctionDef(name, n.Builtin("void"), _registry_params(profile), None),
            n.FunctionDef(name, n.Builtin("void"), _arch_param(profile), None),
            n.FunctionDef(f"grouped_conv_{direction}_kernel_count", n.Builtin("int"), [], [n.Return(n.IntLit(count))],
                          inline=True, constexpr=True),
        ]
    body = [_in_ck(decls)]
    return n.File(body, includes=n.required_headers(n.Namespace("x", body)), preamble=LICENSE)


def _chunk(direction: str, index: int, group: Sequence[ConvRegistered], profile: Profile) -> n.File:
    body: list[n.Stmt] = []
    register = n.ExprStmt(n.call(n.Member(n.ident("registry"), "register_kernel"),
                                 n.call(f"ckast::{KERNEL}::dispatcher_key"), n.call(f"ckast::{KERNEL}::make_instance")))
    for arch, same_arch in groupby(sorted(group, key=lambda k: (k.arch, k.name)), key=lambda k: k.arch):
        body.append(n.If(n.BinOp("==", n.ident("arch"), n.StrLit(arch)),
                         [n.Repeated(register, KERNEL, [k.name for k in same_arch])]))
    decls = [_chunk_fn(direction, index, profile, body)]
    wrappers = [n.Header(k.wrapper) for k in sorted(group, key=lambda k: k.wrapper)]
    ns = [_in_ck(decls)]
    return n.File(ns, includes=(*n.required_headers(n.Namespace("x", ns)), *wrappers), preamble=LICENSE, pragma_once=False)


def _register_all(chunks: dict[str, list[list[ConvRegistered]]], profile: Profile) -> n.File:
    decls: list[n.Decl] = []
    for direction in DIRECTIONS:
        decls += [_chunk_fn(direction, i, profile, None) for i in range(len(chunks[direction]))]
    instance = n.Id(n.Name((profile.symbol("GroupedConvRegistry"), "instance")))
    for direction in DIRECTIONS:
        name = f"register_all_grouped_conv_{direction}_kernels"
        calls = [n.ExprStmt(n.call(f"register_grouped_conv_{direction}_chunk_{i}", n.ident("registry"), n.ident("arch")))
                 for i in range(len(chunks[direction]))]
        decls += [
            n.FunctionDef(name, n.Builtin("void"), _registry_params(profile), calls),
            n.FunctionDef(name, n.Builtin("void"), _arch_param(profile),
                          [n.ExprStmt(n.call(name, n.Call(instance, []), n.ident("arch")))]),
        ]
    ns = [_in_ck(decls)]
    includes = (*n.required_headers(n.Namespace("x", ns)), n.Header(HEADER))
    return n.File(ns, includes=includes, preamble=LICENSE, pragma_once=False)
