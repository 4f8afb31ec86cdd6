"""Templates kept between runs, so that a later run fills instead of recording.

One directory per ckast build (`ckast.output.stamp.generator_digest`: a template is a function of
ckast's own files, its profile and the shape), under `$CKAST_CACHE_DIR` or `~/.cache/ckast/templates`
(`CKAST_CACHE_DIR=off` disables it). In it, one file per shape (named by a digest of the shape's key,
which it also holds) and `structural.json`, the knobs that are not slotted per (kind, variant): a run
reads the structural file and the files of the shapes it meets, and nothing else (an emit of one
kernel reads two small files, not the templates of every library rendered before). JSON, not pickle:
reading a cache never runs code. A process that recorded something merges its templates into each
shape's file and replaces it in one rename; a lost race only costs a recording later. Bounds: a shape keeps
its newest `PER_SHAPE` templates, a build's directory the files `ckast.data_files.keep_bytes` allows, and
the cache the directories of the `BUILDS` builds that wrote last.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ckast.data_files import bound, cache_root, keep_json
from ckast.nodes.marks import Form, OrderGuard, WidthGuard

from .templates import KernelTemplate

Key = tuple
Structural = dict[tuple[str, str], set[str]]
STRUCTURAL = "structural.json"
PER_SHAPE = 64
"""The templates a shape's file keeps (the newest)."""
BUILDS = 4
"""The build directories kept (those written last): another build's templates are never read."""


def cache_dir() -> Path | None:
    """This ckast build's template directory, or None when caching is off."""
    from ckast.output.stamp import generator_digest

    root = cache_root()
    return None if root is None else root / "templates" / generator_digest()[:32]


def structural(directory: Path | None) -> Structural:
    """The knobs found structural so far, per (kind, variant); empty if there is no readable file."""
    if directory is None:
        return {}
    try:
        return {(kind, variant): set(knobs) for kind, variant, knobs in _read(directory / STRUCTURAL)}
    except (OSError, ValueError, TypeError):
        return {}


def stored(directory: Path | None, key: Key) -> list[dict[str, Any]]:
    """The stored templates of shape `key` (decoded by `template` when used); empty if none are readable."""
    if directory is None:
        return []
    try:
        data = _read(_shape_file(directory, key))
        return list(data["templates"]) if _tuple(data["key"]) == key else []
    except (OSError, ValueError, KeyError, TypeError):
        return []


def stored_count(directory: Path | None) -> dict[Key, int]:
    """How many templates each stored shape has (reads every shape's file: for reports, not for runs)."""
    counts: dict[Key, int] = {}
    for path in directory.glob("*.json") if directory is not None and directory.is_dir() else ():
        try:
            data = _read(path)
            counts[_tuple(data["key"])] = len(data["templates"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return counts


def save(directory: Path | None, shapes: Mapping[Key, list[KernelTemplate]], knobs: Structural) -> None:
    """Merge `shapes` and the structural `knobs` into the files under `directory` (best effort: a cache
    never fails a run)."""
    if directory is None:
        return
    new = not directory.exists()
    for key, templates in shapes.items():
        known = stored(directory, key)
        known += [plain for plain in (json.loads(json.dumps(_plain(t))) for t in templates) if plain not in known]
        keep_json(_shape_file(directory, key), {"key": list(key), "templates": known[-PER_SHAPE:]})
    old = structural(directory)
    if any(not knobs.get(v, set()) <= old.get(v, set()) for v in knobs) or not (directory / STRUCTURAL).exists():
        merged = {v: old.get(v, set()) | knobs.get(v, set()) for v in {*old, *knobs}}
        keep_json(directory / STRUCTURAL, sorted([kind, variant, sorted(s)] for (kind, variant), s in merged.items()))
    if new and directory.exists():
        try:
            bound(directory.parent, BUILDS)
        except OSError:
            pass


def _shape_file(directory: Path, key: Key) -> Path:
    return directory / f"{hashlib.sha256(json.dumps(list(key)).encode()).hexdigest()[:32]}.json"


def _read(path: Path) -> Any:
    return json.loads(path.read_bytes())


def _plain(t: KernelTemplate) -> dict[str, Any]:
    guards = [["w", g.fixed, list(g.slots), g.limit, g.fits] if isinstance(g, WidthGuard) else ["o", list(g.items)]
              for g in t.guards]
    return {"slots": t.slots, "guards": guards, "files": [_form(f) for f in t.files],
            "entry_points": [[_form(f), _form(a)] for f, a in t.entry_points]}


def template(d: Mapping[str, Any]) -> KernelTemplate:
    """A stored template, decoded."""
    guards = tuple(WidthGuard(g[1], tuple(g[2]), g[3], g[4]) if g[0] == "w" else OrderGuard(tuple(g[1]))
                   for g in d["guards"])
    return KernelTemplate(_tuple(d["slots"]), guards, tuple(Form(*_tuple(f)) for f in d["files"]),
                          tuple((Form(*_tuple(f)), Form(*_tuple(a))) for f, a in d["entry_points"]))


def _form(f: Form) -> list[list]:
    return [list(f.pieces), list(f.slots)]


def _tuple(value: Any) -> Any:
    """JSON lists back to the tuples they were."""
    return tuple(_tuple(v) for v in value) if isinstance(value, list) else value
