"""Kernel configs: the knob table, JSON loading and validation with JSON-path errors."""

from .errors import ConfigError, ConfigIssue
from .kernel import KernelConfig, as_dict
from .knobs import KNOB_NAMES, KNOBS
from .load import LoadedKernel, load_data, load_file

__all__ = [
    "ConfigError", "ConfigIssue", "KernelConfig", "KNOB_NAMES", "KNOBS", "LoadedKernel",
    "as_dict", "load_data", "load_file",
]
