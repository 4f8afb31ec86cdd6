"""Real compiles (marked ck_compile) of libraries at ck-2025.11: every kernel of `tiny`, and a stratified
sample of `full`. Each header's line (PASS/FAIL, seconds, peak RSS) goes to the log."""

from __future__ import annotations

import random

import pytest

from ckast.check import Toolchain, check_headers
from ckast.config import LoadedKernel
from ckast.emit import write_outputs
from ckast.library import Selection, build
from ckast.library.generate import render_all
from ckast.output import entry_points_for

pytestmark = pytest.mark.ck_compile

SAMPLE_SEED = 2025_11


def compile_all(library_kernels, tmp_path, capsys) -> list:
    kernels = render_all(library_kernels, jobs=2)
    write_outputs(kernels, tmp_path)
    headers = sorted(tmp_path / k.header for k in kernels)
    with capsys.disabled():
        print()
        results = check_headers(headers, Toolchain.discover(), entry_points_for, parallel=2,
                                on_result=lambda r: print(r.line(), flush=True))
    assert all(r.passed for r in results), "\n".join(r.log for r in results if not r.passed)
    return results


def test_every_tiny_kernel_compiles(tmp_path, capsys):
    library = build(Selection("tiny", "gfx942", "ck-2025.11"))
    results = compile_all(library.kernels(), tmp_path, capsys)
    assert len(results) == len(library.accepted) >= 10


def test_a_stratified_sample_of_full_compiles(tmp_path, capsys):
    """One accepted config per (variant, feature category, datatype, rank, pipeline) of `full` on gfx942,
    drawn with a fixed seed: 28 kernels at ck-2025.11."""
    library = build(Selection("full", "gfx942", "ck-2025.11"))
    strata: dict[tuple, list] = {}
    for entry in library.accepted:
        c = entry.config
        strata.setdefault((c.variant, entry.candidate.category, c.datatype, c.ndim_spatial, c.pipeline), []).append(entry)
    rng = random.Random(SAMPLE_SEED)
    sample = [rng.choice(entries) for _, entries in sorted(strata.items())]
    assert len(sample) >= 25
    kernels = [LoadedKernel(e.candidate.origin, e.config) for e in sample]
    assert len(compile_all(kernels, tmp_path, capsys)) == len(sample)
