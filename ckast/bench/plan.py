"""What a benchmark driver runs: a problems file's problems over a library's parts.

Problems are read as `ckast select --problems` reads them (`select.report.read_problems` and
`parse_row`). They are grouped by kind, direction and spatial rank (a `Group`); a group runs on
every part of the library with that kind, direction and rank (one part per datatype and, for GEMM,
layout: a row's `datatype` and `layout`, read as everywhere, choose no part here, and its `weight` plays no
part), and every part writes a timing table of its own, since `ckast select train` makes one model
per kind, direction, datatype and arch. Everything the driver needs per problem is computed here, at
emit time: the table cells (in the spellings `select.timings` reads), the FLOPs and the device
buffer sizes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ckast.arch import DTYPES
from ckast.select.library import (
    Library,
    LibraryError,
    Part,
    direction_of,
    load_library,
    problem_direction,
)
from ckast.select.applicability import LAYERS
from ckast.select.problem import (  # CK's spellings of the axes
    _FILTER,
    _INPUT,
    AXES,
    GemmProblem,
    Problem,
    ProblemError,
)
from ckast.select.report import PROBLEMS_MAX, parse_row, read_problems

LEFT_OUT_VARIANTS = {"multi_d": "the driver allocates no D tensors"}
"""Kernel variants the driver leaves out, and why (said on the command line, never silently)."""


@attrs.frozen
class PartRun:
    """One part of a group: its kernels (`names`, part order) and the table it writes (`stem`.csv)."""

    part: Part
    names: tuple[str, ...]
    layout: str | None
    """The GEMM layout (A, B, C: `r` row-major, `c` column-major); None for convolutions."""

    @property
    def stem(self) -> str:
        config = self.part.configs[0]
        if config["kind"] == "gemm":
            return f"gemm_{self.part.datatype}_{self.layout}"
        return f"grouped_conv_{direction_of(config)}_{config['ndim_spatial']}d_{self.part.datatype}"


@attrs.frozen
class Group:
    """Problems of one kind, direction and rank, and the parts they run on."""

    kind: str
    direction: str
    ndim: int | None
    problems: tuple[Problem, ...]
    parts: tuple[PartRun, ...]

    @property
    def stem(self) -> str:
        return "gemm" if self.kind == "gemm" else f"grouped_conv_{self.direction}_{self.ndim}d"

    @property
    def columns(self) -> tuple[str, ...]:
        """The problem's columns of the timing table (CK's spellings, C and K over all groups)."""
        if self.kind == "gemm":
            return ("M", "N", "K", "k_batch")
        axes = AXES[3 - self.ndim:]
        return ("direction", "G", "N", "C", "K", "k_batch", *(_INPUT[a] for a in axes), *(_FILTER[a] for a in axes),
                *(f"{name}_{a}" for name in ("stride", "dilation", "left_pad", "right_pad") for a in axes))

    def cells(self, problem: Problem) -> str:
        """The problem's cells of a table row, in `columns` order."""
        if isinstance(problem, GemmProblem):
            values: Sequence[Any] = (problem.M, problem.N, problem.K, problem.k_batch)
        else:
            values = (problem.direction, problem.G, problem.N, problem.C * problem.G, problem.K * problem.G,
                      problem.k_batch, *problem.input, *problem.filter, *problem.stride, *problem.dilation,
                      *problem.left_pad, *problem.right_pad)
        return ",".join(map(str, values))

    def buffer_bytes(self, problem: Problem) -> tuple[int, int, int]:
        """Bytes of the three operands (GEMM A, B, C; conv input, weight, output) at the largest element
        size of the group's datatypes, so one allocation per problem serves every part."""
        size = max(max(DTYPES[p.part.datatype].size, DTYPES[DTYPES[p.part.datatype].output].size)
                   for p in self.parts)
        if isinstance(problem, GemmProblem):
            counts = (problem.M * problem.K, problem.K * problem.N, problem.M * problem.N)
        else:
            counts = (problem.G * problem.N * problem.C * math.prod(problem.input),
                      problem.G * problem.K * problem.C * math.prod(problem.filter),
                      problem.G * problem.N * problem.K * math.prod(problem.output))
        return tuple(size * c for c in counts)


@attrs.frozen
class Plan:
    library: Library
    groups: tuple[Group, ...]
    left_out: Mapping[str, int]
    """Kernels left out per variant (see LEFT_OUT_VARIANTS)."""
    layers: tuple[str, ...] = LAYERS
    """The applicability layers a GEMM kernel must pass to run a problem."""

    @property
    def kernels(self) -> tuple[str, ...]:
        """Every kernel the driver runs, sorted."""
        return tuple(sorted({name for g in self.groups for p in g.parts for name in p.names}))


def plan(library_dir: Path, problems_file: Path, layers: Sequence[str] = LAYERS) -> Plan:
    """The driver's plan, its GEMM kernels run where the applicability `layers` accept a problem (LibraryError,
    ProblemError naming what is wrong; more than `PROBLEMS_MAX` problems are refused)."""
    library = load_library(library_dir)
    problems: dict[tuple, list[Problem]] = {}
    for number, (label, fields) in enumerate(read_problems((), problems_file)):
        if number == PROBLEMS_MAX:
            raise ProblemError("--problems", f"{problems_file}: more than {PROBLEMS_MAX:,} problems, the most a "
                                             "benchmark driver holds; split the file")
        problem = parse_row(fields, library.kinds, label).problem
        if isinstance(problem, GemmProblem) and problem.variant in LEFT_OUT_VARIANTS:
            raise ProblemError("variant", f"{problem.variant} problems are not measured "
                                          f"({LEFT_OUT_VARIANTS[problem.variant]})", label)
        key = (problem.kind, problem_direction(problem), getattr(problem, "ndim", None))
        problems.setdefault(key, []).append(problem)
    left_out: dict[str, int] = {}
    for config in library.configs:
        if config.get("variant") in LEFT_OUT_VARIANTS:
            left_out[config["variant"]] = left_out.get(config["variant"], 0) + 1
    groups = [Group(*key, tuple(group), _parts(library, group[0], key)) for key, group in problems.items()]
    return Plan(library, tuple(groups), left_out, tuple(layers))


def _parts(library: Library, problem: Problem, key: tuple) -> tuple[PartRun, ...]:
    kind, direction, ndim = key
    held = sorted({(c["datatype"], c["layout"] if kind == "gemm" else None) for c in library.configs
                   if c["kind"] == kind and direction_of(c) == direction and c.get("ndim_spatial", None) == ndim
                   and c.get("variant") not in LEFT_OUT_VARIANTS})
    if not held:
        what = "GEMM" if kind == "gemm" else f"{direction} {ndim}-D grouped-conv"
        raise LibraryError(f"{library.path}: the library holds no {what} kernel the driver can run "
                           f"(a problem of the problems file needs one)")
    runs = []
    for datatype, layout in held:
        part = library.part_of(problem, datatype, layout)
        names = tuple(name for name, c in zip(part.names, part.configs) if c.get("variant") not in LEFT_OUT_VARIANTS)
        runs.append(PartRun(part, names, layout))
    return tuple(runs)


def gemm_applicable(group: Group, run: PartRun, layers: Sequence[str]) -> list[bool]:
    """Per problem of a GEMM group, per kernel of `run`: whether the kernel accepts the problem under the
    applicability `layers` (`select.applicability`; GEMM launchers have no `is_supported` of their own)."""
    from ckast.select.applicability import applicable

    keep = [run.part.index[name] for name in run.names]
    return [bool(v) for problem in group.problems for v in applicable(problem, run.part.table, layers)[keep]]

