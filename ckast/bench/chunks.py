"""The driver's chunks: its kernel runs cut into translation units of a few kernels each.

The kernel runs are the plan's groups, each group's parts and each part's kernels, in that order; a chunk
holds the next `size` of them (the last chunk fewer), so a chunk may end inside a part and span groups. A
chunk's TU includes and instantiates its own kernels only, so the chunks compile in parallel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from .plan import Plan

CHUNK_KERNELS = 16
"""Kernels per chunk unless `bench emit --chunk-kernels` says otherwise: a chunk compiles in a few CPU-minutes
per GPU arch, and CK Tile's headers are parsed once per chunk rather than once per kernel."""


@attrs.frozen
class Slice:
    """The kernels `lo` to `hi` (exclusive, positions in the part's `names`) of part `part` of group `group`
    (indices into `Plan.groups` and that group's `parts`); `table` numbers the part's timing table among all
    the plan's parts, in plan order."""

    group: int
    part: int
    table: int
    lo: int
    hi: int


@attrs.frozen
class Chunk:
    """One chunk: its number and its kernel runs, as slices of parts in plan order."""

    index: int
    slices: tuple[Slice, ...]

    @property
    def stem(self) -> str:
        """`chunk_<index>`: the chunk's C++ namespace, and (`run_<stem>`) its entry point."""
        return f"chunk_{self.index:04d}"

    @property
    def entry(self) -> str:
        return f"run_{self.stem}"

    @property
    def file(self) -> str:
        return f"bench_{self.stem}.cpp"

    def names(self, plan: Plan) -> tuple[str, ...]:
        """The chunk's kernels, in plan order."""
        return tuple(name for s in self.slices for name in plan.groups[s.group].parts[s.part].names[s.lo:s.hi])


def chunks(plan: Plan, size: int = CHUNK_KERNELS) -> tuple[Chunk, ...]:
    """The plan's kernel runs cut into chunks of `size` (at least 1) kernels."""
    if size < 1:
        raise ValueError(f"a chunk holds at least one kernel, not {size}")
    out: list[Chunk] = []
    current: list[Slice] = []
    room = size
    table = 0
    for g, group in enumerate(plan.groups):
        for p, run in enumerate(group.parts):
            lo = 0
            while lo < len(run.names):
                hi = min(len(run.names), lo + room)
                current.append(Slice(g, p, table, lo, hi))
                room -= hi - lo
                lo = hi
                if room == 0:
                    out.append(Chunk(len(out), tuple(current)))
                    current, room = [], size
            table += 1
    if current:
        out.append(Chunk(len(out), tuple(current)))
    return tuple(out)
