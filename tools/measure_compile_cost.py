"""Measure per-kernel compile figures for `ckast/library/data/compile_cost.toml`, as the file says they were
measured: for each variant, generate its library (conv `full` 2-D or `gemm-default`, fp16, the CK API the
downloaded CK accepts), draw kernels with a seeded random pick, compile them one at a time with
`ckast check --codegen -j 1 --arch ARCH` and print the TOML entry (mean seconds, largest peak MiB) with one
comment line per kernel. Needs clang-19, the HIP headers and the CK download `ckast check` makes; each kernel
takes 20-40 s and up to about 0.8 GiB.

    python tools/measure_compile_cost.py --arch gfx942 --variant bwd_weight --variant multi_d
    python tools/measure_compile_cost.py --arch gfx90a --variant forward --kernels 3 --seed 7

The figures depend on the machine and on what else runs on it: measure on an idle machine, or say so in the
data file.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from ckast.arch.rules import CONV_VARIANTS, GEMM_VARIANTS

ROOT = Path(__file__).resolve().parents[1]
DEPTHWISE = "forward_depthwise"
_PASS = re.compile(r"^PASS\s+([\d.]+)s\s+(\d+)MiB\s+(\S+)$")


def ckast(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "ckast", *args], capture_output=True, text=True, env=env)


def library(variant: str, arch: str, out: Path) -> list[Path]:
    """The headers of the variant's library (fp16; conv 2-D of `full`, GEMM of `gemm-default`); none when the
    CK API accepts no kernel of it."""
    conv = variant in (*CONV_VARIANTS, DEPTHWISE)
    selection = ("--rule-set", "full", "--ndim", "2") if conv else ("--rule-set", "gemm-default")
    done = ckast("generate", *selection, "--arch", arch, "--datatype", "fp16", "--variant", variant, "-o", str(out))
    if done.returncode == 2 and done.stderr.startswith("no kernel of"):
        return []
    if done.returncode != 0:
        sys.exit(f"{variant} on {arch}: {done.stderr.strip() or done.stdout.strip()}")
    return sorted(out.glob("*.hpp"))


def measure(headers: list[Path], arch: str) -> list[tuple[float, int, str]]:
    """(seconds, peak MiB, header name) of each header's device-only -O3 -S compile, one at a time."""
    done = ckast("check", "--codegen", "-j", "1", "--arch", arch, "--compile", *map(str, headers))
    figures = [(float(m[1]), int(m[2]), Path(m[3]).name) for m in map(_PASS.match, done.stdout.splitlines()) if m]
    if done.returncode != 0 or len(figures) != len(headers):
        sys.exit(f"ckast check failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="gfx942")
    parser.add_argument("--variant", action="append", required=True,
                        choices=(*CONV_VARIANTS, DEPTHWISE, *GEMM_VARIANTS))
    parser.add_argument("--kernels", type=int, default=2, help="kernels per variant (default 2)")
    parser.add_argument("--seed", type=int, default=20261128, help="seed of the random pick (default 20261128)")
    args = parser.parse_args()
    for variant in args.variant:
        with tempfile.TemporaryDirectory() as tmp:
            headers = library(variant, args.arch, Path(tmp) / variant)
            if not headers:
                print(f"# {args.arch} {variant}: the CK API accepts no kernel of it (estimate it with `like`)\n")
                continue
            picked = random.Random(args.seed).sample(headers, min(args.kernels, len(headers)))
            figures = measure(picked, args.arch)
        print(f"# {args.arch} {variant}: " + ", ".join(f"{name} ({s:.1f} s, {mib} MiB)" for s, mib, name in figures))
        print(f"[{args.arch}.{variant}]\nseconds = {sum(s for s, _, _ in figures) / len(figures):.1f}\n"
              f"peak_mib = {max(mib for _, mib, _ in figures)}\n")


if __name__ == "__main__":
    main()
