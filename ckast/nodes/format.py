"""Optional formatting with the pinned clang-format (`ckast emit --format`).

The printer never calls this: its output is already in the project style. Running clang-format is
a check (tests) or a user's choice.
"""

from __future__ import annotations

from pathlib import Path

STYLE_FILE = Path(__file__).with_name("style.clang-format")
PINNED_VERSION = "23.1.5"


class FormatError(RuntimeError):
    """clang-format is missing, is not the pinned version, or failed."""


def executable() -> str:
    """Path of the clang-format binary shipped by the pinned PyPI wheel."""
    try:
        import clang_format as wheel
    except ImportError:
        raise FormatError("formatting needs the pinned clang-format: pip install 'ckast[format]'") from None
    return wheel.get_executable("clang-format")


def version() -> str:
    import subprocess  # not at the top: every `emit` imports this module, few run clang-format

    out = subprocess.run([executable(), "--version"], capture_output=True, text=True, check=True).stdout
    return out.split("version", 1)[1].split()[0]


def clang_format(source: str, *, assume_filename: str = "x.hpp") -> str:
    """`source` formatted with ckast's style file by the pinned clang-format."""
    import subprocess

    proc = subprocess.run(
        [executable(), f"--style=file:{STYLE_FILE}", f"--assume-filename={assume_filename}"],
        input=source,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise FormatError(f"clang-format failed: {proc.stderr.strip()}")
    return proc.stdout
