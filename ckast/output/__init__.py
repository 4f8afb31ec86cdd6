"""The output tree: files written only when their content changed, a manifest of the run, and
removal of the files an earlier run wrote that this one no longer produces."""

from .tree import MANIFEST, entry_points_for, load_manifest, write_if_changed, write_tree

__all__ = ["MANIFEST", "entry_points_for", "load_manifest", "write_if_changed", "write_tree"]
