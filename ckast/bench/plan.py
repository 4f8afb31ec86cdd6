"""What a benchmark driver runs: a problems file's problems over a library's parts.

Problems are read as `ckast select --problems` reads them (`select.report.read_problems` and
`parse_row`). They are grouped by kind, direction and spatial rank (a `Group`); a group runs on
every part of the library with that kind, direction and rank (one part per datatype and, for GEMM,
layout: a row's `datatype` and `layout`, read as everywhere, choose no part here, and its `weight` plays no
part), and every part writes a timing table of its own, since `ckast select train` makes one model
per kind, direction, datatype and arch. Everything the driver needs per problem is computed here, at
emit time: the table cells (in the spellings `select.timings` reads), the FLOPs and the device
buffer sizes.

With `top` K, a part measures each problem's K best predicted kernels only, ranked as `ckast select` ranks
them (`select.batch.rank_many`: the applicable kernels under the plan's layers, best predicted first, ties by
name), by the analytic model or a LightGBM model: the short-benchmark loop (rank, measure the top K, keep
the fastest). The part's kernels are then those in some problem's top K, and `PartRun.chosen` says which
of them each problem runs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ckast.arch import DTYPES
from ckast.arch.rules import QUANT_VARIANTS
from ckast.select.serving.library import (
    Library,
    LibraryError,
    Part,
    direction_of,
    load_library,
    problem_direction,
)
from ckast.select.serving.applicability import LAYERS
from ckast.select.problem import (  # CK's spellings of the axes
    _FILTER,
    _INPUT,
    AXES,
    GemmProblem,
    Problem,
    ProblemError,
)
from ckast.select.reports.report import PROBLEMS_MAX, parse_row, read_problems

LEFT_OUT_VARIANTS = {"multi_d": "the driver allocates no D tensors",
                     **dict.fromkeys(QUANT_VARIANTS, "the driver allocates no scales")}
"""Kernel variants the driver leaves out, and why (said on the command line, never silently)."""
BATCH_LEFT_OUT = "the driver runs one GEMM per launch"
"""Why a GEMM problem of batch or groups > 1 is refused (it reads them as every command does)."""


@attrs.frozen
class PartRun:
    """One part of a group: its kernels (`names`, part order) and the table it writes (`stem`.csv)."""

    part: Part
    names: tuple[str, ...]
    layout: str | None
    """The GEMM layout (A, B, C: `r` row-major, `c` column-major); None for convolutions."""
    chosen: tuple[tuple[int, ...], ...] | None = None
    """With a top K: per problem of the group, the positions in `names` of the kernels it runs (its top K, in
    `names` order); None: every problem runs every kernel."""

    def runs(self, problem: int, position: int) -> bool:
        """Whether problem `problem` (its number in the group) runs the kernel at `position` in `names`."""
        return self.chosen is None or position in self.chosen[problem]

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
    top: int | None = None
    """Kernels measured per problem and part (its best predicted); None: all of them."""
    unserved: int = 0
    """With a top K, the problems no kernel of the library is applicable to (they run nothing)."""
    ranking: Mapping[str, Any] | None = None
    """With a top K, the predictor that ranked the kernels: `name` (`analytic` or `lightgbm`), and a LightGBM
    model's directory (`model`) and `trees`."""

    @property
    def kernels(self) -> tuple[str, ...]:
        """Every kernel the driver runs, sorted."""
        return tuple(sorted({name for g in self.groups for p in g.parts for name in p.names}))

    @property
    def runs(self) -> int:
        """The kernel runs the driver makes (rows it writes): per group, part and problem, its kernels."""
        return sum(len(p.names) if p.chosen is None else len(p.chosen[i]) for g in self.groups for p in g.parts
                   for i in range(len(g.problems)))


def plan(library_dir: Path, problems_file: Path, layers: Sequence[str] = LAYERS, top: int | None = None,
         model_dir: Path | None = None) -> Plan:
    """The driver's plan, its GEMM kernels run where the applicability `layers` accept a problem; with `top`,
    each problem's `top` best predicted kernels only (by the LightGBM model `model_dir`, default the analytic
    model). LibraryError, ProblemError or ModelError naming what is wrong; more than `PROBLEMS_MAX` problems
    are refused."""
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
        for many in ("batch", "groups"):
            if isinstance(problem, GemmProblem) and getattr(problem, many) > 1:
                raise ProblemError(many, f"problems of {many} > 1 are not measured ({BATCH_LEFT_OUT})", label)
        key = (problem.kind, problem_direction(problem), getattr(problem, "ndim", None))
        problems.setdefault(key, []).append(problem)
    left_out: dict[str, int] = {}
    for config in library.configs:
        if config.get("variant") in LEFT_OUT_VARIANTS:
            left_out[config["variant"]] = left_out.get(config["variant"], 0) + 1
    groups = [Group(*key, tuple(group), _parts(library, group[0], key)) for key, group in problems.items()]
    if top is None:
        return Plan(library, tuple(groups), left_out, tuple(layers))
    from ckast.select.ranking.rank import load_predictor
    from ckast.select.reports.report import describe

    predictor = load_predictor(model_dir)
    groups = [_top(group, top, predictor, layers) for group in groups]
    unserved = sum(not any(run.chosen[i] for run in g.parts) for g in groups for i in range(len(g.problems)))
    groups = [g for g in groups if g.parts]
    if not groups:
        raise LibraryError(f"{library.path}: no kernel of the library is applicable to a problem of "
                           f"{problems_file}: nothing to measure")
    ranking = {k: v for k, v in describe(predictor).items() if k != "estimated"}
    return Plan(library, tuple(groups), left_out, tuple(layers), top, unserved, ranking)


def _top(group: Group, top: int, predictor, layers: Sequence[str]) -> Group:
    """The group with each part cut to its problems' `top` best predicted kernels (parts left with none are
    dropped)."""
    from ckast.arch.hardware import hardware
    from ckast.select.ranking.batch import batch_size, rank_many

    runs = []
    for run in group.parts:
        allowed = set(run.names)
        size = batch_size(run.part)
        picks: list[list[str]] = []
        for lo in range(0, len(group.problems), size):
            for ranking in rank_many(group.problems[lo:lo + size], run.part, predictor, hardware(run.part.arch),
                                     layers):
                ranked = (run.part.names[i] for i in ranking.order)
                picks.append(list(itertools.islice((name for name in ranked if name in allowed), top)))
        kept = {name for names in picks for name in names}
        names = tuple(name for name in run.names if name in kept)
        if names:
            position = {name: i for i, name in enumerate(names)}
            chosen = tuple(tuple(sorted(position[name] for name in names_)) for names_ in picks)
            runs.append(attrs.evolve(run, names=names, chosen=chosen))
    return attrs.evolve(group, parts=tuple(runs))


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
    from ckast.select.serving.applicability import applicable

    keep = [run.part.index[name] for name in run.names]
    return [bool(v) for problem in group.problems for v in applicable(problem, run.part.table, layers)[keep]]

