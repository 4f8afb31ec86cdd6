"""The dispatcher wrapper of a GEMM header.

The wrapper's factory `ckast::<name>::make_instance()` fills CK's dispatcher `KernelKey` from the
config, every field that changes the kernel's behaviour (pads, double buffer, persistent, block
size, element-wise op, D count, accumulator type, arch), and returns a `GeneratedKernelInstance`
of the kernel's launcher. Paths in `#include`s are relative to the output root, which a build puts
on the include path next to CK's.
"""

from __future__ import annotations

from ckast import nodes as n
from ckast.arch import DTYPES
from ckast.catalog import Profile
from ckast.lower.cxx import LICENSE
from ckast.lower.identity import LAUNCHER, NAMESPACE

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


def assign(path: str, value: n.Expr) -> n.Stmt:
    """`key.<path> = value;`."""
    target: n.Expr = ids("key")
    for part in path.split("."):
        target = n.Member(target, part)
    return n.ExprStmt(n.BinOp("=", target, value))


def _triple(*values: int) -> n.Expr:
    return n.BraceInit(None, [n.IntLit(v) for v in values])


def key_fields(g: Gemm) -> list[tuple[str, n.Expr]]:
    """(KernelKey field, value) for every field of CK's GEMM kernel key."""
    c, p = g.c, g.p
    spec = DTYPES[c.datatype]

    def ev(enum: str, value: str) -> n.Expr:
        return p.enum_value(enum, value)

    def dtype(key: str) -> n.Expr:
        return ev("DispatcherDataType", DISPATCHER_DTYPES[key])

    layout_a, layout_b, layout_c = (ev("DispatcherLayout", DISPATCHER_LAYOUTS[x]) for x in c.layout)
    return [
        ("signature.dtype_a", dtype(c.datatype)),
        ("signature.dtype_b", dtype(c.datatype)),
        ("signature.dtype_c", dtype(spec.output)),
        ("signature.dtype_acc", dtype(spec.acc)),
        ("signature.layout_a", layout_a),
        ("signature.layout_b", layout_b),
        ("signature.layout_c", layout_c),
        ("signature.transpose_a", n.BoolLit(False)),
        ("signature.transpose_b", n.BoolLit(False)),
        ("signature.grouped", n.BoolLit(False)),
        ("signature.split_k", n.IntLit(SPLIT_K_FIELD)),
        ("signature.elementwise_op", n.StrLit(c.elementwise_op or "PassThrough")),
        ("signature.num_d_tensors", n.IntLit(c.num_d_tensors or 0)),
        ("signature.structured_sparsity", n.BoolLit(False)),
        ("algorithm.tile_shape", _triple(c.tile_m, c.tile_n, c.tile_k)),
        ("algorithm.wave_shape", _triple(c.warp_m, c.warp_n, c.warp_k)),
        ("algorithm.warp_tile_shape", _triple(c.warp_tile_m, c.warp_tile_n, c.warp_tile_k)),
        ("algorithm.pipeline", ev("DispatcherPipeline", DISPATCHER_PIPELINES[c.pipeline])),
        ("algorithm.scheduler", ev("DispatcherScheduler", DISPATCHER_SCHEDULERS[c.scheduler])),
        ("algorithm.epilogue", ev("DispatcherEpilogue", DISPATCHER_EPILOGUES[c.epilogue])),
        ("algorithm.block_size", n.IntLit(g.block_size)),
        ("algorithm.double_buffer", n.BoolLit(c.double_smem_buffer)),
        ("algorithm.persistent", n.BoolLit(c.persistent)),
        ("algorithm.preshuffle", n.BoolLit(c.variant == "preshuffle")),
        ("algorithm.transpose_c", n.BoolLit(False)),
        ("algorithm.num_wave_groups", n.IntLit(c.num_wave_groups)),
        ("algorithm.pad_m", n.BoolLit(c.pad_m)),
        ("algorithm.pad_n", n.BoolLit(c.pad_n)),
        ("algorithm.pad_k", n.BoolLit(c.pad_k)),
        ("gfx_arch", n.StrLit(c.arch)),
    ]


def wrapper_header(config, profile: Profile, kernel_header: str) -> n.File:
    """`dispatcher_wrappers/dispatcher_wrapper_<name>.hpp` for one kernel."""
    g = Gemm.of(config, profile)
    key_type = profile.type("KernelKey")
    key_fn = n.FunctionDef("dispatcher_key", key_type, [], [
        n.VarDecl(key_type, "key"),
        *(assign(field, value) for field, value in key_fields(g)),
        n.Return(ids("key")),
    ], inline=True)
    instance = profile.template("GeneratedKernelInstance")(SelectedKernelType=n.type_of(LAUNCHER))
    make_shared = n.Id(n.Name((profile.template("make_shared")(T=n.type_of(instance)),)))
    factory = n.FunctionDef("make_instance", profile.type("KernelInstancePtr"), [], [
        n.Return(n.Call(make_shared, [n.call("dispatcher_key"), n.ident(LAUNCHER, "kName")])),
    ], inline=True)
    body = [n.Namespace(NAMESPACE, [n.Namespace(g.name, [
        n.Comment("CK dispatcher key: every config field that changes this kernel's behaviour."),
        key_fn,
        factory,
    ])])]
    includes = (*n.required_headers(n.Namespace("x", body)), n.Header(kernel_header))
    return n.File(body, includes=includes, preamble=LICENSE)
