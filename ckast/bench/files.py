"""The driver's files (main TU, shared header, chunk TUs, CMakeLists.txt), and writing them as one tree.

They are written through `ckast.output` as a generated tree is: staged, swapped in whole, a file whose
bytes do not change kept as it was (its mtime too, so a rebuild recompiles only the chunks that changed),
with a manifest listing them, so that a later emit removes the files it no longer writes (the chunks a
larger `--chunk-kernels` leaves over) and keeps anything else there (a build directory).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ckast import nodes as n

from .chunks import CHUNK_KERNELS, Chunk, chunks
from .cmake import CMAKE, DRIVER, driver_cmake, library_path
from .driver import HEADER, driver_file, driver_profile, header_file
from .launch import applicability, chunk_file
from .plan import Plan


def driver_files(plan: Plan, library: str, cut: tuple[Chunk, ...]) -> list[tuple[str, str]]:
    """(name, text) of every file of the driver for `plan` (of the library at `library`, relative to the output
    directory: `library_path`), in the chunks `cut`: the main TU, the header, the chunk TUs in order, the CMake
    file."""
    profile = driver_profile(plan)
    applicable = applicability(plan)
    return [
        (DRIVER, n.to_source(driver_file(plan, cut, profile))),
        (HEADER, n.to_source(header_file(plan, cut, profile))),
        *((chunk.file, n.to_source(chunk_file(plan, chunk, profile, applicable))) for chunk in cut),
        (CMAKE, driver_cmake(library, [DRIVER, *(chunk.file for chunk in cut)])),
    ]


def write_driver(plan: Plan, library_dir: Path, out_dir: Path, chunk_kernels: int = CHUNK_KERNELS,
                 on_wait: Callable[[str], None] | None = None) -> dict[str, int]:
    """Write `driver_files` into `out_dir`, with a manifest recording the library (`bench.library`, relative to
    `out_dir`: what `ckast.testing` and `ckast jit` take the driver's include folder and API profile from) and,
    for a plan cut to a top K, K (`run.top`), the model that ranked (`run.ranking`) and its applicability; the
    counts of files written, unchanged and removed (`write_tree`'s) and of chunks. ValueError (bad input) before
    anything is written; OutputError when the directory cannot take the files."""
    from ckast.output import Transaction, write_tree

    cut = chunks(plan, chunk_kernels)
    library = library_path(library_dir, out_dir)
    files = driver_files(plan, library, cut)
    run = {"command": "bench emit", "chunk_kernels": chunk_kernels}
    if plan.top is not None:
        run |= {"top": plan.top, "ranking": dict(plan.ranking or {}), "applicability": list(plan.layers)}
    manifest = {"run": run, "bench": {"library": library}}
    with Transaction(out_dir, on_wait, kind="bench") as tx:
        counts = write_tree(files, manifest, tx)
    return {**counts, "chunks": len(cut)}
