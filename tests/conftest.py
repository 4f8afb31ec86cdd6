"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "golden"
EXAMPLES = ROOT / "examples"


@pytest.fixture
def golden_dir() -> Path:
    return GOLDEN
