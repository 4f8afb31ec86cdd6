"""How many processes or fits ckast runs at a time when `-j` is not given."""

from __future__ import annotations

import os


def default_jobs() -> int:
    """The cores this process may run on (its CPU affinity, where the system has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
