"""Templates kept between runs, so that a later run fills instead of recording.

One JSON file per ckast build (`ckast.output.stamp.generator_digest`: a template is a function of
ckast's own files, its profile and the shape), under `$CKAST_CACHE_DIR` or `~/.cache/ckast/templates`
(`CKAST_CACHE_DIR=off` disables it). JSON, not pickle: reading a cache never runs code. Each process
that recorded something merges its templates into the file and replaces it in one rename; a lost
race only costs a recording later.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ckast.data_files import cache_root, keep_json
from ckast.nodes.marks import Form, OrderGuard, WidthGuard

from .templates import KernelTemplate

Key = tuple
Shapes = dict[Key, list[KernelTemplate]]
Stored = dict[Key, list[dict]]
"""Templates as read from the file, decoded by `template` when their shape is met (a run that meets a
few shapes does not pay for decoding all of them)."""


def cache_file() -> Path | None:
    """This ckast build's template file, or None when caching is off."""
    from ckast.output.stamp import generator_digest

    root = cache_root()
    return None if root is None else root / "templates" / f"{generator_digest()[:32]}.json"


def load(path: Path | None) -> tuple[Stored, dict[tuple[str, str], set[str]]]:
    """(stored templates by shape key, structural knobs by (kind, variant)) from `path`; empty if
    unreadable."""
    if path is None:
        return {}, {}
    try:
        data = json.loads(path.read_text())
        shapes = {_tuple(json.loads(k)): ts for k, ts in data["templates"].items()}
        structural = {(kind, variant): set(knobs) for kind, variant, knobs in data["structural"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}, {}
    return shapes, structural


def save(path: Path | None, shapes: Mapping[Key, list[KernelTemplate]],
         structural: Mapping[tuple[str, str], set[str]]) -> None:
    """Merge `shapes` and `structural` into the file at `path` (best effort: a cache never fails a run)."""
    if path is None:
        return
    merged, old_structural = load(path)
    for key, templates in shapes.items():
        known = merged.setdefault(key, [])
        known += [plain for plain in (json.loads(json.dumps(_plain(t))) for t in templates) if plain not in known]
    knobs = {v: old_structural.get(v, set()) | structural.get(v, set()) for v in {*old_structural, *structural}}
    data = {
        "templates": {json.dumps(list(k)): ts for k, ts in sorted(merged.items(), key=repr)},
        "structural": sorted([kind, variant, sorted(s)] for (kind, variant), s in knobs.items()),
    }
    keep_json(path, data)


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
