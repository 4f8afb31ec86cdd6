"""Rendering many kernels on several processes, with the same output as one process."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from operator import attrgetter

import attrs

from ckast.config import LoadedKernel
from ckast.config.knobs import KNOB_NAMES
from ckast.emit import EmittedKernel, render
from ckast.output import Stage
from ckast.output.tree import json_line
from ckast.render import shared

from . import workers

CHUNKS_PER_JOB = 8
"""Work units per process: small enough to balance, large enough to amortize pickling."""
SENT_BACK = ("kind", "variant")
"""The knobs of a staged kernel the parent reads (`emit.run_files`); the rest are in its manifest entry."""


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def render_all(kernels: Sequence[LoadedKernel], jobs: int = 1,
               progress: Callable[[int], None] | None = None) -> list[EmittedKernel]:
    """`emit.render` of every kernel, in `jobs` processes; the result (sorted by name) and so every
    written byte are the same for any `jobs`. `progress(n)` is called as n more kernels are done."""
    return render_into(kernels, None, jobs, progress)[0]


def render_into(kernels: Sequence[LoadedKernel], stage: Stage | None, jobs: int = 1,
                progress: Callable[[int], None] | None = None
                ) -> tuple[list[EmittedKernel], dict[str, tuple[bool, list[int] | None]]]:
    """`render_all`; with a `stage` and more than one job, each process also stages its kernels' files
    (`Stage.write`) and returns them without their texts but with their manifest entries encoded, and
    the second result says which paths were written (True) or unchanged (False) and their
    `file_states`, for `emit.write_outputs(done=...)`."""
    if jobs <= 1 or len(kernels) < 2:
        out = render(kernels)
        if progress:
            progress(len(kernels))
        return out, {}
    chunks = _chunks(kernels, max(1, -(-len(kernels) // (jobs * CHUNKS_PER_JOB))))
    renderer = shared()  # loaded before the fork: every worker starts with the cached templates
    results: list[tuple[list[EmittedKernel], dict, tuple]] = [([], {}, ())] * len(chunks)

    def done(i: int, result: tuple[list[EmittedKernel], dict, tuple]) -> None:
        results[i] = result
        if progress:
            progress(len(chunks[i]))

    workers.run(partial(_render_chunk, stage=stage), chunks, jobs, done)
    merged: list[EmittedKernel] = []
    written: dict[str, tuple[bool, list[int] | None]] = {}
    for emitted, paths, learned in results:  # in the chunks' order, whatever order they came in
        merged += emitted
        written.update(paths)
        renderer.learn(*learned)
    renderer.save()
    return sorted({k.name: k for k in merged}.values(), key=lambda k: k.name), written


def _render_chunk(kernels: Sequence[LoadedKernel], stage: Stage | None) -> tuple[list[EmittedKernel], dict, tuple]:
    """A worker's part: the chunk's kernels (staged, if a `stage` is given, and then sent back with their
    manifest entries encoded, without their texts, entry points and knobs the run files do not read),
    which paths it wrote and their states, and the templates it recorded for the parent to keep."""
    renderer = shared()
    emitted = render(kernels, renderer, save=False, check_keys=False)  # `build` refused repeated keys
    written: dict[str, tuple[bool, list[int] | None]] = {}
    if stage is not None:
        made: set[str] = set()
        written = {path: stage.put(path, text, made) for k in emitted for path, text in k.files}
        emitted = [attrs.evolve(k, files=tuple((path, None) for path, _ in k.files), entry_points=(),
                                config={knob: k.config[knob] for knob in SENT_BACK},
                                manifest_line=json_line(k.manifest_entry())) for k in emitted]
    return emitted, written, renderer.take_new()


def _chunks(kernels: Sequence[LoadedKernel], size: int) -> list[list[LoadedKernel]]:
    """Chunks of about `size` kernels that keep kernels of one shape (same non-int knobs) together,
    so each process records a shape's template once (`ckast.render`)."""
    shapes: dict[tuple, list[LoadedKernel]] = {}
    knobs = attrgetter(*KNOB_NAMES)
    for k in kernels:
        shapes.setdefault(tuple(v for v in knobs(k.config) if type(v) is not int), []).append(k)
    chunks: list[list[LoadedKernel]] = [[]]
    for group in shapes.values():
        if len(chunks[-1]) >= size:
            chunks.append([])
        chunks[-1] += group
    return chunks
