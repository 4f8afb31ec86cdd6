"""Kernel variants: a shared graph per kind, patched per variant, lowered to one header per kernel."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ckast import nodes as n
from ckast.catalog import Profile
from ckast.lower.cxx import LICENSE
from ckast.lower.graph import KernelGraph
from ckast.lower.identity import LAUNCHER, NAMESPACE, EntryPoint, launcher

from . import gemm, gemm_multi_d, gemm_preshuffle

Patch = Callable[[gemm.Gemm, KernelGraph], None]
GEMM_PATCHES: dict[str, tuple[Patch, ...]] = {
    "standard": (),
    "preshuffle": (gemm_preshuffle.patch,),
    "multi_d": (gemm_multi_d.patch,),
}


def kernel_graph(config, profile: Profile) -> tuple[str, KernelGraph]:
    """The kernel's name and its IR graph (shared graph + the variant's patches)."""
    if config.kind != "gemm" or config.variant not in GEMM_PATCHES:
        raise NotImplementedError(f"{config.kind} variant {config.variant!r} is not implemented yet")
    g = gemm.Gemm.of(config, profile)
    graph = gemm.shared_graph(g)
    for patch in GEMM_PATCHES[config.variant]:
        patch(g, graph)
    return g.name, graph


@attrs.frozen
class KernelUnit:
    """One kernel lowered: its name, header file and public entry points."""

    name: str
    header: n.File
    entry_points: tuple[EntryPoint, ...]


def lower_kernel(config, profile: Profile) -> KernelUnit:
    """The kernel header `namespace ckast::<name> { struct Launcher { ... }; }` and its entry points."""
    name, graph = kernel_graph(config, profile)
    body = [n.Namespace(NAMESPACE, [n.Namespace(name, [n.Struct(LAUNCHER, graph.lower())])])]
    header = n.File(body, includes=n.required_headers(n.Namespace("x", body)), preamble=LICENSE)
    entries = []
    for c in map(graph.construct, graph.order()):
        if c.entry_args is None:
            continue
        args = (f"{launcher(name)}::{c.entry_args}" if c.entry_args in graph.names()
                else "::".join(profile.symbol(c.entry_args).qualname))
        entries.append(EntryPoint(f"{launcher(name)}::{c.cxx_name}", args))
    return KernelUnit(name, header, tuple(entries))


def implemented(kind: str, variant: str) -> bool:
    return kind == "gemm" and variant in GEMM_PATCHES
