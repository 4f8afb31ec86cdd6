"""The output tree: one run's files (and `ckast_kernels.cmake` to build them, `cmake`), staged and swapped in whole (`transaction`), one run at a time
(`lock`), written only when their content changed, with a manifest of the run (`tree`) and a stamp,
kept outside the tree, that lets an identical rerun skip everything (`stamp`)."""

from .cmake import CMAKE_FILE, kernels_cmake
from .transaction import MANIFEST, OutputError, Stage, Transaction
from .tree import entry_points_for, load_manifest, write_tree

__all__ = ["CMAKE_FILE", "kernels_cmake", "MANIFEST", "OutputError", "Stage", "Transaction", "entry_points_for", "load_manifest", "write_tree"]
