"""Words of ckast's output: a count with its noun in the number it takes."""

from __future__ import annotations


def quantity(n: int, noun: str, plural: str | None = None) -> str:
    """`1 kernel`, `2 kernels`, `0 kernels` (nouns that take -s; others give their `plural`)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
