"""Per-kernel dispatcher wrapper of a grouped-conv header, and the conv registry key.

`ckast::<name>::dispatcher_key()` fills CK's string-typed `GroupedConvKernelKey` from the config
(never from the file name), and `make_instance()` wraps the launcher in a
`GroupedConvKernelInstance` through CK's backend factories (`make_conv_<dir>_run_fn<Launcher, N>`
and `..._is_supported_fn`), with the instance string under `CK_EXPERIMENTAL_BUILDER`.
"""

from __future__ import annotations

from typing import Any

from ckast import nodes as n
from ckast.catalog import Profile
from ckast.lower.cxx import LICENSE
from ckast.lower.identity import LAUNCHER, NAMESPACE

from . import conv_depthwise
from .conv import DEPTHWISE, Conv, block_per_cu, direction
from .gemm_wrapper import key_statements


def conv_key(c) -> dict[str, Any]:
    """`GroupedConvKernelKey` field -> value (str, int, bool; `op` is a GroupedConvOp enumerator name).

    The key has no field for two-stage, explicit GEMM, the double LDS buffer or the LDS policy; a
    run that holds two kernels differing only there is refused (rule registry.key_unique).
    """
    signature = {
        "dtype_in": c.datatype, "dtype_wei": c.datatype, "dtype_out": c.datatype,
        "layout": c.layout, "ndim_spatial": c.ndim_spatial, "op": direction(c.variant).op,
    }
    if c.variant == DEPTHWISE:
        return {**signature, **depthwise_key(c), "arch": c.arch}
    streamk = bool(c.streamk_enabled)
    return {
        **signature,
        "tile_m": c.tile_m, "tile_n": c.tile_n, "tile_k": c.tile_k,
        "wave_m": c.warp_m, "wave_n": c.warp_n, "wave_k": c.warp_k,
        "warp_m": c.warp_tile_m, "warp_n": c.warp_tile_n, "warp_k": c.warp_tile_k,
        "pipeline": c.pipeline, "scheduler": c.scheduler, "epilogue": c.epilogue,
        "vector_size_a": c.vector_size_a, "vector_size_b": c.vector_size_b, "vector_size_c": c.vector_size_c,
        "block_per_cu": block_per_cu(c), "num_wave_groups": c.num_wave_groups,
        "num_groups_to_merge": c.num_groups_to_merge, "specialization": c.specialization,
        "large_tensor": c.split_image, "streamk_enabled": streamk,
        "streamk_reduction": c.streamk_reduction if streamk else "none",
        "streamk_persistent": streamk and bool(c.streamk_persistent),
        "arch": c.arch,
    }


def depthwise_key(c) -> dict[str, Any]:
    """CK's packing of a depthwise kernel into the GEMM-shaped key fields (its registration codegen's
    convention): spatial tile -> tile_m/n, filter -> tile_k, stride -> wave_m/n, pad -> warp_m/n,
    images per block -> warp_k, sub-tile -> specialization, pipeline "depthwise"."""
    return {
        "tile_m": c.tile_h, "tile_n": c.tile_w, "tile_k": c.filt,
        "wave_m": c.str_h, "wave_n": c.str_w, "wave_k": 0,
        "warp_m": c.pad_h, "warp_n": c.pad_w, "warp_k": c.nbatch,
        "pipeline": "depthwise", "scheduler": "none", "epilogue": "none",
        "vector_size_a": c.in_vec, "vector_size_b": c.in_vec, "vector_size_c": c.out_vec,
        "block_per_cu": conv_depthwise.BLOCK_PER_CU, "num_wave_groups": 1, "num_groups_to_merge": 1,
        "specialization": f"sub{c.sub_h}x{c.sub_w}",
    }


def wrapper_header(config, profile: Profile, kernel_header: str) -> n.File:
    """`dispatcher_wrappers/dispatcher_wrapper_<name>.hpp` for one conv kernel."""
    cv = Conv.of(config, profile)
    short = cv.d.short
    key_type = profile.type("GroupedConvKernelKey")
    key_fn = n.FunctionDef("dispatcher_key", key_type, [], [
        n.VarDecl(key_type, "key"),
        *key_statements(profile, "GroupedConvKernelKey", conv_key(config)),
        n.Return(n.ident("key")),
    ], inline=True)
    launcher = n.type_of(LAUNCHER)

    def factory(kind: str) -> n.Expr:
        target = profile.template(f"make_conv_{short}_{kind}_fn")(LauncherType=launcher, NDim=config.ndim_spatial)
        return n.Call(n.Id(n.Name((target,))), [])

    string = profile.type("string")
    builder = profile.template("get_instance_string")(LauncherType=launcher)
    instance_string = n.IfDef(profile.call("get_instance_string").guard, [
        n.FunctionDef("instance_string", string, [], [n.Return(n.Call(n.Id(n.Name((builder,))), []))], inline=True),
    ], [
        n.FunctionDef("instance_string", string, [], [n.Return(n.BraceInit(None))], inline=True),
    ])
    make_shared = n.Id(n.Name((profile.template("make_shared")(T=profile.type("GroupedConvKernelInstance")),)))
    args = profile.record("GroupedConvKernelInstance").construct(
        "GroupedConvKernelInstance", key=n.call("dispatcher_key"), name=n.ident(LAUNCHER, "kName"),
        run_fn=factory("run"), is_supported_fn=factory("is_supported"), instance_string=n.call("instance_string"))
    make_instance = n.FunctionDef("make_instance", profile.type("GroupedConvKernelInstancePtr"), [], [
        n.Return(n.Call(make_shared, args)),
    ], inline=True)
    body = [n.Namespace(NAMESPACE, [n.Namespace(cv.name, [
        n.Comment("CK dispatcher key: every field comes from the config."),
        key_fn,
        n.Comment("CK's builder instance string (empty unless CK_EXPERIMENTAL_BUILDER is defined)."),
        instance_string,
        make_instance,
    ])])]
    includes = (*n.required_headers(n.Namespace("x", body)), n.Header(kernel_header))
    return n.File(body, includes=includes, preamble=LICENSE)


def key_of(config) -> tuple:
    """The registry key of a conv config as a hashable value (for the uniqueness check of a run)."""
    return tuple(conv_key(config).items())
