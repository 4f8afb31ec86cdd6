"""Writing one run's files into an output directory, through a `Transaction`.

`write_tree` stages every file (unchanged ones keep their inode and mtime) and the manifest, then
commits: the output directory shows the whole new tree at once, and the run's stamp is recorded
outside it (`ckast.output.stamp`). Every file of the tree is a function of the run's inputs alone (no
times, no paths of the machine). Files of the previous run that this one does not produce are gone;
files ckast never listed are kept as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ckast.json_out import dumps

if TYPE_CHECKING:
    from ckast.lower.identity import EntryPoint

from .stamp import manifest_digest, write_stamp
from .transaction import MANIFEST, Transaction


def write_tree(files: Iterable[tuple[str, str]], manifest: Mapping[str, Any], tx: Transaction,
               transform: Callable[[str, str], str] | None = None,
               stamp: tuple[str, Mapping[str, Any]] | None = None,
               done: Mapping[str, tuple[bool, list[int] | None]] | None = None) -> dict[str, int]:
    """Stage `files` (path relative to the output directory, text) and the manifest, then commit.

    `manifest` gets a sorted `files` list added. `transform(path, text)` may rewrite a file's text
    before it is compared (e.g. clang-format). `stamp` = (run key, summary) records the run for
    `ckast.output.stamp.up_to_date`. `done` lists files of this run already staged elsewhere: written
    (True) or unchanged (False), and their `file_states` once staged. Returns counts: written,
    unchanged, removed.
    """
    staged = dict(done or {})
    made_dirs: set[str] = set()
    for path, text in files:
        staged[path] = tx.stage.put(path, transform(path, text) if transform else text, made_dirs)
    written = sum(w for w, _ in staged.values())
    unchanged = len(staged) - written
    current = set(staged)
    text = manifest_text({**manifest, "files": sorted(current)})
    staged[MANIFEST] = tx.stage.put(MANIFEST, text)
    produced = current | {MANIFEST}
    record = None
    if stamp is not None:  # the staged files' sizes and times are those the tree has after the swap
        states = dict(sorted((path, state) for path, (_, state) in staged.items()))
        record = partial(write_stamp, tx.out, stamp[0], {**stamp[1], "files": len(current)}, states,
                         manifest_digest(text.encode()))
    removed = tx.commit(produced, then=record)
    return {"written": written, "unchanged": unchanged, "removed": removed}


class JsonText(str):
    """An item of a manifest list already encoded as `manifest_text` encodes it (`json_line`), e.g. by the
    process that rendered the kernel."""


def json_line(item: Any) -> JsonText:
    """`item` as JSON, keys sorted (a string, e.g. one of a manifest's file paths, by the C encoder
    `json.dumps` ends in, without building an encoder per call)."""
    return JsonText(encode_basestring_ascii(item) if type(item) is str else dumps(item, sort_keys=True))


def manifest_text(manifest: Mapping[str, Any]) -> str:
    """JSON, keys sorted, one line per item of a top-level list (a kernel's entry is one line):
    readable and diffable, and written by the C encoder (indented JSON takes the slow Python one)."""
    lines = ["{"]
    for i, key in enumerate(sorted(manifest)):
        value, comma = manifest[key], "," if i < len(manifest) - 1 else ""
        head = f"  {dumps(key)}: "
        if isinstance(value, list) and value:
            items = [f"    {item if type(item) is JsonText else json_line(item)}" for item in value]
            lines += [head + "[", ",\n".join(items), "  ]" + comma]
        else:
            lines.append(head + dumps(value, sort_keys=True) + comma)
    return "\n".join(lines + ["}"]) + "\n"


def entry_points_for(header: Path) -> tuple[EntryPoint, ...]:
    """Launcher entry points of an emitted header, from the manifest beside it (empty if none); ManifestError
    when that manifest is not ckast's to read."""
    return entry_points_of([header])[Path(header).resolve()]


def entry_points_of(headers: Iterable[Path]) -> dict[Path, tuple[EntryPoint, ...]]:
    """`entry_points_for` of each header (keyed by its resolved path), each folder's manifest read once."""
    from ckast.lower.identity import EntryPoint

    from .manifest import manifest_in

    by_folder: dict[Path, dict[str, tuple[EntryPoint, ...]]] = {}
    points: dict[Path, tuple[EntryPoint, ...]] = {}
    for header in (Path(h).resolve() for h in headers):
        if header.parent not in by_folder:
            manifest = manifest_in(header.parent)
            kernels = manifest.kernels if manifest is not None else None
            by_folder[header.parent] = {k.header: tuple(EntryPoint(*e) for e in k.entry_points)
                                        for k in kernels or () if k.header is not None}
        points[header] = by_folder[header.parent].get(header.name, ())
    return points
