"""Real compiles (marked ck_compile): every kernel of the `tiny` library at ck-2025.11."""

from __future__ import annotations

import pytest

from ckast.check import Toolchain, check_headers
from ckast.emit import write_outputs
from ckast.library import Selection, build
from ckast.library.generate import render_all
from ckast.output import entry_points_for

pytestmark = pytest.mark.ck_compile


def test_every_tiny_kernel_compiles(tmp_path):
    library = build(Selection("tiny", "gfx942", "ck-2025.11"))
    kernels = render_all(library.kernels(), jobs=2)
    write_outputs(kernels, tmp_path)
    headers = sorted(tmp_path / k.header for k in kernels)
    results = check_headers(headers, Toolchain.discover(), entry_points_for, parallel=2,
                            on_result=lambda r: print(r.line()))
    assert len(results) == len(library.accepted) >= 10
    assert all(r.passed for r in results), "\n".join(r.log for r in results if not r.passed)
