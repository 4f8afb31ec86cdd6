"""Words of ckast's output: a count with its noun in the number it takes."""

from __future__ import annotations


def quantity(n: int, noun: str) -> str:
    """`1 kernel`, `2 kernels`, `0 kernels` (nouns that take -s)."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
