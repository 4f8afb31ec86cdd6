"""ckast: CK Tile kernel-instance C++ generated from a typed C++ AST.

The Python API does what the `ckast` command does (the command is built on it):

    import ckast

    config = ckast.kernel(kind="gemm", datatype="fp16", layout="rcr", tile_m=256, tile_n=128)
    ckast.emit_kernels(config, "out/")                                   # ckast emit
    library = ckast.build_library("tiny", "gfx942", datatypes="fp16")    # ckast list
    ckast.generate_library("lib/", "tiny", "gfx942", datatypes="fp16")   # ckast generate
    problem = "G=2,N=32,C=256,K=256,Hi=28,Wi=28,Y=1,X=1"                 # a 1x1 convolution
    for choice in ckast.select_kernels("lib/", problem):                 # ckast select
        print(choice.best.name, choice.best.predicted_tflops)

Configs come from keyword arguments (`kernel`), parsed JSON (`parse_configs`) or config files in ckast's or
CK's formats (`load_configs`; CK's dispatcher `KernelConfig` field names are read too). Libraries:
`build_library`, `generate_library` (for a workload: `workload_request`, `choose_for_workload`), `diff_libraries`.
Choosing
kernels: `select_kernels`, `read_timings`, `train_model`, `evaluate_model`, `emit_selector`. Checks of
emitted code: `jit_check`, `compile_check`. Every error about the input or the environment is a
`CkastError` whose message is the line the command prints, naming the Python argument where the command names
its option (`problems_file` for `--problems`); the errors about the input are also `ValueError`s. An argument
of the wrong type (a list for a name, None for a path, `top=0`) is refused the same way (`ArgumentError`).

The names are imported on first use: `import ckast` itself loads nothing else.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ckast.arguments import ArgumentError
    from ckast.check.profiles import ApiMismatch
    from ckast.check.runner import CompileResult
    from ckast.check.toolchain import ToolchainError
    from ckast.config.errors import ConfigError, ConfigIssue
    from ckast.config.kernel import KernelConfig
    from ckast.config.load import LoadedKernel
    from ckast.errors import CkastError
    from ckast.hostmodel.jit import JitUnavailable
    from ckast.hostmodel.sources import SourceError
    from ckast.input_file import InputFileError
    from ckast.library.build import Library
    from ckast.library.selection import SelectionError
    from ckast.output.manifest import ManifestError
    from ckast.output.transaction import OutputError
    from ckast.review.compare import LibraryDiff
    from ckast.review.sides import SideError
    from ckast.select.cxx.record import RecordError
    from ckast.select.models.forest import ModelError
    from ckast.select.serving.library import LibraryError
    from ckast.select.models.lightgbm_model import MissingPackage
    from ckast.select.problem import ProblemError
    from ckast.select.tables.timings import TimingError
    from ckast.select.ranking.train import TrainError
    from ckast.select.reports.workload import WorkloadError
    from ckast.workflow.checks import JitResult, compile_check, jit_check
    from ckast.workflow.choosing import (Choices, Evaluation, ProblemChoice, RankedKernel, SelectorResult,
                                         TimingRuns, TrainResult, emit_selector, evaluate_model, read_timings,
                                         select_kernels, train_model)
    from ckast.workflow.configs import EmitResult, emit_kernels, kernel, load_configs, parse_configs
    from ckast.workflow.libraries import (EmptyLibrary, GenerateResult, build_library, choose_for_workload,
                                          diff_libraries, generate_library, workload_request)

__all__ = ["ApiMismatch", "ArgumentError", "Choices", "CkastError", "CompileResult", "ConfigError", "ConfigIssue",
           "EmitResult", "EmptyLibrary", "Evaluation", "GenerateResult", "InputFileError", "JitResult",
           "JitUnavailable", "KernelConfig", "Library", "LibraryDiff", "LibraryError", "LoadedKernel", "ManifestError",
           "MissingPackage", "ModelError", "OutputError", "ProblemChoice", "ProblemError", "RankedKernel",
           "RecordError", "SelectionError", "SelectorResult", "SideError", "SourceError", "TimingError", "TimingRuns",
           "ToolchainError", "TrainError", "TrainResult", "WorkloadError", "build_library", "choose_for_workload",
           "compile_check", "diff_libraries", "emit_kernels", "emit_selector", "evaluate_model", "generate_library",
           "jit_check", "kernel", "load_configs", "parse_configs", "read_timings", "select_kernels", "train_model",
           "workload_request"]

_SOURCES = {
    "KernelConfig": "ckast.config.kernel", "LoadedKernel": "ckast.config.load", "Library": "ckast.library.build",
    "LibraryDiff": "ckast.review.compare", "CompileResult": "ckast.check.runner",
    **dict.fromkeys(("EmitResult", "emit_kernels", "kernel", "load_configs", "parse_configs"),
                    "ckast.workflow.configs"),
    **dict.fromkeys(("EmptyLibrary", "GenerateResult", "build_library", "choose_for_workload", "diff_libraries",
                     "generate_library", "workload_request"), "ckast.workflow.libraries"),
    **dict.fromkeys(("Choices", "Evaluation", "ProblemChoice", "RankedKernel", "SelectorResult", "TimingRuns",
                     "TrainResult", "emit_selector", "evaluate_model", "read_timings", "select_kernels", "train_model"),
                    "ckast.workflow.choosing"),
    **dict.fromkeys(("JitResult", "compile_check", "jit_check"), "ckast.workflow.checks"),
    # the errors, each a CkastError
    "CkastError": "ckast.errors", "ArgumentError": "ckast.arguments", "ApiMismatch": "ckast.check.profiles",
    "ConfigError": "ckast.config.errors",
    "ConfigIssue": "ckast.config.errors",
    "WorkloadError": "ckast.select.reports.workload", "InputFileError": "ckast.input_file",
    "SelectionError": "ckast.library.selection", "OutputError": "ckast.output.transaction",
    "ManifestError": "ckast.output.manifest", "SideError": "ckast.review.sides", "LibraryError": "ckast.select.serving.library",
    "ProblemError": "ckast.select.problem", "ModelError": "ckast.select.models.forest", "TimingError": "ckast.select.tables.timings",
    "TrainError": "ckast.select.ranking.train", "MissingPackage": "ckast.select.models.lightgbm_model",
    "RecordError": "ckast.select.cxx.record", "ToolchainError": "ckast.check.toolchain",
    "JitUnavailable": "ckast.hostmodel.jit", "SourceError": "ckast.hostmodel.sources",
}
"""Public name -> the module it is defined in, imported on first use."""


@functools.cache
def _version() -> str:
    from ckast.version import version

    return version()


def __getattr__(name: str) -> Any:  # PEP 562
    if name == "__version__":
        return _version()
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_SOURCES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
