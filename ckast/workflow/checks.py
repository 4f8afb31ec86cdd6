"""Checking emitted code: JIT-compile it in-process against ckast's host model of CK Tile (`jit_check`,
`ckast jit`), or compile it device-only against real CK Tile with clang (`compile_check`, `ckast check`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from ckast.arguments import checked

from .paths import PathLike, path_list

if TYPE_CHECKING:
    from ckast.check.runner import CompileResult


@attrs.frozen
class JitResult:
    """One file JIT-compiled as a unit of its own."""

    path: Path
    profile: str
    """The CK API profile it was compiled for."""
    passed: bool
    seconds: float
    diagnostics: str
    """The compiler's diagnostics when it failed ("" when it passed)."""

    def lines(self) -> list[str]:
        """What `ckast jit` prints for the file: PASS with the time, or FAIL and the diagnostics, indented."""
        if self.passed:
            return [f"PASS {self.path} [{self.profile}] {self.seconds * 1e3:.0f} ms"]
        return [f"FAIL {self.path} [{self.profile}]", *(f"    {line}" for line in self.diagnostics.splitlines())]


@checked(paths="paths", ck_api="optional name", include="paths", on_result="optional callable")
def jit_check(paths: PathLike | Iterable[PathLike], *, ck_api: str | None = None, include: Iterable[PathLike] = (),
              on_result: Callable[[JitResult], None] | None = None) -> list[JitResult]:
    """JIT-compile emitted headers and sources in-process (cppyy) against ckast's host model of CK Tile, each
    file a unit of its own.

    Args:
        paths: the files.
        ck_api: the CK API profile; default: each file's manifest entry, a `_<profile>.hpp` suffix, the
            profile of the library in the `include` folders, or ckast's default profile.
        include: folders searched for quoted includes after the including file's own and before the host
            model's headers; default: the library a selector or benchmark driver was emitted for, from its
            manifest.
        on_result: called with each file's result as soon as it is known.

    Returns:
        One result per file, in order.

    Raises:
        SourceError: a file is not C++ or defines `main`, or an `include` folder does not exist (all are
            listed, one line each, before anything is compiled).
        RecordError: a selector's or driver's manifest does not record an existing library.
        JitUnavailable: cppyy does not load.
    """
    from ckast.hostmodel.jit import JitError, JitUnavailable
    from ckast.hostmodel.sources import SourceError, unfit_root
    from ckast.testing import jit_header, profile_of, recorded_includes

    files = path_list(paths)
    folders = tuple(Path(d) for d in include)
    unfit = [*(f"-I {d}: not a folder" for d in folders if not d.is_dir()),
             *(f"{p}: not a file" for p in files if not p.is_file()),
             *filter(None, map(unfit_root, (p for p in files if p.is_file())))]
    if unfit:
        raise SourceError("\n".join(unfit))
    units = []
    for path in files:
        searched = folders or recorded_includes(path)
        units.append((path, searched, ck_api or profile_of(path, searched)))
    results = []
    for path, searched, profile in units:
        start = time.perf_counter()
        try:
            jit_header(path, profile, searched)
            result = JitResult(path, profile, True, time.perf_counter() - start, "")
        except JitUnavailable:
            raise
        except JitError as exc:
            result = JitResult(path, profile, False, time.perf_counter() - start, str(exc))
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


def api_fit(headers: Iterable[Path], ck_include: Path, *, allow_api_mismatch: bool = False,
            on_warning: Callable[[str], None] | None = None) -> None:
    """Compare the headers' CK API profiles (from their manifests) with the profile the CK tree matches, before
    they are compiled against it (`ckast.check.profiles`).

    Raises:
        ApiMismatch: the tree does not match a header's profile (one line per folder and profile, naming the
            profile the tree matches and the fix), unless `allow_api_mismatch`: then each line goes to
            `on_warning`, as does why the comparison could not be made (no libclang).
        ManifestError: a header's manifest cannot be read.
    """
    from ckast.api import ApiUnavailable
    from ckast.check.profiles import ApiMismatch, mismatch_lines

    warn = on_warning or (lambda line: None)
    try:
        lines = mismatch_lines(headers, ck_include)
    except ApiUnavailable as exc:
        warn(f"the CK API profile of {ck_include} is not compared with the headers': {exc}")
        return
    if lines and not allow_api_mismatch:
        raise ApiMismatch("\n".join(lines))
    for line in lines:
        warn(line)


@checked(headers="paths", ck_include="optional path", arch="name", codegen="flag", jobs="optional count",
         on_result="optional callable", allow_api_mismatch="flag", on_warning="optional callable")
def compile_check(headers: PathLike | Iterable[PathLike], *, ck_include: PathLike | None = None,
                  arch: str = "gfx942", codegen: bool = False, jobs: int | None = None,
                  on_result: Callable[[CompileResult], None] | None = None, allow_api_mismatch: bool = False,
                  on_warning: Callable[[str], None] | None = None) -> list[CompileResult]:
    """Compile emitted headers device-only against real CK Tile with clang, each inside a translation unit
    that calls its entry points (read from the manifest beside it), once their CK API profiles are found to
    match the CK tree (`api_fit`).

    Args:
        headers: the emitted headers.
        ck_include: CK's include root; default: `$CK_TILE_INCLUDE`, ROCm's, or the amd-aiter wheel's CK
            (downloaded once).
        arch: the offload architecture.
        codegen: run the full backend (`-O3 -S`) instead of `-fsyntax-only`.
        jobs: compiles at a time (default: the cores ckast may run on).
        on_result: called with each header's result as soon as it is known.
        allow_api_mismatch: compile headers whose profile the tree does not match (see `api_fit`).
        on_warning: called with each line `api_fit` warns with.

    Returns:
        One result per header, in order (`passed`, `seconds`, `peak_rss_mib`, `errors`, `log`, `line()`).

    Raises:
        ApiMismatch: the tree does not match a header's profile (unless `allow_api_mismatch`); nothing compiled.
        InputFileError: a header is not a file.
        ArgumentError: an unknown arch (or an argument of the wrong type).
        ManifestError: a header's manifest cannot be read or does not list it.
        ToolchainError: clang, HIP or the CK tree is missing or unusable.
    """
    from ckast.arch import ARCH_NAMES
    from ckast.arguments import ArgumentError
    from ckast.check import Toolchain, check_headers
    from ckast.cores import default_jobs
    from ckast.output import entry_points_of

    files = path_list(headers)
    missing = [p for p in files if not p.is_file()]
    if missing:
        from ckast.input_file import InputFileError

        raise InputFileError(missing[0], "not a file; give an emitted header")
    if arch not in ARCH_NAMES:
        raise ArgumentError("arch", f"unknown arch {arch!r}; known: {', '.join(ARCH_NAMES)}")
    points = entry_points_of(files)
    toolchain = Toolchain.discover(ck_include=None if ck_include is None else Path(ck_include), arch=arch)
    api_fit(files, toolchain.ck_include, allow_api_mismatch=allow_api_mismatch, on_warning=on_warning)
    return check_headers(files, toolchain, lambda header: points[Path(header).resolve()],
                         mode="codegen" if codegen else "syntax", parallel=jobs or default_jobs(), on_result=on_result)
