"""Fit the analytic model's per-arch constants (`ckast/arch/calibration.toml`) on CK's published measurements
(examples/ck-real), deterministically, and write the file.

- MI355X (gfx950): the grouped-conv forward bf16 table (185 shapes x 13 kernels). Fitted: the matrix
  fraction, the feed and LDS rates, the im2col cost of the gathered A, the step and tile latencies, the
  wave-issue factor, the registers a lane holds besides its tiles, the wave tail, the launch latency and
  compv4's k-step cost. The registers per lane are the arch's (LLVM's AMDGPU backend).
- MI300X (gfx942): the two GEMM sweeps (4 shapes x 32 kernels each, their runs combined). One tile shape
  cannot tell occupancy, latency structure or the conv-only im2col cost apart, so those are MI355X's;
  fitted: the feed and LDS rates, the step and tile latencies, the launch latency, the k-step cost of
  compv4 and mem, the interwave scheduler's and a persistent kernel's tile cost. What MI355X's table has
  no kernel for (mem, interwave, persistent) is MI300X's.

The fit, per arch, is `ckast.select.models.calibrate` (least squares of the log error, then for MI355X a search
on the selection it gives), which `ckast select train` also refits the constants with on its folds.

    python tools/calibrate_analytic.py            # fit, print the constants, write calibration.toml
    python tools/calibrate_analytic.py --dry-run  # fit and print only
    python tools/calibrate_analytic.py --check    # exit 1 unless the shipped file is what the fit writes

`bench_real_selection.py` and `bench_shift_selection.py` read the tables with this tool's functions.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ckast.arch.calibration import CONSTANTS, PATH, Calibration, parse  # noqa: E402
from ckast.config import as_dict, load_file  # noqa: E402
from ckast.lower.identity import kernel_name  # noqa: E402
from ckast.select.models.calibrate import (  # noqa: E402
    CONV_FITTED, GEMM_FITTED, Measured, fit, measured_of, mi300x_start, problem_digest, start_calibration,
    with_values)
from ckast.select.ranking.evaluate import group_runs  # noqa: E402
from ckast.select.serving.applicability import LAYERS  # noqa: E402
from ckast.select.serving.library import Library  # noqa: E402
from ckast.select.tables.kernel_table import read_kernel_table  # noqa: E402
from ckast.select.tables.timings import read_timings  # noqa: E402

REAL = ROOT / "examples" / "ck-real"
CONV = ("grouped_conv_fwd_bf16_gfx950.json", "grouped_conv_fwd_bf16_gfx950_kernels.csv")
CONV_TABLES = ("grouped_conv_fwd_bf16_gfx950_train.csv",)
GEMM = ("gemm_fp16_rcr_gfx942_sweep.json", "gemm_fp16_rcr_gfx942_kernels.csv")
GEMM_TABLES = ("gemm_fp16_rcr_gfx942_sweep_results.csv", "gemm_fp16_rcr_gfx942_sweep_results_b.csv")

SOURCES = {
    "ck_conv_gfx950": "fitted by tools/calibrate_analytic.py on examples/ck-real/"
                      "grouped_conv_fwd_bf16_gfx950_train.csv (CK's MI355X measurements: 185 shapes x 13 kernels, "
                      "grouped-conv forward bf16)",
    "ck_gemm_gfx942": "fitted by tools/calibrate_analytic.py on examples/ck-real/"
                      "gemm_fp16_rcr_gfx942_sweep_results.csv and _b.csv (CK's MI300X measurements: 4 shapes x 32 "
                      "GEMM kernels, fp16, two runs)",
    "llvm_amdgpu": "LLVM AMDGPU backend documentation (gfx90a and later: 512 VGPRs per lane, architectural and "
                   "accumulation registers in one file): https://llvm.org/docs/AMDGPUUsage.html",
}


def library_of(config_file: str) -> Library:
    """The library `ckast emit --config` makes of a config file of examples/ck-real (names, configs)."""
    kernels = load_file(REAL / config_file)
    return Library(REAL / config_file, tuple(kernel_name(k.config) for k in kernels),
                   tuple(as_dict(k.config) for k in kernels))


def measured(library: Library, kernels_file: str, tables: Sequence[str]) -> Measured:
    """The runs of `tables` (with CK's kernel table), combined per (problem, kernel) as `ckast select eval`
    combines them (the applicability layers of eval: the kernel's and the dispatcher's checks)."""
    timings = read_timings([REAL / t for t in tables], library, kernels=read_kernel_table(REAL / kernels_file, library),
                           layers=LAYERS)
    return measured_of(library, list(group_runs(timings.runs).items()))


def conv_gfx950() -> Measured:
    """CK's MI355X grouped-conv forward table."""
    return measured(library_of(CONV[0]), CONV[1], CONV_TABLES)


def gemm_gfx942(tables: Sequence[str] = GEMM_TABLES) -> Measured:
    """CK's MI300X GEMM sweeps (both runs, combined per kernel and shape, or the runs of `tables`)."""
    return measured(library_of(GEMM[0]), GEMM[1], tables)


def _round(value: float) -> float:
    """Four significant digits (what the file keeps)."""
    return float(f"{value:.4g}")


def calibrate(conv: Measured, gemm: Measured) -> dict[str, tuple[Calibration, dict[str, tuple[str, str]]]]:
    """Per arch: the fitted calibration (rounded as written) and each constant's source key and note."""
    mi355x = fit(conv, start_calibration("gfx950"), CONV_FITTED, select=True)
    mi300x = fit(gemm, mi300x_start(mi355x), GEMM_FITTED, select=False)
    borrowed = {n: getattr(mi300x, n) if "." not in n else dict(mi300x.pipeline_step)[n.split(".")[1]]
                for n in GEMM_FITTED if n not in CONV_FITTED}
    mi355x = with_values(mi355x, borrowed)
    out = {}
    notes = {"gfx950": "MI300X's: the MI355X table has no such kernel",
             "gfx942": "MI355X's: the sweep (one GEMM tile shape) cannot tell it"}
    for arch, cal, fitted, other in (("gfx950", mi355x, CONV_FITTED, "ck_gemm_gfx942"),
                                     ("gfx942", mi300x, GEMM_FITTED, "ck_conv_gfx950")):
        note = notes[arch]
        own = "ck_conv_gfx950" if arch == "gfx950" else "ck_gemm_gfx942"
        values = {n: _round(getattr(cal, n)) for n in CONSTANTS}
        values.update({f"pipeline_step.{p}": _round(v) for p, v in cal.pipeline_step})
        cites = {n: (own, "") if n in fitted else (other, note) for n in values}
        cites["vgprs_per_lane"] = ("llvm_amdgpu", "")
        out[arch] = (with_values(cal, values), cites)
    return out


def digests(data: Measured) -> list[str]:
    """The digests of the problems of `data` (`problem_digest`), sorted."""
    return sorted(problem_digest(p, data.part.arch, data.part.datatype) for p in data.problems)


def toml_text(fitted: Mapping[str, tuple[Calibration, Mapping[str, tuple[str, str]]]],
              problems: Mapping[str, Sequence[str]]) -> str:
    """calibration.toml's text (`problems`: per arch, the digests of the problems its constants were fitted on)."""
    lines = [
        "# The analytic model's calibrated constants per arch (ckast/select/models/analytic.py says what each means).",
        "# Written by tools/calibrate_analytic.py from CK's published measurements (examples/ck-real): do not",
        "# edit, rerun the tool. Every value is { value, source [, note] }; `source` names an entry of",
        "# [sources]. An arch without a table uses the table of `fallback`. `fitted_on.problems`: digests of the",
        "# problems an arch's constants were fitted on (ckast.select.models.calibrate.problem_digest).",
        "",
        'fallback = "gfx942"',
        "",
        "[sources]",
        *(f'{key} = "{text}"' for key, text in SOURCES.items()),
    ]
    for arch, (cal, cites) in fitted.items():
        lines += ["", f"[archs.{arch}]"]
        entries = [(n, getattr(cal, n)) for n in CONSTANTS]
        steps = [(p, v) for p, v in cal.pipeline_step]
        for name, value in entries:
            lines.append(_entry(name, value, *cites[name]))
        lines += ["", f"[archs.{arch}.pipeline_step]"]
        lines += [_entry(p, v, *cites[f"pipeline_step.{p}"]) for p, v in steps]
        lines += ["", f"[archs.{arch}.fitted_on]", "problems = ["]
        mine = list(problems[arch])
        lines += ["    " + " ".join(f'"{d}",' for d in mine[i:i + 6]) for i in range(0, len(mine), 6)]
        lines.append("]")
    return "\n".join(lines) + "\n"


def _entry(name: str, value: float, source: str, note: str) -> str:
    shown = f"{value:.4g}" if not float(value).is_integer() else f"{value:.1f}"
    return f'{name} = {{ value = {shown}, source = "{source}"' + (f', note = "{note}" }}' if note else " }")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="Print the constants; write nothing.")
    parser.add_argument("--check", action="store_true", help="Exit 1 unless the shipped file is what the fit writes.")
    args = parser.parse_args(argv)
    conv, gemm = conv_gfx950(), gemm_gfx942()
    fitted = calibrate(conv, gemm)
    text = toml_text(fitted, {"gfx950": digests(conv), "gfx942": digests(gemm)})
    import tomllib

    for arch, (cal, cites) in fitted.items():
        parsed = parse(tomllib.loads(text), arch)
        assert parsed == cal, arch  # the file reads back as fitted
        print(f"{arch}:")
        for name in (*CONSTANTS, *(f"pipeline_step.{p}" for p, _ in cal.pipeline_step)):
            value = getattr(cal, name) if "." not in name else dict(cal.pipeline_step)[name.split(".")[1]]
            source, note = cites[name]
            print(f"  {name:<22} {value:>9.4g}  {source}{f' ({note})' if note else ''}")
    if args.check:
        same = PATH.read_text() == text
        print(f"{PATH.relative_to(ROOT)}: {'as fitted' if same else 'differs from the fit'}")
        return 0 if same else 1
    if not args.dry_run:
        PATH.write_text(text)
        print(f"wrote {PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
