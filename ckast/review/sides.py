"""The two sides of a review: each is a whole library as files, read from an output tree or rendered
in memory from a selection (a rule set, or config files, possibly as they were at a git revision).

A side argument is read as:
- a directory holding `manifest.json`: a generated tree;
- `REV:PATH` where REV is a git revision: the config file PATH as it was at REV (like `git show`);
- an existing file: a config file (ckast's or CK's formats);
- `key=value[,key=value...]`: the shared selection options with these changed (`ck-api=ck-2026.06`,
  `rule-set=full`, `arch=gfx950`, `datatype=fp16`, `ndim=2`, `variant=forward`, `config=FILE`; a
  key given twice, like `datatype=fp16,datatype=bf16`, lists both).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ckast.arguments import argument
from ckast.errors import CkastError
from ckast.library.selection import Selection
from ckast.number_text import parse_int
from ckast.output.manifest import ManifestError, read_library

class SideError(CkastError, ValueError):
    """A side that cannot be read (bad input: exit 2)."""


@attrs.frozen
class Kernel:
    """One kernel of a side: its name, its config (knob -> value) and its files (path -> text)."""

    name: str
    config: Mapping[str, Any]
    files: Mapping[str, str]


@attrs.frozen
class Side:
    """A whole library: `kernels` by name, and the run's files no kernel owns (registration, CMake);
    `refused` counts the configs of a selection that its validation refused (see `ckast list --rejected`)."""

    label: str
    kernels: Mapping[str, Kernel]
    run_files: Mapping[str, str]
    refused: int = 0
    workload: str = ""
    """For a tree generated for a workload: what it was chosen for (`for FILE (sha256 ...), within P%`)."""


@attrs.frozen
class Request:
    """What a side starts from: the shared selection options (those of `ckast generate`), and how a
    selection side is rendered."""

    selection: Selection
    chunk_size: int = 25
    jobs: int = 1

    def with_selection(self, **changes: Any) -> Request:
        return attrs.evolve(self, selection=attrs.evolve(self.selection, **changes))


_KEYS = {"rule-set": "rule_set", "arch": "arch", "ck-api": "ck_api", "datatype": "datatypes", "ndim": "ndims",
         "variant": "variants", "config": "configs", "builder-conf": "builder_conf"}


def read_side(text: str, request: Request) -> Side:
    """The side named by `text` (see the module docstring); SideError if it cannot be read."""
    path = Path(text)
    if path.is_dir():
        return read_tree(path)
    if path.is_file():
        return render_selection(request.with_selection(configs=(path,)), text)
    if "=" in text:
        return render_selection(_override(request, text), text)
    rev, colon, file = text.partition(":")
    if colon and rev and file:
        return _at_revision(rev, file, request, text)
    raise SideError(f"{text}: not a directory, a config file, REV:FILE or key=value selection")


def read_tree(root: Path) -> Side:
    """A generated tree, from its manifest (`ckast.output.manifest.read_library`): each kernel's files and config
    (checked as `emit` checks one), and the run files; SideError naming the manifest, the JSON path and the rule
    when it, a config or a listed file is refused."""
    try:
        manifest = read_library(root)

        def text(rel: str) -> str:
            data = manifest.read(rel)
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise SideError(f"{root}: {rel}: not UTF-8 text (byte {exc.start})") from None

        kernels = {k.name: Kernel(k.name, k.config, {p: text(p) for p in k.files}) for k in manifest.kernels or ()}
        owned = {p for k in kernels.values() for p in k.files}
        run_files = {p: text(p) for p in manifest.files or () if p not in owned}  # the manifest does not list itself
    except ManifestError as exc:
        raise SideError(str(exc)) from None
    return Side(str(root), kernels, run_files, workload=_workload(manifest.run or {}))


def _workload(run: Mapping[str, Any]) -> str:
    """What a run's kernels were chosen for, if it chose them for a workload (`Request.described`), else ""."""
    from ckast.select.reports.workload import Request

    request = run.get("workload")
    return Request.described(request) if isinstance(request, dict) else ""


def render_selection(request: Request, label: str) -> Side:
    """Build the selection's library and render it in memory, as `ckast generate` would write it."""
    from ckast.config import ConfigError
    from ckast.emit import tree_files
    from ckast.library import SelectionError, build
    from ckast.library.selection import check_names
    from ckast.library.generate import render_all
    selection = request.selection
    if not selection.configs and (not selection.rule_set or not selection.arch):
        raise SideError(f"{label}: a selection needs a rule set and an arch ({argument('rule_set')}, "
                        f"{argument('arch')}) or a config file")
    try:
        check_names(selection.arch, selection.ck_api)
        library = build(selection)
        emitted = render_all(library.kernels(), request.jobs)
    except SelectionError as exc:
        raise SideError(f"{label}: {exc}") from None
    except ConfigError as exc:
        raise SideError("\n".join(exc.lines())) from None
    kernels = {k.name: Kernel(k.name, k.config, dict(k.files)) for k in emitted}
    return Side(label, kernels, dict(tree_files(emitted, request.chunk_size)), len(library.refused))


def _override(request: Request, text: str) -> Request:
    changes: dict[str, Any] = {}
    for item in text.split(","):
        key, eq, value = item.partition("=")
        field = _KEYS.get(key.strip())
        if not eq or field is None:
            raise SideError(f"{text}: {item!r} is not key=value with a key of: {', '.join(_KEYS)}")
        value = value.strip()
        if field in ("datatypes", "variants", "ndims", "configs"):
            item_value: Any = value
            if field == "ndims":
                try:
                    item_value = parse_int(value)
                except ValueError:
                    raise SideError(f"{text}: ndim={value!r} is not an integer") from None
            if field == "configs":
                item_value = Path(value)
            changes[field] = (*changes.get(field, ()), item_value)
        elif field == "builder_conf":
            changes[field] = Path(value)
        else:
            changes[field] = value
    return request.with_selection(**changes)


def _at_revision(rev: str, file: str, request: Request, label: str) -> Side:
    """The config file as it was at git revision `rev` (relative to the current directory, as `git show`
    reads `REV:./FILE`), rendered like a config file."""
    try:
        blob = subprocess.run(["git", "show", f"{rev}:./{file}" if not file.startswith("/") else f"{rev}:{file}"],
                              capture_output=True, check=True).stdout
    except FileNotFoundError:
        raise SideError(f"{label}: git is not installed") from None
    except subprocess.CalledProcessError as exc:
        message = exc.stderr.decode(errors="replace").strip().splitlines()
        raise SideError(f"{label}: {message[-1] if message else 'git show failed'}") from None
    with tempfile.TemporaryDirectory(prefix="ckast-diff-") as tmp:
        copy = Path(tmp, label.replace(os.sep, "_"))
        copy.write_bytes(blob)
        try:
            side = render_selection(request.with_selection(configs=(copy,)), label)
        except SideError as exc:
            raise SideError(str(exc).replace(str(copy), label)) from None
    return side
