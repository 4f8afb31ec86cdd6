"""GPU architecture facts (packaged data, the single source of truth) and the rules built on them."""

from .rules import RULES, Rule, Violation, check_config
from .specs import ARCH_NAMES, DEPTHWISE_BLOCK_SIZE, DEPTHWISE_DILATION, DTYPES, PIPELINES, ArchSpec, DtypeSpec, PipelineSpec, arch_spec, dtype_key

__all__ = [
    "ARCH_NAMES", "DEPTHWISE_BLOCK_SIZE", "DEPTHWISE_DILATION", "DTYPES", "PIPELINES", "RULES", "ArchSpec", "DtypeSpec", "PipelineSpec", "Rule", "Violation",
    "arch_spec", "check_config", "dtype_key",
]
