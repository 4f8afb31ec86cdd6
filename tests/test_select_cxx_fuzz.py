"""The emitted selector under AddressSanitizer and UndefinedBehaviorSanitizer, fed seeded random and extreme
problems (zero, negative, INT32_MAX and beyond, huge products, a default-constructed struct): no sanitizer
report; a problem that breaks a rule gets `invalid`'s reason (the rule `validity` names first) and no kernel;
a valid one gets finite, positive TFLOPS, best first, and for a sample `ckast select`'s ranking bit for bit.
GEMM (the analytic model and a small LightGBM forest) and grouped conv (every direction; a forest for forward)."""

from __future__ import annotations

import math
import random
import shutil
import string
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckast import nodes as n
from ckast.cli import main as cli
from ckast.library.selection import Selection
from ckast.select.models.analytic import AnalyticPredictor
from ckast.select.cxx.problem_struct import problem_struct
from ckast.select.cxx.selector import write_selector
from ckast.select.serving.library import LibraryError, load_library
from ckast.select.models.lightgbm_model import LightGBMPredictor, load_model
from ckast.select.problem import AXES, DIRECTIONS, INT_MAX, QUANT_GROUPS, ConvProblem, GemmProblem, quant_groups
from ckast.select.serving.validity import broken

from .select_helpers import ROOT, bits, conv_entries, entries, gemm_entries, python_ranking, synth_module, write_library

CLANG = shutil.which("clang++-19")
pytestmark = [pytest.mark.skipif(CLANG is None, reason="clang++-19 not installed"),
              pytest.mark.slow]  # about 13 s: sanitized selectors built and fuzzed

SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer")
HOSTILE = (0, -1, -4096, INT_MAX, INT_MAX + 1, -INT_MAX - 1, 3 * 10**9, 2**62, 2**63 - 1, -2**63)
SHOWN = 50
"""Every SHOWN-th problem's ranking is compared with Python's."""
DRIVER = string.Template(r"""// Drives an emitted selector: problems on stdin, one per line as the struct's $fields fields in
// order; for each problem and part "<index> <part> <kernels> <flags> <reason or ->", flags f (every
// TFLOPS finite), p (positive), s (best first) and e (`select` names the same kernels), then its ranking
// ("  <kernel> <TFLOPS as %a>") for every SHOWN-th problem and the default-constructed one (index -1).
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ckast_selector.hpp"
#include "reader.hpp"

using Problem = ckast_selector::$problem;

static void report(long index, const Problem& p, bool shown) {
    const char* why = ckast_selector::invalid(p);
    const char* datatypes[] = {$datatypes};
    int part = 0;
    for (const char* datatype : datatypes) {
        const std::vector<ckast_selector::Choice> r = ckast_selector::rank(p, datatype$layout);
        const std::vector<std::string> names = ckast_selector::select(p, datatype$layout);
        bool finite = true, positive = true, sorted = true, same = names.size() == r.size();
        for (std::size_t i = 0; i < r.size(); ++i) {
            finite = finite && std::isfinite(r[i].tflops);
            positive = positive && r[i].tflops > 0;
            sorted = sorted && (i == 0 || !(r[i].tflops > r[i - 1].tflops));
            same = same && names[i] == r[i].kernel;
        }
        std::printf("%ld %d %zu %s%s%s%s %s\n", index, part++, r.size(), finite ? "f" : "", positive ? "p" : "",
                    sorted ? "s" : "", same ? "e" : "", why ? why : "-");
        for (std::size_t i = 0; shown && i < r.size(); ++i) {
            std::printf("  %s %a\n", r[i].kernel, r[i].tflops);
        }
    }
}

int main(int argc, char** argv) {
    const long every = std::atol(argv[1]);
    report(-1, Problem{}, true);
    std::int64_t v[$fields];
    for (long index = 0;; ++index) {
        for (std::int64_t& x : v) {
            if (std::scanf("%" SCNd64, &x) != 1) {
                return 0;
            }
        }
        report(index, ckast_selector::read(v), index % every == 0);
    }
}
""")


# --- problems: valid ones (often extreme), then with fields made hostile -----------------------------------------


def _size(rng: random.Random) -> int:
    """A size: mostly what kernels accept (multiples of 8), sometimes odd, a power of two or extreme."""
    r = rng.random()
    if r < 0.4:
        return 8 * rng.randint(1, 1024)
    if r < 0.6:
        return rng.randint(1, 10_000)
    return 2 ** rng.randint(0, 20) if r < 0.9 else rng.choice((46341, 65536, 2**30, INT_MAX))


def _gemm(rng: random.Random) -> dict:
    fields = {"M": _size(rng), "N": _size(rng), "K": _size(rng), "k_batch": rng.choice((1, 1, 2, 7, 128, _size(rng))),
              "batch": rng.choice((1, 1, 1, 2, 64, _size(rng))), "groups": rng.choice((1,) * 14 + (8, _size(rng))),
              "variant": rng.choice(("standard",) * 6 + ("preshuffle", "multi_d") * 2 + ("bquant", "abquant")),
              "num_d_tensors": 0, "d_layout": "", "elementwise_op": "", **dict.fromkeys(QUANT_GROUPS, 0)}
    if fields["variant"] == "multi_d":
        fields.update(num_d_tensors=1, d_layout="r", elementwise_op="MultiDAdd")
    for group in quant_groups(fields["variant"]):
        fields[group] = rng.choice((1, 64, 128, 128, _size(rng)))
    return fields


def _conv(rng: random.Random) -> dict:
    ndim = rng.choice((2, 2, 2, 2, 1, 3))
    small = (1, 2, 3, 8, 16, 32, 64, 256)
    fields = {"direction": rng.choice(DIRECTIONS), "ndim": ndim, "G": rng.choice((1, 1, 2, 4, 32)),
              **{f: rng.choice((*small, _size(rng))) for f in ("N", "C", "K")},
              "k_batch": rng.choice((1, 1, 2, 7, _size(rng)))}
    for a, i, f in zip(AXES, ("Di", "Hi", "Wi"), ("Z", "Y", "X")):
        present = AXES.index(a) >= len(AXES) - ndim
        filt = rng.choice((1, 3, 5, 7)) if present else 1
        size = rng.choice((filt, rng.randint(filt, 64), rng.randint(filt, 300), _size(rng)))
        fields.update({i: size if present else 1, f: filt,
                       f"stride_{a}": rng.choice((1, 2, 3)) if present else 1,
                       f"dilation_{a}": rng.choice((1, 1, 2)) if present else 1,
                       **{f"{side}_pad_{a}": rng.choice((0, filt // 2, 1)) if present else 0
                          for side in ("left", "right")}})
    return fields


def _rows(kind: str, count: int, seed: int) -> list[tuple[int, ...]]:
    """`count` problems as struct rows: the issue's cases, then random ones, 40% with one or two hostile fields."""
    struct, rng = problem_struct(kind), random.Random(seed)
    fixed = [{"M": 0}, {"M": -4096}, {"K": 0}, {"M": 3 * 10**9}, {"M": 1048576, "N": 1048576, "K": 4096},
             {"batch": 0}, {"M": 65536, "N": 16, "K": 16384, "batch": 4}, {"groups": 0},
             {"variant": "standard", "bquant_group_k": 128}, {"variant": "bquant", "bquant_group_k": 0}] \
        if kind == "gemm" else [{"N": 0}, {"stride_w": 0}, {"ndim": 0},
                                {"ndim": 2, "Hi": 1, "Y": 3, "left_pad_h": 0, "right_pad_h": 0}]
    rows = []
    for i in range(count):
        fields = {**(_gemm(rng) if kind == "gemm" else _conv(rng)), **(fixed[i] if i < len(fixed) else {})}
        row = [struct.codes[f][fields[f]] if f in struct.codes else fields[f] for f in struct.fields]
        if i >= len(fixed) and rng.random() < 0.4:
            for f in rng.sample(range(len(row)), rng.choice((1, 2))):
                row[f] = rng.choice((*HOSTILE, rng.randint(-2**63, 2**63 - 1)))
        rows.append(tuple(row))
    return rows


def _fields(kind: str, row: tuple[int, ...]) -> dict:
    """A struct row as the fields `validity` reads (a code no value has: a name no rule accepts)."""
    struct = problem_struct(kind)
    names = {f: {code: value for value, code in codes.items()} for f, codes in struct.codes.items()}
    return {f: names[f].get(v, f"<code {v}>") if f in names else v for f, v in zip(struct.fields, row)}


def _problem(kind: str, fields: dict):
    """The Python problem of a valid struct's fields (a conv problem's own axes are its innermost `ndim`)."""
    if kind == "gemm":
        return GemmProblem(**fields)
    own = range(len(AXES) - fields["ndim"], len(AXES))

    def axes(names) -> tuple[int, ...]:
        return tuple(fields[names[i]] for i in own)

    per_axis = (axes([f"{name}_{a}" for a in AXES]) for name in ("stride", "dilation", "left_pad", "right_pad"))
    return ConvProblem(fields["direction"], fields["G"], fields["N"], fields["C"], fields["K"],
                       axes(("Di", "Hi", "Wi")), axes(("Z", "Y", "X")), *per_axis, fields["k_batch"])


# --- the selectors -------------------------------------------------------------------------------------------------


def _train(library_dir: Path, direction: str, out: Path) -> LightGBMPredictor:
    """A 12-tree forest on synthetic timings of the library's `direction` part."""
    synth = synth_module()
    synth.write(synth.synthesize(library_dir, direction, 20, 40, 1, 0.02, 0.08), out.with_suffix(".csv"))
    result = CliRunner().invoke(cli, ["select", "train", "--data", str(out.with_suffix(".csv")), "--library",
                                      str(library_dir), "-o", str(out), "--trees", "12", "--folds", "0"])
    assert result.exit_code == 0, result.output
    return load_model(out)


def _build(selector_dir: Path, kind: str) -> Path:
    """The selector with the driver (and the struct's reader), built with the sanitizers."""
    struct = problem_struct(kind)
    reader = n.File([n.Namespace("ckast_selector", [struct.reader("read")])],
                    includes=[n.Header("cstdint", system=True), n.Header("ckast_selector.hpp")])
    (selector_dir / "reader.hpp").write_text(n.to_source(reader))
    gemm = kind == "gemm"
    (selector_dir / "driver.cpp").write_text(DRIVER.substitute(
        fields=len(struct.fields), problem=struct.name, datatypes='"fp16", "bf16"' if gemm else '"fp16"',
        layout=', "rcr"' if gemm else ""))
    exe = selector_dir / "driver"
    subprocess.run([CLANG, "-std=c++17", "-O1", "-g", *SANITIZE, f"-I{selector_dir}", str(selector_dir / "driver.cpp"),
                    str(selector_dir / "ckast_selector.cpp"), "-o", str(exe)], check=True, capture_output=True)
    return exe


@pytest.fixture(scope="module")
def gemm(tmp_path_factory):
    """fp16 and bf16 rcr GEMM kernels (padded, CK's unpadded sweep, preshuffle, multi_d); a forest for fp16."""
    root = tmp_path_factory.mktemp("gemm")
    fp16 = gemm_entries(root) + [e for e in entries(_examples()) if e["config"]["datatype"] == "fp16"
                                 and e["config"]["layout"] == "rcr"]
    model = _train(write_library(root / "fp16", fp16), "gemm", root / "model")
    lib = write_library(root / "lib", fp16 + gemm_entries(root, ("bf16",)))
    write_selector(lib, [root / "model"], root / "selector")
    return lib, {"fp16": model, "bf16": AnalyticPredictor()}, _build(root / "selector", "gemm")


def _examples() -> Selection:
    """CK's fp16 rcr GEMM sweep kernels and examples/gemm_<variant>.json."""
    paths = (ROOT / "examples" / "ck-real" / "gemm_fp16_rcr_gfx942_sweep.json",
             *(ROOT / "examples" / f"gemm_{v}.json" for v in ("standard", "preshuffle", "multi_d")))
    return Selection("", "", "ck-2026.06", (), (), (), None, paths)


@pytest.fixture(scope="module")
def conv(tmp_path_factory):
    """fp16 2-D conv kernels of every direction (CK's full rule set); a forest for forward."""
    root = tmp_path_factory.mktemp("conv")
    lib = write_library(root / "lib", conv_entries("forward", "bwd_data", "bwd_weight"))
    model = _train(lib, "forward", root / "model")
    write_selector(lib, [root / "model"], root / "selector")
    return lib, model, _build(root / "selector", "grouped_conv")


def _run(exe: Path, rows: list[tuple[int, ...]]) -> dict[tuple[int, int], tuple[int, str, str, list]]:
    """The driver's report per (problem index, part): kernels, flags, reason and (when shown) the ranking."""
    proc = subprocess.run([str(exe), str(SHOWN)], input="".join(" ".join(map(str, r)) + "\n" for r in rows),
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "runtime error" not in proc.stderr and "Sanitizer" not in proc.stderr, \
        proc.stderr[-3000:]
    out: dict[tuple[int, int], tuple[int, str, str, list]] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("  "):
            name, value = line.split()
            out[key][3].append((name, float.fromhex(value)))
            continue
        index, part, count, flags, reason = line.split(" ", 4)
        key = (int(index), int(part))
        out[key] = (int(count), flags, reason, [])
    return out


def _check(kind: str, library, predictors: dict, exe: Path, rows: list[tuple[int, ...]]) -> dict[str, int]:
    """Run the driver on `rows` and check every report against `validity` and, when shown, `ckast select`'s
    ranking (part by part: `predictors` maps each part's datatype to its predictor); counts what was seen."""
    got = _run(exe, rows)
    seen = {"invalid": 0, "ranked": 0, "shown": 0}
    datatypes = list(predictors)
    struct = problem_struct(kind)
    default = tuple(struct.defaults[f] for f in struct.fields)  # a default-constructed struct: a valid problem
    for index, row in [(-1, default), *enumerate(rows)]:
        fields = _fields(kind, row)
        rule = broken(kind, fields)
        assert index != -1 or rule is None, "a default-constructed struct is a valid problem"
        for part, datatype in enumerate(datatypes):
            count, flags, reason, ranking = got[(index, part)]
            assert reason == (f"{rule.field}: {rule.text}" if rule else "-"), (index, row)
            if rule is not None:
                assert count == 0, (index, row)
                seen["invalid"] += part == 0
                continue
            assert flags == "fpse", (index, row, flags)
            seen["ranked"] += count > 0
            if index % SHOWN == 0 and index >= 0:
                layout = "rcr" if kind == "gemm" else None
                try:
                    expected = python_ranking(library, _problem(kind, fields), predictors[datatype], datatype, layout)
                except LibraryError:  # the part has no kernel of the problem's variant
                    expected = []
                assert all(math.isfinite(t) and t > 0 for _, t in expected)
                assert bits(ranking) == bits(expected), (index, row)
                seen["shown"] += 1
    return seen


def test_sanitized_gemm_selector_refuses_invalid_problems_and_ranks_valid_ones_as_python(gemm):
    lib, predictors, exe = gemm
    seen = _check("gemm", load_library(lib), predictors, exe, _rows("gemm", 13_000, 7))
    assert seen["invalid"] > 3000 and seen["ranked"] > 1000 and seen["shown"] > 100, seen


def test_sanitized_conv_selector_refuses_invalid_problems_and_ranks_valid_ones_as_python(conv):
    lib, model, exe = conv
    library = load_library(lib)

    class ByDirection:  # the forest for forward, the analytic model for the other directions
        def predict_tflops(self, problem, part, hw, rows=None):
            predictor = model if problem.direction == "forward" else AnalyticPredictor()
            return predictor.predict_tflops(problem, part, hw, rows)

    seen = _check("grouped_conv", library, {"fp16": ByDirection()}, exe, _rows("grouped_conv", 4000, 7))
    assert seen["invalid"] > 1500 and seen["ranked"] > 400 and seen["shown"] > 15, seen
