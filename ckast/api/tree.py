"""Profiles against a CK include tree: check one, detect which one fits, pick the one to emit for."""

from __future__ import annotations

import time
from pathlib import Path

import attrs

from ckast.catalog import profile_names
from ckast.check.toolchain import Toolchain
from ckast.errors import CkastError

from .compare import Row, check
from .entries import Catalog, load_catalog
from .model import Declarations
from .parse import Dispatcher, cindex, library_path, parse_tree
from .parts import DISPATCHER
from .table import table


class ProfileMismatch(CkastError):
    """No profile (or not the one asked for) matches the tree; the message holds the mismatch table."""


@attrs.frozen
class Report:
    """A profile checked against a tree: its mismatches, how many CK Tile and dispatcher entries were
    compared, how many are not from a CK tree (standard library, HIP) and how many dispatcher entries
    were not checked because the tree has no dispatcher."""

    profile: str
    rows: list[Row]
    tile: int
    dispatcher: int
    outside: int
    unchecked: int

    def summary(self, ck_include: Path) -> str:
        verdict = "matches" if not self.rows else f"{len(self.rows)} mismatches"
        missing = f"; {self.unchecked} dispatcher entries not checked (no {DISPATCHER}/)" if self.unchecked else ""
        return (f"{self.profile} against {ck_include}: {self.tile + self.dispatcher} entries checked ({self.tile} CK Tile, "
                f"{self.dispatcher} dispatcher; {self.outside} not from a CK tree: standard library, HIP{missing}), "
                f"{verdict}")

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


def dispatcher_root(ck_include: Path) -> Path | None:
    """The include root of CK's dispatcher headers for a CK include root: the root itself when it holds
    `ck_tile/dispatcher/` (an installed CK, a merged tree), else `../dispatcher/include` of a CK source
    checkout's `include/`; None when neither has them."""
    for root in (ck_include, ck_include.parent / "dispatcher" / "include"):
        if (root / DISPATCHER).is_dir():
            return root
    return None


def declarations(ck_include: Path, catalogs: list[Catalog]) -> Parsed:
    """One parse of the tree for all `catalogs` (and every packaged profile, so that `check`, `detect` and
    `emit --ck-include` share one cached parse), its dispatcher included when it has one."""
    toolchain = Toolchain.discover(ck_include=ck_include, download=False)
    every = [*(load_catalog(name) for name in profile_names()), *catalogs]
    umbrellas = {u for c in every for u in c.umbrellas()}
    root = dispatcher_root(ck_include)
    dispatcher = None if root is None else Dispatcher(
        root, tuple({u for c in every for u in c.umbrellas("dispatcher")}), tuple({g for c in every for g in c.guards()}))
    start = time.perf_counter()
    decls, cached = parse_tree(toolchain, umbrellas, dispatcher)
    return Parsed(decls, time.perf_counter() - start, cached, library_path(cindex(toolchain)))


def report(catalog: Catalog, decls: Declarations) -> Report:
    rows, checked = check(catalog, decls)
    parts = [e.part for e in catalog.entries.values()]
    tile = sum(e.part == "tile" for e in checked)
    return Report(catalog.name, rows, tile, len(checked) - tile, parts.count(""),
                  0 if decls.dispatcher else parts.count("dispatcher"))


def detect(ck_include: Path) -> list[Report]:
    """Every packaged profile against the tree, the closest first (fewest mismatches, then by name)."""
    catalogs = [load_catalog(name) for name in profile_names()]
    decls = declarations(ck_include, catalogs).declarations
    return sorted((report(c, decls) for c in catalogs), key=lambda r: (len(r.rows), r.profile))


def profile_for_tree(ck_include: Path, requested: str | None = None) -> str:
    """The profile to emit for the tree: `requested` if it matches, else the first that does; raise
    ProfileMismatch with the mismatch table when none (or not `requested`) matches, after a line naming the
    profile the tree does match."""
    if requested is not None:
        catalog = load_catalog(requested)
        found = report(catalog, declarations(ck_include, [catalog]).declarations)
        if found.rows:
            matching = [r.profile for r in detect(ck_include) if not r.rows]  # the same (cached) parse
            head = (f"--ck-api {requested} does not match {ck_include}, which matches {matching[0]}: leave out "
                    f"--ck-api (--ck-include picks {matching[0]}) or pass --ck-api {matching[0]}; {requested}'s "
                    "mismatches:" if matching else
                    f"no CK API profile matches {ck_include}; the mismatches of --ck-api {requested}:")
            raise ProfileMismatch("\n".join([head, *found.lines(ck_include)]))
        return requested
    reports = detect(ck_include)
    if reports[0].rows:
        raise ProfileMismatch("\n".join([f"no CK API profile matches {ck_include}; the closest:",
                                         *reports[0].lines(ck_include)]))
    return reports[0].profile
