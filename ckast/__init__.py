"""ckast: CK Tile kernel-instance C++ generated from a typed C++ AST."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ckast")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"
