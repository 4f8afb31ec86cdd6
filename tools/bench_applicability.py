"""Speed check: `applicable` for one problem over CK's 2,021-kernel conv library (issue 21: well under 1 ms).

Generates the library (`ckast generate --rule-set full --arch gfx942 --datatype fp16 --ndim 2 --ck-api
ck-2026.06`, into a temporary directory unless `--library DIR` names one), builds its `KernelTable` once,
and times `applicable` per problem: the first call (kernel-only values computed and kept in the table's
cache) and the median of `--repeat` later calls, for forward, backward-data, backward-weight and
depthwise shapes. Also prints how many kernels accept each problem.

    python tools/bench_applicability.py [--library DIR] [--repeat 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ckast.select.serving.applicability import applicable
from ckast.select.features import KernelTable
from ckast.select.serving.problem_read import conv_problem, parse_pairs

PROBLEMS = (
    "G=1,N=32,C=64,K=64,Hi=56,Wi=56,Y=3,X=3,pad_h=1,pad_w=1",
    "G=1,N=128,C=256,K=256,Hi=28,Wi=28,Y=1,X=1",
    "G=1,N=8,C=512,K=512,Hi=14,Wi=14,Y=3,X=3,pad_h=1,pad_w=1,direction=bwd_data",
    "G=1,N=32,C=128,K=128,Hi=28,Wi=28,Y=3,X=3,pad_h=1,pad_w=1,direction=bwd_weight,k_batch=4",
    "G=64,N=8,C=64,K=64,Hi=56,Wi=56,Y=3,X=3,pad_h=1,pad_w=1",
)
LIBRARY = ("--rule-set", "full", "--arch", "gfx942", "--datatype", "fp16", "--ndim", "2", "--ck-api", "ck-2026.06")


def configs_of(library: Path | None) -> list[dict]:
    if library is None:
        library = Path(tempfile.mkdtemp(prefix="ckast-bench-applicability-"))
        subprocess.run([sys.executable, "-m", "ckast", "generate", *LIBRARY, "-o", str(library), "-j", "2"],
                       check=True, capture_output=True)
    return [k["config"] for k in json.loads((library / "manifest.json").read_text())["kernels"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", type=Path, help="a generated library (default: generate the 2,021 kernels)")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    configs = configs_of(args.library)
    start = time.perf_counter()
    table = KernelTable.of(configs)
    print(f"{len(configs)} kernels; KernelTable.of: {1e3 * (time.perf_counter() - start):.1f} ms")
    for text in PROBLEMS:
        problem = conv_problem(parse_pairs(text))
        start = time.perf_counter()
        accepted = int(applicable(problem, table).sum())
        first = time.perf_counter() - start
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            applicable(problem, table)
            times.append(time.perf_counter() - start)
        print(f"{problem.direction:10s} {accepted:5d} accept  first {1e3 * first:6.2f} ms  "
              f"median {1e3 * statistics.median(times):.3f} ms   {text}")


if __name__ == "__main__":
    main()
