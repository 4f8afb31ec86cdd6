"""The quant families' `grouped` kernels: CK Tile's `QuantGroupedGemmKernel`, group_count quantized GEMMs of
their own shapes in one launch, as the composition of the two patches (`gemm_quant`, then `gemm_grouped`).

The quant patch builds the family's types, traits, pipeline and epilogue; the grouped patch its launcher over a
vector of `QuantGroupedGemmHostArgs` (each group's A, B, C and scale pointers, M, N, K, QK_A, QK_B and strides),
the device workspace of `GetWorkSpaceSize(group_count)` bytes and the grid (`MaxOccupancyGridSize` persistent,
else `GridSize(groups)`). This context names CK's grouped quant kernel and host arguments and adds the quant
type. A persistent kernel picks hot loop and tail per group on the device, so its pipeline problem takes none and
its traits say `UsePersistentKernel`; a non-persistent one (ck-2026.06) takes the first group's, as the grouped
launcher checks. A `launch` overload taking the quant kernel's `QuantGemmHostArgs` runs one group.

Read at: `ck_tile/ops/gemm_quant/kernel/grouped_gemm_quant_kernel.hpp` of the amd-aiter 0.1.7.post2.dev18 wheel
(ck-2025.11: persistent only; BQuantGrouped, RowColQuant, TensorQuant) and of ROCm/rocm-libraries
`projects/composablekernel/include` @705d00c1b483a354153dbe0faeeff9a7c22b731c (ck-2026.06: also non-persistent,
AQuantGrouped and ABQuantGrouped); CK's launcher, ROCm/composable_kernel
`test/ck_tile/grouped_gemm_quant/test_grouped_gemm_util_quant.hpp` (persistent traits, a problem without hot loop
and tail, `MaxOccupancyGridSize`). Rules profile.grouped_quant_* and grouped_quant.* check what each profile's
kernel takes.
"""

from __future__ import annotations

import functools

import attrs

from ckast import nodes as n
from ckast.lower.graph import Scope

from .common import ids
from .gemm_grouped import GROUP, Grouped, group_field
from .gemm_quant import QUANT_TYPES, Quant


@attrs.frozen
class GroupedQuant(Grouped, Quant):
    """The grouped quant context: the grouped launcher over CK's grouped quant kernel and host arguments."""

    group_args_key = "QuantGroupedGemmHostArgs"
    kernel_key = "QuantGroupedGemmKernel"
    plain_args_key = "QuantGemmHostArgs"

    def kernel_args(self, s: Scope) -> dict[str, object]:
        return dict(super().kernel_args(s), QuantType_=self.p.enum_value("QuantType", QUANT_TYPES[self.c.variant]))

    def plain_group(self, args: n.Expr) -> dict[str, n.Expr] | None:
        """One group of the quant kernel's `QuantGemmHostArgs` (its output is `c_ptr`, `stride_C`)."""
        member = functools.partial(n.Member, args)
        return dict(a_ptr_=member("a_ptr"), b_ptr_=member("b_ptr"), e_ptr_=member("c_ptr"), aq_ptr_=member("aq_ptr"),
                    bq_ptr_=member("bq_ptr"), k_batch_=member("k_batch"), M_=member("M"), N_=member("N"),
                    K_=member("K"), QK_A_=member("QK_A"), QK_B_=member("QK_B"), stride_A_=member("stride_A"),
                    stride_B_=member("stride_B"), stride_E_=member("stride_C"), stride_AQ_=member("stride_AQ"),
                    stride_BQ_=member("stride_BQ"))

    def group_descriptors(self, s: Scope) -> list[n.Stmt]:
        """The kernel's `MakeKargs`, where it compiles; else (ck-2025.11, whose `MakeKargs` initializes
        `QuantGemmKernelArgs` in another member order) the same descriptors built here: each non-empty group's
        `QuantGemmKernel::MakeKernelArgs` of its `QuantGemmHostArgs`, with its range of the 1-D grid."""
        if self.p.feature("grouped_quant_make_kargs"):
            return super().group_descriptors(s)
        index, this = self.index_t, n.Index(ids("args"), GROUP)
        field = functools.partial(group_field, self, this)
        host = self.p.record("QuantGemmHostArgs").construct(
            "QuantGemmHostArgs", a_ptr_=field("a_ptr"), b_ptr_=field("b_ptr"), c_ptr_=field("e_ptr"),
            aq_ptr_=field("aq_ptr"), bq_ptr_=field("bq_ptr"), k_batch_=field("k_batch"), M_=field("M"),
            N_=field("N"), K_=field("K"), QK_A_=field("QK_A"), QK_B_=field("QK_B"), stride_A_=field("stride_A"),
            stride_B_=field("stride_B"), stride_C_=field("stride_E"), stride_AQ_=field("stride_AQ"),
            stride_BQ_=field("stride_BQ"))
        end = n.BinOp("+", ids("grid_size"), ids("group_blocks"))
        empty = n.BinOp("||", n.BinOp("||", n.BinOp("==", field("M"), n.IntLit(0)),
                                      n.BinOp("==", field("N"), n.IntLit(0))), n.BinOp("==", field("K"), n.IntLit(0)))
        size = n.call(n.Member(ids("args"), "size"))
        return [
            n.Comment("This CK's MakeKargs does not compile: the descriptors it would make, group by group."),
            n.VarDecl(self.t("vector", T=self.p.type("QuantGemmTransKernelArg")), "kargs"),
            n.VarDecl(index, "grid_size", n.IntLit(0), brace=True),
            n.For(n.VarDecl(self.p.type("size_t"), "group", n.IntLit(0)), n.BinOp("<", GROUP, size),
                  n.UnOp("++", GROUP), [
                n.If(empty, [n.Continue()]),
                n.VarDecl(n.Const(index), "group_blocks", n.BinOp("*", n.call(
                    "TilePartitioner::GridSize", field("M"), field("N")), field("k_batch"))),
                n.ExprStmt(n.Call(n.Member(ids("kargs"), "emplace_back"), [
                    n.call("K::Base::MakeKernelArgs", n.BraceInit(self.p.type("QuantGemmHostArgs"), host)),
                    ids("grid_size"), end])),
                n.ExprStmt(n.BinOp("+=", ids("grid_size"), ids("group_blocks"))),
            ]),
        ]
