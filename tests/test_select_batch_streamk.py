"""Batched problems and Stream-K and padded kernels in selection: `batch=` read (CK's `batch_count` too), shown
and refused like every field; a problem of batch > 1 served by batched kernels only (`gemm.batch`), Stream-K and
batched kernels serving the standard GEMM, Stream-K refusing k_batch > 1 (`stream_k.k_batch`), by name in
`why_not` and in the C++ selector's applicability; the analytic model preferring an M-padded 16- or 32-row tile
to a 256-row one at decode's M = 1 to 32, Stream-K where the last wave is ragged (not where the tiles fill
whole waves), and pricing a batch as its GEMMs; padded kernels of the four layouts at decode."""

from __future__ import annotations

import numpy as np
import pytest

from ckast.arch.hardware import hardware
from ckast.library.selection import Selection
from ckast.select.cxx.problem_struct import problem_struct
from ckast.select.features import KernelTable
from ckast.select.models.analytic import AnalyticPredictor
from ckast.select.problem import GemmProblem, ProblemError, problem_fields, problem_label
from ckast.select.serving.applicability import LAYERS, applicable, conditions, why_not
from ckast.select.serving.library import Part
from ckast.select.serving.problem_read import gemm_problem, parse_pairs

from .select_helpers import ROOT, entries

HW = hardware("gfx942")


@pytest.fixture(scope="module")
def standard() -> list[dict]:
    """Standard rcr fp16 GEMM kernels (unpadded and padded) on gfx942."""
    path = ROOT / "examples" / "gemm_standard.json"
    return [e["config"] for e in entries(Selection("", "", "ck-2026.06", (), (), (), None, (path,)))]


def _as(config: dict, variant: str, **knobs) -> dict:
    """`config` as a kernel of another GEMM variant (what the selection reads of it: its columns)."""
    return {**config, "variant": variant, **({"split_k": False} if variant == "stream_k" else {}), **knobs}


def _problem(text: str) -> GemmProblem:
    return gemm_problem(parse_pairs(text))


def test_batch_is_read_shown_and_counted():
    problem = _problem("M=4,N=64,K=128,batch=8")
    assert problem.batch == 8 and problem.flops == 2 * 8 * 4 * 64 * 128
    assert problem_label(problem) == "M=4,N=64,K=128,batch=8" and problem.label == "batched standard GEMM (batch 8)"
    assert problem_fields(problem)["batch"] == 8 and "batch" not in problem_fields(_problem("M=4,N=64,K=128"))
    assert _problem("M=4,N=64,K=128,batch_count=8") == problem  # CK's spelling
    assert _problem("M=4,N=64,K=128").batch == 1
    struct = problem_struct("gemm")
    assert "batch" in struct.fields and struct.defaults["batch"] == 1
    assert struct.values(problem)[struct.fields.index("batch")] == 8


@pytest.mark.parametrize(("text", "field", "message"), [
    ("M=4,N=64,K=128,batch=0", "batch", "out of range"),
    ("M=4,N=64,K=128,batch=x", "batch", "x"),
    ("M=4,N=64,K=128,batch=2,batch_count=2", "batch_count", "not both"),
    ("M=65536,N=64,K=65536,batch=2", "A", "M x K, all batches"),  # all batches addressed by index_t
    ("M=4,N=64,K=128,variant=stream_k", "variant", "not one of"),  # a kernel variant, no problem variant
    ("M=4,N=64,K=128,variant=batched", "variant", "not one of"),
])
def test_a_bad_batch_is_refused_naming_the_field(text, field, message):
    with pytest.raises(ProblemError, match=message) as exc:
        _problem(text)
    assert exc.value.field == field


def test_batched_problems_run_on_batched_kernels_only(standard):
    config = standard[0]
    batched, plain = _problem("M=256,N=256,K=256,batch=4"), _problem("M=256,N=256,K=256")
    assert why_not(batched, config).startswith("gemm.batch (kernel layer)")
    assert why_not(batched, _as(config, "batched")) is None
    assert why_not(plain, _as(config, "batched")) is None  # CK's batched kernel takes batch_count = 1
    assert why_not(plain, _as(config, "stream_k")) is None  # Stream-K computes the standard GEMM
    assert why_not(batched, _as(config, "stream_k")).startswith("gemm.batch")
    preshuffle = _problem("M=256,N=256,K=256,variant=preshuffle")
    assert why_not(preshuffle, _as(config, "batched")).startswith("gemm.variant")


def test_stream_k_takes_k_batch_1_by_name(standard):
    config = next(c for c in standard if c["pad_k"])
    split = _problem("M=256,N=256,K=4096,k_batch=2")
    assert why_not(split, _as(config, "stream_k")).startswith("stream_k.k_batch (kernel layer): Stream-K splits K")
    assert why_not(_problem("M=256,N=256,K=4096"), _as(config, "stream_k")) is None
    names = [c.name for c in conditions("gemm")]
    assert names.index("gemm.batch") < names.index("stream_k.k_batch") < names.index("gemm.split_k")


def test_the_cxx_selector_checks_batch_and_stream_k(standard):
    """The conditions in C++ (lower_predicate) answer as `applicable` for batched, Stream-K and standard kernels
    over problems of batch 1 and more, k_batch 1 and 2."""
    pytest.importorskip("cppyy")
    from .test_select_cxx_applicability import _agree

    configs = standard[:6]
    table = KernelTable.of([*configs, *(_as(c, "batched") for c in configs), *(_as(c, "stream_k") for c in configs)])
    problems = [_problem(f"M={m},N={n},K=512,batch={b},k_batch={k}")
                for m in (64, 100) for n in (256, 1000) for b in (1, 3) for k in (1, 2)]
    answers = np.array([applicable(p, table) for p in problems])
    assert answers.any() and not answers.all()
    assert _agree("gemm", [c.holds for c in conditions("gemm", LAYERS)], table, problems) == 0


# --- the analytic model ---------------------------------------------------------------------------------------


def _tile(config: dict, m: int, n: int, k: int, wm: int, wn: int, warp_tile: int, **knobs) -> dict:
    return {**config, "tile_m": m, "tile_n": n, "tile_k": k, "warp_m": wm, "warp_n": wn, "warp_k": 1,
            "warp_tile_m": warp_tile, "warp_tile_n": warp_tile, "warp_tile_k": 16 if warp_tile == 32 else 32,
            "pad_m": True, "pad_n": True, "pad_k": True, **knobs}


def _predict(configs: list[dict], text: str, arch: str = "gfx942") -> np.ndarray:
    part = Part(tuple(f"k{i}" for i in range(len(configs))), tuple(configs), arch, configs[0]["datatype"])
    return AnalyticPredictor().predict_tflops(_problem(text), part, hardware(arch))


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("m", [1, 4, 16, 32])
@pytest.mark.parametrize(("n", "k"), [(4096, 4096), (28672, 4096), (4096, 14336), (128256, 4096)])
def test_decode_prefers_a_padded_small_tile(standard, arch, m, n, k):
    """Decode (M = 1 to 32) on a LLaMA-3 layer: the padded tile work is computed, so the 16- or 32-row tile beats
    the 256-row one by far (and the 256-row one wins a large prefill GEMM)."""
    base = {**standard[0], "arch": arch, "pipeline": "compv3"}
    small = [_tile(base, 16, 64, 64, 1, 4, 16), _tile(base, 32, 64, 64, 1, 2, 16)]
    large = [_tile(base, 256, 256, 64, 2, 2, 32), _tile(base, 256, 128, 64, 2, 2, 32)]
    tflops = _predict([*small, *large], f"M={m},N={n},K={k}", arch)
    assert tflops[:2].max() > 2 * tflops[2:].max()
    if m == 1:
        prefill = _predict([*small, *large], f"M=8192,N={n},K={k}", arch)
        assert prefill[2:].max() > prefill[:2].max()


def test_stream_k_wins_where_the_last_wave_is_ragged(standard):
    """The same 256x256 tile with and without Stream-K: one tile past whole waves of the 304 CUs (the last wave
    nearly empty), Stream-K is faster; with the tiles filling whole waves it loses its reduction's overhead."""
    assert HW.num_cus == 304
    tile = _tile({**standard[0], "pipeline": "compv3"}, 256, 256, 64, 2, 2, 32)
    kernels = [tile, _as(tile, "stream_k", streamk_reduction="atomic")]
    ragged = _predict(kernels, f"M={256 * 5},N={256 * 61},K=4096")  # 305 tiles
    whole = _predict(kernels, f"M={256 * 4},N={256 * 76},K=4096")  # 304 tiles
    assert ragged[1] > 1.3 * ragged[0]
    assert whole[0] > whole[1]


def test_a_batch_is_priced_as_its_gemms(standard):
    """batch GEMMs of a shape cost as one GEMM batch times taller (tiles x batch), so the batched rate is the
    rate of the taller GEMM where its tiles divide the same way."""
    tile = _tile({**standard[0], "pipeline": "compv3"}, 128, 128, 64, 2, 2, 32)
    batched = _predict([_as(tile, "batched")], "M=512,N=512,K=1024,batch=8")
    tall = _predict([_as(tile, "batched")], "M=4096,N=512,K=1024")
    single = _predict([_as(tile, "batched")], "M=512,N=512,K=1024")
    assert batched[0] == pytest.approx(tall[0], rel=0.05) and batched[0] > 2 * single[0]


@pytest.mark.parametrize("layout", ["rcr", "rrr", "crr", "ccr"])
def test_padded_kernels_of_each_layout_at_decode(standard, layout):
    """An M-, N- and K-padded kernel takes any M where A is row-major (rcr, rrr); where A is column-major (crr,
    ccr) M is A's contiguous dimension, so M must be whole load vectors (CK's check of vectorSizeA) even padded;
    unpadded, CK's dispatcher wants whole tiles of M whatever the layout."""
    padded = {**next(c for c in standard if c["pad_m"] and c["pad_n"] and c["pad_k"]), "layout": layout}
    unpadded = {**padded, "pad_m": False}
    decode, eight = _problem("M=1,N=4096,K=4096"), _problem("M=8,N=4096,K=4096")
    if layout in ("rcr", "rrr"):
        assert why_not(decode, padded) is None
    else:
        assert why_not(decode, padded).startswith("gemm.vector_a (kernel layer)")
    assert why_not(eight, padded) is None
    assert why_not(eight, unpadded).startswith("dispatcher.pad_m (dispatcher layer)")
    kernel_only = why_not(eight, unpadded, ("kernel",))
    assert (kernel_only is None) == (layout in ("rcr", "rrr"))  # the kernel checks M's tiles where A or C is M-major


def test_select_names_what_a_batched_problem_lacks(tmp_path):
    """A library without batched kernels cannot serve a problem of batch > 1: one line naming the GEMM, exit 2."""
    from click.testing import CliRunner

    from ckast.cli import main

    library = tmp_path / "lib"
    emitted = CliRunner().invoke(main, ["emit", "--config", str(ROOT / "examples" / "gemm_standard.json"), "-o",
                                        str(library)])
    assert emitted.exit_code == 0, emitted.output
    result = CliRunner().invoke(main, ["select", "--library", str(library), "--problem", "M=1,N=256,K=256,batch=4",
                                         "--layout", "rcr"])
    assert result.exit_code == 2
    assert result.stderr == f"{library}: the library holds no batched standard GEMM (batch 4) kernel\n"


def test_a_ranking_names_a_batched_gemm():
    from ckast.select.reports.report import _kind

    assert _kind(problem_fields(_problem("M=1,N=256,K=256"))) == "GEMM"
    assert _kind(problem_fields(_problem("M=1,N=256,K=256,batch=4"))) == "batched standard GEMM (batch 4)"
