"""Quantized and grouped problems in selection: a quantized problem names its family (`variant=bquant`, ...) and
its scale groups by the knobs' names (defaults as the knobs'), a grouped problem its group count (`groups=`, CK's
`group_count`); both read, shown and refused by field; a quantized problem runs only on kernels of its family and
scale groups, with K and N whole groups and CK's scale-vector checks (`quant.*`), a grouped one on grouped kernels
only (`gemm.groups`), named by `why_not` and answered alike by the C++ selector."""

from __future__ import annotations

import numpy as np
import pytest

from ckast.library.selection import Selection
from ckast.select.cxx.problem_struct import problem_struct
from ckast.select.features import KernelTable
from ckast.select.problem import GemmProblem, ProblemError, problem_fields, problem_label
from ckast.select.serving.applicability import LAYERS, applicable, conditions, why_not
from ckast.select.serving.problem_read import gemm_problem, parse_pairs

from .select_helpers import ROOT, entries


@pytest.fixture(scope="module")
def quant() -> list[dict]:
    """examples/gemm_bquant.json: bquant fp8i4 (16x64x256) and fp8 (128x128x128), abquant fp8 on gfx950."""
    path = ROOT / "examples" / "gemm_bquant.json"
    return [e["config"] for e in entries(Selection("", "", "ck-2026.06", (), (), (), None, (path,)))]


def _problem(text: str) -> GemmProblem:
    return gemm_problem(parse_pairs(text))


def test_a_quant_problem_names_its_family_and_scale_groups():
    problem = _problem("M=16,N=7168,K=2048,variant=bquant")
    assert (problem.bquant_group_n, problem.bquant_group_k, problem.aquant_group_k) == (1, 128, 0)  # knob defaults
    assert problem_label(problem) == "M=16,N=7168,K=2048,variant=bquant,bquant_group_n=1,bquant_group_k=128"
    assert _problem(problem_label(problem)) == problem
    assert problem.label == "bquant GEMM (scale groups bquant_group_n=1, bquant_group_k=128)"
    ab = _problem("M=16,N=7168,K=2048,variant=abquant,bquant_group_n=128")
    assert ab.quant_groups == {"aquant_group_k": 128, "bquant_group_n": 128, "bquant_group_k": 128}
    assert "bquant_group_k" not in problem_fields(_problem("M=1,N=1,K=1"))
    struct = problem_struct("gemm")
    assert struct.defaults["bquant_group_k"] == 0
    assert struct.values(ab)[struct.fields.index("bquant_group_n")] == 128


def test_a_grouped_problem_names_its_group_count():
    problem = _problem("M=64,N=4096,K=14336,groups=8")
    assert problem.groups == 8 and problem.flops == 2 * 8 * 64 * 4096 * 14336
    assert problem_label(problem) == "M=64,N=4096,K=14336,groups=8" and problem.label.startswith("grouped standard")
    assert _problem("M=64,N=4096,K=14336,group_count=8") == problem  # CK's spelling
    assert problem_fields(problem)["groups"] == 8 and "groups" not in problem_fields(_problem("M=1,N=1,K=1"))
    assert problem_struct("gemm").defaults["groups"] == 1


@pytest.mark.parametrize(("text", "field", "message"), [
    ("M=1,N=1,K=128,bquant_group_k=128", "bquant_group_k", "standard problem has no scale groups"),
    ("M=1,N=1,K=128,variant=bquant,aquant_group_k=128", "aquant_group_k", "bquant problem has bquant_group_n"),
    ("M=1,N=1,K=128,variant=bquant,bquant_group_k=0", "bquant_group_k", "out of range"),
    ("M=1,N=1,K=128,groups=0", "groups", "out of range"),
    ("M=65536,N=64,K=65536,groups=2", "A", "at most"),
    ("M=1,N=1,K=128,variant=grouped", "variant", "not one of"),  # a kernel variant computing the standard GEMM
])
def test_a_bad_quant_or_grouped_problem_is_refused_naming_the_field(text, field, message):
    with pytest.raises(ProblemError, match=message) as exc:
        _problem(text)
    assert exc.value.field == field


def test_quant_problems_run_on_their_family_and_groups(quant):
    fp8i4, fp8, ab = quant
    problem = _problem("M=128,N=7168,K=2048,variant=bquant")
    assert why_not(problem, fp8i4) is None and why_not(problem, fp8) is None
    assert why_not(problem, ab).startswith("gemm.variant")
    assert why_not(_problem("M=128,N=7168,K=2048"), fp8).startswith("gemm.variant")
    other = _problem("M=128,N=7168,K=2048,variant=bquant,bquant_group_k=64")
    assert why_not(other, fp8).startswith("quant.bquant_group_k (kernel layer)")
    assert "problem_bquant_group_k=64" in why_not(other, fp8)
    assert why_not(_problem("M=128,N=7168,K=2000,variant=bquant"), fp8).startswith("quant.b_group_k")
    two_d = {**fp8, "bquant_group_n": 128, "pad_n": True}
    # N need not be whole groups: CK's B-scale view rounds N / bquant_group_n up (the last group partial)
    assert why_not(_problem("M=128,N=576,K=2048,variant=bquant,bquant_group_n=128"), two_d) is None
    assert why_not(_problem("M=192,N=7168,K=2048,variant=abquant"), ab) is None
    assert why_not(_problem("M=192,N=7168,K=2048,variant=abquant,aquant_group_k=64"), ab).startswith(
        "quant.aquant_group_k")


def test_the_bq_scale_vector_is_cks(quant):
    """A tile of K 256 over groups of 64 holds 4 float scales per row: CK loads them 4 at a time (16 bytes), so
    K / 64 must be whole fours; with groups of 128 (2 per row) pairs."""
    fp8 = {**quant[1], "tile_k": 256, "bquant_group_k": 64}
    assert why_not(_problem("M=128,N=7168,K=4096,variant=bquant,bquant_group_k=64"), fp8) is None
    refused = why_not(_problem("M=128,N=7168,K=4160,variant=bquant,bquant_group_k=64"), fp8)  # 65 groups
    assert refused.startswith("quant.vector_bq") and "vector_bq=4" in refused


def test_grouped_problems_run_on_grouped_kernels_only():
    path = ROOT / "examples" / "gemm_grouped.json"
    configs = [e["config"] for e in entries(Selection("", "", "ck-2026.06", (), (), (), None, (path,)))]
    grouped = next(c for c in configs if c["variant"] == "grouped")
    standard = {**grouped, "variant": "standard"}
    problem = _problem("M=256,N=4096,K=4096,groups=8")
    assert why_not(problem, standard).startswith("gemm.groups (kernel layer)")
    assert why_not(problem, {**grouped, "pad_m": True, "pad_n": True, "pad_k": True}) is None
    assert why_not(_problem("M=256,N=4096,K=4096"), {**grouped, "pad_m": True, "pad_n": True, "pad_k": True}) is None


def test_the_cxx_selector_checks_quant_and_groups(quant):
    """The conditions in C++ answer as `applicable` for bquant, abquant, standard and grouped kernels over quant
    problems of several groups and sizes."""
    pytest.importorskip("cppyy")
    from .test_select_cxx_applicability import _agree

    fp8i4, fp8, ab = quant
    kernels = [*quant, {**fp8, "tile_k": 256, "bquant_group_k": 64}, {**fp8, "bquant_group_n": 128},
               {**ab, "aquant_group_k": 64}]
    table = KernelTable.of([*kernels, {**fp8, "variant": "grouped"}])
    problems = [_problem(f"M={m},N={n},K={k},variant={v}{groups}")
                for m in (16, 192) for n in (7168, 7200) for k in (2048, 2000, 4160)
                for v, groups in (("bquant", ""), ("bquant", ",bquant_group_k=64"), ("bquant", ",bquant_group_n=128"),
                                  ("abquant", ""), ("abquant", ",aquant_group_k=64"))]
    problems += [_problem(f"M=256,N=256,K=512,groups={g}") for g in (1, 4)]
    answers = np.array([applicable(p, table) for p in problems])
    assert answers.any() and not answers.all()
    assert _agree("gemm", [c.holds for c in conditions("gemm", LAYERS)], table, problems) == 0


def test_a_quant_problem_names_its_familys_datatypes():
    """A row's datatype is one the problem's kernels have: CK's variant keys for a quantized family."""
    from ckast.select.reports.report import parse_row

    row = parse_row({"M": "16", "N": "7168", "K": "2048", "variant": "bquant", "datatype": "fp8i4"}, ("gemm",), "x")
    assert row.datatype == "fp8i4" and row.problem.bquant_group_k == 128
    with pytest.raises(ProblemError, match="'fp16' is not one of fp8, bf8, fp8i4") as exc:
        parse_row({"M": "16", "N": "7168", "K": "2048", "variant": "bquant", "datatype": "fp16"}, ("gemm",), "x")
    assert exc.value.field == "datatype"
    with pytest.raises(ProblemError, match="'fp8i4' is not one of"):
        parse_row({"M": "16", "N": "7168", "K": "2048", "datatype": "fp8i4"}, ("gemm",), "x")


# --- the analytic model ---------------------------------------------------------------------------------------

def _predict(configs: list[dict], text: str, arch: str = "gfx942") -> np.ndarray:
    from ckast.arch.hardware import hardware
    from ckast.select.models.analytic import AnalyticPredictor
    from ckast.select.serving.library import Part

    part = Part(tuple(f"k{i}" for i in range(len(configs))), tuple(configs), arch, configs[0]["datatype"])
    return AnalyticPredictor().predict_tflops(_problem(text), part, hardware(arch))


def test_a_grouped_problem_is_priced_as_its_groups_tiles_in_one_launch():
    """8 groups cost as one launch of all their tiles (as a batch of 8): with few tiles per group the last wave
    is shared, so one grouped launch beats 8 launches of one group by far (MoE decode)."""
    path = ROOT / "examples" / "gemm_grouped.json"
    grouped = [e["config"] for e in entries(Selection("", "", "ck-2026.06", (), (), (), None, (path,)))]
    grouped = [{**c, "pad_m": True, "pad_n": True, "pad_k": True} for c in grouped]
    one = _predict(grouped, "M=16,N=4096,K=7168")
    eight = _predict(grouped, "M=16,N=4096,K=7168,groups=8")
    assert np.allclose(eight, _predict(grouped, "M=16,N=4096,K=7168,batch=8"))
    seconds_one, seconds_eight = 2 * 16 * 4096 * 7168 / one, 8 * 2 * 16 * 4096 * 7168 / eight
    assert (seconds_eight < 0.5 * 8 * seconds_one).all()


def test_scale_loads_cost_little_at_128_and_more_as_groups_shrink(quant):
    """The same bquant tile with B scale groups of 128, 32 and 8 along K at decode (feed bound): 128's scales
    cost under 2% (float scales, 1 per 128 fp8 weights), groups of 8 over 5%."""
    fp8 = {**quant[1], "preshuffle_b": False, "pipeline": "compv3"}
    kernels = [{**fp8, "bquant_group_k": g} for g in (128, 32, 8)]
    plain = {k: v for k, v in fp8.items() if not k.startswith(("bquant", "aquant"))}
    tflops = np.array([_predict([k], f"M=16,N=7168,K=4096,variant=bquant,bquant_group_k={g}")[0]
                       for k, g in zip(kernels, (128, 32, 8))])
    unscaled = _predict([{**plain, "variant": "standard"}], "M=16,N=7168,K=4096")[0]
    assert tflops[0] < unscaled and tflops[0] > 0.98 * unscaled
    assert tflops[0] > tflops[1] > tflops[2] and tflops[2] < 0.95 * unscaled


def test_the_cxx_selector_ranks_quant_and_grouped_problems_as_python(tmp_path):
    """A library of bquant (groups 1x128 and 1x64), abquant and grouped kernels: the emitted selector ranks quant
    problems (each its family's and groups' kernels only) and a grouped one bit for bit as Python does."""
    pytest.importorskip("cppyy")
    from ckast.select.cxx.selector import write_selector
    from ckast.select.models.analytic import AnalyticPredictor
    from ckast.select.serving.library import load_library

    from .select_helpers import bits, python_ranking, write_library
    from .test_select_cxx_selector import _jit, _struct

    base = {"kind": "gemm", "datatype": "fp8", "arch": "gfx942", "ck_api": "ck-2026.06"}
    configs = [{**base, "variant": "bquant"}, {**base, "variant": "bquant", "tile_k": 256, "bquant_group_k": 64},
               {**base, "variant": "bquant", "tile_m": 128, "tile_n": 128, "tile_k": 128, "warp_m": 2, "warp_n": 2},
               {**base, "variant": "abquant", "bquant_group_n": 128},
               {**base, "variant": "grouped", "pad_m": True, "pad_n": True, "pad_k": True}]
    path = tmp_path / "kernels.json"
    path.write_text(__import__("json").dumps({"kernels": configs}))
    lib = write_library(tmp_path / "lib", entries(Selection("", "", "ck-2026.06", (), (), (), None, (path,))))
    library = load_library(lib)
    write_selector(lib, [], tmp_path / "selector")
    ns = _jit(tmp_path / "selector")
    counts = []
    for text in ("M=128,N=7168,K=2048,variant=bquant", "M=128,N=7168,K=4096,variant=bquant,bquant_group_k=64",
                 "M=128,N=7168,K=4160,variant=bquant,bquant_group_k=64", "M=16,N=7168,K=2000,variant=bquant",
                 "M=256,N=7168,K=2048,variant=abquant,bquant_group_n=128", "M=64,N=4096,K=7168,groups=8"):
        problem = _problem(text)
        expected = python_ranking(library, problem, AnalyticPredictor(), "fp8", "rcr")
        got = [(str(c.kernel), c.tflops) for c in ns.rank(_struct(ns, problem), "fp8", "rcr")]
        assert bits(got) == bits(expected), text
        counts.append(len(got))
    assert counts == [2, 1, 0, 0, 1, 1]


def test_a_part_remembers_what_it_serves_per_batch_groups_and_scale_groups(tmp_path):
    """A library of standard kernels refuses a batched, then a grouped problem (no such kernel), and still serves
    the plain problem after them (the part's memo was keyed by the variant alone, so a batch-2 problem's
    refusal was given to every later standard problem)."""
    from ckast.select.serving.library import LibraryError, load_library

    from .select_helpers import gemm_entries, write_library

    library = load_library(write_library(tmp_path / "lib", gemm_entries(tmp_path)))
    for text in ("M=64,N=64,K=64,batch=2", "M=64,N=64,K=64,groups=2"):
        with pytest.raises(LibraryError, match="holds no"):
            library.part(_problem(text), "fp16", "rcr")
    assert library.part(_problem("M=64,N=64,K=64"), "fp16", "rcr").configs


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_every_quant_datatype_is_priced_at_the_rate_its_warp_gemm_computes(arch):
    """gemm-quant's every datatype ranks with the analytic model: int4 weights at fp8/bf8's rate (CK converts B to
    A's type), the microscale mixes at bf16's, fp4 at fp8's (no fp4 figure); finite and positive."""
    from ckast.arch.hardware import hardware
    from ckast.config import as_dict
    from ckast.library import build
    from ckast.select.models.analytic import AnalyticPredictor, rate_datatype
    from ckast.select.serving.library import Part

    assert [rate_datatype(d) for d in ("fp8", "fp8i4", "bf8i4", "mx_bf16fp4", "fp4", "fp16")] == [
        "fp8", "fp8", "bf8", "bf16", "fp8", "fp16"]
    configs = [as_dict(k.config) for k in build(Selection("gemm-quant", arch, "ck-2026.06")).kernels()]
    for datatype in sorted({c["datatype"] for c in configs}):
        part_configs = [c for c in configs if c["datatype"] == datatype]
        part = Part(tuple(f"k{i}" for i in range(len(part_configs))), tuple(part_configs), arch, datatype)
        c = part_configs[0]
        groups = ",".join(f"{g}={c[g]}" for g in ("aquant_group_k", "bquant_group_n", "bquant_group_k") if c.get(g))
        problem = _problem(f"M=64,N=4096,K=4096,variant={c['variant']},{groups}")
        tflops = AnalyticPredictor().predict_tflops(problem, part, hardware(arch))
        assert np.isfinite(tflops).all() and (tflops > 0).all(), datatype


def test_each_group_of_a_grouped_problem_counts_its_own_tensors():
    """CK's grouped kernels take each group's own A, B and C: 256 experts whose weights together pass index_t are a
    valid problem, while a batched problem's batches share one index_t offset and stay bounded together."""
    from ckast.select.serving.validity import check

    assert check(_problem("M=1,N=4096,K=7168,groups=256")) is None
    assert check(_problem("M=1,N=4096,K=7168,groups=256,variant=abquant,bquant_group_n=128")) is None
    with pytest.raises(ProblemError, match="all batches"):
        _problem("M=1,N=4096,K=7168,batch=256")
