"""Shared fixtures."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "golden"
EXAMPLES = ROOT / "examples"

# Templates the tests record stay out of the user's cache (ckast.render.cache); every run starts cold, and the
# directory goes when the run ends.
_CACHE = tempfile.mkdtemp(prefix="ckast-test-templates-")
os.environ["CKAST_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)


@pytest.fixture
def golden_dir() -> Path:
    return GOLDEN
