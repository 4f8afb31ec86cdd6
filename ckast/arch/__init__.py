"""GPU architecture facts (packaged data, the single source of truth) and the rules built on them.

The names below are imported from `specs` or `rules` on first use (PEP 562): the arch names alone
(`ARCH_NAMES`) cost only `specs`, and importing the package costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .rules import RULES, Rule, Violation, check_config
    from .specs import ARCH_NAMES, DEPTHWISE_BLOCK_SIZE, DEPTHWISE_DILATION, DTYPES, PIPELINES, ArchSpec, DtypeSpec, PipelineSpec, arch_spec, dtype_key

__all__ = [
    "ARCH_NAMES", "DEPTHWISE_BLOCK_SIZE", "DEPTHWISE_DILATION", "DTYPES", "PIPELINES", "RULES", "ArchSpec", "DtypeSpec", "PipelineSpec", "Rule", "Violation",
    "arch_spec", "check_config", "dtype_key",
]
_SOURCE = {
    **dict.fromkeys(("RULES", "Rule", "Violation", "check_config"), "rules"),
    **dict.fromkeys(("ARCH_NAMES", "DEPTHWISE_BLOCK_SIZE", "DEPTHWISE_DILATION", "DTYPES", "PIPELINES", "ArchSpec",
                     "DtypeSpec", "PipelineSpec", "arch_spec", "dtype_key"), "specs"),
}


def __getattr__(name: str) -> Any:
    if name not in _SOURCE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_SOURCE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
