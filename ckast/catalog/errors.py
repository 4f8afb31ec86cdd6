"""The catalog's errors (one module, so that `profile` and `members` share them)."""

from __future__ import annotations

from ckast.errors import CkastError


class CatalogError(CkastError, ValueError):
    """The catalog has no such entity, or its data is malformed."""


class FeatureAbsent(CatalogError):
    """The entity or parameter exists in other CK versions but not in this profile."""
