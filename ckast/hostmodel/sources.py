"""A unit's source files, made ready for Cling: the include closure of its roots, staged.

Cling's include path is global and `#pragma once` holds per file path, so a unit's own includes
are resolved here rather than by Cling: a quoted include names a file next to the includer, in one
of the unit's include folders or under the unit's root (included once per unit, dependencies
first), or a header of the profile's host model (already loaded into the profile's namespace); an
angle include is included at global scope before the unit. Staged copies keep every line in place
(include lines become empty), so diagnostics point at the original line numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import attrs

from ckast.errors import CkastError

INCLUDE = re.compile(r'[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]')
SUFFIXES = (".hpp", ".h", ".hh", ".hxx", ".cpp", ".cc", ".cxx")
MAIN = re.compile(r"[ \t]*(?:(?:inline|static|extern)[ \t]+)*int[ \t]+main[ \t]*\(")


class SourceError(CkastError, ValueError):
    """A file the JIT does not take as a unit (not C++, or it defines `main`), an include folder that does not
    exist, or an include the unit cannot satisfy."""


@attrs.frozen
class Sources:
    files: tuple[Path, ...]  # every file of the unit, each once, dependencies first
    system: tuple[str, ...]  # angle includes, in first-seen order


def collect(roots: Sequence[Path], base: Path, model_headers: frozenset[str], profile: str,
            include: Sequence[Path] = ()) -> Sources:
    """The include closure of `roots`: quoted includes resolve next to the includer, then in the folders
    `include` (in order), then to the model's headers, then under `base`; anything else is an error naming
    the include, the including file and line, and the folders searched."""
    order: list[Path] = []
    seen: set[Path] = set()
    system: dict[str, None] = {}

    def visit(path: Path) -> None:
        if path in seen:
            return
        seen.add(path)
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = INCLUDE.match(line)
            if match is None:
                continue
            kind, target = match.groups()
            if kind == "<":
                system[target] = None
                continue
            found = next((d / target for d in (path.parent, *include) if (d / target).is_file()), None)
            if found is not None:
                visit(found.resolve())
            elif target in model_headers:
                continue
            elif (base / target).is_file():
                visit((base / target).resolve())
            else:
                searched = ", ".join(dict.fromkeys(str(d) for d in (path.parent, *include, base)))
                raise SourceError(f'{path}:{number}: "{target}" is in none of the folders searched ({searched}) '
                                  f"nor a header of the {profile} host model")
        order.append(path)

    for root in roots:
        visit(Path(root).resolve())
    return Sources(tuple(order), tuple(system))


def unfit_root(path: Path) -> str | None:
    """Why the file `path` cannot be JIT-ed as a unit (one line naming it), or None: it is not a C++ header or
    source, or it defines `main` (a program's entry point, which the JIT's own process has)."""
    if path.suffix not in SUFFIXES:
        return f"{path}: not a C++ header or source ({', '.join(SUFFIXES)})"
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if MAIN.match(line):
            return f"{path}:{number}: defines main; a program's entry point is not JIT-ed (only library code is)"
    return None


def stage(sources: Sources, stage_root: Path, unit: str) -> dict[str, Path]:
    """Copy the unit's files to `stage_root/unit/` with include lines emptied.

    Returns staged path (relative to `stage_root`, for `#include`) -> original file, in order.
    """
    staged: dict[str, Path] = {}
    (stage_root / unit).mkdir(parents=True)
    for index, original in enumerate(sources.files):
        name = f"{unit}/{index}_{re.sub(r'[^A-Za-z0-9_.+-]', '_', original.name)}"
        lines = original.read_text().splitlines(keepends=True)
        (stage_root / name).write_text("".join("\n" if INCLUDE.match(line) else line for line in lines))
        staged[name] = original
    return staged
