"""`select train` on a table the shipped analytic constants were fitted on (CK's MI355X grouped-conv table): the
calibration records those problems (digests in calibration.toml), train sees the overlap, refits the constants on
each fold's training problems (the fit of `ckast.select.models.calibrate`, as tools/calibrate_analytic.py fits the
shipped ones) and says so; a table they never saw is scored with the shipped constants."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from click.testing import CliRunner

from ckast.arch.calibration import calibration
from ckast.arch.hardware import hardware
from ckast.cli.select import select
from ckast.config import as_dict, load_file
from ckast.lower.identity import kernel_name
from ckast.select.models import calibrate
from ckast.select.ranking import train as train_module
from ckast.select.ranking.shift import Fold
from ckast.select.serving.applicability import LAYERS
from ckast.select.serving.library import load_library
from ckast.select.tables.kernel_table import read_kernel_table
from ckast.select.tables.timings import read_timings

from .select_helpers import ROOT, write_library

REAL = ROOT / "examples" / "ck-real"
CONV_TABLE = REAL / "grouped_conv_fwd_bf16_gfx950_train.csv"
CONV_KERNELS = REAL / "grouped_conv_fwd_bf16_gfx950_kernels.csv"
SWEEP_A = REAL / "gemm_fp16_rcr_gfx942_sweep_results.csv"
GEMM_KERNELS = REAL / "gemm_fp16_rcr_gfx942_kernels.csv"


def _library(path, config):
    return write_library(path, [{"name": kernel_name(k.config), "config": as_dict(k.config)} for k in load_file(config)])


@pytest.fixture(scope="module")
def conv(tmp_path_factory):
    """CK's MI355X conv library, its runs and their dataset."""
    lib = _library(tmp_path_factory.mktemp("conv") / "lib", REAL / "grouped_conv_fwd_bf16_gfx950.json")
    library = load_library(lib)
    runs = read_timings([CONV_TABLE], library, kernels=read_kernel_table(CONV_KERNELS, library), layers=LAYERS).runs
    return {"lib": lib, "library": library, "runs": runs, "data": train_module.dataset(list(runs), library, hardware)}


def test_the_calibration_records_the_problems_it_was_fitted_on(conv, tmp_path):
    """All 185 problems of CK's MI355X table, the 4 shapes of the MI300X sweep; and the runs as the fit reads them
    line up with train's rows (the shipped constants predict what train's analytic column holds)."""
    data = conv["data"]
    assert data.fitted_on == 185 == len(data.problems) and data.measured is not None
    measured = data.measured
    assert measured.problems == data.problems and np.array_equal(measured.tflops, data.tflops)
    assert np.allclose(calibrate.predict(measured, calibration("gfx950")), data.analytic, rtol=1e-12, atol=0)
    lib = _library(tmp_path / "gemm", REAL / "gemm_fp16_rcr_gfx942_sweep.json")
    library = load_library(lib)
    runs = read_timings([SWEEP_A], library, kernels=read_kernel_table(GEMM_KERNELS, library), layers=LAYERS).runs
    gemm = train_module.dataset(list(runs), library, hardware)
    assert gemm.fitted_on == 4 and gemm.measured is not None
    other = [p for p in data.problems[:3]]
    assert calibrate.fitted_on(other, "gfx942", "bf16") == 0  # another arch's constants never saw them


def test_each_fold_refits_the_constants_on_its_training_problems(conv, monkeypatch):
    """`refitted`: per fold, the fit sees the fold's training problems only, and the fold's analytic column is the
    model under the constants it returns."""
    data = conv["data"]
    seen = []

    def fake_fit(measured, base, names, select):
        seen.append((measured.problems, tuple(names), select))
        return calibrate.with_values(base, {"launch_us": 10.0 * len(seen)})

    monkeypatch.setattr(calibrate, "fit", fake_fit)
    held = [np.flatnonzero(data.group < 20), np.flatnonzero((data.group >= 20) & (data.group < 60))]
    plan = [Fold("a", held[0]), Fold("b", held[1])]
    out = train_module.refitted(data, plan)
    assert list(out) == ["a", "b"] and len(seen) == 2
    for (problems, names, searched), fold, number in zip(seen, plan, (1, 2)):
        kept = set(range(len(data.problems))) - set(data.group[fold.held].tolist())
        assert problems == tuple(data.problems[g] for g in sorted(kept))
        assert names == calibrate.CONV_FITTED and searched
        cal = calibrate.with_values(calibration("gfx950"), {"launch_us": 10.0 * number})
        assert np.array_equal(out[fold.label].analytic, calibrate.predict(data.measured, cal))
        assert not np.allclose(out[fold.label].analytic, data.analytic)


def test_train_says_it_refitted_the_constants(conv, tmp_path, monkeypatch):
    """On 40 shapes of CK's table (a stand-in fit: the real one takes seconds per fold), train refits once per
    fold, random and family, records it in cv_metrics.json and says so."""
    calls = []

    def fake_fit(measured, base, names, select):
        calls.append(len(measured.problems))
        return base

    monkeypatch.setattr(calibrate, "fit", fake_fit)
    with CONV_TABLE.open(newline="") as f:
        rows = list(csv.DictReader(f))
    keep = set(list(dict.fromkeys(r["problem_idx"] for r in rows))[:40])
    path = tmp_path / "part.csv"
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(r for r in rows if r["problem_idx"] in keep)
    result = CliRunner().invoke(select, ["train", "--data", str(path), "--kernels", str(CONV_KERNELS), "--library",
                                         str(conv["lib"]), "-o", str(tmp_path / "m"), "--trees", "5", "--folds", "2"])
    assert result.exit_code == 0, result.stderr
    cv = json.loads((tmp_path / "m" / "cv_metrics.json").read_text())
    problems = cv["problems"]
    assert cv["analytic_constants"]["fitted_on"] == problems and cv["analytic_constants"]["refitted"]
    assert len(calls) == 2 + len(cv["families"]) and all(n < problems for n in calls)
    assert (f"analytic constants: the shipped analytic constants were fitted on {problems} of these {problems} "
            "problems: refitted on each fold's training problems") in result.stdout


def test_a_table_the_constants_never_saw_is_scored_with_them(conv):
    """A dataset whose problems the calibration does not record: nothing refitted, and cv says why."""
    import attrs

    data = attrs.evolve(conv["data"], fitted_on=0, measured=None)
    assert train_module.refitted(data, [Fold("a", np.arange(13))]) == {}
    note = train_module.constants_note(data, False)
    assert note == {"fitted_on": 0, "refitted": False,
                    "why": "the shipped analytic constants were fitted on none of these problems"}


def test_the_fit_evaluates_one_symbolic_tree_as_the_constants_would(conv):
    """The fit builds the analytic tree once with the fitted constants as symbols: for values drawn in their
    bounds it predicts bit for bit what the tree with those constants written in predicts (the pipeline's k-step
    cost a chain of `where` instead of a lookup), on every kernel of the table."""
    measured = conv["data"].measured
    base = calibration("gfx950")
    names = calibrate.CONV_FITTED
    tree = calibrate._tree(measured, calibrate.symbolic(base, names))
    rng = np.random.default_rng(3)
    for _ in range(3):
        values = {n: float(np.exp(rng.uniform(*np.log(calibrate.BOUNDS[n][1:])))) for n in names}
        symbols = {calibrate.SYMBOL + n: v for n, v in values.items()}
        written = calibrate.predict(measured, calibrate.with_values(base, values))
        assert np.array_equal(calibrate._evaluate(measured, tree, symbols), written)
        assert len(np.unique(written)) > 100
    assert len({measured.part.configs[i]["pipeline"] for i in measured.rows}) > 1
