"""The CK Tile signature catalog: every template, enum, type, function and header ckast emits,
per CK API version ("API profile").

Profiles are TOML files in `profiles/`. A derived profile names its `base` and lists only what
differs; an `[absent]` table says what a profile lacks and why, so a refusal can explain itself.

The names below are imported from `profile` on first use (PEP 562), so that importing the package,
as the command line does, costs nothing until a profile is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ckast.lazy import exports

if TYPE_CHECKING:
    from .profile import (
        DEFAULT_PROFILE,
        CatalogError,
        FeatureAbsent,
        Profile,
        load_profile,
        load_profile_file,
        profile_names,
        profile_tables,
    )

__all__ = ["DEFAULT_PROFILE", "CatalogError", "FeatureAbsent", "Profile", "load_profile", "load_profile_file",
           "profile_names", "profile_tables"]
_SOURCE = {**dict.fromkeys(__all__, "profile"), "DEFAULT_PROFILE": "names", "profile_names": "names"}


__getattr__, __dir__ = exports(__name__, _SOURCE, __all__)
