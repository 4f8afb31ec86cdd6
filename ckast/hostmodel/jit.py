"""The process's one Cling session: the prelude, one host model per API profile, and units.

Cling cannot be reset, so everything gets a namespace of its own. The prelude (standard headers,
the HIP runtime model, the log) sits at global scope. Each profile's model is included once into
`namespace ckjit_<profile>` (both profiles define `ck_tile` and coexist). Each unit is included
into `namespace ckjit_<profile>::u<N>`, which first shadows the model's namespaces (see
`model.unit_prelude`), so its names resolve to its profile's model and what it declares stays its own.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

import attrs

from ckast import nodes as n
from ckast.catalog import load_profile
from ckast.errors import CkastError

from .handwritten import INCLUDE_DIR, PRELUDE, ROOT, UNOPTIMIZED_HEADER
from .model import model_file, model_headers, profile_namespace, unit_prelude
from .sources import SourceError, collect, stage

UNOPTIMIZED = n.Include(n.Header(UNOPTIMIZED_HEADER))


def unit_prefixes(outer: str, unit: str) -> tuple[str, str]:
    """The namespace prefixes diagnostics leave out for a unit (most specific first)."""
    return (f"{outer}::{unit}::", f"{outer}::")


class JitError(CkastError, RuntimeError):
    """C++ that Cling refused (the message carries its diagnostics) or an include a unit cannot satisfy."""


class JitUnavailable(JitError):
    """cppyy, the JIT itself, does not load (the message is one line: what to install)."""


def _cppyy():
    """The cppyy module, or JitUnavailable if it does not import (not installed, or its backend fails)."""
    try:
        import cppyy
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        raise JitUnavailable(f"cppyy does not load ({type(exc).__name__}: {first}); "
                             "install it with: pip install 'ckast[jit]'") from None
    return cppyy


@attrs.define(eq=False)
class Unit:
    """One JIT-compiled unit: its files, compiled inside `namespace <profile namespace>::<name>`."""

    session: Session
    profile: str
    name: str
    files: tuple[Path, ...]

    @property
    def namespace(self) -> tuple[str, str]:
        return (profile_namespace(self.profile), self.name)

    def define(self, decls: Sequence[n.Decl]) -> None:
        """Compile `decls` inside the unit's namespace (where its own names resolve)."""
        outer, inner = self.namespace
        body = n.Namespace(outer, [n.Namespace(inner, decls)])
        self.session.cppdef(n.to_source(n.File([UNOPTIMIZED, body], pragma_once=False)),
                            hide=unit_prefixes(outer, inner))

    def lookup(self, name: str):
        """A name the unit's namespace declares, as cppyy sees it (e.g. a function defined by `define`)."""
        cppyy = _cppyy()

        outer, inner = self.namespace
        return getattr(getattr(getattr(cppyy.gbl, outer), inner), name)


class Session:
    """The Cling session (use `session()`): loads the prelude and profile models on demand."""

    def __init__(self) -> None:
        self.stage = Path(tempfile.mkdtemp(prefix="ckast-jit-"))
        atexit.register(shutil.rmtree, self.stage, True)
        self._profiles: set[str] = set()
        self._units = 0
        self._started = False

    def cppdef(self, source: str, staged: Mapping[str, Path] = MappingProxyType({}), hide: Sequence[str] = ()) -> None:
        """Compile `source` at global scope. Diagnostics name the originals of staged files and leave
        out the namespace prefixes `hide` (so they read `ck_tile::...`, as with real CK)."""
        cppyy = _cppyy()

        self.start()
        try:
            cppyy.cppdef(source)
        except SyntaxError as exc:
            text = str(exc)
            for name, original in staged.items():
                text = text.replace(str(self.stage / name), str(original))
            for prefix in hide:
                text = text.replace(prefix, "")
            raise JitError(text) from None

    def start(self) -> None:
        """Put the model's include directories on Cling's path and compile the prelude (once)."""
        if self._started:
            return
        cppyy = _cppyy()

        self._started = True
        for path in (INCLUDE_DIR, ROOT, self.stage):
            cppyy.add_include_path(str(path))
        self.cppdef(n.to_source(n.File([UNOPTIMIZED, n.Include(n.Header(PRELUDE))], pragma_once=False)))

    def load(self, profile: str) -> None:
        """Compile profile `profile`'s model into its namespace (once)."""
        if profile in self._profiles:
            return
        header = f"model/{profile}.hpp"
        (self.stage / "model").mkdir(exist_ok=True)
        (self.stage / header).write_text(n.to_source(model_file(load_profile(profile))))
        model = n.Namespace(profile_namespace(profile), [n.Include(n.Header(header))])
        self.cppdef(n.to_source(n.File([UNOPTIMIZED, model], pragma_once=False)))
        self._profiles.add(profile)

    def compile(self, roots: Sequence[Path], profile: str, base: Path | None = None,
                include: Sequence[Path] = ()) -> Unit:
        """JIT the files `roots` (and what they include) as one new unit against `profile`'s model.

        Quoted includes resolve next to the includer, in the folders `include`, to the model's headers,
        then under `base` (default: the first root's directory). Raises JitError with Cling's diagnostics.
        """
        self.load(profile)
        p = load_profile(profile)
        roots = [Path(r) for r in roots]
        try:
            sources = collect(roots, Path(base or roots[0].parent).resolve(), model_headers(p), profile,
                              [Path(d).resolve() for d in include])
        except SourceError as exc:
            raise JitError(str(exc)) from None
        self._units += 1
        name = f"u{self._units}"
        staged = stage(sources, self.stage, name)
        if sources.system:
            includes = [n.Include(n.Header(h, system=True)) for h in sources.system]
            self.cppdef(n.to_source(n.File([UNOPTIMIZED, *includes], pragma_once=False)))
        prelude = unit_prelude(p, name)
        unit = attrs.evolve(prelude, body=(*prelude.body, *(n.Include(n.Header(s)) for s in staged)))
        outer = profile_namespace(profile)
        self.cppdef(n.to_source(n.File([UNOPTIMIZED, n.Namespace(outer, [unit])], pragma_once=False)), staged,
                    unit_prefixes(outer, name))
        return Unit(self, profile, name, sources.files)

    def log_text(self) -> str:
        cppyy = _cppyy()

        self.start()
        return str(cppyy.gbl.ckast_hostmodel.log_text())

    def clear_log(self) -> None:
        cppyy = _cppyy()

        self.start()
        cppyy.gbl.ckast_hostmodel.log_clear()


@functools.cache
def session() -> Session:
    """The process's Cling session."""
    return Session()
