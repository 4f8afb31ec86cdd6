"""Profiles against a CK include tree: check one, detect which one fits, pick the one to emit for."""

from __future__ import annotations

import time
from pathlib import Path

import attrs

from ckast.catalog import profile_names
from ckast.check.toolchain import Toolchain

from .compare import Row, check
from .entries import Catalog, load_catalog
from .model import Declarations
from .parse import cindex, library_path, parse_tree
from .table import table


class ProfileMismatch(Exception):
    """No profile (or not the one asked for) matches the tree; the message holds the mismatch table."""


@attrs.frozen
class Report:
    """A profile checked against a tree: its mismatches and how many entries were compared."""

    profile: str
    rows: list[Row]
    checked: int
    skipped: int

    def summary(self, ck_include: Path) -> str:
        verdict = "matches" if not self.rows else f"{len(self.rows)} mismatches"
        return (f"{self.profile} against {ck_include}: {self.checked} entries checked ({self.skipped} not from a CK "
                f"include tree: standard library, HIP, CK dispatcher), {verdict}")

    def lines(self, ck_include: Path) -> list[str]:
        header = ("profile", "template", "parameter", "what", "catalog", "header", "where")
        rows = [(self.profile, r.entity, r.item, r.what, r.a, r.b, r.note) for r in self.rows]
        return [self.summary(ck_include), *(table(header, rows) if rows else [])]


@attrs.frozen
class Parsed:
    declarations: Declarations
    seconds: float
    cached: bool
    library: str

    def timing(self) -> str:
        return f"parse {self.seconds:.1f} s{' (cached)' if self.cached else ''} with {self.library}"


def declarations(ck_include: Path, catalogs: list[Catalog]) -> Parsed:
    """One parse of the tree for all `catalogs` (and every packaged profile, so that `check`, `detect` and
    `emit --ck-include` share one cached parse)."""
    toolchain = Toolchain.discover(ck_include=ck_include, download=False)
    packaged = [load_catalog(name) for name in profile_names()]
    umbrellas = {u for c in [*packaged, *catalogs] for u in c.umbrellas()}
    start = time.perf_counter()
    decls, cached = parse_tree(toolchain, umbrellas)
    return Parsed(decls, time.perf_counter() - start, cached, library_path(cindex(toolchain)))


def report(catalog: Catalog, decls: Declarations) -> Report:
    rows, checked = check(catalog, decls)
    return Report(catalog.name, rows, checked, len(catalog.entries) - checked)


def detect(ck_include: Path) -> list[Report]:
    """Every packaged profile against the tree, the closest first (fewest mismatches, then by name)."""
    catalogs = [load_catalog(name) for name in profile_names()]
    decls = declarations(ck_include, catalogs).declarations
    return sorted((report(c, decls) for c in catalogs), key=lambda r: (len(r.rows), r.profile))


def profile_for_tree(ck_include: Path, requested: str | None = None) -> str:
    """The profile to emit for the tree: `requested` if it matches, else the first that does; raise
    ProfileMismatch with the mismatch table when none (or not `requested`) matches."""
    if requested is not None:
        catalog = load_catalog(requested)
        found = report(catalog, declarations(ck_include, [catalog]).declarations)
        if found.rows:
            raise ProfileMismatch("\n".join(found.lines(ck_include)))
        return requested
    reports = detect(ck_include)
    if reports[0].rows:
        raise ProfileMismatch("\n".join([f"no CK API profile matches {ck_include}; the closest:",
                                         *reports[0].lines(ck_include)]))
    return reports[0].profile
