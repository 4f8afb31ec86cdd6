"""The CK Tile headers that tell a tree of one API profile from the others', for a check that parses nothing (the
configure step of the emitted CMake input): the headers a profile's entries name (their `source` and `include`)
that not every packaged profile names. A CK tree that lacks one of them is not a tree of that profile; one that
has them all may still differ in what a header declares (`ckast api check` compares that)."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from .parts import TABLES, part


@functools.cache
def tile_headers(profile: str) -> frozenset[str]:
    """The CK Tile headers (not the dispatcher's, the standard library's or HIP's) the entries of a packaged
    profile name."""
    from ckast.catalog import profile_tables

    tables = profile_tables(profile)
    named = {raw.get(key, "") for table in TABLES for raw in tables.get(table, {}).values()
             for key in ("source", "include")}
    return frozenset(h for h in named if part(h) == "tile")


def marker_headers(profiles: Iterable[str]) -> tuple[str, ...]:
    """The headers a tree of each of `profiles` has and a tree of some other packaged profile may lack, sorted."""
    from ckast.catalog import profile_names

    common = frozenset.intersection(*map(tile_headers, profile_names()))
    return tuple(sorted(frozenset().union(*map(tile_headers, profiles)) - common))
