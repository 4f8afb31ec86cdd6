"""GEMM `multi_d`: E = op(A x B, D0[, D1]) through `GemmKernelMultiD`, as a patch on the shared graph.

Adds the D types and layouts, swaps the host-argument type, the epilogue problem (Ds and the
element-wise op) and the kernel, and adds a `launch` overload taking plain `GemmHostArgs` (it
forwards with null D pointers and zero D strides, for callers such as CK's dispatcher backend
that only know plain GEMM arguments). CK's multi-D kernel refuses k_batch > 1 (rule
split_k.unsupported), so the epilogue always writes with `set`.
"""

from __future__ import annotations

from ckast import nodes as n
from ckast.lower.cxx import constexpr
from ckast.lower.graph import Construct, KernelGraph, Scope

from .gemm import LAYOUTS, Gemm, epilogue_problem, ids


def patch(g: Gemm, graph: KernelGraph) -> None:
    p, c = g.p, g.c
    tup = p.template("tuple")
    graph.add(Construct("DConfig", "config", lambda s: [constexpr(g.index_t, "NumDTensor", c.num_d_tensors)]))
    graph.add(Construct("DLayout", "layout", lambda s: p.type(LAYOUTS[c.d_layout])))
    graph.add(Construct("DsDataType", "data_type", lambda s: n.type_of(tup(T=[s.ref("CDataType")] * c.num_d_tensors)),
                        uses=("CDataType",)))
    graph.add(Construct("DsLayout", "layout", lambda s: n.type_of(tup(T=[s.ref("DLayout")] * c.num_d_tensors)),
                        uses=("DLayout",)))
    graph.replace(Construct("HostArgs", "host_args", lambda s: g.t("GemmMultiDHostArgs", NumDTensor=ids("NumDTensor")),
                            uses=("DConfig",)))
    base = graph.construct("EpilogueProblem")
    graph.replace(Construct(
        "EpilogueProblem", "epilogue_problem",
        lambda s: epilogue_problem(g, s, ds=(s.ref("DsDataType"), s.ref("DsLayout")),
                                   op=p.type(c.elementwise_op)),
        uses=(*base.uses, "DsDataType", "DsLayout"), params=base.params,
    ))
    graph.replace(Construct("Kernel", "kernel", lambda s: g.t(
        "GemmKernelMultiD", TilePartitioner_=s.ref("TilePartitioner"), GemmPipeline_=s.ref("Pipeline"),
        EpiloguePipeline_=s.ref("Epilogue"),
    ), uses=("TilePartitioner", "Pipeline", "Epilogue")))
    graph.add(Construct("launch_plain", "launcher", lambda s: launch_plain(g, s), uses=("HostArgs", "launch"),
                        symbol="launch", entry_args="GemmHostArgs"))


def launch_plain(g: Gemm, s: Scope) -> n.FunctionDef:
    """`launch(const GemmHostArgs&, stream)`: the multi-D launch with no D tensors bound."""
    a = ids("args")
    fields = [
        n.Member(a, "a_ptr"), n.Member(a, "b_ptr"), n.BraceInit(None), n.Member(a, "e_ptr"), n.Member(a, "k_batch"),
        n.Member(a, "M"), n.Member(a, "N"), n.Member(a, "K"), n.Member(a, "stride_A"), n.Member(a, "stride_B"),
        n.BraceInit(None), n.Member(a, "stride_E"),
    ]
    body = [
        n.Comment("No D tensors: null D pointers and zero D strides."),
        n.VarDecl(n.Const(s.ref("HostArgs")), "multi_d_args", n.BraceInit(None, fields)),
        n.Return(n.Call(s.call_target("launch"), [ids("multi_d_args"), ids("stream")])),
    ]
    return n.FunctionDef("launch", n.Builtin("float"), g.host_params(g.p.type("GemmHostArgs")), body, static=True)
