"""Shared fixtures."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "golden"
EXAMPLES = ROOT / "examples"

# Templates the tests record stay out of the user's cache (ckast.render.cache); every run starts cold.
os.environ["CKAST_CACHE_DIR"] = tempfile.mkdtemp(prefix="ckast-test-templates-")


@pytest.fixture
def golden_dir() -> Path:
    return GOLDEN
