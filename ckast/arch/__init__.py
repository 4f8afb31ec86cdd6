"""GPU architecture facts (packaged data, the single source of truth for arch specs)."""

from .specs import ARCH_NAMES, ArchSpec, arch_spec

__all__ = ["ARCH_NAMES", "ArchSpec", "arch_spec"]
