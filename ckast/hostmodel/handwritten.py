"""The one list of catalog entities whose host model is written by hand, and the files that hold them.

The generator (`model.py`) declares every other catalog entity: enums, the class, alias and
function templates (their behaviour comes from specializations in `behaviour/`), and an empty
struct for each remaining type (layout tags, element-wise ops, policies, ...). Entities of the
standard library (`std::...`) come from the standard headers the prelude includes.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).parent
INCLUDE_DIR = ROOT / "include"
"""Global headers (put on Cling's include path): the prelude, the log and `hip/hip_runtime.h`."""
PRELUDE = "ckast_hostmodel/prelude.hpp"
UNOPTIMIZED_HEADER = "ckast_hostmodel/unoptimized.h"
"""Included first by everything the session compiles: Cling compiles it without optimization."""

CORE = "behaviour/core.hpp"
"""Per-profile scalars and primary templates; included before the generated declarations."""
BEHAVIOUR = (
    "behaviour/host.hpp",
    "behaviour/gemm.hpp",
    "behaviour/gemm_quant.hpp",
    "behaviour/conv.hpp",
    "behaviour/elementwise.hpp",
    "behaviour/dispatcher.hpp",
    "behaviour/testing.hpp",
)
"""Per-profile behaviour, included after the generated declarations, in this order."""

_FILES = {
    CORE: "index_t long_index_t int8_t int32_t half_t fp16_t bf16_t fp8_t bf8_t",
    "hip/hip_runtime.h": "dim3 hipMemcpyKind hipMemsetAsync hipMemset2DAsync hipMemcpyWithStream",
    "behaviour/host.hpp": "stream_config hip_check_error cast_pointer_to_constant_address_space DeviceMem ConvParam "
                          "launch_kernel launch_kernel_time_mask make_tuple",
    "behaviour/gemm.hpp": "GemmHostArgs BatchedGemmHostArgs StreamKHostArgs",
    "behaviour/gemm_quant.hpp": "QuantGemmHostArgs QuantGroupedGemmHostArgs QuantGemmTransKernelArg",
    "behaviour/conv.hpp": "GroupedConvBwdDataHostArgs GroupedConvBwdWeightHostArgs",
    "behaviour/dispatcher.hpp": "KernelKey KernelInstancePtr Registry GroupedConvKernelKey GroupedConvKernelInstance "
                                "GroupedConvKernelInstancePtr GroupedConvRegistry GroupedConvProblem HeuristicFunction "
                                "Problem Dispatcher GroupedConvDispatcher "
                                "register_all_grouped_conv_fwd_kernels register_all_grouped_conv_bwd_data_kernels "
                                "register_all_grouped_conv_bwd_weight_kernels",
}
HANDWRITTEN: dict[str, str] = {key: path for path, keys in _FILES.items() for key in keys.split()}
"""Catalog key (of a type or function) -> the hand-written file that defines it."""


def path_of(relative: str) -> Path:
    """A hand-written file by the name `HANDWRITTEN` and the include lists use."""
    return (INCLUDE_DIR if relative.startswith(("hip/", "ckast_hostmodel/")) else ROOT) / relative


def is_standard(qualname: tuple[str, ...]) -> bool:
    """Whether a catalog entity belongs to the C++ standard library."""
    return qualname[0] == "std"
