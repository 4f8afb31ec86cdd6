"""Test helpers that run external C++ tools on printed source."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ckast.nodes.format import clang_format

GXX = shutil.which("g++")


def reformat(source: str, filename: str = "x.hpp") -> str:
    """What clang-format (ckast's pinned style) makes of `source`."""
    return clang_format(source, assume_filename=filename)


def gxx_accepts(source: str, tmp: Path) -> tuple[bool, str]:
    """Compile `source` with `g++ -std=c++20 -fsyntax-only`; return (ok, diagnostics)."""
    path = tmp / "probe.cpp"
    path.write_text(source)
    proc = subprocess.run(
        [GXX or "g++", "-std=c++20", "-fsyntax-only", str(path)],
        capture_output=True,
        text=True,
    )
    return proc.returncode == 0, proc.stderr
