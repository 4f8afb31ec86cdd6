"""Locate clang and a CK Tile include tree, and build device-only compile commands.

CK Tile headers are checked for one AMD GPU target with clang in HIP device-only
mode; no GPU and no ROCm install are needed (clang >= 17 plus the HIP headers).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Literal

from attrs import frozen

from ckast.data_files import user_cache_dir
from ckast.errors import CkastError

Mode = Literal["syntax", "codegen"]
MODES: tuple[Mode, ...] = ("syntax", "codegen")

MIN_CLANG_MAJOR = 17
INSTALL_HINT = "install it with: apt-get install clang-19 lld-19 libamdhip64-dev"

ROCM_ROOT = Path("/opt/rocm")
"""ROCm install probed for ``include/ck_tile`` (module-level so tests can redirect it)."""
SYSTEM_ROOT = Path("/usr")
"""Where distributions install HIP (Debian's libamdhip64-dev: ``/usr/include/hip``)."""
HIP_HINT = "install them with: apt-get install libamdhip64-dev (or set HIP_PATH to a HIP install)"
HIP_RUNTIME = Path("include", "hip", "hip_runtime.h")

AITER_VERSION = "0.1.7.post2.dev18"
AITER_SPEC = f"amd-aiter=={AITER_VERSION}"
AITER_CK_PREFIX = "aiter_meta/3rdparty/composable_kernel/include/"
"""Where the CK include tree sits inside the amd-aiter wheel."""


class ToolchainError(CkastError):
    """The compiler or the CK Tile include tree is missing or unusable."""


def find_clang(explicit: str | None = None) -> Path:
    """Return a clang++ >= 17: ``explicit``, else ``$CKAST_CLANG``, else clang++-19, else clang++."""
    if explicit is None:
        explicit = os.environ.get("CKAST_CLANG") or None
        origin = "CKAST_CLANG"
    else:
        origin = "the given compiler"
    if explicit is not None:
        found = shutil.which(explicit)
        if found is None:
            raise ToolchainError(f"{origin} {explicit!r} is not an executable; {INSTALL_HINT}")
        clang = Path(found)
    else:
        found = shutil.which("clang++-19") or shutil.which("clang++")
        if found is None:
            raise ToolchainError(f"no clang++-19 or clang++ on PATH; {INSTALL_HINT}")
        clang = Path(found)
    major = _clang_major(clang)
    if major < MIN_CLANG_MAJOR:
        raise ToolchainError(
            f"{clang} is clang {major}, but clang >= {MIN_CLANG_MAJOR} is needed; {INSTALL_HINT}"
        )
    return clang


def _clang_major(clang: Path) -> int:
    """Major version from ``clang --version``."""
    try:
        out = subprocess.run(
            [str(clang), "--version"], capture_output=True, text=True, timeout=60, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolchainError(f"cannot run {clang} --version ({exc}); {INSTALL_HINT}") from exc
    match = re.search(r"clang version (\d+)\.", out)
    if match is None:
        raise ToolchainError(f"{clang} does not report a clang version; {INSTALL_HINT}")
    return int(match.group(1))


def _resource_dir(clang: Path) -> Path:
    """Clang's resource directory (holds the HIP wrapper headers)."""
    try:
        out = subprocess.run(
            [str(clang), "-print-resource-dir"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolchainError(f"cannot run {clang} -print-resource-dir ({exc})") from exc
    if not out:
        raise ToolchainError(f"{clang} -print-resource-dir printed nothing")
    return Path(out)


def find_hip() -> Path:
    """Return the HIP install to compile against (the root of ``include/hip/hip_runtime.h``).

    Order: ``$HIP_PATH``, ``$ROCM_PATH`` (clang's own variables), ``ROCM_ROOT``, ``SYSTEM_ROOT``.
    """
    for var in ("HIP_PATH", "ROCM_PATH"):
        root = os.environ.get(var)
        if root:
            if not (Path(root) / HIP_RUNTIME).is_file():
                raise ToolchainError(f"{var} {root} has no {HIP_RUNTIME}; {HIP_HINT}")
            return Path(root)
    for root in (ROCM_ROOT, SYSTEM_ROOT):
        if (root / HIP_RUNTIME).is_file():
            return root
    raise ToolchainError(f"no HIP headers ({HIP_RUNTIME} under {ROCM_ROOT} or {SYSTEM_ROOT}); {HIP_HINT}")


def _is_ck_include(path: Path) -> bool:
    return (path / "ck_tile" / "core.hpp").is_file()


def _checked_include(path: Path, origin: str, hint: str = "") -> Path:
    if not _is_ck_include(path):
        raise ToolchainError(f"{origin} {path} is not a CK include tree (no ck_tile/core.hpp){hint}")
    return path


def find_ck_include(explicit: Path | None = None, *, download: bool = True) -> Path:
    """Return the CK include root (the directory holding ``ck_tile/``).

    Order: ``explicit``, ``$CK_TILE_INCLUDE``, ``<ROCM_ROOT>/include``, then the
    amd-aiter copy in the user cache (downloaded there if absent and ``download``).
    """
    if explicit is not None:
        return _checked_include(Path(explicit), "CK include directory")
    env = os.environ.get("CK_TILE_INCLUDE")
    if env:
        return _checked_include(Path(env), "CK_TILE_INCLUDE")
    rocm = ROCM_ROOT / "include"
    if _is_ck_include(rocm):
        return rocm
    cached = aiter_ck_dir()
    if cached.is_dir():
        return _checked_include(cached, "cached", "; delete it to download it again")
    if not download:
        raise ToolchainError(
            "no CK Tile include tree found: pass --ck-include, set CK_TILE_INCLUDE, "
            f"install ROCm under {ROCM_ROOT}, or allow downloading {AITER_SPEC}"
        )
    return fetch_aiter_ck()


def aiter_ck_dir(cache_root: Path | None = None) -> Path:
    """Where :func:`fetch_aiter_ck` puts the CK include tree."""
    root = user_cache_dir() if cache_root is None else Path(cache_root)
    return root / f"ck-aiter-{AITER_VERSION}" / "include"


def download_aiter_wheel(dest: Path) -> Path:
    """Download the amd-aiter wheel into ``dest`` with pip; return the wheel's path."""
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
           "--only-binary=:all:", "-d", str(dest), AITER_SPEC]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(dest.glob("*.whl"))
    if proc.returncode != 0 or not wheels:
        lines = (proc.stdout + proc.stderr).strip().splitlines()
        reason = lines[-1].removeprefix("ERROR: ") if lines else f"pip exited with status {proc.returncode}"
        raise ToolchainError(
            f"could not download {AITER_SPEC} ({reason}); pass --ck-include DIR or set CK_TILE_INCLUDE "
            "to a CK include tree"
        )
    return wheels[0]


def _extract_ck(wheel: Path, dest: Path) -> None:
    """Extract the wheel members under :data:`AITER_CK_PREFIX` into ``dest``."""
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if not info.filename.startswith(AITER_CK_PREFIX) or info.is_dir():
                continue
            rel = PurePosixPath(info.filename[len(AITER_CK_PREFIX):])
            if rel.is_absolute() or ".." in rel.parts:
                raise ToolchainError(f"unsafe member {info.filename!r} in {wheel.name}")
            target = dest.joinpath(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)


def fetch_aiter_ck(cache_root: Path | None = None) -> Path:
    """Return the CK include tree of the amd-aiter wheel, downloading it once into the cache.

    The tree is extracted into a temporary directory beside its final place and then
    renamed, so it is either complete or absent; an existing directory is trusted.
    """
    target = aiter_ck_dir(cache_root)
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".include-", dir=target.parent))
    try:
        staging.chmod(0o755)  # mkdtemp makes it private
        with tempfile.TemporaryDirectory(prefix="ckast-wheel-") as dl:
            _extract_ck(download_aiter_wheel(Path(dl)), staging)
        _checked_include(staging, f"{AITER_SPEC} extracted to")
        try:
            staging.rename(target)
        except OSError:
            if not target.is_dir():  # not a lost race with a parallel run
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


@frozen
class Toolchain:
    """A clang, a CK include tree and a HIP install, for device-only compiles for one GPU arch."""

    clang: Path
    resource_dir: Path
    ck_include: Path
    arch: str = "gfx942"
    hip: Path | None = None
    """The HIP install clang is told to use (None: clang's own search)."""

    @classmethod
    def discover(
        cls,
        clang: str | None = None,
        ck_include: Path | None = None,
        arch: str = "gfx942",
        download: bool = True,
    ) -> "Toolchain":
        """Find clang (:func:`find_clang`), HIP (:func:`find_hip`) and the CK tree (:func:`find_ck_include`)."""
        exe = find_clang(clang)
        hip = find_hip()
        return cls(
            clang=exe,
            resource_dir=_resource_dir(exe),
            ck_include=find_ck_include(ck_include, download=download),
            arch=arch,
            hip=hip,
        )

    def command(
        self, tu: Path, mode: Mode, include_dirs: Sequence[Path], output: Path | None
    ) -> list[str]:
        """The clang command line compiling ``tu``.

        ``syntax`` parses and instantiates everything (``-fsyntax-only``, ``output`` must be
        None); ``codegen`` also runs the AMDGPU backend and writes assembly to ``output``.
        """
        if mode == "syntax":
            if output is not None:
                raise ValueError("syntax mode writes no output")
            tail = ["-fsyntax-only"]
        elif mode == "codegen":
            if output is None:
                raise ValueError("codegen mode needs an output path")
            tail = ["-O3", "-S", "-o", str(output)]
        else:
            raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
        return [
            str(self.clang),
            "-x", "hip",
            "-std=c++20",
            f"--offload-arch={self.arch}",
            *([f"--hip-path={self.hip}"] if self.hip is not None else []),
            "--cuda-device-only",
            "-nogpulib",
            f"-I{self.resource_dir}",
            f"-I{self.ck_include}",
            *(f"-I{d}" for d in include_dirs),
            *tail,
            str(tu),
        ]
