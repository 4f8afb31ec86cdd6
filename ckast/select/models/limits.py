"""The size of a model ckast reads (`forest`), which is also the most a model ckast trains may have (`train`, the
`select train --trees` option): one place, so that ckast never writes a model it refuses to read."""

MAX_DEPTH = 512
"""Deepest tree read (levels of splits): the emitter lowers trees recursively, one Python frame per level."""
MAX_TREES = 100_000
"""Most trees read (CK's models hold hundreds to thousands; a tree costs ~15 us to read however small)."""
