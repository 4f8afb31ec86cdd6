"""Rendering many kernels on several processes, with the same output as one process."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from operator import attrgetter
from typing import Any, NamedTuple

import attrs

from ckast.config import LoadedKernel
from ckast.config.knobs import KNOB_NAMES
from ckast.emit import CHUNK_SIZE, EmittedKernel, Registrable, RunFiles, print_run_files, render
from ckast.lower.identity import kernel_name
from ckast.output import Stage
from ckast.output.tree import json_line
from ckast.render import shared

from . import workers

CHUNKS_PER_JOB = 8
"""Work units per process: small enough to balance, large enough to amortize pickling."""
SENT_BACK = ("kind", "variant", "ck_api")
"""The knobs of a staged kernel the parent reads (`emit.tree_files`); the rest are in its manifest entry."""


def render_all(kernels: Sequence[LoadedKernel], jobs: int = 1,
               progress: Callable[[int], None] | None = None) -> list[EmittedKernel]:
    """`emit.render` of every kernel, in `jobs` processes; the result (sorted by name) and so every
    written byte are the same for any `jobs`. `progress(n)` is called as n more kernels are done."""
    return render_into(kernels, None, jobs, progress).emitted


class Rendered(NamedTuple):
    emitted: list[EmittedKernel]
    """The kernels, sorted by name (without their texts if they were staged)."""
    written: dict[str, tuple[bool, list[int] | None]]
    """Paths the rendering processes staged: written (True) or unchanged (False), and their `file_states`."""
    printed: RunFiles | None
    """The run files, printed by a rendering process while the others rendered."""


def render_into(kernels: Sequence[LoadedKernel], stage: Stage | None, jobs: int = 1,
                progress: Callable[[int], None] | None = None, chunk_size: int = CHUNK_SIZE) -> Rendered:
    """`render_all`; with a `stage` and more than one job, each process also stages its kernels' files
    (`Stage.write`) and returns them without their texts but with their manifest entries encoded (for
    `emit.write_outputs(done=...)`), and the first process free prints the run files (registration in
    `chunk_size` chunks) for `emit.write_outputs(printed=...)`, which would otherwise print them after
    the rendering, on one process."""
    if jobs <= 1 or len(kernels) < 2:
        out = render(kernels)
        if progress:
            progress(len(kernels))
        return Rendered(out, {}, None)
    chunks = _chunks(kernels, max(1, -(-len(kernels) // (jobs * CHUNKS_PER_JOB))))
    ahead = [_RunFilesJob(_registrables(kernels), chunk_size)] if stage is not None else []
    renderer = shared()  # loaded before the fork: every worker starts with the cached templates
    results: list[tuple[list[EmittedKernel], dict, tuple]] = [([], {}, ())] * len(chunks)
    printed: list[RunFiles] = []

    def done(i: int, result: Any) -> None:
        if i < len(ahead):  # the run files' texts: their items are the parent's own (a smaller peak RSS)
            printed.append(RunFiles(ahead[i].items, ahead[i].chunk_size, result))
            return
        results[i - len(ahead)] = result
        if progress:
            progress(len(chunks[i - len(ahead)]))

    workers.run(partial(_work, stage=stage), [*ahead, *chunks], jobs, done)
    merged: list[EmittedKernel] = []
    written: dict[str, tuple[bool, list[int] | None]] = {}
    for emitted, paths, learned in results:  # in the chunks' order, whatever order they came in
        merged += emitted
        written.update(paths)
        renderer.learn(*learned)
    renderer.save()
    emitted = sorted({k.name: k for k in merged}.values(), key=lambda k: k.name)
    return Rendered(emitted, written, printed[0] if printed else None)


class _RunFilesJob(NamedTuple):
    items: tuple[Registrable, ...]
    chunk_size: int


def _registrables(kernels: Sequence[LoadedKernel]) -> tuple[Registrable, ...]:
    """`emit.registrables` of the kernels `render` will give for `kernels` (sorted by name), from their
    configs (`write_outputs` checks that they agree)."""
    items = {}
    for k in kernels:
        name = kernel_name(k.config)
        items[name] = Registrable(name, k.config.arch, k.config.kind, k.config.variant)
    return tuple(items[name] for name in sorted(items))


def _work(item: Any, stage: Stage | None) -> Any:
    if isinstance(item, _RunFilesJob):
        return print_run_files(item.items, item.chunk_size)
    return _render_chunk(item, stage)


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
