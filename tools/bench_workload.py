"""Benchmark: libraries for a workload (`ckast list --for`) on the shipped example workloads, against the
scale goals (the kept set <= 2% of the selection's kernels, each choice in under 10 s).

Each case runs `ckast list ... --for WORKLOAD --within P` as a user does (a fresh process, the rule set
expanded and the analytic model scoring every (problem, kernel) pair) and prints the kept count, its share of
the selection, the efficiency the kept set offers against the whole selection's best (mean, P10, min;
predicted by the analytic model, so estimates), the problems not served and the wall seconds:

    python tools/bench_workload.py
    python tools/bench_workload.py --within 5 --arch gfx950

The cases: examples/workloads/vision_conv.csv on conv `full` fp16 2-D (all directions, as the goal counts
its 2,021 kernels, and forward only) and examples/workloads/llama_gemm.csv on `gemm-default` fp16 (all
variants, and the standard variant its problems are).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "examples" / "workloads"
CASES = (
    ("ResNet-50 + VGG-16 convs, full, all directions", "full", "vision_conv.csv", ("--ndim", "2")),
    ("ResNet-50 + VGG-16 convs, full, forward", "full", "vision_conv.csv", ("--ndim", "2", "--variant", "forward")),
    ("LLaMA 7B/8B GEMMs, gemm-default, all variants", "gemm-default", "llama_gemm.csv", ()),
    ("LLaMA 7B/8B GEMMs, gemm-default, standard", "gemm-default", "llama_gemm.csv", ("--variant", "standard")),
)
_KEPT = re.compile(r"kept (\d+) of (\d+) kernels")
_EFF = re.compile(r"mean ([\d.]+)%, P10 ([\d.]+)%, min ([\d.]+)%")


def run(rule_set: str, workload: Path, extra: tuple[str, ...], args: argparse.Namespace) -> dict:
    """One `ckast list --for` run: its figures parsed from the output, and its wall seconds."""
    cmd = [sys.executable, "-m", "ckast", "list", "--rule-set", rule_set, "--arch", args.arch,
           "--ck-api", args.ck_api, "--datatype", "fp16", *extra, "--for", str(workload),
           "--within", str(args.within)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd[1:])} failed ({done.returncode}): {done.stderr.strip()}")
    kept, total = map(int, _KEPT.search(done.stdout).groups())
    mean, p10, low = map(float, _EFF.search(done.stdout).groups())
    unserved = done.stdout.count("not served:")
    return {"kept": kept, "total": total, "mean": mean, "p10": p10, "min": low, "unserved": unserved,
            "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--within", type=float, default=2.0, help="percent of each problem's best (default 2)")
    parser.add_argument("--arch", default="gfx942")
    parser.add_argument("--ck-api", default="ck-2026.06")
    args = parser.parse_args()
    print(f"ckast list --for WORKLOAD --within {args.within} --arch {args.arch} --ck-api {args.ck_api} "
          f"--datatype fp16 (analytic model; goals: kept <= 2%, < 10 s)")
    print(f"{'case':48} {'kept':>11} {'share':>6} {'mean':>6} {'P10':>6} {'min':>6} {'unserved':>8} {'s':>5}")
    for title, rule_set, name, extra in CASES:
        r = run(rule_set, WORKLOADS / name, extra, args)
        share = 100 * r["kept"] / r["total"]
        print(f"{title:48} {r['kept']:>4} / {r['total']:<4} {share:5.2f}% {r['mean']:5.1f}% {r['p10']:5.1f}% "
              f"{r['min']:5.1f}% {r['unserved']:>8} {r['seconds']:5.2f}")


if __name__ == "__main__":
    main()
