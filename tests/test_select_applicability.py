"""Applicability agrees with the JIT'd launchers: for random problems drawn near each kernel's tiles,
vectors, filters and k_batch limits, `applicable` (its kernel layer: a launcher called directly) answers
what the emitted launcher's `is_supported` (conv) or `launch` (GEMM) answers against ckast's host model,
for every (problem, kernel) pair of the op the kernel computes; every kernel-layer condition is the only
one refusing some pair; `why_not` names the refusing condition with its values.

Kernels: the `tiny` library at both API profiles and this file's configs (every GEMM variant, layout,
padding and epilogue; the conv specializations, merged groups, two-stage, stream-K, CompV6, async
pipelines, odd C vectors and depthwise kernels), all on gfx942, the device the host model models.
The default run draws a few problems per kernel; the `slow` run thousands of pairs per variant.
"""

from __future__ import annotations

import array
import json
import math
from collections import Counter, defaultdict
from pathlib import Path

import attrs
import numpy as np
import pytest
from click.testing import CliRunner

from ckast import nodes as n
from ckast import testing
from ckast.cli import main
from ckast.config import as_dict, load_data
from ckast.config.knobs import KNOBS
from ckast.select.serving.applicability import (
    CONDITIONS,
    KERNEL_ONLY,
    SERVES,
    applicable,
    conditions,
    problem_fields,
    why_not,
)
from ckast.select.expr import (
    Col,
    Const,
    Field,
    Lookup,
    Named,
    Op,
    Over,
    Scope,
    walk,
)
from ckast.select.features import KernelTable
from ckast.select.problem import D_FIELDS, ConvProblem, GemmProblem
from ckast.select.serving.problem_read import conv_problem, gemm_problem

OLD, NEW = "ck-2025.11", "ck-2026.06"
VARIANT_CONDITIONS = {"stream_k.k_batch": "stream_k", "quant.b_group_k": "bquant",
                      "quant.vector_bq": "bquant", "quant.a_group_k": "abquant", "quant.vector_aq": "aquant"}
"""Conditions of one GEMM kernel variant: covered once the variant's kernels are among this file's."""
SMALL = {"tile_m": 16, "tile_n": 64, "tile_k": 64, "warp_m": 1, "warp_n": 4, "warp_k": 1, "warp_tile_m": 16,
         "warp_tile_n": 16, "warp_tile_k": 32}
CONV, GEMM = {"kind": "grouped_conv"}, {"kind": "gemm"}
BOTH = (OLD, NEW)
CONFIGS: dict[str, tuple[dict, tuple[str, ...]]] = {
    "fwd_3x3": (dict(CONV, variant="forward", pipeline="compv3", specialization="filter3x3"), BOTH),
    "fwd_1x1p0": (dict(CONV, variant="forward", pipeline="compv3", specialization="filter1x1_pad0", vector_size_a=8),
                  BOTH),
    "fwd_merge": (dict(CONV, variant="forward", pipeline="compv3", num_groups_to_merge=4, vector_size_a=2,
                       vector_size_b=2, vector_size_c=4), BOTH),
    "fwd_async": (dict(CONV, variant="forward", pipeline="comp_async"), (NEW,)),
    "fwd_basic_async": (dict(CONV, variant="forward", pipeline="basic_async_v1"), (NEW,)),
    "fwd_1d": (dict(CONV, variant="forward", ndim_spatial=1, pipeline="compv3", vector_size_a=2, vector_size_b=4,
                    vector_size_c=2), BOTH),
    "fwd_explicit": (dict(CONV, variant="forward", pipeline="compv3", explicit_gemm=True,
                          specialization="filter1x1_stride1_pad0"), (NEW,)),
    "bwd_data_odd_c": (dict(CONV, variant="bwd_data", pipeline="compv3", vector_size_c=1, vector_size_a=2), BOTH),
    "bwd_data_3d": (dict(CONV, variant="bwd_data", ndim_spatial=3, pipeline="compv3", vector_size_a=4,
                         vector_size_b=8, vector_size_c=2), BOTH),
    "bwd_weight_odd_c": (dict(CONV, variant="bwd_weight", pipeline="compv3", vector_size_c=1, **SMALL), BOTH),
    "bwd_weight_v6": (dict(CONV, variant="bwd_weight", pipeline="compv6", vector_size_a=4, vector_size_b=8, **SMALL),
                      (NEW,)),
    "bwd_weight_fp32": (dict(CONV, variant="bwd_weight", datatype="fp32", pipeline="compv3", vector_size_a=4,
                             vector_size_b=4, vector_size_c=4, **dict(SMALL, tile_k=32, warp_tile_k=16)), BOTH),
    "bwd_weight_merge": (dict(CONV, variant="bwd_weight", pipeline="compv3", num_groups_to_merge=2, **SMALL), BOTH),
    "bwd_weight_two_stage_odd_c": (dict(CONV, variant="bwd_weight", pipeline="compv3", two_stage=True,
                                        vector_size_c=1, **SMALL), BOTH),
    "bwd_weight_streamk": (dict(CONV, variant="bwd_weight", pipeline="compv3", streamk_enabled=True, **SMALL), (NEW,)),
    "bwd_weight_explicit": (dict(CONV, variant="bwd_weight", pipeline="compv3", explicit_gemm=True,
                                 specialization="filter1x1_stride1_pad0", **SMALL), (NEW,)),
    "dw_tiles": (dict(CONV, variant="forward_depthwise", nbatch=8, sub_h=2, sub_w=2, in_vec=2, out_vec=2), (NEW,)),
    "dw_stride2": (dict(CONV, variant="forward_depthwise", datatype="bf16", tile_h=32, tile_w=32, str_h=2, str_w=2,
                        sub_h=2, sub_w=8, in_vec=8, out_vec=8), (NEW,)),
    "dw_5x5": (dict(CONV, variant="forward_depthwise", filt=5, pad_h=2, pad_w=2, nbatch=2, tile_h=16, tile_w=16,
                    sub_h=2, sub_w=4, in_vec=4, out_vec=4), (NEW,)),
    "gemm": (dict(GEMM, variant="standard"), BOTH),
    "gemm_rrr_padded": (dict(GEMM, variant="standard", layout="rrr", pad_m=True, pad_n=True, pad_k=True), BOTH),
    "gemm_crr": (dict(GEMM, variant="standard", layout="crr", pipeline="mem", scheduler="interwave"), BOTH),
    "gemm_rcr_padded": (dict(GEMM, variant="standard", pad_m=True, pad_n=True, pad_k=True), BOTH),
    "gemm_ccr_pad_k": (dict(GEMM, variant="standard", layout="ccr", pad_k=True, tile_m=64, tile_n=64, tile_k=32,
                            warp_tile_m=16, warp_tile_n=16, warp_tile_k=16), BOTH),
    "gemm_default_epilogue": (dict(GEMM, variant="standard", epilogue="default"), BOTH),
    "gemm_no_split_k": (dict(GEMM, variant="standard", split_k=False, pipeline="compv4"), BOTH),
    "gemm_fp32": (dict(GEMM, variant="standard", datatype="fp32", warp_tile_m=16, warp_tile_n=16, warp_tile_k=16,
                       tile_k=32), BOTH),
    "gemm_fp8": (dict(GEMM, variant="standard", datatype="fp8", warp_tile_k=32, tile_k=128), BOTH),
    "gemm_int8": (dict(GEMM, variant="standard", datatype="int8", warp_tile_k=16, tile_m=64, tile_n=64), BOTH),
    "gemm_persistent": (dict(GEMM, variant="standard", datatype="bf16", persistent=True, layout="rrr", pad_n=True),
                        BOTH),
    "gemm_small_tile": (dict(GEMM, variant="standard", tile_m=16, tile_n=16, tile_k=16, warp_m=1, warp_n=1, warp_k=1,
                             warp_tile_m=16, warp_tile_n=16, warp_tile_k=16), BOTH),
    "preshuffle": (dict(GEMM, variant="preshuffle"), BOTH),
    "multi_d": (dict(GEMM, variant="multi_d"), BOTH),
    "multi_d_2d_rrr": (dict(GEMM, variant="multi_d", num_d_tensors=2, elementwise_op="MultiDMultiply", layout="rrr"),
                       BOTH),
    "multi_d_padded_crr": (dict(GEMM, variant="multi_d", pad_m=True, pad_n=True, pad_k=True, layout="crr"), BOTH),
}
"""This file's kernels (`generate --config`), beside the `tiny` library."""
@attrs.frozen
class Kernel:
    name: str
    config: dict
    header: Path

    @property
    def variant(self) -> str:
        return self.config["variant"]

    @property
    def direction(self) -> str:
        if self.config["kind"] == "gemm":
            return "gemm"
        return "forward" if self.variant == "forward_depthwise" else self.variant

    @property
    def op(self) -> dict:
        """The problem fields of the op the kernel computes: a GEMM's variant and D tensors."""
        return {f: self.config[f] for f in ("variant", *D_FIELDS) if f in self.config and self.direction == "gemm"}

    def as_op(self, problem):
        """`problem` as one of this kernel's op (its launcher cannot tell a GEMM's variant)."""
        if not self.op:
            return problem
        return gemm_problem({"M": problem.M, "N": problem.N, "K": problem.K, "k_batch": problem.k_batch, **self.op})


def generate(out: Path, *args: str) -> list[Kernel]:
    result = CliRunner().invoke(main, ["generate", *args, "-o", str(out)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    return [Kernel(k["name"], k["config"], out / k["header"]) for k in manifest["kernels"]]


@pytest.fixture(scope="module")
def own_kernels(tmp_path_factory) -> list[Kernel]:
    """This file's configs at both profiles."""
    root = tmp_path_factory.mktemp("applicability")
    out: list[Kernel] = []
    for profile in (OLD, NEW):
        path = root / f"configs_{profile}.json"
        configs = [dict(c, ck_api=profile) for c, profiles in CONFIGS.values() if profile in profiles]
        path.write_text(json.dumps(configs))
        out += generate(root / profile, "--config", str(path))
    return out


@pytest.fixture(scope="module")
def tiny_kernels(tmp_path_factory) -> list[Kernel]:
    """The `tiny` library at both profiles."""
    root = tmp_path_factory.mktemp("applicability_tiny")
    return [k for profile in (OLD, NEW)
            for k in generate(root / profile, "--rule-set", "tiny", "--arch", "gfx942", "--ck-api", profile)]


def default_sample(kernels: list[Kernel]) -> list[Kernel]:
    """Every kernel of the newer profile, and one per variant of the older (whose conditions are the newer
    ones' but for the strict checks and backward data's split-K)."""
    first_of_variant: dict[str, Kernel] = {}
    for k in kernels:
        if k.config["ck_api"] == OLD:
            first_of_variant.setdefault(k.variant, k)
    return [k for k in kernels if k.config["ck_api"] == NEW] + list(first_of_variant.values())


# --- problems drawn near a kernel's limits ---------------------------------------------------------
#
# A draw starts from a problem that fits the kernel (sizes in whole tiles and vectors, the
# specialization's filter, k_batch 1) and, most of the time, changes one or two things a condition
# reads (a size off by a little, another filter, stride, pad or rank, a larger k_batch, ...).

K_BATCHES = (2, 3, 4, 8, 129, 256)


def off(rng: np.random.Generator, value: int, unit: int) -> int:
    """`value` moved by a little (at least 1)."""
    return max(1, value + int(rng.choice([1, -1, 2, unit // 2 or 1, unit + 1])))


def draw_gemm(rng: np.random.Generator, c: dict) -> GemmProblem:
    split = c["split_k"] and rng.random() < 0.3
    k_batch = int(rng.choice([2, 3, 4])) if split else 1
    p = {"M": c["tile_m"] * int(rng.integers(1, 5)), "N": c["tile_n"] * int(rng.integers(1, 5)),
         "K": c["tile_k"] * k_batch * int(rng.integers(1, 4)), "k_batch": k_batch}
    for _ in range(int(rng.choice([0, 1, 1, 2]))):
        change = rng.choice(["M", "N", "K", "k_batch", "few_k"])
        if change in ("M", "N", "K"):
            unit = c[f"tile_{change.lower()}"]
            p[change] = off(rng, p[change], int(rng.choice([unit, 8, 16, 2])))
        elif change == "k_batch":
            p["k_batch"] = int(rng.choice(K_BATCHES))
        else:  # fewer warp tiles of K than splits
            p["K"], p["k_batch"] = c["warp_tile_k"] * int(rng.integers(1, 3)), int(rng.choice([4, 8]))
    return gemm_problem(p)


def _input(out: int, f: int, s: int, d: int, lp: int, rp: int) -> int:
    """The input length whose output is `out` (at least 1 element)."""
    return max(1, (out - 1) * s + d * (f - 1) + 1 - lp - rp)


def _conv(direction: str, p: dict) -> ConvProblem:
    ndim = len(p["filter"])
    fields = {"direction": direction, "ndim": ndim, **{x: p[x] for x in ("G", "N", "k_batch")},
              **{x: p[x] * p["G"] for x in ("C", "K")}}  # the draws are per group; CK's spellings count all groups
    for i, a in enumerate("dhw"[3 - ndim:]):
        fields |= {"DHW"[3 - ndim + i] + "i": _input(*(p[x][i] for x in ("out", "filter", "stride", "dilation",
                                                                         "left_pad", "right_pad"))),
                   "ZYX"[3 - ndim + i]: p["filter"][i], f"stride_{a}": p["stride"][i],
                   f"dilation_{a}": p["dilation"][i], f"left_pad_{a}": p["left_pad"][i],
                   f"right_pad_{a}": p["right_pad"][i]}
    return conv_problem(fields)


def _fit_depthwise(rng: np.random.Generator, c: dict) -> dict:
    tiles = max(c["tile_h"], c["tile_w"])
    return {"G": int(rng.integers(1, 9)), "N": c["nbatch"] * int(rng.integers(1, 3)), "C": 1, "K": 1, "k_batch": 1,
            "filter": [c["filt"]] * 2, "stride": [c["str_h"], c["str_w"]], "dilation": [1, 1],
            "left_pad": [c["pad_h"], c["pad_w"]], "right_pad": [int(rng.integers(0, 3)) for _ in range(2)],
            "out": [int(rng.integers(1, tiles + 1)) for _ in range(2)]}


def _fit_implicit(rng: np.random.Generator, c: dict) -> dict:
    ndim, spec, merge = c["ndim_spatial"], c["specialization"], c["num_groups_to_merge"]
    va, vb, vc = (c[f"vector_size_{x}"] for x in "abc")
    forward = c["variant"] == "forward"
    merging_forward = forward and merge > 1 and c["ck_api"] == NEW
    one_channel = spec == "filter3x3" or merging_forward
    C = 1 if one_channel else math.lcm(vb, va if forward else vc) * int(rng.integers(1, 4))
    K = (vc if forward else va) * int(rng.integers(1, 4))
    filt = {"filter3x3": 3, "default": int(rng.choice([1, 2, 3, 5]))}.get(spec, 1)
    plain = spec != "default"
    return {"G": math.lcm(merge, vc if merging_forward else 1) * int(rng.integers(1, 3)), "N": int(rng.integers(1, 9)),
            "C": C, "K": K, "k_batch": 1, "filter": [filt] * ndim,
            "stride": [1 if plain and spec != "filter1x1_pad0" else int(rng.choice([1, 2])) for _ in range(ndim)],
            "dilation": [1 if plain else int(rng.choice([1, 2])) for _ in range(ndim)],
            "left_pad": [0 if plain else int(rng.integers(0, 3)) for _ in range(ndim)],
            "right_pad": [0 if plain else int(rng.integers(0, 3)) for _ in range(ndim)],
            "out": [int(rng.integers(1, 12)) for _ in range(ndim)]}


IMPLICIT_CHANGES = ("C", "K", "G", "N", "k_batch", "filter", "stride", "dilation", "left_pad", "right_pad", "ndim",
                    "phases", "long_k")
DEPTHWISE_CHANGES = ("C", "K", "N", "k_batch", "filter", "stride", "dilation", "left_pad", "right_pad", "ndim", "out")


def _perturb(rng: np.random.Generator, p: dict, c: dict, change: str) -> None:
    ndim = len(p["filter"])
    i = int(rng.integers(0, ndim))
    if change in ("C", "K", "G", "N"):
        p[change] = off(rng, p[change], int(rng.choice([2, 4, 8])))
    elif change == "k_batch":
        p["k_batch"] = int(rng.choice(K_BATCHES))
    elif change in ("filter", "stride", "dilation", "left_pad", "right_pad"):
        p[change][i] = int(rng.choice([0, 1, 2] if change.endswith("pad") else [1, 2, 3, 5]))
    elif change == "ndim":
        rank = int(rng.choice([r for r in (1, 2, 3) if r != ndim]))
        for key in ("filter", "stride", "dilation", "left_pad", "right_pad", "out"):
            p[key] = (p[key] * 3)[:rank]
    elif change == "phases":  # many filter phases: a backward-data kernel runs more than 128 GEMMs
        big = int(rng.integers(5, 9))
        p["filter"], p["stride"], p["dilation"] = [big] * ndim, [big] * ndim, [1] * ndim
    elif change == "long_k":  # a backward-weight GEMM K long enough for hundreds of splits
        p["N"], p["out"], p["k_batch"] = 16, [{1: 4096, 2: 64, 3: 16}[ndim]] * ndim, int(rng.choice([129, 256]))
    else:
        p["out"][i] = int(rng.integers(1, 3 * max(c["tile_h"], c["tile_w"])))


def draw_conv(rng: np.random.Generator, k: Kernel, i: int) -> ConvProblem:
    """Draw `i` of a kernel: every fourth fits it; the others change one thing, in turn, and sometimes
    one more at random."""
    c = k.config
    p = _fit_depthwise(rng, c) if c["variant"] == "forward_depthwise" else _fit_implicit(rng, c)
    changes = DEPTHWISE_CHANGES if c["variant"] == "forward_depthwise" else IMPLICIT_CHANGES
    if i % 4:
        _perturb(rng, p, c, changes[(i - i // 4 - 1) % len(changes)])
        if rng.random() < 0.3:
            _perturb(rng, p, c, str(rng.choice(changes)))
    return _conv(k.direction, p)


def draw(rng: np.random.Generator, k: Kernel, i: int):
    return draw_gemm(rng, k.config) if k.direction == "gemm" else draw_conv(rng, k, i)


# --- the launchers' answers, one C++ call per kernel -------------------------------------------------

_INT = n.Builtin("int")
_INTS = n.Ptr(n.Const(_INT))


def _driver(unit: testing.Unit, name: str, params: list[n.FuncParam]):
    sig = n.Signature(name, ("ckast_model", "testing", name), "function", [n.Param("L", "type")])
    target = n.Id(n.Name((sig(L=unit.launcher()),)))
    return unit.function(n.Builtin("void"), params, [n.ExprStmt(n.Call(target, [n.ident(p.name) for p in params]))])


def launcher_answers(k: Kernel, problems: list) -> np.ndarray:
    """Whether the kernel's JIT'd launcher accepts each problem (conv: `is_supported`; GEMM: `launch`
    does not refuse the arguments)."""
    unit = testing.jit_header(k.header)
    out = array.array("i", [0] * len(problems))
    if k.direction == "gemm":
        params = [n.FuncParam(_INT, "count"), n.FuncParam(_INTS, "mnkb"), n.FuncParam(n.Ptr(_INT), "out")]
        mnkb = array.array("i", [v for p in problems for v in (p.M, p.N, p.K, p.k_batch)])
        _driver(unit, "gemm_launch_accepts_each", params)(len(problems), mnkb, out)
    else:
        params = [n.FuncParam(_INT, "count"), n.FuncParam(_INTS, "scalars"), n.FuncParam(_INTS, "spatial"),
                  n.FuncParam(n.Ptr(_INT), "out")]
        scalars = array.array("i", [v for p in problems for v in (p.ndim, p.G, p.N, p.K, p.C, p.k_batch)])
        spatial = array.array("i", [v for p in problems for row in (p.filter, p.input, p.stride, p.dilation,
                                                                    p.left_pad, p.right_pad) for v in row])
        _driver(unit, "conv_is_supported_each", params)(len(problems), scalars, spatial, out)
    return np.array(out, dtype=bool)


def only_refusals(problem, table: KernelTable) -> dict[str, np.ndarray]:
    """Per condition, the kernels it alone refuses."""
    scope = Scope(table, problem_fields(problem))
    fails = {c.name: ~np.broadcast_to(scope.value(c.holds), (len(table),))
             for c in conditions(problem.kind, KERNEL_ONLY)}
    count = sum(f.astype(int) for f in fails.values())
    return {name: f & (count == 1) for name, f in fails.items()}


@attrs.define
class Tally:
    """Pairs compared per variant; accepted ones among the pairs drawn for their own kernel; the
    conditions that alone refused some pair."""

    pairs: Counter = attrs.field(factory=Counter)
    own: Counter = attrs.field(factory=Counter)
    own_accepted: Counter = attrs.field(factory=Counter)
    sole: set[str] = attrs.field(factory=set)


def check_agreement(kernels: list[Kernel], per_kernel: int, seed: int) -> Tally:
    """Compare applicability's kernel layer with the launchers over problems drawn near every kernel of each
    direction (each kernel meets every problem of its direction, as one of the GEMM it computes: a launcher
    cannot tell a GEMM's variant)."""
    rng = np.random.default_rng(seed)
    by_direction: dict[str, list[Kernel]] = defaultdict(list)
    for k in kernels:
        by_direction[k.direction].append(k)
    tally = Tally()
    for group in by_direction.values():
        problems = [draw(rng, k, i) for k in group for i in range(per_kernel)]
        expected = np.empty((len(problems), len(group)), dtype=bool)  # problems x kernels
        by_op: dict[str, list[int]] = defaultdict(list)
        for j, k in enumerate(group):
            by_op[repr(k.op)].append(j)
        for members in by_op.values():
            table = KernelTable.of([group[j].config for j in members])
            as_op = [group[members[0]].as_op(p) for p in problems]
            expected[:, members] = [applicable(p, table, KERNEL_ONLY) for p in as_op]
            for p in as_op:
                tally.sole |= {name for name, mask in only_refusals(p, table).items() if mask.any()}
        for j, k in enumerate(group):
            got = launcher_answers(k, problems)
            wrong = np.flatnonzero(got != expected[:, j])
            assert not wrong.size, (f"{k.name}: {wrong.size} of {len(problems)} disagree, e.g. {problems[wrong[0]]}: "
                                    f"launcher {got[wrong[0]]}, applicable {expected[wrong[0], j]} "
                                    f"({why_not(k.as_op(problems[wrong[0]]), k.config, KERNEL_ONLY)})")
            tally.pairs[k.variant] += len(problems)
            tally.own[k.variant] += per_kernel
            tally.own_accepted[k.variant] += int(got[j * per_kernel:(j + 1) * per_kernel].sum())
    return tally


def assert_coverage(tally: Tally, minimum: int) -> None:
    variants = {"standard", "preshuffle", "multi_d", "forward", "bwd_data", "bwd_weight", "forward_depthwise"}
    assert set(tally.pairs) == variants
    for v in variants:
        assert tally.pairs[v] >= minimum, (v, tally.pairs[v])
        assert 0.15 < tally.own_accepted[v] / tally.own[v] < 0.85, (v, tally.own_accepted[v], tally.own[v])
    every = ({c.name for kind in CONDITIONS for c in conditions(kind, KERNEL_ONLY)}
             - {c.name for cs in SERVES.values() for c in cs})  # each kernel meets problems of its own op
    every -= {c for c, v in VARIANT_CONDITIONS.items() if v not in tally.pairs}  # no kernel of it here yet
    assert every - tally.sole == set(), f"conditions never alone refusing a pair: {sorted(every - tally.sole)}"


def test_applicability_agrees_with_the_launchers(own_kernels):
    assert_coverage(check_agreement(default_sample(own_kernels), per_kernel=18, seed=2106), minimum=150)


@pytest.mark.slow
def test_applicability_agrees_with_the_launchers_on_thousands_of_pairs(own_kernels, tiny_kernels):
    assert_coverage(check_agreement(own_kernels + tiny_kernels, per_kernel=50, seed=2107), minimum=3000)


# --- why_not and the conditions' data ---------------------------------------------------------------

def config(**knobs) -> dict:
    return as_dict(load_data(knobs)[0].config)


FORWARD = config(kind="grouped_conv", variant="forward", ck_api=NEW)
DEPTHWISE_TILES = config(**dict(CONFIGS["dw_tiles"][0], ck_api=NEW))
CONV_3X3 = {"G": 2, "N": 4, "C": 32, "K": 32, "Hi": 8, "Wi": 8, "Y": 3, "X": 3}  # 16 channels per group
WAVE32 = config(kind="gemm", arch="gfx1201", pad_k=True, tile_m=32, tile_n=64, tile_k=32, warp_m=2, warp_n=4, warp_k=1,
                warp_tile_m=16, warp_tile_n=16, warp_tile_k=16, ck_api=NEW)
"""Eight 32-wide waves: each thread loads 8 of B's 64 x 32 elements (vectors of 8), 4 of A's (vectors of 4)."""


@pytest.mark.parametrize(("problem", "kernel", "message"), [
    (gemm_problem({"M": 128, "N": 128, "K": 128}), FORWARD,
     ("kernel.direction (kernel layer): a kernel serves GEMM problems or one conv direction; kernel_direction == direction is "
      "false (kernel_direction=forward, direction=gemm)")),
    (conv_problem(dict(CONV_3X3, C=24)), FORWARD,
     "conv.vector_b (kernel layer): C is whole vectors of GEMM B; (C % vector_size_b) == 0 is false (C=12, vector_size_b=8)"),
    (conv_problem(dict(CONV_3X3, k_batch=2)), FORWARD,
     ("conv.split_k (kernel layer): the forward kernel (and the wheel's backward-data kernel) never splits K; k_batch == 1 is "
      "false (k_batch=2)")),
    (gemm_problem({"M": 128, "N": 128, "K": 64, "k_batch": 8}), config(kind="gemm", ck_api=NEW),
     ("gemm.k_batch_warp_tiles (kernel layer): at most one K split per warp tile of K; k_batch <= ceil_div(K, warp_tile_k) is "
      "false (k_batch=8, K=64, warp_tile_k=16)")),
    (gemm_problem({"M": 128, "N": 128, "K": 64, "k_batch": 8}), config(kind="gemm", ck_api=OLD),
     ("gemm.pad_k (kernel layer): without K padding, K is whole k_batch x tile_k blocks; (K % (tile_k * k_batch)) == 0 is false "
      "(K=64, tile_k=64, k_batch=8)")),
    (gemm_problem({"M": 128, "N": 128, "K": 130}), config(kind="gemm", pad_k=True),
     ("gemm.vector_a (kernel layer): A's contiguous dimension (K row-major, M column-major) is whole load vectors; "
      "(where(a_row, K, M) % vector_a) == 0 is false (layout=rcr, K=130, M=128, vector_a=8)")),
    (conv_problem(CONV_3X3), config(kind="grouped_conv", variant="forward", pipeline="comp_async", ck_api=NEW),
     "conv.async_device (kernel layer): async pipelines run on gfx950 only; arch == 'gfx950' is false (arch=gfx942)"),
    (gemm_problem({"M": 32, "N": 64, "K": 12}), WAVE32,
     ("gemm.vector_b (kernel layer): B's contiguous dimension (N row-major, K column-major) is whole load vectors; "
      "(where(b_row, N, K) % vector_b) == 0 is false (layout=rcr, N=64, K=12, vector_b=8)")),
    (conv_problem({"G": 8, "N": 16, "C": 8, "K": 8, "Hi": 32, "Wi": 32, "Y": 3, "X": 3, "pad_h": 1, "pad_w": 1}),
     DEPTHWISE_TILES,
     ("depthwise.output_tile (kernel layer): a block holding several tiles covers the whole output with one; (output[-2] <= "
      "tile_h) and (output[-1] <= tile_w) is false (output[-2]=32, tile_h=8, output[-1]=32, tile_w=8)")),
])
def test_why_not_names_the_first_refusing_condition_with_its_values(problem, kernel, message):
    assert why_not(problem, kernel) == message
    assert not applicable(problem, [kernel])[0]


def test_why_not_is_none_exactly_where_applicable():
    kernels = [config(**dict(c, ck_api=p)) for c, profiles in CONFIGS.values() for p in profiles]
    table = KernelTable.of(kernels)
    rng = np.random.default_rng(7)
    for k in kernels[::3]:
        kernel = Kernel("k", k, Path())
        for i in range(4):
            problem = draw(rng, kernel, i)
            mask = applicable(problem, table)
            assert [why_not(problem, c) is None for c in kernels] == list(mask)
            assert np.array_equal(mask, applicable(problem, kernels))  # a table or the configs themselves


def test_kernels_run_on_the_device_of_their_arch():
    """A 32-wide wave arch loads with half the threads of a 64-wide one; async pipelines run on gfx950."""
    assert why_not(gemm_problem({"M": 32, "N": 64, "K": 8}), WAVE32) is None
    async_gfx950 = config(kind="grouped_conv", variant="forward", pipeline="comp_async", arch="gfx950", ck_api=NEW)
    assert why_not(conv_problem(CONV_3X3), async_gfx950) is None


def test_depthwise_kernels_ignore_k_batch_and_right_pads():
    problem = conv_problem({"G": 8, "N": 16, "C": 8, "K": 8, "Hi": 8, "Wi": 8, "Y": 3, "X": 3, "pad_h": 1,
                            "left_pad_w": 1, "right_pad_w": 0, "k_batch": 4})
    assert why_not(problem, DEPTHWISE_TILES) is None


def test_conditions_are_trees_of_named_fields_and_columns():
    """Every condition reads the problem through fields and the kernel through knob columns only (the
    data a C++ emitter prints), and has a unique name."""
    for conditions in CONDITIONS.values():
        assert len({c.name for c in conditions}) == len(conditions)
    knobs = {k.name for k in KNOBS}
    for condition in (c for cs in CONDITIONS.values() for c in cs):
        for node in walk(condition.holds):
            assert isinstance(node, (Col, Const, Field, Lookup, Named, Op, Over)), node
            if isinstance(node, Col):
                assert node.name in knobs, (condition.name, node.name)
