"""Small libraries for the selection tests, written as `ckast generate` writes their manifest (kernel
names and configs), without rendering the kernels."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from ckast.config import as_dict
from ckast.library import build
from ckast.library.selection import Selection
from ckast.lower.identity import kernel_name

ROOT = Path(__file__).resolve().parents[1]
GEMM_TILES = ((256, 256, 64, 2, 2, 32), (256, 128, 64, 2, 2, 32), (128, 128, 64, 2, 2, 32), (128, 128, 32, 2, 2, 32),
              (128, 64, 64, 2, 2, 32), (64, 64, 64, 2, 2, 32), (64, 32, 64, 2, 2, 16), (32, 64, 64, 1, 2, 16),
              (16, 64, 64, 1, 4, 16), (64, 16, 64, 4, 1, 16))


def entries(selection: Selection) -> list[dict]:
    return [{"name": kernel_name(k.config), "config": as_dict(k.config)} for k in build(selection).kernels()]


def conv_entries(*variants: str, datatype: str = "fp16") -> list[dict]:
    return entries(Selection("full", "gfx942", "ck-2026.06", (datatype,), (2,), variants, None, ()))


def gemm_entries(tmp: Path, datatypes: tuple[str, ...] = ("fp16",)) -> list[dict]:
    """GEMM kernels of several tiles, pipelines and schedulers (rcr, gfx942, padded)."""
    configs = [{"kind": "gemm", "datatype": dt, "layout": "rcr", "arch": "gfx942", "ck_api": "ck-2026.06",
                "tile_m": m, "tile_n": n, "tile_k": k, "warp_m": wm, "warp_n": wn, "warp_k": 1,
                "warp_tile_m": wt, "warp_tile_n": wt, "warp_tile_k": 16 if wt == 32 else 32,
                "pipeline": pipeline, "scheduler": "intrawave", "pad_m": True, "pad_n": True, "pad_k": True}
               for dt in datatypes for (m, n, k, wm, wn, wt) in GEMM_TILES for pipeline in ("compv3", "mem")]
    path = tmp / f"gemm_{'_'.join(datatypes)}.json"
    path.write_text(json.dumps(configs))
    return entries(Selection("", "", "ck-2026.06", (), (), (), None, (path,)))


def write_library(directory: Path, kernels: list[dict]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "manifest.json").write_text(json.dumps({"kernels": kernels}))
    return directory


def python_ranking(library, problem, predictor, datatype=None, layout=None, layers=None) -> list[tuple[str, float]]:
    """`ckast select`'s ranking of `problem` (kernel name, predicted TFLOPS), best first."""
    from ckast.arch.hardware import hardware
    from ckast.select.ranking.rank import rank

    part = library.part(problem, datatype, layout)
    ranking = rank(problem, part, predictor, hardware(part.arch), layers)
    return [(part.names[i], float(ranking.tflops[i])) for i in ranking.order]


def bits(ranking: list[tuple[str, float]]) -> list[tuple[str, int]]:
    """A ranking with each prediction as its float64 bit pattern (NaN compares equal to itself)."""
    return [(name, int(np.float64(t).view(np.uint64))) for name, t in ranking]


def synth_module():
    """tools/synth_timings.py as a module."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import synth_timings
    finally:
        sys.path.pop(0)
    return synth_timings


def random_features(features, rows: int, scale: float) -> np.ndarray:
    """`rows` random feature vectors of a feature set (seed 0): normal numbers times `scale`, and in each
    categorical column one of the feature's codes."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, len(features.names))) * scale
    for j, name in enumerate(features.names):
        if name in features.categorical:
            x[:, j] = rng.choice(list(features.categorical[name].values()), rows)
    return x
