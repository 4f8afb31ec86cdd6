"""Synthetic timing tables for `ckast select train` / `eval`, drawn from the analytic model with noise.

There is no AMD GPU here, so ckast's training and evaluation are exercised on data made up from its own
analytic model: every figure computed from these tables is **synthetic**, a check of the machinery
(and of how well LightGBM learns a ranking), not of real kernels.

For each problem (shapes drawn at random from families: GEMM skinny / square / rectangular, conv
1x1 / 3x3 / 5x5 / 7x7, strided, grouped and depthwise), a number of the problem's applicable kernels
are "measured": TFLOPS = analytic prediction x exp(kernel effect + run noise). The kernel effect is a
fixed random effect per value of a few knobs (pipeline, scheduler, tile_k, warp tile, vector sizes)
and a problem-kernel effect on how K divides into k-steps, so the data holds structure the analytic
model lacks and a model can learn; the run noise is independent per row. The table carries a
`synthetic` column (true), which the reader ignores.

    python tools/synth_timings.py --library lib/ --direction forward --problems 80 -o train.csv
    python tools/synth_timings.py --library lib/ --direction forward --problems 40 --seed 2 -o heldout.parquet
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

EFFECT_KNOBS = ("pipeline", "scheduler", "tile_k", "warp_tile_m", "warp_tile_k", "vector_size_a", "vector_size_b")
CONV_COLUMNS = ("direction", "G", "N", "C", "K", "Di", "Hi", "Wi", "Z", "Y", "X", "stride_d", "stride_h", "stride_w",
                "dilation_d", "dilation_h", "dilation_w", "pad_d", "pad_h", "pad_w")


def gemm_shapes(rng: random.Random) -> Iterator[dict[str, int]]:
    while True:
        family = rng.choice(("skinny", "square", "rect"))
        dims = [rng.choice((64, 128, 256, 512, 1024, 2048, 4096, 8192)) * rng.choice((1, 1, 1, 3)) // 2
                for _ in range(3)]
        if family == "skinny":
            dims[0] = rng.choice((1, 4, 8, 16, 32, 64))
        elif family == "square":
            dims = [dims[0]] * 3
        yield {"M": max(dims[0], 1), "N": max(dims[1], 16), "K": max(dims[2], 16)}


def conv_shapes(rng: random.Random, direction: str, ndim: int) -> Iterator[dict[str, int]]:
    axes = "dhw"[3 - ndim:]
    while True:
        depthwise = direction == "forward" and ndim == 2 and rng.random() < 0.15
        f = rng.choice((1, 1, 3, 3, 3, 5, 7))
        size = rng.choice((7, 14, 28, 56, 112) if ndim == 2 else (4, 8, 16, 28))
        stride = rng.choice((1, 1, 1, 2)) if f > 1 or rng.random() < 0.2 else 1
        fields: dict[str, Any] = {"direction": direction, "N": rng.choice((1, 2, 4, 8, 16, 32, 64, 128))}
        if depthwise:
            groups = rng.choice((32, 64, 128, 256, 512))
            fields.update(G=groups, C=groups, K=groups)  # one channel per group; C and K count all groups
            f, stride = 3, rng.choice((1, 2))
        else:
            groups = rng.choice((1, 1, 1, 2, 4, 8, 32))
            fields.update(G=groups, C=groups * rng.choice((16, 32, 64, 128, 256, 512)),
                          K=groups * rng.choice((16, 32, 64, 128, 256, 512)))
        for a in axes:
            fields[{"d": "Di", "h": "Hi", "w": "Wi"}[a]] = size
            fields[{"d": "Z", "h": "Y", "w": "X"}[a]] = f
            fields[f"stride_{a}"] = stride
            fields[f"pad_{a}"] = f // 2
        yield fields


def knob_effects(configs: list[dict[str, Any]], sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Per kernel, the sum of a fixed random effect for each value of the effect knobs it holds."""
    table: dict[tuple[str, Any], float] = {}
    scale = sigma / math.sqrt(len(EFFECT_KNOBS))
    out = np.zeros(len(configs))
    for i, c in enumerate(configs):
        for knob in EFFECT_KNOBS:
            if knob in c:
                key = (knob, c[knob])
                if key not in table:
                    table[key] = float(rng.normal(0, scale))
                out[i] += table[key]
    return out


def synthesize(library_dir: Path, direction: str, problems: int, per_problem: int, seed: int, noise: float,
               effect: float, ndim: int = 2) -> list[dict[str, Any]]:
    """The rows of a synthetic table (see the module docstring)."""
    from ckast.arch.hardware import hardware
    from ckast.select.models.analytic import AnalyticPredictor
    from ckast.select.serving.applicability import applicable
    from ckast.select.serving.library import load_library
    from ckast.select.problem import ProblemError
    from ckast.select.serving.problem_read import conv_problem, gemm_problem

    library = load_library(library_dir)
    rng = random.Random(seed)
    effects_rng = np.random.default_rng(12345)  # the kernel effects are the same for every seed: one "GPU"
    noise_rng = np.random.default_rng(seed)
    shapes = gemm_shapes(rng) if direction == "gemm" else conv_shapes(rng, direction, ndim)
    predictor = AnalyticPredictor()
    rows: list[dict[str, Any]] = []
    effects: dict[int, np.ndarray] = {}
    seen: set[tuple] = set()
    while len(seen) < problems:
        fields = next(shapes)
        key = tuple(sorted(fields.items()))
        if key in seen:
            continue
        try:
            problem = gemm_problem(fields) if direction == "gemm" else conv_problem(fields)
        except ProblemError:  # beyond CK's index_t: draw another
            continue
        part = library.part(problem)
        mask = np.asarray(applicable(problem, part.table), dtype=bool)
        if not mask.any():
            continue
        seen.add(key)
        if id(part) not in effects:
            effects[id(part)] = knob_effects(list(part.configs), effect, effects_rng)
        hw = hardware(part.arch)
        tflops = predictor.predict_tflops(problem, part, hw)
        candidates = np.flatnonzero(mask)
        chosen = sorted(rng.sample(list(candidates), min(per_problem, len(candidates))))
        k = problem.K if direction == "gemm" else None
        for i in chosen:
            align = 0.0
            if k is not None and part.configs[i].get("tile_k"):
                align = -0.04 * ((k % part.configs[i]["tile_k"]) != 0)
            value = tflops[i] * math.exp(effects[id(part)][i] + align + noise_rng.normal(0, noise))
            rows.append({**fields, "kernel": part.names[i], "arch": part.arch, "tflops": round(float(value), 4),
                         "synthetic": True})
    return rows


def write(rows: list[dict[str, Any]], out: Path) -> None:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    if out.suffix == ".csv":
        with out.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
    elif out.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({c: [row.get(c) for row in rows] for c in columns}), out)
    elif out.suffix == ".json":
        out.write_text(json.dumps({"rows": rows}, indent=1) + "\n", encoding="utf-8")
    else:
        raise SystemExit(f"{out}: write .csv, .parquet or .json")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", type=Path, required=True, help="a generated library (its manifest.json)")
    ap.add_argument("--direction", default="forward", choices=("gemm", "forward", "bwd_data", "bwd_weight"))
    ap.add_argument("--ndim", type=int, default=2, help="conv spatial rank")
    ap.add_argument("--problems", type=int, default=50, help="problem shapes")
    ap.add_argument("--per-problem", type=int, default=10_000, help="kernels measured per problem (at most)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--noise", type=float, default=0.02, help="run noise (sigma of log TFLOPS)")
    ap.add_argument("--effect", type=float, default=0.08, help="kernel knob effects (sigma of log TFLOPS)")
    ap.add_argument("-o", "--output", type=Path, required=True, help=".csv, .parquet or .json")
    args = ap.parse_args(argv)
    rows = synthesize(args.library, args.direction, args.problems, args.per_problem, args.seed, args.noise,
                      args.effect, args.ndim)
    write(rows, args.output)
    print(f"{len(rows)} synthetic rows ({args.problems} problems) -> {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
