"""A persistent index per selection: what `build` accepted, so that a fresh `generate` with a warm cache
skips enumeration and validation.

One JSON file per selection under the cache directory (`index/<digest of the selection>.json`; JSON,
not pickle, as every cache of ckast: reading one never runs code) holds the
run key it was made under (`ckast.output.stamp.run_key`: ckast's own files, so its version, the API
profiles and the rule-set data, the selection and the bytes of its input files), the counts `generate`
reports and the accepted kernels in `build`'s order: origin, knob values (JSON's own types, which are
all a knob holds) and name (`kernel_name` under the same ckast files, handed back to it by
`identity.known_names`). Any other key, or a file that cannot be read, is a miss: the library is built
again and the file replaced. A cache never fails a run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ckast.data_files import cache_root, keep_json
from ckast.output.stamp import run_key

from .selection import Selection

FORMAT = 3
PLAIN = (bool, int, str, type(None))
"""The knob values an index holds as they are (a selection with any other is not indexed)."""


def index_path(selection: Selection) -> Path | None:
    """Where the index of `selection` is kept (None without a cache directory)."""
    root = cache_root()
    if root is None:
        return None
    ident = json.dumps([selection.as_dict(), [str(p) for p in selection.input_files()]], sort_keys=True, default=str)
    return root / "index" / f"{hashlib.sha256(ident.encode()).hexdigest()[:32]}.json"


def selection_key(selection: Selection) -> str:
    return run_key("library-index", {"format": FORMAT, "selection": selection.as_dict()}, selection.input_files())


def load(selection: Selection) -> tuple[list[Any], dict[str, int]] | None:
    """The accepted kernels (`LoadedKernel`s, in `build`'s order) and the counts of `selection`, if an
    index made under its current key is kept; else None."""
    path = index_path(selection)
    if path is None:
        return None
    try:
        data = json.loads(path.read_bytes())
        if data["key"] != selection_key(selection):
            return None
        from ckast.config import KernelConfig, LoadedKernel

        loaded = [(LoadedKernel(origin, KernelConfig(*values)), name) for origin, values, name in data["kernels"]]
        counts = dict(data["counts"])
    except (OSError, ValueError, TypeError, KeyError):  # missing, truncated or of another format: a miss
        return None
    from ckast.lower.identity import known_names

    known_names((k.config, name) for k, name in loaded)
    return [k for k, _ in loaded], counts


def keep(selection: Selection, kernels: list[Any], counts: Mapping[str, int]) -> None:
    """Record `kernels` (`LoadedKernel`s) and `counts` as the index of `selection`; best effort."""
    path = index_path(selection)
    if path is None:
        return
    from ckast.config import KNOB_NAMES
    from ckast.lower.identity import kernel_name

    rows = [(k.path, [getattr(k.config, name) for name in KNOB_NAMES], kernel_name(k.config)) for k in kernels]
    if all(type(v) in PLAIN for _, values, _ in rows for v in values):
        keep_json(path, {"key": selection_key(selection), "counts": dict(counts), "kernels": rows})
