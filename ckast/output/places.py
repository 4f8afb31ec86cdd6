"""Where a command may write: the rules an output directory (-o) is held to before anything is written. A
directory that breaks one is refused with one line (`PlaceError`, bad input: exit status 2), nothing written.

- It is not the current directory nor one that holds it: a run replaces its directory whole (it builds the new
  tree beside it and swaps the two), which would leave the shell that started it in a deleted directory.
- Its name leaves room for the staging tree and the lock file beside it (`.NAME.ckast-stage`), within the
  file system's limit on a name (255 bytes on most) and on a path.
- What is written from a library (a selector, a benchmark driver, a model) goes outside the library
  (`refuse_inside`): the library stays what `generate` wrote.
- It holds no other kind of ckast output (`check_kind`): a kernel tree (`emit` and `generate` write the same
  kind), a selector (`select emit`), a benchmark driver (`bench emit`) or a model (`select train`), as its
  manifest (or a model's spec file) says; a run of the same kind replaces its files, another kind would delete
  them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .transaction import OutputError

if TYPE_CHECKING:
    from .manifest import Manifest

KINDS = {"kernels": ("kernel tree", "ckast emit or ckast generate"), "selector": ("selector", "ckast select emit"),
         "bench": ("benchmark driver", "ckast bench emit"), "model": ("model", "ckast select train")}
"""Each kind of output: what it is called, and the commands that write it."""
MODEL_SPEC = "feature_spec.json"
"""The file that marks a model directory (`ckast.select.models.lightgbm_model.SPEC_FILE`), which has no manifest."""
_BESIDE = (".{}.ckast-stage", ".{}.ckast-old", ".{}.ckast-lock")
"""The names a run gives the entries it makes beside the directory (`transaction.leftover_paths`, `lock`)."""


class PlaceError(OutputError):
    """An output directory no run may write into (one line; bad input, exit status 2)."""

    exit_status = 2


def check_place(out_dir: Path | str) -> None:
    """PlaceError when `out_dir` is empty, the current directory or one that holds it, or too long a name."""
    if str(out_dir) == "":
        raise PlaceError("-o: the output directory is empty; name a directory")
    real = Path(os.path.realpath(out_dir))
    try:
        here = Path(os.getcwd())
    except OSError:  # the current directory is gone already: no run can take it away
        here = None
    if here is not None and (real == here or real in here.parents):
        what = "is the current directory" if real == here else f"holds the current directory {here}"
        raise PlaceError(f"{out_dir}: {what}; a run replaces its output directory whole, which would leave your "
                         f"shell in a deleted directory: write into a directory inside it (e.g. "
                         f"{Path(out_dir) / 'kernels'}) or run ckast from elsewhere")
    _check_length(out_dir, real)


def _check_length(shown: Path | str, real: Path) -> None:
    existing = next((p for p in (real, *real.parents) if os.path.isdir(p)), Path("/"))
    name_max, path_max = (_limit(existing, name, default) for name, default in (("PC_NAME_MAX", 255),
                                                                                 ("PC_PATH_MAX", 4096)))
    longest = max((len(os.fsencode(part)) for part in real.parts), default=0)
    beside = max(len(os.fsencode(pattern.format(real.name))) for pattern in _BESIDE)
    if longest > name_max or beside > name_max:
        room = name_max - (beside - len(os.fsencode(real.name)))
        raise PlaceError(f"{shown}: a name of the path is too long: ckast writes .NAME.ckast-stage beside the "
                         f"directory, so its name may have at most {room} bytes, and each name above it "
                         f"{name_max}")
    if len(os.fsencode(str(real))) + beside - len(os.fsencode(real.name)) + 1 >= path_max:
        raise PlaceError(f"{shown}: the path is too long (a path has at most {path_max} bytes here, and ckast "
                         "writes files inside the directory)")


def _limit(directory: Path, name: str, default: int) -> int:
    try:
        return os.pathconf(directory, name)
    except (OSError, ValueError):
        return default


def refuse_inside(library_dir: Path | str, out_dir: Path | str, what: str) -> None:
    """PlaceError when the output directory `out_dir` is the library's own directory or inside it: `what` (the
    selector, the driver, the model) goes into a directory of its own, so that the library stays what
    `generate` wrote."""
    library, target = Path(library_dir).resolve(), Path(out_dir).resolve()
    if target == library or library in target.parents:
        where = "the library's own directory" if target == library else f"inside the library {library_dir}"
        raise PlaceError(f"-o: {out_dir} is {where}; {what} goes into a directory of its own")


def check_kind(out_dir: Path | str, kind: str) -> Manifest | None:
    """The manifest in `out_dir` (None when there is none); PlaceError when the directory holds another kind of
    ckast output than `kind` (by its manifest, or a model's spec file), OutputError when its manifest is not
    ckast's to read (then which files there are ckast's is unknown)."""
    from .manifest import ManifestError, manifest_in

    try:
        manifest = manifest_in(out_dir)
    except ManifestError as exc:
        raise OutputError(f"{exc} (so which files there are ckast's is unknown: move the manifest away or "
                          "choose another output directory)") from None
    if manifest is None:
        held = "model" if (Path(out_dir) / MODEL_SPEC).is_file() else None
    else:
        held = "selector" if manifest.selector is not None else "bench" if manifest.bench is not None else "kernels"
    if held is not None and held != kind:
        name, commands = KINDS[held]
        raise PlaceError(f"{out_dir}: holds a {name} (written by {commands}), which a {KINDS[kind][0]} would "
                         "replace; choose another output directory, or remove that one")
    return manifest
