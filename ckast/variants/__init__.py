"""Kernel variants: a shared graph per kind, patched per variant, lowered to one header per kernel."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ckast import nodes as n
from ckast.catalog import Profile
from ckast.lower.cxx import LICENSE
from ckast.lower.graph import KernelGraph
from ckast.arch.rules import QUANT_VARIANTS
from ckast.lower.identity import LAUNCHER, NAMESPACE, EntryPoint, kernel_name, launcher

from . import (conv, conv_depthwise, conv_streamk, conv_two_stage, conv_wrapper, gemm, gemm_batched, gemm_grouped,
               gemm_grouped_quant, gemm_multi_d, gemm_preshuffle, gemm_quant, gemm_streamk, gemm_wrapper)

Patch = Callable[[gemm.Gemm, KernelGraph], None]
GEMM_PATCHES: dict[str, tuple[Patch, ...]] = {
    "standard": (),
    "preshuffle": (gemm_preshuffle.patch,),
    "multi_d": (gemm_multi_d.patch,),
    "batched": (gemm_batched.patch,),
    "grouped": (gemm_grouped.patch,),
    "stream_k": (gemm_streamk.patch,),
    **{variant: (gemm_quant.patch,) for variant in QUANT_VARIANTS},
}
GEMM_CONTEXTS: dict[str, type[gemm.Gemm]] = {"stream_k": gemm_streamk.StreamK, "grouped": gemm_grouped.Grouped,
                                             **dict.fromkeys(QUANT_VARIANTS, gemm_quant.Quant)}
"""Variants whose kernel context differs from the shared graph's (others: `gemm.Gemm`)."""
GROUPED_QUANT_PATCHES: tuple[Patch, ...] = (gemm_quant.patch, gemm_grouped.patch)
"""A quant family's `grouped` kernel: the family's patch, then the grouped launcher's (CK's QuantGroupedGemmKernel)."""


def gemm_recipe(config) -> tuple[type[gemm.Gemm], tuple[Patch, ...]]:
    """The kernel context and the patches of a GEMM config."""
    if config.grouped:
        return gemm_grouped_quant.GroupedQuant, GROUPED_QUANT_PATCHES
    return GEMM_CONTEXTS.get(config.variant, gemm.Gemm), GEMM_PATCHES[config.variant]


ConvPatch = Callable[[conv.Conv, KernelGraph], None]


def conv_patches(config) -> tuple[ConvPatch, ...]:
    """Conv features that patch the shared implicit-GEMM graph."""
    if config.two_stage:
        return (conv_two_stage.patch,)
    return (conv_streamk.patch,) if config.streamk_enabled else ()


def kernel_graph(config, profile: Profile) -> tuple[str, KernelGraph]:
    """The kernel's name and its IR graph (shared graph + the variant's patches)."""
    if config.kind == "gemm":
        context, patches = gemm_recipe(config)
        g = context.of(config, profile)
        graph = gemm.shared_graph(g)
        for patch in patches:
            patch(g, graph)
        return g.name, graph
    if config.variant == conv.DEPTHWISE:
        dw = conv_depthwise.Depthwise.of(config, profile)
        return dw.name, conv_depthwise.graph(dw)
    cv = conv.Conv.of(config, profile)
    graph = conv.shared_graph(cv)
    for conv_patch in conv_patches(config):
        conv_patch(cv, graph)
    return cv.name, graph


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


def has_wrapper(config) -> bool:
    """Whether the kernel gets a dispatcher wrapper: CK's dispatcher registry holds no quantized GEMM (its
    `KernelKey` has no scale fields and its instances run `GemmHostArgs`; CK runs those through per-family
    libraries), so they get none."""
    return config.variant not in QUANT_VARIANTS


def wrapper_header(config, profile: Profile, kernel_header: str) -> n.File:
    """The kernel's dispatcher wrapper (registry key and instance factory)."""
    module = gemm_wrapper if config.kind == "gemm" else conv_wrapper
    return module.wrapper_header(config, profile, kernel_header)


KEY_RULE = "registry.key_unique"
KEY_RULE_REASON = "CK's dispatcher registry tells every kernel of a library apart by its key"
KEY_GAPS = {"gemm": ("KernelKey", "split_k or batched"),
            "grouped_conv": ("GroupedConvKernelKey", "two_stage, explicit_gemm, double_smem_buffer or lds_policy")}
"""Per kind: CK's registry key type and the knobs it holds no field for."""


def registry_key(config) -> tuple:
    """The kernel's CK registry key (`KernelKey` or `GroupedConvKernelKey`) as a hashable value; a kernel
    without a wrapper is in no registry, so its key is its own name."""
    if not has_wrapper(config):
        return ("unregistered", kernel_name(config))
    module = gemm_wrapper if config.kind == "gemm" else conv_wrapper
    return module.key_of(config)


def unit_source(kernel_header: str) -> n.File:
    """`<name>.cpp`: the one-line translation unit that compiles the kernel header on its own."""
    return n.File([], includes=[n.Header(kernel_header)], preamble=LICENSE, pragma_once=False)
