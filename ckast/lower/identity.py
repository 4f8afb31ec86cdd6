"""The one identity function: kernel name, registry key and file stem all come from here.

A name is a readable prefix of the main knobs plus a short hash of *every* knob that applies to
the kernel (the canonical JSON of the config), so two different configs never share a name and
identical configs deduplicate. Names are never parsed back into configs.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from typing import Any

import attrs

from ckast.arch.rules import GEMM_VARIANTS_WITHOUT_SPLIT_K, STREAM_K
from ckast.config import as_dict

MAX_NAME = 200
HASH_LEN = 10
NAMESPACE = "ckast"
"""Every kernel lives in `ckast::<name>`, in a struct `LAUNCHER` with a static `launch`."""
LAUNCHER = "Launcher"


def config_digest(config: object) -> str:
    """Stable hash of all applicable knobs (key order fixed, independent of the hash seed)."""
    canonical = json.dumps(as_dict(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:HASH_LEN]


def _flags(c) -> list[str]:
    """Readable tokens for the switches that are set (the hash covers every knob anyway)."""
    out = [c.streamk_reduction] if c.variant == STREAM_K else []
    pads = "".join(d for d in "mnk" if getattr(c, f"pad_{d}"))
    if pads:
        out.append(f"pad{pads}")
    if c.grouped:  # a quant family's multi-group kernel (CK's QuantGroupedGemmKernel)
        out.append("grouped")
    if c.persistent:
        out.append("persistent")
    if c.split_k is False and c.variant not in GEMM_VARIANTS_WITHOUT_SPLIT_K:
        out.append("nosplitk")
    if c.elementwise_op is not None:
        out.append(f"{c.elementwise_op}_d{c.num_d_tensors}")
    if c.variant == "aquant":  # CK's quant group token (`qg1x1x128`) and scale-preshuffle suffix
        out.append(f"qg1x1x{c.aquant_group_k}")
    if c.preshuffle_aquant:
        out.append("preshufflequant")
    return out


def _conv_flags(c) -> list[str]:
    """Readable tokens for the conv features that are not at their default (CK's suffix order)."""
    out = []
    if (c.vector_size_a, c.vector_size_b, c.vector_size_c) != (4, 8, 8):
        out.append(f"vec{c.vector_size_a}_{c.vector_size_b}_{c.vector_size_c}")
    if c.num_wave_groups != 1:
        out.append(f"wg{c.num_wave_groups}")
    if c.num_groups_to_merge != 1:
        out.append(f"gm{c.num_groups_to_merge}")
    if c.double_smem_buffer:
        out.append("dsb")
    if c.two_stage:
        out.append("2stage")
    if c.specialization != "default":
        out.append(c.specialization)
    if c.explicit_gemm:
        out.append("explicit_gemm")
    if c.streamk_enabled:
        out.append(f"streamk_{c.streamk_reduction}" + ("_persistent" if c.streamk_persistent else ""))
    if c.split_image:
        out.append("large_tensor")
    return out


def kernel_name(config) -> str:
    """`gemm_fp16_rcr_standard_gfx942_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16[_flags]_<hash>`.

    Grouped conv: `grouped_conv_<dtype>_<layout>_<variant>_<arch>_...` likewise (the layout carries
    the spatial rank); depthwise kernels name their spatial tile, filter, stride, pad, batch, sub-tile
    and vectors instead of the GEMM tile.
    """
    symbolic = getattr(config, "symbolic_name", None)
    if symbolic is not None:  # a config lowered for a template (ckast.render.slots): its name is a slot
        return symbolic
    return _KNOWN.get(config) or _kernel_name(config)


_KNOWN: dict[Any, str] = {}


def known_names(named: Iterable[tuple[Any, str]]) -> None:
    """Take (config, name) pairs this function gave in an earlier process with the same ckast files (the
    library index, `ckast.library.index`), so this process does not compute them again."""
    _KNOWN.update(named)


@functools.lru_cache(maxsize=1 << 16)
def _kernel_name(c) -> str:  # configs are frozen: a library names each once (build, render, registration)
    layout = c.layout + (c.d_layout or "")
    parts = [c.kind, c.datatype, layout, c.variant, c.arch]
    if c.tile_m is not None:
        parts += [
            c.pipeline, c.epilogue, c.scheduler,
            f"{c.tile_m}x{c.tile_n}x{c.tile_k}",
            f"{c.warp_m}x{c.warp_n}x{c.warp_k}",
            f"{c.warp_tile_m}x{c.warp_tile_n}x{c.warp_tile_k}",
        ]
    if c.kind == "gemm":
        parts += _flags(c)
    elif c.tile_m is not None:
        parts += _conv_flags(c)
    else:
        parts += [f"{c.tile_h}x{c.tile_w}", f"f{c.filt}", f"s{c.str_h}x{c.str_w}", f"p{c.pad_h}x{c.pad_w}",
                  f"nb{c.nbatch}", f"sub{c.sub_h}x{c.sub_w}", f"vec{c.in_vec}_{c.out_vec}"]
    prefix = "_".join(str(p) for p in parts)[: MAX_NAME - HASH_LEN - 1]
    return f"{prefix}_{config_digest(c)}"


WRAPPER_DIR = "dispatcher_wrappers"


def wrapper_path(name: str) -> str:
    """Path of kernel `name`'s dispatcher wrapper, relative to the output root."""
    return f"{WRAPPER_DIR}/dispatcher_wrapper_{name}.hpp"


def launcher(name: str) -> str:
    """Qualified name of kernel `name`'s launcher struct."""
    return f"{NAMESPACE}::{name}::{LAUNCHER}"


STREAM_CONFIG = "ck_tile::stream_config"


@attrs.frozen
class EntryPoint:
    """A launcher function `float function(const args&, const ck_tile::stream_config&)`.

    Overloads differ in `args` (a qualified type name), so a compile check can call each one.
    """

    function: str
    args: str

    def as_dict(self) -> dict[str, str]:
        return {"function": self.function, "args": self.args}
