"""The dispatcher wrapper of a GEMM header.

The wrapper's factory `ckast::<name>::make_instance()` fills CK's dispatcher `KernelKey` from the
config, every field that changes the kernel's behaviour (pads, double buffer, persistent, block
size, element-wise op, D count, accumulator type, Stream-K's reduction strategy, arch), and returns
a `GeneratedKernelInstance` of the kernel's launcher (a Stream-K launcher takes plain `GemmHostArgs`
too). Paths in `#include`s are relative to the output root, which a build puts on the include path
next to CK's. CK's key and dispatcher `Problem` have no batch: a batched kernel's key is that of the
standard kernel of its knobs, and the dispatcher runs it through its plain-arguments `launch` (one
batch).
"""

from __future__ import annotations

from typing import Any

from ckast import nodes as n
from ckast.arch import DTYPES
from ckast.arch.rules import STREAM_K
from ckast.catalog import Profile
from ckast.lower.cxx import LICENSE
from ckast.lower.identity import LAUNCHER, NAMESPACE

from .common import block_size
from .gemm import Gemm, ids

DISPATCHER_DTYPES = {"fp16": "FP16", "bf16": "BF16", "fp32": "FP32", "fp8": "FP8", "bf8": "BF8", "int8": "INT8",
                     "int32": "INT32"}
DISPATCHER_LAYOUTS = {"r": "RowMajor", "c": "ColMajor"}
DISPATCHER_PIPELINES = {"mem": "Mem", "compv3": "CompV3", "compv4": "CompV4", "compv5": "CompV5",
                        "preshufflev2": "PreShuffleV2"}
DISPATCHER_SCHEDULERS = {"intrawave": "Intrawave", "interwave": "Interwave", "default": "Auto"}
DISPATCHER_EPILOGUES = {"cshuffle": "CShuffle", "default": "Default"}
SPLIT_K_FIELD = 1
"""`signature.split_k`: k_batch is a run-time argument, so the key records no fixed split (CK's value)."""


def key_literals(profile: Profile, record: str, values: dict[str, Any]) -> list[tuple[str, n.Expr]]:
    """(field, value) for each field of CK's kernel key `record` (a catalog record): the field must be
    one the catalog lists, and its value is written as the field's type wants it (an enumerator when
    the type is a catalog enum, a bool, an (m, n, k) brace list, a string or an int)."""
    members = profile.record(record)
    return [(path, _literal(profile, members.field(record, path).type, value)) for path, value in values.items()]


def key_statements(profile: Profile, record: str, values: dict[str, Any]) -> list[n.Stmt]:
    """`key.<field> = value;` for each of `key_literals`."""
    out: list[n.Stmt] = []
    for path, literal in key_literals(profile, record, values):
        target: n.Expr = ids("key")
        for part in path.split("."):
            target = n.Member(target, part)
        out.append(n.ExprStmt(n.BinOp("=", target, literal)))
    return out


def key_fields(g: Gemm) -> list[tuple[str, n.Expr]]:
    """(KernelKey field, value) for every field of CK's GEMM kernel key the wrapper sets."""
    return key_literals(g.p, "KernelKey", gemm_key(g.c))


def _literal(profile: Profile, ctype: str, value: Any) -> n.Expr:
    enum = profile.enum_of(ctype)
    if enum is not None:
        return profile.enum_value(enum.key, value)
    if isinstance(value, bool):
        return n.BoolLit(value)
    if isinstance(value, tuple):
        return n.BraceInit(None, [n.IntLit(v) for v in value])
    return n.StrLit(value) if isinstance(value, str) else n.IntLit(value)


def gemm_key(c) -> dict[str, Any]:
    """CK's GEMM `KernelKey` field -> value (str, int, bool, an (m, n, k) tuple; a field of an enum type
    holds an enumerator name): every config field that changes the kernel's behaviour but `split_k`
    (`SPLIT_K_FIELD`; a library refuses two kernels that differ only there, rule registry.key_unique)."""
    spec = DTYPES[c.datatype]
    layout_a, layout_b, layout_c = (DISPATCHER_LAYOUTS[x] for x in c.layout)
    return {
        "signature.dtype_a": DISPATCHER_DTYPES[c.datatype],
        "signature.dtype_b": DISPATCHER_DTYPES[c.datatype],
        "signature.dtype_c": DISPATCHER_DTYPES[spec.output],
        "signature.dtype_acc": DISPATCHER_DTYPES[spec.acc],
        "signature.layout_a": layout_a,
        "signature.layout_b": layout_b,
        "signature.layout_c": layout_c,
        "signature.transpose_a": False,
        "signature.transpose_b": False,
        "signature.grouped": False,
        "signature.split_k": SPLIT_K_FIELD,
        "signature.elementwise_op": c.elementwise_op or "PassThrough",
        "signature.num_d_tensors": c.num_d_tensors or 0,
        "signature.structured_sparsity": False,
        "algorithm.tile_shape": (c.tile_m, c.tile_n, c.tile_k),
        "algorithm.wave_shape": (c.warp_m, c.warp_n, c.warp_k),
        "algorithm.warp_tile_shape": (c.warp_tile_m, c.warp_tile_n, c.warp_tile_k),
        "algorithm.pipeline": DISPATCHER_PIPELINES[c.pipeline],
        "algorithm.scheduler": DISPATCHER_SCHEDULERS[c.scheduler],
        "algorithm.epilogue": DISPATCHER_EPILOGUES[c.epilogue],
        "algorithm.block_size": block_size(c),
        "algorithm.double_buffer": c.double_smem_buffer,
        "algorithm.persistent": c.persistent,
        "algorithm.preshuffle": c.variant == "preshuffle",
        "algorithm.transpose_c": False,
        "algorithm.num_wave_groups": c.num_wave_groups,
        "algorithm.pad_m": c.pad_m,
        "algorithm.pad_n": c.pad_n,
        "algorithm.pad_k": c.pad_k,
        **(streamk_key(c) if c.variant == STREAM_K else {}),
        "gfx_arch": c.arch,
    }


def streamk_key(c) -> dict[str, Any]:
    """The Stream-K fields of CK's key (its Stream-K dispatcher, rocm-libraries 5b6162ed): the reduction strategy,
    and whether the kernel needs a device workspace (linear and tree do)."""
    return {
        "algorithm.streamk": True,
        "algorithm.reduction_strategy": c.streamk_reduction.capitalize(),
        "algorithm.workspace": c.streamk_reduction != "atomic",
    }


def key_of(config) -> tuple:
    """The registry key of a GEMM config as a hashable value (for uniqueness checks)."""
    return tuple(gemm_key(config).items())


def wrapper_header(config, profile: Profile, kernel_header: str) -> n.File:
    """`dispatcher_wrappers/dispatcher_wrapper_<name>.hpp` for one kernel."""
    g = Gemm.of(config, profile)
    key_type = profile.type("KernelKey")
    key_fn = n.FunctionDef("dispatcher_key", key_type, [], [
        n.VarDecl(key_type, "key"),
        *key_statements(profile, "KernelKey", gemm_key(g.c)),
        n.Return(ids("key")),
    ], inline=True)
    instance = profile.template("GeneratedKernelInstance")(SelectedKernelType=n.type_of(LAUNCHER))
    make_shared = n.Id(n.Name((profile.template("make_shared")(T=n.type_of(instance)),)))
    args = profile.record("GeneratedKernelInstance").construct(
        "GeneratedKernelInstance", key=n.call("dispatcher_key"), name=n.ident(LAUNCHER, "kName"))
    factory = n.FunctionDef("make_instance", profile.type("KernelInstancePtr"), [], [
        n.Return(n.Call(make_shared, args)),
    ], inline=True)
    body = [n.Namespace(NAMESPACE, [n.Namespace(g.name, [
        n.Comment("CK dispatcher key: every config field that changes this kernel's behaviour."),
        key_fn,
        factory,
    ])])]
    includes = (*n.required_headers(n.Namespace("x", body)), n.Header(kernel_header))
    return n.File(body, includes=includes, preamble=LICENSE)
