"""Which API profiles are packaged, and the default one (no parsing: the command line lists them)."""

from __future__ import annotations

import functools
from pathlib import Path

PROFILES_DIR = Path(__file__).parent / "profiles"
DEFAULT_PROFILE = "ck-2025.11"


@functools.cache
def profile_names() -> tuple[str, ...]:
    """Names of the packaged profiles, sorted (listed once per process)."""
    return tuple(sorted(p.stem for p in PROFILES_DIR.glob("*.toml")))
