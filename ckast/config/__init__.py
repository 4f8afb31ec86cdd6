"""Kernel configs: the knob table, JSON loading and validation with JSON-path errors."""

from .errors import ConfigError, ConfigIssue
from .kernel import KernelConfig, as_dict
from .knobs import KNOB_NAMES, KNOBS
from .json_file import read_json
from .load import LoadedKernel, Resolved, kernel_objects, load_data, load_file, resolve_kernel

__all__ = [
    "ConfigError", "ConfigIssue", "KernelConfig", "KNOB_NAMES", "KNOBS", "LoadedKernel",
    "Resolved", "as_dict", "kernel_objects", "load_data", "load_file", "read_json", "resolve_kernel",
]
