"""Run device-only compiles of prepared translation units, measuring time and peak memory."""

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path

from attrs import frozen

from ckast.check.toolchain import Mode, Toolchain

MAX_ERRORS = 8
_ERROR = re.compile(r"(?:^|: )(?:fatal )?error: ")
_WARNING = re.compile(r"(?:^|: )warning: ")
PEAK = Path(__file__).with_name("peak.py")
_running: set[subprocess.Popen] = set()
"""Compiles under way, each in a process group of its own: `compile_many` kills them when it stops early
(a signal, see `ckast.interrupt`), so that it does not wait for them."""


@frozen
class CompileResult:
    """Outcome of compiling one translation unit."""

    source: Path
    """What was checked: the header the TU wraps (or the TU itself)."""
    passed: bool
    seconds: float
    peak_rss_mib: float
    """Peak resident memory of the compiler process (and its own children)."""
    errors: tuple[str, ...]
    """The first error lines (at most 8); the exit status if the compiler printed none."""
    warnings: int
    log: str
    """Full compiler output (stdout and stderr)."""

    def line(self) -> str:
        """One summary line, e.g. ``PASS  14.2s   512MiB  path/to/x.hpp``."""
        status = "PASS" if self.passed else "FAIL"
        return f"{status}  {self.seconds:4.1f}s  {self.peak_rss_mib:4.0f}MiB  {self.source}"


def compile_one(
    tu: Path,
    toolchain: Toolchain,
    *,
    mode: Mode = "syntax",
    include_dirs: Sequence[Path] = (),
    label: Path | None = None,
) -> CompileResult:
    """Compile ``tu`` once; report it as ``label`` (default: ``tu``).

    Codegen output goes to a temporary directory that is removed afterwards.
    """
    with tempfile.TemporaryDirectory(prefix="ckast-cc-") as tmp:
        output = Path(tmp, f"{tu.stem}.s") if mode == "codegen" else None
        cmd = toolchain.command(tu, mode, include_dirs, output)
        rss_file = Path(tmp, "rss")
        with open(Path(tmp, "log"), "w+b") as log_file:
            start = time.perf_counter()
            # Through peak.py, so the compiler's peak RSS is not this (possibly large) process's.
            with subprocess.Popen(
                [sys.executable, "-S", "-E", str(PEAK), str(rss_file), *cmd],
                stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT, process_group=0,
            ) as proc:
                _running.add(proc)
                try:
                    proc.wait()
                except BaseException:
                    _kill(proc)
                    raise
                finally:
                    _running.discard(proc)
            seconds = time.perf_counter() - start
            log_file.seek(0)
            log = log_file.read().decode("utf-8", errors="replace")
        peak_kib = int(rss_file.read_text()) if rss_file.is_file() else 0
    lines = log.splitlines()
    errors = tuple(ln for ln in lines if _ERROR.search(ln))[:MAX_ERRORS]
    passed = proc.returncode == 0
    if not passed and not errors:
        errors = (f"{cmd[0]} exited with status {proc.returncode}",)
    return CompileResult(
        source=tu if label is None else label,
        passed=passed,
        seconds=seconds,
        peak_rss_mib=peak_kib / 1024,
        errors=errors,
        warnings=sum(1 for ln in lines if _WARNING.search(ln)),
        log=log,
    )


def _kill(proc: subprocess.Popen) -> None:
    """Kill a compile: the peak.py wrapper and the compiler under it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def compile_many(
    jobs: Sequence[tuple[Path, Path]],
    toolchain: Toolchain,
    *,
    mode: Mode = "syntax",
    include_dirs: Sequence[Path] = (),
    parallel: int = 1,
    on_result: Callable[[CompileResult], None] | None = None,
) -> list[CompileResult]:
    """Compile ``(tu, label)`` jobs, up to ``parallel`` at once.

    Results come back in input order; ``on_result`` is called (in the calling thread)
    as each compile finishes.
    """
    if parallel < 1:
        raise ValueError(f"parallel must be >= 1, got {parallel}")
    results: dict[int, CompileResult] = {}
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        futures: dict[Future[CompileResult], int] = {
            pool.submit(
                compile_one, tu, toolchain, mode=mode, include_dirs=include_dirs, label=label
            ): index
            for index, (tu, label) in enumerate(jobs)
        }
        try:
            for future in as_completed(futures):
                result = future.result()
                results[futures[future]] = result
                if on_result is not None:
                    on_result(result)
        except BaseException:
            for future in futures:
                future.cancel()
            for proc in list(_running):
                _kill(proc)
            raise
    return [results[index] for index in range(len(jobs))]
