"""`KernelConfig`: one validated kernel, every knob resolved (defaults applied).

The class is generated from the knob table, so a knob is declared exactly once. Knobs that do
not apply to the kernel's kind or variant are None.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs

from .knobs import KNOB_NAMES, KNOBS, Config, Knob

KernelConfig = attrs.make_class(
    "KernelConfig",
    {name: attrs.field(default=None) for name in KNOB_NAMES},
    frozen=True,
    slots=True,
)
KernelConfig.__doc__ = "A validated kernel configuration (fields: the knobs in ckast.config.knobs)."
KernelConfig.__module__ = __name__


def applies(knob: Knob, resolved: Config) -> bool:
    """Whether `knob` is meaningful for the kernel resolved so far (needs kind and variant)."""
    if knob.kinds is not None and resolved.get("kind") not in knob.kinds:
        return False
    return knob.variants is None or resolved.get("variant") in knob.variants


@functools.cache
def knobs_for(kind: str | None, variant: str | None) -> tuple[Knob, ...]:
    """The knobs that apply to a kernel of `kind` and `variant`, in table order."""
    scope = {"kind": kind, "variant": variant}
    return tuple(k for k in KNOBS if applies(k, scope))


def as_dict(config: Any) -> dict[str, Any]:
    """The knobs that apply to `config`, in table order (what a manifest or identity hashes)."""
    return {k.name: getattr(config, k.name) for k in knobs_for(config.kind, config.variant)}
