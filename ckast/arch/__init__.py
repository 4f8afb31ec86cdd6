"""GPU architecture facts (packaged data, the single source of truth) and the rules built on them.

The names below are imported from `specs` or `rules` on first use (PEP 562): the arch names alone
(`ARCH_NAMES`) cost only `specs`, and importing the package costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ckast.lazy import exports

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


__getattr__, __dir__ = exports(__name__, _SOURCE, __all__)
