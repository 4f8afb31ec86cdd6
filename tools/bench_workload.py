"""Benchmark: libraries for a workload (`ckast list --for`) on the shipped example workloads, against the
scale goals (the kept set <= 2% of the selection's kernels and of its estimated build CPU-hours, each
choice in under 10 s).

Each case runs `ckast list ... --for WORKLOAD --within P --json` as a user does (a fresh process, the rule
set expanded and the analytic model scoring every (problem, kernel) pair) and prints the kept count, its share
of the selection, the efficiency the kept set offers against the whole selection's best (mean, P10, min;
predicted by the analytic model, so estimates), the problems not served, the estimated build CPU-hours of the
kept set and of the whole selection (`ckast/library/data/compile_cost.toml`) and the wall seconds:

    python tools/bench_workload.py
    python tools/bench_workload.py --within 5 --arch gfx950

The cases: examples/workloads/vision_conv.csv on conv `full` fp16 2-D (all directions, as the goal counts
its 2,021 kernels, and forward only), examples/workloads/llama_gemm.csv on `gemm-default` fp16 (all
variants, and the standard variant its problems are) and examples/workloads/llm_gemm.csv on `gemm-full`
(fp16 and bf16, as its rows name them; its own goals: every problem served, at most 48 kernels, < 30 s).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "examples" / "workloads"
CASES = (
    ("ResNet-50 + VGG-16 convs, full, all directions", "full", "vision_conv.csv",
     ("--datatype", "fp16", "--ndim", "2")),
    ("ResNet-50 + VGG-16 convs, full, forward", "full", "vision_conv.csv",
     ("--datatype", "fp16", "--ndim", "2", "--variant", "forward")),
    ("LLaMA 7B/8B GEMMs, gemm-default, all variants", "gemm-default", "llama_gemm.csv", ("--datatype", "fp16")),
    ("LLaMA 7B/8B GEMMs, gemm-default, standard", "gemm-default", "llama_gemm.csv",
     ("--datatype", "fp16", "--variant", "standard")),
    ("5 dense LLMs' GEMMs, gemm-full, fp16 and bf16", "gemm-full", "llm_gemm.csv", ()),
)


def run(rule_set: str, workload: Path, extra: tuple[str, ...], args: argparse.Namespace) -> dict:
    """One `ckast list --for --json` run: its document and its wall seconds."""
    cmd = [sys.executable, "-m", "ckast", "list", "--rule-set", rule_set, "--arch", args.arch,
           "--ck-api", args.ck_api, *extra, "--for", str(workload),
           "--within", str(args.within), "--json", "--allow-unserved"]  # the document lists the problems not served
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd[1:])} failed ({done.returncode}): {done.stderr.strip()}")
    return {**json.loads(done.stdout), "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--within", type=float, default=2.0, help="percent of each problem's best (default 2)")
    parser.add_argument("--arch", default="gfx942")
    parser.add_argument("--ck-api", default="ck-2026.06")
    args = parser.parse_args()
    print(f"ckast list --for WORKLOAD --within {args.within} --arch {args.arch} --ck-api {args.ck_api} "
          f"--json (analytic model; goals: kept <= 2% of the kernels and of the build CPU-hours, < 10 s)")
    print(f"{'case':48} {'kept':>11} {'share':>6} {'mean':>6} {'P10':>6} {'min':>6} {'unserved':>8} "
          f"{'CPU-h kept / whole':>19} {'share':>6} {'s':>5}")
    for title, rule_set, name, extra in CASES:
        r = run(rule_set, WORKLOADS / name, extra, args)
        share = 100 * len(r["kept"]) / r["kernels"]
        eff, build = r["efficiency"], r["build"]
        kept_h, whole_h = build["kept"]["cpu_hours"], build["whole"]["cpu_hours"]
        unserved = sum(p["efficiency"] is None for p in r["problems"])
        print(f"{title:48} {len(r['kept']):>4} / {r['kernels']:<4} {share:5.2f}% {100 * eff['mean']:5.1f}% "
              f"{100 * eff['p10']:5.1f}% {100 * eff['min']:5.1f}% {unserved:>8} {kept_h:8.2f} / {whole_h:<8.2f} "
              f"{100 * kept_h / whole_h:5.2f}% {r['seconds']:5.2f}")
        if build["whole"]["unmeasured"] or build["whole"]["borrowed"]:
            print(f"{'':48} build: {build['whole']['borrowed']} kernels by another arch's or variant's compile "
                  f"figures, {build['whole']['unmeasured']} without figures")

if __name__ == "__main__":
    main()
