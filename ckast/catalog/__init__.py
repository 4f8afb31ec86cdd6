"""The CK Tile signature catalog: every template, enum, type, function and header ckast emits,
per CK API version ("API profile").

Profiles are TOML files in `profiles/`. A derived profile names its `base` and lists only what
differs; an `[absent]` table says what a profile lacks and why, so a refusal can explain itself.

The names below are imported from `profile` on first use (PEP 562), so that importing the package,
as the command line does, costs nothing until a profile is needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .profile import (
        DEFAULT_PROFILE,
        CatalogError,
        FeatureAbsent,
        Profile,
        load_profile,
        profile_names,
    )

__all__ = ["DEFAULT_PROFILE", "CatalogError", "FeatureAbsent", "Profile", "load_profile", "profile_names"]
_SOURCE = {**dict.fromkeys(__all__, "profile"), "DEFAULT_PROFILE": "names", "profile_names": "names"}


def __getattr__(name: str) -> Any:
    if name not in _SOURCE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_SOURCE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
