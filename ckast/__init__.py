"""ckast: CK Tile kernel-instance C++ generated from a typed C++ AST."""

from __future__ import annotations

import functools


@functools.cache
def _version() -> str:
    # importlib.metadata costs tens of milliseconds to import: only `ckast --version` and callers that
    # ask for `ckast.__version__` pay for it.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ckast")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0"


def __getattr__(name: str) -> str:  # PEP 562
    if name == "__version__":
        return _version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
