"""The output tree: one run's files (and `ckast_kernels.cmake` to build them, `cmake`), staged and swapped in
whole (`transaction`), one run at a time (`lock`), written only when their content changed, with a manifest of
the run (written by `tree`, read and checked by `manifest`) and a stamp, kept outside the tree, that lets an
identical rerun skip everything (`stamp`); only where a run may write (`places`).

The names below are imported from their modules on first use (PEP 562): a rerun that finds its stamp
up to date imports `stamp` alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ckast.lazy import exports

if TYPE_CHECKING:
    from .cmake import CMAKE_FILE, kernels_cmake
    from .transaction import MANIFEST, OutputError, Stage, Transaction
    from .manifest import Manifest, ManifestError, ManifestKernel, manifest_in, read_library, read_manifest
    from .places import PlaceError
    from .tree import entry_points_for, entry_points_of, write_tree

__all__ = ["CMAKE_FILE", "kernels_cmake", "MANIFEST", "Manifest", "ManifestError", "ManifestKernel", "OutputError",
           "PlaceError", "Stage", "Transaction", "entry_points_for", "entry_points_of", "manifest_in", "read_library",
           "read_manifest", "write_tree"]
_SOURCE = {
    **dict.fromkeys(("CMAKE_FILE", "kernels_cmake"), "cmake"),
    **dict.fromkeys(("MANIFEST", "OutputError", "Stage", "Transaction"), "transaction"),
    **dict.fromkeys(("Manifest", "ManifestError", "ManifestKernel", "manifest_in", "read_library", "read_manifest"),
                   "manifest"),
    **dict.fromkeys(("entry_points_for", "entry_points_of", "write_tree"), "tree"),
    "PlaceError": "places",
}

__getattr__, __dir__ = exports(__name__, _SOURCE, __all__)
