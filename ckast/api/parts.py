"""Where a catalog entry is declared, by its `source`: CK Tile, CK's dispatcher, or outside a CK tree (the standard
library, HIP). Plain names only, so that what needs them alone (`markers`) imports nothing else."""

from __future__ import annotations

TABLES = ("templates", "enums", "types", "functions")
"""The tables of a profile that hold entries."""
TREE_PREFIX = "ck_tile/"
"""Entries whose `source` lies under this path are checked against an include tree: CK Tile's, and CK's
dispatcher's (under `DISPATCHER`) when the tree has it; the others (the standard library, HIP) are not."""
DISPATCHER = "ck_tile/dispatcher"
"""Files (and catalog sources) under this path are CK's dispatcher: their records' members and their
functions' signatures are read too. A tree has them when its include root holds `ck_tile/dispatcher/`."""


def part(source: str) -> str:
    """`tile` or `dispatcher` for a source a CK tree declares, else empty."""
    if not source.startswith(TREE_PREFIX):
        return ""
    return "dispatcher" if source.startswith(DISPATCHER) else "tile"
