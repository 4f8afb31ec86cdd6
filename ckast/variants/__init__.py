"""Kernel variants: what each kind/variant contributes. `builder` finds the one for a config."""

from __future__ import annotations

from collections.abc import Callable

from ckast import nodes as n
from ckast.catalog import Profile

from .gemm import gemm_header

Builder = Callable[[object, Profile], n.File]
BUILDERS: dict[tuple[str, str], Builder] = {("gemm", "standard"): gemm_header}


def builder(kind: str, variant: str) -> Builder | None:
    """The header builder for (kind, variant), or None where ckast has none yet."""
    return BUILDERS.get((kind, variant))
