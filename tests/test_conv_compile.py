"""Real compiles (marked ck_compile): forward, bwd_data, bwd_weight and two-stage headers against the wheel's CK Tile."""

from __future__ import annotations

import pytest

from ckast.check import Toolchain, check_headers
from ckast.config import load_data
from ckast.emit import render, write_outputs
from ckast.output import entry_points_for

from .goldens import CONV_CASES

pytestmark = pytest.mark.ck_compile

SAMPLE = ("forward", "bwd_data", "bwd_weight", "bwd_weight_two_stage")


def test_each_direction_and_two_stage_compiles(tmp_path):
    kernels = render(load_data([dict(CONV_CASES[c][0], ck_api="ck-2025.11") for c in SAMPLE]))
    write_outputs(kernels, tmp_path)
    headers = sorted(tmp_path / k.header for k in kernels)
    results = check_headers(headers, Toolchain.discover(), entry_points_for, parallel=2)
    assert all(r.passed for r in results), "\n".join(r.log for r in results if not r.passed)
    assert len(results) == len(SAMPLE)
