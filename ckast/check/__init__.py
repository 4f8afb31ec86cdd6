"""Real-compile checks: emitted headers compiled device-only against real CK Tile with clang."""

from .compile import check_headers
from .runner import CompileResult, compile_many, compile_one
from .toolchain import Toolchain, ToolchainError, find_ck_include, find_clang

__all__ = [
    "CompileResult", "Toolchain", "ToolchainError", "check_headers", "compile_many", "compile_one",
    "find_ck_include", "find_clang",
]
