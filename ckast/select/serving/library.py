"""A generated library as selection sees it: its manifest's kernel names and configs, split into the
parts a problem chooses from.

A problem runs on the kernels of its kind and direction (GEMM; conv forward, which includes the
depthwise kernels, bwd_data or bwd_weight), its spatial rank (conv), one datatype and one layout. The
part's kernel columns (`KernelTable`) are built once and kept, so ranking many problems costs no
per-kernel Python work. A GEMM part holds every variant; which of its kernels compute a problem's
variant is applicability's to say (`applicability.SERVES`), and a part with none of them is refused.
A GEMM problem that names no layout, on a library of several, is `rcr` (`DEFAULT_GEMM_LAYOUT`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import attrs
import numpy as np

from ckast.arguments import argument
from ckast.errors import CkastError

from ckast.select.problem import D_FIELDS, QUANT_GROUPS, ConvProblem, GemmProblem, Problem

DEFAULT_GEMM_LAYOUT = "rcr"
"""The layout of a GEMM problem that names none where the library holds several: CK's default GEMM layout (the one
layout of CK's built-in generator lists, `gemm-default`): row-major A, column-major B, row-major C, a linear
layer's x * W^T."""


class LibraryError(CkastError, ValueError):
    """A library directory that cannot be read, or a selection it cannot serve (bad input, exit 2)."""


def direction_of(config: Mapping[str, Any]) -> str:
    """`gemm`, or the conv direction a kernel serves (depthwise kernels are forward kernels)."""
    if config["kind"] == "gemm":
        return "gemm"
    return "forward" if config["variant"] == "forward_depthwise" else config["variant"]


def problem_direction(problem: Problem) -> str:
    return problem.direction if isinstance(problem, ConvProblem) else "gemm"


@attrs.frozen(eq=False, slots=False)
class Part:
    """The kernels one problem chooses from: names and configs in manifest order. `memo` keeps what is
    derived from the kernels alone (a predictor's tables, whether they compute a GEMM variant; built once per
    part)."""

    names: tuple[str, ...]
    configs: tuple[Mapping[str, Any], ...]
    arch: str
    datatype: str
    memo: dict[str, Any] = attrs.field(factory=dict, init=False, repr=False)

    @functools.cached_property
    def table(self):
        """The part's `KernelTable` (the feature set's kernel columns), built on first use."""
        from ckast.select.features import KernelTable

        return KernelTable.of(self.configs)

    @functools.cached_property
    def name_order(self) -> np.ndarray:
        """Each kernel's position in name order (breaks ties between equal predictions)."""
        order = np.empty(len(self.names), dtype=np.int64)
        order[np.argsort(np.array(self.names, dtype=object), kind="stable")] = np.arange(len(self.names))
        return order

    @functools.cached_property
    def index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.names)}

    def __len__(self) -> int:
        return len(self.names)


@attrs.frozen(eq=False, slots=False)
class Library:
    """A library's kernels (manifest order); `part(problem)` the ones a problem chooses from."""

    path: Path
    names: tuple[str, ...]
    configs: tuple[Mapping[str, Any], ...]
    _parts: dict[tuple, Part] = attrs.field(factory=dict, init=False, repr=False)

    @functools.cached_property
    def index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.names)}

    @functools.cached_property
    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted({c["kind"] for c in self.configs}))

    def config(self, name: str) -> Mapping[str, Any]:
        if name not in self.index:
            raise LibraryError(f"{name}: no kernel of that name in {self.path}")
        return self.configs[self.index[name]]

    def parts(self) -> list[tuple[tuple, Part]]:
        """Every part: ((kind, direction, ndim, datatype, layout), its kernels), in key order (`ndim` is None
        for GEMM, `layout` None for conv, whose layout follows the rank)."""
        keys = {(c["kind"], direction_of(c), c["ndim_spatial"] if c["kind"] == "grouped_conv" else None, c["datatype"],
                 c["layout"] if c["kind"] == "gemm" else None) for c in self.configs}
        ordered = sorted(keys, key=lambda key: tuple("" if v is None else str(v) for v in key))
        for key in ordered:
            if key not in self._parts:
                self._parts[key] = self._select(*key)
        return [(key, self._parts[key]) for key in ordered]

    def part(self, problem: Problem, datatype: str | None = None, layout: str | None = None,
             given: Mapping[str, str] = MappingProxyType({})) -> Part:
        """The kernels `problem` chooses from; LibraryError when the datatype or layout is ambiguous (the
        library holds several and none was given), or when none of them computes the problem's op (a GEMM's
        variant and D tensors). `given`: how messages name where a datatype or layout came from (default:
        the flag or the Python argument, `ckast.arguments.argument`)."""
        from .applicability import serves

        part = self.part_of(problem, datatype, layout, given)
        if isinstance(problem, GemmProblem):
            op = ("serves", problem.variant, problem.batch, problem.groups,  # every field SERVES reads
                  *(getattr(problem, f) for f in (*D_FIELDS, *QUANT_GROUPS)))
            if op not in part.memo:
                part.memo[op] = bool(serves(problem, part.table).any())
            if not part.memo[op]:
                others = sorted({f"{c['datatype']} {c['layout']}"
                                 for c, ok in zip(self.configs, serves(problem, self.configs)) if ok})
                raise LibraryError(f"{self.path}: the library holds no {problem.label} kernel" + (
                    f" of datatype {part.datatype} and layout {part.configs[0]['layout']} (it has some of: "
                    f"{', '.join(others)})" if others else ""))
        return part

    def part_of(self, problem: Problem, datatype: str | None = None, layout: str | None = None,
                given: Mapping[str, str] = MappingProxyType({})) -> Part:
        """The part of the problem's kind, direction and rank that `datatype` and `layout` choose, whichever
        op its kernels compute (`part` without the op check)."""
        key = (problem.kind, problem_direction(problem), getattr(problem, "ndim", None), datatype, layout)
        if key not in self._parts:
            self._parts[key] = self._select(*key, given)
        return self._parts[key]

    def _select(self, kind: str, direction: str, ndim: int | None, datatype: str | None, layout: str | None,
                given: Mapping[str, str] = MappingProxyType({})) -> Part:
        what = f"{direction} {ndim}-D grouped-conv" if kind == "grouped_conv" else "GEMM"
        chosen = [i for i, c in enumerate(self.configs)
                  if c["kind"] == kind and direction_of(c) == direction
                  and (ndim is None or c["ndim_spatial"] == ndim)]
        if not chosen:
            raise LibraryError(f"{self.path}: the library holds no {what} kernel")
        for field, wanted in (("datatype", datatype), ("layout", layout)):
            if field == "layout" and kind == "grouped_conv":
                continue  # a conv layout follows the rank (and depthwise kernels have their own)
            held = sorted({self.configs[i][field] for i in chosen})
            if wanted is None and field == "layout" and len(held) > 1 and DEFAULT_GEMM_LAYOUT in held:
                wanted = DEFAULT_GEMM_LAYOUT
            if wanted is None and len(held) > 1:
                raise LibraryError(f"{argument(field)}: the library's {what} kernels have {field}s {', '.join(held)}; "
                                   f"choose one")
            if wanted is not None:
                if wanted not in held:
                    raise LibraryError(f"{given.get(field, argument(field))}: {wanted!r} is not among the {what} "
                                       f"kernels' {field}s ({', '.join(held)})")
                chosen = [i for i in chosen if self.configs[i][field] == wanted]
        configs = tuple(self.configs[i] for i in chosen)
        arches = {c["arch"] for c in configs}
        if len(arches) > 1:
            raise LibraryError(f"{self.path}: the {what} kernels are for several archs ({', '.join(sorted(arches))})")
        return Part(tuple(self.names[i] for i in chosen), configs, arches.pop(), configs[0]["datatype"])


def load_library(path: Path) -> Library:
    """A generated library's kernels from `path/manifest.json` (`ckast.output.manifest.read_library`: each config
    a valid kernel's knobs under the arch rules); LibraryError naming what is wrong."""
    from ckast.output.manifest import ManifestError, read_library

    try:
        manifest = read_library(path)
    except ManifestError as exc:
        raise LibraryError(str(exc)) from None
    if not manifest.kernels:
        raise LibraryError(f"{manifest.path}: kernels: no kernel listed (not a library generated by ckast?)")
    return Library(Path(path), tuple(k.name for k in manifest.kernels), tuple(k.config for k in manifest.kernels))
