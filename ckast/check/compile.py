"""Compile checks of emitted headers against real CK Tile (the ground truth behind the JIT model)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from ckast.lower.identity import EntryPoint

from .runner import CompileResult, compile_many
from .toolchain import Mode, Toolchain
from .tu import wrapper_tu


def check_headers(
    headers: Sequence[Path],
    toolchain: Toolchain,
    entry_points: Callable[[Path], Sequence[EntryPoint]],
    *,
    mode: Mode = "syntax",
    parallel: int = 1,
    on_result: Callable[[CompileResult], None] | None = None,
) -> list[CompileResult]:
    """Compile each header inside a wrapper TU that calls its entry points; results in input order."""
    resolved = [Path(h).resolve() for h in headers]
    include_dirs = tuple(dict.fromkeys(h.parent for h in resolved))
    with tempfile.TemporaryDirectory(prefix="ckast-check-") as tmp:
        jobs = []
        for i, header in enumerate(resolved):
            tu = Path(tmp) / f"{i}-{header.stem}.cpp"
            tu.write_text(wrapper_tu(header.name, entry_points(header)))
            jobs.append((tu, header))
        return compile_many(jobs, toolchain, mode=mode, include_dirs=include_dirs, parallel=parallel, on_result=on_result)
