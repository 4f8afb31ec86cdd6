"""`ckast select eval --best-of K` (the best measured of each problem's top k predicted) on a small fabricated
table whose figures are computed by hand, and `--plot FILE.svg`: well-formed, deterministic, one dot per measured
(problem, kernel) pair, one curve per predictor; the pictures of docs/selection.md are what their command writes."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckast.cli.select import select
from ckast.select.models.analytic import AnalyticPredictor
from ckast.select.serving.library import load_library
from ckast.select.reports.plot_svg import Box, Figure, curves, log_ticks, scatter
from ckast.select.serving.problem_read import gemm_problem

from .select_helpers import ROOT, gemm_entries, python_ranking, write_library

SVG = "{http://www.w3.org/2000/svg}"
SHAPES = ((1024, 1024, 1024), (512, 2048, 256))
MEASURED = ((50.0, 100.0, 80.0), (90.0, 60.0, 100.0))
"""Per shape, the measured TFLOPS of its three measured kernels in the analytic model's order (best predicted
first). Best of the top k, k = 1, 2, 3: shape 1 0.5, 1.0, 1.0; shape 2 0.9, 0.9, 1.0."""


def _invoke(*args):
    result = CliRunner().invoke(select, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> tuple[Path, Path]:
    """A GEMM library and a table of two shapes x three kernels: the analytic model's 1st, 5th and 10th."""
    root = tmp_path_factory.mktemp("best_of")
    lib = write_library(root / "lib", gemm_entries(root))
    library = load_library(lib)
    rows = []
    for (m, n, k), measured in zip(SHAPES, MEASURED):
        ranking = python_ranking(library, gemm_problem({"M": m, "N": n, "K": k}), AnalyticPredictor())
        picked = [ranking[i] for i in (0, 4, 9)]
        assert picked[0][1] > picked[1][1] > picked[2][1]  # no ties: the order is the predictions'
        rows += [{"kernel": name, "M": m, "N": n, "K": k, "tflops": tflops}
                 for (name, _), tflops in zip(picked, measured)]
    path = root / "timings.csv"
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, ["kernel", "M", "N", "K", "tflops"])
        writer.writeheader()
        writer.writerows(rows)
    return lib, path


def test_best_of_k_scores_the_fastest_measured_of_the_top_k(table):
    lib, path = table
    status, out, err = _invoke("eval", "--data", path, "--library", lib, "--best-of", "3", "--json")
    assert status == 0, err
    report = json.loads(out)
    figures = [r[f] for r in report["best_of"] for f in ("k", "problems", "mean", "p10", "p50", "min")]
    assert figures == pytest.approx([1, 2, 0.7, 0.5, 0.9, 0.5, 2, 2, 0.95, 0.9, 1.0, 0.9, 3, 2, 1.0, 1.0, 1.0, 1.0])
    assert report["all"]["all"]["mean"] == pytest.approx(0.7)  # k = 1 is eval's pick
    status, out, err = _invoke("eval", "--data", path, "--library", lib, "--best-of", "2")
    assert status == 0, err
    assert out.splitlines()[-4:] == [
        "best of the top k predicted (the fastest measured of each problem's k best predicted kernels):",
        "k                      problems    mean     P10     P50     min",
        "1                             2   70.0%   50.0%   90.0%   50.0%",
        "2                             2   95.0%   90.0%  100.0%   90.0%"]
    assert "best_of" not in json.loads(_invoke("eval", "--data", path, "--library", lib, "--json")[1])


def test_a_best_of_above_the_measured_kernels_is_the_best(table):
    lib, path = table
    status, out, _ = _invoke("eval", "--data", path, "--library", lib, "--best-of", "7", "--json")
    assert status == 0 and [r["mean"] for r in json.loads(out)["best_of"]][2:] == [1.0] * 5


def _svg(path: Path) -> ET.Element:
    return ET.parse(path).getroot()


def test_plot_is_well_formed_deterministic_and_shows_every_pair(table, tmp_path):
    lib, path = table
    plot = tmp_path / "eval.svg"
    status, out, err = _invoke("eval", "--data", path, "--library", lib, "--best-of", "3", "--plot", plot)
    assert status == 0, err
    root = _svg(plot)
    assert root.tag == f"{SVG}svg"
    assert len(root.findall(f".//{SVG}g[@class='points']/{SVG}circle")) == 6  # 2 shapes x 3 kernels
    labels = [c.find(f"{SVG}title").text for c in root.findall(f".//{SVG}polyline[@class='curve']")]
    assert labels == ["analytic model: mean 70.0%, P10 50.0%", "best of its top 2: mean 95.0%, P10 90.0%",
                      "best of its top 3: mean 100.0%, P10 100.0%"]
    first = plot.read_bytes()
    mtime = plot.stat().st_mtime_ns
    assert _invoke("eval", "--data", path, "--library", lib, "--best-of", "3", "--plot", plot)[0] == 0
    assert plot.read_bytes() == first and plot.stat().st_mtime_ns == mtime  # same bytes: not rewritten
    _invoke("eval", "--data", path, "--library", lib, "--plot", plot)
    assert len(_svg(plot).findall(f".//{SVG}polyline")) == 1 and plot.read_bytes() != first


def test_plot_into_a_missing_folder_fails_in_one_line(table, tmp_path):
    lib, path = table
    status, _, err = _invoke("eval", "--data", path, "--library", lib, "--plot", tmp_path / "no" / "eval.svg")
    assert status == 1 and err.startswith("ckast: --plot: cannot write ") and len(err.splitlines()) == 1


def test_svg_text_is_escaped_and_curves_step_over_the_share_of_problems():
    fig = Figure(200, 100)
    curves(fig, Box(40, 10, 100, 50), [("<a & b>", [1.0, 0.5])], "x", "y", 'say "hi"')
    root = ET.fromstring(fig.svg())
    assert "<a & b>" in [t.text for t in root.iter(f"{SVG}text")]
    points = root.find(f".//{SVG}polyline").get("points").split()
    # sorted ascending, one step per value over half the width each: 0.5 at the floor (bottom), then 1.0 (top)
    assert points == ["40.0,60.0", "90.0,60.0", "90.0,10.0", "140.0,10.0"]


def test_log_ticks_cover_the_range():
    assert log_ticks(0.3, 450) == [0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500]
    assert log_ticks(150, 320) == [100, 200, 300, 500]
    assert log_ticks(100, 100) == [100, 200]  # one value: still a range


@pytest.mark.parametrize("points", [[], [(100.0, 100.0)]])
def test_a_scatter_of_no_point_or_one_is_drawn(points):
    fig = Figure(300, 300)
    scatter(fig, Box(40, 20, 200, 200), points, "x", "y", "t")
    assert len(ET.fromstring(fig.svg()).findall(f".//{SVG}circle")) == len(points)


REAL = ROOT / "examples" / "ck-real"
PICTURES = {
    "selection-conv-mi355x.svg": (("--config", REAL / "grouped_conv_fwd_bf16_gfx950.json"),
                                  ["grouped_conv_fwd_bf16_gfx950_train.csv"], "grouped_conv_fwd_bf16_gfx950_kernels.csv"),
    "selection-gemm-mi300x.svg": (("--config", REAL / "gemm_fp16_rcr_gfx942_sweep.json", "--ck-api", "ck-2026.06"),
                                  ["gemm_fp16_rcr_gfx942_sweep_results.csv", "gemm_fp16_rcr_gfx942_sweep_results_b.csv"],
                                  "gemm_fp16_rcr_gfx942_kernels.csv"),
}
"""Per picture: the `ckast emit` of its library (as docs/selection.md emits it: equal predictions are ordered by
kernel name), its timing tables and kernel table."""


@pytest.mark.parametrize("name", sorted(PICTURES))
def test_the_docs_pictures_are_what_their_command_writes(name, tmp_path):
    """docs/selection.md shows `select eval --best-of 3 --plot` of CK's measurements: the committed files are
    the command's bytes."""
    from ckast.cli import main

    emit, tables, kernels = PICTURES[name]
    lib = tmp_path / "lib"
    assert CliRunner().invoke(main, ["emit", *map(str, emit), "-o", str(lib)]).exit_code == 0
    data = [arg for t in tables for arg in ("--data", REAL / t)]
    status, _, err = _invoke("eval", *data, "--kernels", REAL / kernels, "--library", lib, "--best-of", "3",
                             "--plot", tmp_path / name)
    assert status == 0, err
    assert (tmp_path / name).read_bytes() == (ROOT / "docs" / name).read_bytes()


def test_plot_of_a_model_adds_the_analytic_model_s_curve(table, tmp_path):
    lib, path = table
    model = tmp_path / "model"
    status, _, err = _invoke("train", "--data", path, "--library", lib, "-o", model, "--folds", "0", "--trees", "3")
    assert status == 0, err
    plot = tmp_path / "eval.svg"
    status, out, err = _invoke("eval", "--data", path, "--library", lib, "--model", model, "--plot", plot)
    assert status == 0, err
    titles = [c.find(f"{SVG}title").text for c in _svg(plot).findall(f".//{SVG}polyline")]
    assert len(titles) == 2 and titles[0].startswith(f"residual model {model} (analytic model, ")
    assert titles[1] == "analytic model: mean 70.0%, P10 50.0%"


def test_best_of_and_plot_reuse_the_predictions_eval_made(table, tmp_path, monkeypatch):
    """`--best-of` and `--plot` score the problems `select eval` ranked: each problem is predicted once."""
    lib, path = table
    calls = []
    original = AnalyticPredictor.predict_tflops

    def counting(self, problem, *args, **kwargs):
        calls.append(problem)
        return original(self, problem, *args, **kwargs)

    monkeypatch.setattr(AnalyticPredictor, "predict_tflops", counting)
    status, _, err = _invoke("eval", "--data", path, "--library", lib, "--best-of", "2", "--plot", tmp_path / "e.svg")
    assert status == 0, err
    assert len(calls) == len(SHAPES) == len(set(calls))
