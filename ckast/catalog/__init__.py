"""The CK Tile signature catalog: every template, enum, type, function and header ckast emits,
per CK API version ("API profile").

Profiles are TOML files in `profiles/`. A derived profile names its `base` and lists only what
differs; an `[absent]` table says what a profile lacks and why, so a refusal can explain itself.
"""

from .profile import (
    DEFAULT_PROFILE,
    CatalogError,
    FeatureAbsent,
    Profile,
    load_profile,
    profile_names,
)

__all__ = ["DEFAULT_PROFILE", "CatalogError", "FeatureAbsent", "Profile", "load_profile", "profile_names"]
