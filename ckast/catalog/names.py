"""Which API profiles are packaged, and the default one (no parsing: the command line lists them)."""

from __future__ import annotations

import functools
from pathlib import Path

PROFILES_DIR = Path(__file__).parent / "profiles"
DEFAULT_PROFILE = "ck-2025.11"
"""The profile of a kernel whose config, command line and CK tree name none: the API of the CK Tile headers
`ckast check` compiles against (the amd-aiter wheel's), the one profile whose kernels ckast can compile here.
ck-2026.06 accepts many more configs, but its kernels fail against those headers; a user with a newer CK tree
names it with --ck-include (or --ck-api), and `ckast api detect` says which profile a tree has."""


@functools.cache
def profile_names() -> tuple[str, ...]:
    """Names of the packaged profiles, sorted (listed once per process)."""
    return tuple(sorted(p.stem for p in PROFILES_DIR.glob("*.toml")))
