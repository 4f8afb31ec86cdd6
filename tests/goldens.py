"""Every golden file and what produces it (one table, so an orphan golden is caught)."""

from __future__ import annotations

from ckast.catalog import profile_names

from .conftest import GOLDEN

GEMM = {"kind": "gemm", "datatype": "fp16", "layout": "rcr"}
GEMM_CASES: dict[str, dict] = {
    "standard": dict(GEMM, variant="standard"),
    "standard_persistent": dict(GEMM, variant="standard", layout="rrr", pipeline="mem", epilogue="default",
                                pad_m=True, pad_n=True, pad_k=True, persistent=True, datatype="bf16"),
    "standard_no_split_k": dict(GEMM, variant="standard", split_k=False, pipeline="compv4", datatype="fp8"),
    "preshuffle": dict(GEMM, variant="preshuffle"),
    "multi_d": dict(GEMM, variant="multi_d"),
    "multi_d_2d": dict(GEMM, variant="multi_d", num_d_tensors=2, elementwise_op="MultiDMultiply", d_layout="r",
                       persistent=True),
}
"""Golden kernel headers: every variant, plus persistent, no-split-K and a multi-D with two D tensors."""

GEMM_HEADERS = {(case, profile): GOLDEN / "gemm" / f"{case}_{profile}.hpp"
                for case in GEMM_CASES for profile in profile_names()}
GEMM_RUN = {
    "wrapper": GOLDEN / "gemm" / "run" / "dispatcher_wrapper_multi_d.hpp",
    "unit": GOLDEN / "gemm" / "run" / "unit_standard.cpp",
    "registration": GOLDEN / "gemm" / "run" / "register_all_kernels.hpp",
}
"""Goldens of the per-kernel and per-run files around the headers (profile ck-2025.11)."""

ALL = {*GEMM_HEADERS.values(), *GEMM_RUN.values()}
