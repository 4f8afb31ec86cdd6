"""A run's manifest (`manifest.json`, written by `tree.write_tree`): its schema, and the one reader of it.

A manifest is data from anywhere: every command that reads one (`select`, `select emit`, `bench emit`, `diff`,
`check`, `jit`, a run writing over a tree) reads it with `read_manifest`, through `read_input` and the strict
JSON parser, and gets it checked against the schema below or refused with one line (ManifestError) naming the
manifest, the JSON path and the rule. Every key is optional unless marked required:

- `files`: the tree's files (the manifest excepted);
- `kernels`: one object per kernel: `name` (required; a C++ identifier, unique), `config` (required; its
  knobs, an object), `header` (its launcher), `files` (its files: among the tree's, no other kernel's),
  `entry_points` (objects of a launcher `function` and its `args` type, each a qualified C++ name);
- `run`: how the run was made (an object);
- `selector`: what `ckast select emit` records: `library` (required; the library's folder, relative to the
  selector's), `applicability` (layer names) and `parts` (objects);
- `bench`: what `ckast bench emit` records: `library` (required; the library's folder, relative to the
  driver's). A recorded library is used only where it is one: a folder whose manifest lists kernels
  (`ckast.select.cxx.record.recorded_library`).

A listed path is relative to the manifest's folder, normalised (no empty, `.` or `..` component) and listed
once per list; `Manifest.read` reads a listed file only where it stays inside that folder once symbolic links
are resolved, and only if it is a regular file.

A command that uses a library's kernels (`select`, `select emit`, `bench emit`, `diff`) reads it with
`read_library`, which also checks each kernel's config as `emit` checks a config file (its knobs, then the arch
rules) and hands on each config with every knob that applies, in ckast's spellings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from ckast.config.errors import ConfigError, ConfigIssue, key_path, shown
from ckast.config.json_file import parse_json
from ckast.errors import CkastError
from ckast.input_file import InputFileError, read_input
from ckast.nodes.names import NameError_, identifier

from .transaction import MANIFEST


class ManifestError(CkastError, ValueError):
    """A manifest that cannot be read or breaks the schema, or a listed file that cannot be read (one line)."""

    def __init__(self, manifest: Path | str, where: str, message: str, rule: str | None) -> None:
        super().__init__(ConfigIssue(where, message, rule).line(str(manifest)))


@attrs.frozen
class ManifestKernel:
    """One item of a manifest's `kernels`."""

    name: str
    config: Mapping[str, Any]
    header: str | None = None
    files: tuple[str, ...] = ()
    entry_points: tuple[tuple[str, str], ...] = ()
    """(function, args) of each launcher entry point."""


@attrs.frozen
class Manifest:
    """A checked manifest: `path` is the file, `kernels` / `files` None where the manifest has no such key."""

    path: Path
    kernels: tuple[ManifestKernel, ...] | None
    files: tuple[str, ...] | None
    run: Mapping[str, Any] | None
    selector: Mapping[str, Any] | None
    bench: Mapping[str, Any] | None
    _where: Mapping[str, str] = attrs.field(repr=False)
    """Each listed path -> the JSON path that lists it (a kernel's list before the tree's)."""

    @property
    def root(self) -> Path:
        return self.path.parent

    def read(self, rel: str) -> bytes:
        """The bytes of the listed file `rel`; ManifestError if it leads out of the manifest's folder (through
        a symbolic link), or is not a regular file of bounded size."""
        where = self._where.get(rel, "")
        root = os.path.realpath(self.root)
        real = os.path.realpath(os.path.join(root, rel))
        if os.path.commonpath([root, real]) != root:
            raise ManifestError(self.path, where, f"{shown(rel)} leads out of {self.root} (to {real}) through a "
                                                  "symbolic link", "manifest.path")
        try:
            return read_input(real)
        except InputFileError as exc:
            raise ManifestError(self.path, where, f"{shown(rel)}: {exc.message}", "file.read") from None


def read_manifest(folder: Path | str) -> Manifest:
    """The manifest in `folder`, checked (see the module docstring); ManifestError otherwise."""
    return _read(folder)[0]


def _read(folder: Path | str) -> tuple[Manifest, bytes]:
    """`read_manifest`, and the manifest's bytes."""
    path = Path(folder) / MANIFEST
    if not os.path.lexists(path):
        raise ManifestError(path, "", "missing (not a tree ckast generated)", "file.read")
    try:
        raw = read_input(path)
        data = parse_json(raw, str(path))
    except InputFileError as exc:
        raise ManifestError(path, "", exc.message, "file.read") from None
    except ConfigError as exc:
        first = exc.issues[0]
        raise ManifestError(path, first.path, first.message, first.rule) from None
    return _Reader(path).manifest(data), raw


STAMP_FROM = 2000
"""Kernels from which `read_library` looks for a run stamp (reading it and digesting ckast's files costs about as
much as checking 2,000 configs)."""


def read_library(folder: Path | str) -> Manifest:
    """`read_manifest`, each kernel's config checked as `emit` checks a config (`ckast.config.resolve_kernel`:
    the knobs, then the arch rules) and given as `as_dict` has it; ManifestError naming the first bad knob.

    A library of `STAMP_FROM` kernels or more whose manifest is, byte for byte, the one this ckast wrote there
    (its run stamp, `stamp.written_by_this_ckast`) is not checked again: its configs are `emit`'s, as it wrote
    them."""
    from ckast.config import as_dict, resolve_kernel

    from .stamp import manifest_digest, written_by_this_ckast

    manifest, raw = _read(folder)
    if len(manifest.kernels or ()) >= STAMP_FROM and written_by_this_ckast(folder, manifest_digest(raw)):
        return manifest
    kernels = []
    for i, kernel in enumerate(manifest.kernels or ()):
        resolved = resolve_kernel(kernel.config, key_path(key_path("kernels", i), "config"))
        if not resolved.ok:
            first = resolved.issues[0]
            raise ManifestError(manifest.path, first.path, first.message, first.rule)
        config = as_dict(resolved.config)
        kernels.append(ManifestKernel(kernel.name, config, kernel.header, kernel.files, kernel.entry_points))
    return manifest if manifest.kernels is None else attrs.evolve(manifest, kernels=tuple(kernels))


def manifest_in(folder: Path | str) -> Manifest | None:
    """`read_manifest`, or None when `folder` holds no manifest at all."""
    return read_manifest(folder) if os.path.lexists(Path(folder) / MANIFEST) else None


@attrs.define
class _Reader:
    """Checks one manifest's data, failing at the first problem."""

    path: Path
    where: dict[str, str] = attrs.field(factory=dict)

    def fail(self, at: str, message: str, rule: str = "manifest.type") -> ManifestError:
        return ManifestError(self.path, at, message, rule)

    def manifest(self, data: Any) -> Manifest:
        top = self.fields(data, "", _TOP, ())
        kernels = None
        if "kernels" in top:
            items = self.typed(top["kernels"], "kernels", list, "a list of kernel objects")
            kernels = tuple(self.kernel(item, key_path("kernels", i)) for i, item in enumerate(items))
            self.unique([k.name for k in kernels], "kernels", ".name", "kernel name")
        files = self.paths(top["files"], "files") if "files" in top else None
        if kernels is not None:
            self.owned(kernels, files)
        run = self.typed(top["run"], "run", dict, "an object") if "run" in top else None
        selector = self.selector(top["selector"]) if "selector" in top else None
        bench = self.bench(top["bench"]) if "bench" in top else None
        return Manifest(self.path, kernels, files, run, selector, bench, self.where)

    def fields(self, data: Any, at: str, known: frozenset[str], required: tuple[str, ...]) -> dict[str, Any]:
        """`data` as an object holding no key but `known`, and every key of `required`."""
        obj = self.typed(data, at, dict, "an object")
        for key in obj:
            if key not in known:
                raise self.fail(key_path(at, key), f"unknown key; expected one of {', '.join(sorted(known))}",
                                "manifest.unknown_key")
        for key in required:
            if key not in obj:
                raise self.fail(key_path(at, key), "missing (required)", "manifest.required")
        return obj

    def typed(self, value: Any, at: str, kind: type, what: str) -> Any:
        if not isinstance(value, kind):
            raise self.fail(at, f"{shown(value)} is not {what}")
        return value

    def kernel(self, data: Any, at: str) -> ManifestKernel:
        obj = self.fields(data, at, _KERNEL, ("name", "config"))
        name = self.typed(obj["name"], key_path(at, "name"), str, "a string")
        try:
            identifier(name)
        except NameError_ as exc:
            raise self.fail(key_path(at, "name"), f"{exc} (a kernel's name names its files and C++ namespace)",
                            "manifest.name") from None
        config = self.typed(obj["config"], key_path(at, "config"), dict, "an object")
        header = self.path_of(obj["header"], key_path(at, "header")) if "header" in obj else None
        files = self.paths(obj["files"], key_path(at, "files")) if "files" in obj else ()
        if header is not None and "files" in obj and header not in files:
            raise self.fail(key_path(at, "header"), f"{shown(header)} is not among the kernel's files",
                            "manifest.files")
        entry_points = ()
        if "entry_points" in obj:
            entries = self.typed(obj["entry_points"], key_path(at, "entry_points"), list, "a list")
            entry_points = tuple(self.entry_point(e, key_path(key_path(at, "entry_points"), i))
                                 for i, e in enumerate(entries))
        return ManifestKernel(name, config, header, files, entry_points)

    def entry_point(self, data: Any, at: str) -> tuple[str, str]:
        obj = self.fields(data, at, _ENTRY_POINT, ("function", "args"))
        function, args = (self.qualified(obj[key], key_path(at, key)) for key in ("function", "args"))
        return function, args

    def qualified(self, value: Any, at: str) -> str:
        text = self.typed(value, at, str, "a string")
        try:
            for part in text.split("::"):
                identifier(part)
        except NameError_ as exc:
            raise self.fail(at, f"{shown(text)} is not a qualified C++ name ({exc})", "manifest.name") from None
        return text

    def paths(self, value: Any, at: str) -> tuple[str, ...]:
        items = self.typed(value, at, list, "a list of paths")
        paths = tuple(self.path_of(item, key_path(at, i)) for i, item in enumerate(items))
        self.unique(paths, at, "", "path")
        return paths

    def path_of(self, value: Any, at: str) -> str:
        rel = self.typed(value, at, str, "a path (a string)")
        problem = _path_problem(rel)
        if problem:
            raise self.fail(at, f"{shown(rel)} {problem}; a listed path is relative to the manifest's folder and "
                                "stays inside it", "manifest.path")
        self.where.setdefault(rel, at)
        return rel

    def unique(self, values: list[str] | tuple[str, ...], at: str, suffix: str, what: str) -> None:
        seen: set[str] = set()
        for i, value in enumerate(values):
            if value in seen:
                raise self.fail(f"{key_path(at, i)}{suffix}", f"{shown(value)}: the {what} is listed twice",
                                "manifest.duplicate")
            seen.add(value)

    def owned(self, kernels: tuple[ManifestKernel, ...], files: tuple[str, ...] | None) -> None:
        """Each kernel's files are the tree's (when it lists them) and no other kernel's."""
        listed = None if files is None else set(files)
        owner: dict[str, str] = {}
        for i, kernel in enumerate(kernels):
            for j, rel in enumerate(kernel.files):
                at = key_path(key_path(key_path("kernels", i), "files"), j)
                if listed is not None and rel not in listed:
                    raise self.fail(at, f"{shown(rel)} is not among the tree's files", "manifest.files")
                if owner.setdefault(rel, kernel.name) != kernel.name:
                    raise self.fail(at, f"{shown(rel)} is also kernel {owner[rel]}'s file", "manifest.files")

    def library(self, obj: Mapping[str, Any], at: str) -> None:
        """`obj["library"]` (of the record `at`) is a folder's path relative to the manifest's: a non-empty
        string without NUL, not absolute."""
        library = self.typed(obj["library"], f"{at}.library", str, "a path (a string)")
        if not library or "\0" in library:
            raise self.fail(f"{at}.library", f"{shown(library)} is not a folder's path")
        if library.startswith("/"):
            raise self.fail(f"{at}.library", f"{shown(library)} is absolute; the library's folder is recorded "
                                             "relative to the manifest's", "manifest.path")

    def selector(self, data: Any) -> Mapping[str, Any]:
        obj = self.fields(data, "selector", _SELECTOR, ("library",))
        self.library(obj, "selector")
        if "applicability" in obj:
            layers = self.typed(obj["applicability"], "selector.applicability", list, "a list of layer names")
            for i, layer in enumerate(layers):
                self.typed(layer, key_path("selector.applicability", i), str, "a layer name (a string)")
        if "parts" in obj:
            parts = self.typed(obj["parts"], "selector.parts", list, "a list of objects")
            for i, part in enumerate(parts):
                at = key_path("selector.parts", i)
                for key, value in self.fields(part, at, frozenset(_PART), ()).items():
                    accepts, what = _PART[key]
                    if not accepts(value):
                        raise self.fail(key_path(at, key), f"{shown(value)} is not {what}")
        return obj

    def bench(self, data: Any) -> Mapping[str, Any]:
        obj = self.fields(data, "bench", _BENCH, ("library",))
        self.library(obj, "bench")
        return obj


def _path_problem(rel: str) -> str | None:
    """What makes `rel` no relative, normalised path (None: it is one)."""
    if not rel:
        return "is empty"
    if "\0" in rel:
        return "holds a NUL character"
    if rel.startswith("/"):
        return "is absolute"
    parts = rel.split("/")
    if ".." in parts:
        return "climbs out with '..'"
    if any(part in ("", ".") for part in parts):
        return "is not normalised (an empty or '.' component)"
    return None


_TOP = frozenset({"files", "kernels", "run", "selector", "bench"})
_KERNEL = frozenset({"name", "config", "header", "files", "entry_points"})
_ENTRY_POINT = frozenset({"function", "args"})
_SELECTOR = frozenset({"library", "applicability", "parts"})
_BENCH = frozenset({"library"})


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _maybe_text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


_PART: dict[str, tuple[Callable[[Any], bool], str]] = {
    **dict.fromkeys(("namespace", "kind", "datatype", "predictor", "model"), (_text, "a string")),
    **dict.fromkeys(("direction", "layout"), (_maybe_text, "a string or null")),
    "kernels": (_count, "a count (an integer >= 0)"),
    "ndim": (lambda v: v is None or _count(v), "a count (an integer >= 0) or null")}
"""A selector part's fields (`select.cxx.selector.write_selector`): what each accepts, in words."""
