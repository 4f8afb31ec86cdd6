"""Problems a kernel is selected for: a GEMM (M, N, K, k_batch and its variant) or a grouped convolution.

Datatype and layout are no part of a problem: they choose among the library's kernels (a row's `datatype` and
`layout`, read with the problem by `report.parse_row`, or a command's options). A problem is read from
`key=value` pairs (the command line's `--problem "M=4096,N=4096,K=4096"`, a CSV row, a JSON object)
by `problem_read.gemm_problem` / `conv_problem`; a bad one raises `ProblemError` naming the field. A problem ckast
cannot serve (a size beyond CK's index_t, a tensor of more elements than index_t counts, a filter that
does not fit its input, ...) breaks one of `validity.rules`, which the emitted C++ selector checks too.

Convolution fields use CK's spellings (those of its heuristics' benchmark tables):
`N, C, K, G` (C and K in all groups together, as CK's tables and frameworks count them: each must be a
multiple of G, and the problem holds C / G and K / G per group), input `Di, Hi, Wi`, filter `Z, Y, X`, `stride_{d,h,w}`,
`dilation_{d,h,w}`, `pad_{d,h,w}` (both sides), or `left_pad_*` / `right_pad_*` for one side. The
spatial rank is taken from the fields given (W only: 1-D; H and W: 2-D; D, H and W: 3-D), or from
`ndim`. `direction` is forward (default), bwd_data or bwd_weight.

A GEMM problem says which GEMM it is, in the spellings of CK's GEMM codegen (its `GemmVariant`) and
dispatcher `KernelKey`, which are ckast's knob names: `variant` is `standard` (default: C = A x B),
`preshuffle` (B given pre-shuffled) or `multi_d` (E = op(C, D0[, D1])), whose D tensors are
`num_d_tensors`, `d_layout` (`r` or `c`) and `elementwise_op` (CK's op name, e.g. `MultiDAdd`); each
of these defaults as the kernel knob does. A problem of another variant has no D fields. `batch` (default 1)
is how many GEMMs of the shape the problem runs at once (CK's `batch_count`, each with its own A, B and C): a
problem of batch > 1 is served by batched kernels only. `groups` (default 1) is a grouped GEMM's group count
(CK's `group_count`: the experts of a mixture-of-experts layer), each group of the problem's M, N and K, in one
launch: a problem of groups > 1 is served by grouped kernels only. A grouped problem may give each group its
own shape instead (`GROUP_FIELDS`; a mixture-of-experts layer routes a different token count M to each expert, whose
weights share N and K): `group_m` lists each group's M, of the problem's N and K (`group_m=64:128:0:256,N=4096,
K=7168`), `group_shapes` each group's M x N x K (`group_shapes=64x4096x7168:128x2048x7168`), the groups separated
by `:` (a CSV cell or JSON: a list as well). The count is the group count (`groups`, when given as well, must
agree; one group is the GEMM of its shape); a group of M, N or K 0 is empty and skipped, as CK's grouped kernel skips it (`MakeKargs`), and one group at
least has work. Such a problem holds the shapes as `group_shapes` and, as M, N and K, the largest group's of each. Kernel variants that compute another
variant's GEMM (`COMPUTES`: Stream-K, batched and grouped kernels compute the standard GEMM) are no problem
variants: a standard problem is served by them too.

A quantized GEMM names its family as `variant` (CK's: `bquant`, `abquant`, `aquant`, `rowcolquant`,
`tensor_quant`, those ckast builds), its datatype as CK's variant keys spell it (`fp8`, `bf8`, `fp8i4`, ...,
read with the problem as every datatype) and its scale groups by the kernel knobs' names (`QUANT_GROUPS`):
`aquant_group_k` (A scaled per 1 x aquant_group_k), `bquant_group_n` and `bquant_group_k` (B scaled per
bquant_group_n x bquant_group_k), those of the knobs its variant has, each defaulting as the knob does; a
problem of another variant has none (0 here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import attrs

from ckast.errors import CkastError

INT_MAX = 2**31 - 1
"""Every size is a CK `index_t` (int32)."""
_PADS = ("pad_", "left_pad_", "right_pad_")

DIRECTIONS = ("forward", "bwd_data", "bwd_weight")
AXES = ("d", "h", "w")
"""Spatial axes, outermost first; a 2-D problem has h and w, a 1-D one w."""
_INPUT = {"d": "Di", "h": "Hi", "w": "Wi"}
_FILTER = {"d": "Z", "h": "Y", "w": "X"}
D_FIELDS = ("num_d_tensors", "d_layout", "elementwise_op")
"""A multi-D GEMM problem's D tensors (ckast's knobs of the same names)."""
STREAM_K, BATCHED, GROUPED = "stream_k", "batched", "grouped"
"""The GEMM kernel variants of CK's Stream-K, batched and grouped kernels."""
COMPUTES = {STREAM_K: "standard", BATCHED: "standard", GROUPED: "standard"}
"""Kernel variant -> the problem variant whose GEMM it computes (a variant not listed computes its own)."""
GROUP_FIELDS = ("group_m", "group_shapes")
"""A grouped problem's per-group shapes: each group's M (N and K shared), or each group's M x N x K."""
MAX_GROUPS = 4096
"""The most groups a problem of per-group shapes has (ckast prices each group; an MoE layer has at most a few
hundred experts)."""
QUANT_GROUPS = ("aquant_group_k", "bquant_group_n", "bquant_group_k")
"""A quantized GEMM problem's scale group sizes (the kernel knobs of the same names; 0: not its variant's)."""


def problem_variants(kernel_variants: tuple[str, ...]) -> tuple[str, ...]:
    """The problem variants among GEMM `kernel_variants` (those no other variant's kernels stand for)."""
    return tuple(v for v in kernel_variants if v not in COMPUTES)


def quant_groups(variant: str) -> dict[str, int]:
    """The scale group sizes a problem of GEMM `variant` has, each with its default: the `QUANT_GROUPS` knobs
    that the variant's kernels have (none for an unquantized variant), so a family joins by its knobs."""
    from ckast.config.knobs import KNOBS

    return {k.name: k.default for k in KNOBS if k.name in QUANT_GROUPS and k.variants and variant in k.variants}


class ProblemError(CkastError, ValueError):
    """A problem that cannot be served: `field` names what is wrong (`where` is e.g. `problems.csv:3`)."""

    def __init__(self, field: str, message: str, where: str = "") -> None:
        self.field, self.where = field, where
        super().__init__(f"{where + ': ' if where else ''}{field}: {message}")


@attrs.frozen
class GemmProblem:
    """C[M, N] = A[M, K] x B[K, N], `batch` of them (or `groups` in one grouped launch), K split `k_batch` ways;
    `variant` and, for multi_d, the D tensors (none: 0 tensors, empty layout and op), for a quantized variant its
    scale groups (`QUANT_GROUPS`, 0 where the variant has none)."""

    M: int
    N: int
    K: int
    k_batch: int = 1
    variant: str = "standard"
    num_d_tensors: int = 0
    d_layout: str = ""
    elementwise_op: str = ""
    batch: int = 1
    aquant_group_k: int = 0
    bquant_group_n: int = 0
    bquant_group_k: int = 0
    groups: int = 1
    group_shapes: tuple[tuple[int, int, int], ...] = attrs.field(default=(), converter=lambda v: tuple(map(tuple, v)))
    """Each group's (M, N, K) of a grouped problem of per-group shapes; empty: every group of (M, N, K)."""

    kind = "gemm"

    @property
    def flops(self) -> int:
        if self.group_shapes:
            return 2 * self.batch * sum(m * n * k for m, n, k in self.group_shapes)
        return 2 * self.batch * self.groups * self.M * self.N * self.K

    def group_problems(self) -> tuple[tuple[int, GemmProblem], ...]:
        """(index, the problem of that group alone) of each non-empty group of a problem of per-group shapes (each
        still of `groups` groups, so grouped kernels serve it); empty for a problem of one shape."""
        return tuple((i, attrs.evolve(self, M=m, N=n, K=k, group_shapes=()))
                     for i, (m, n, k) in enumerate(self.group_shapes) if m and n and k)

    @property
    def quant_groups(self) -> dict[str, int]:
        """The scale group sizes the problem has (those of its variant)."""
        return {f: getattr(self, f) for f in QUANT_GROUPS if getattr(self, f)}

    @property
    def label(self) -> str:
        """The GEMM it is, as messages name it: `standard GEMM`, `multi_d GEMM (2 D tensors r, MultiDAdd)`,
        `batched standard GEMM (batch 8)`, `grouped standard GEMM (8 groups)`,
        `bquant GEMM (scale groups bquant_group_n=1, bquant_group_k=128)`."""
        if self.batch > 1:
            return f"batched {self.variant} GEMM (batch {self.batch})"
        if self.group_shapes:
            return f"grouped {self.variant} GEMM ({self.groups} groups of their own shapes)"
        if self.groups > 1:
            return f"grouped {self.variant} GEMM ({self.groups} groups)"
        if quant := self.quant_groups:
            return f"{self.variant} GEMM (scale groups {', '.join(f'{k}={v}' for k, v in quant.items())})"
        if self.variant != "multi_d":
            return f"{self.variant} GEMM"
        return f"multi_d GEMM ({self.num_d_tensors} D tensors {self.d_layout}, {self.elementwise_op})"


@attrs.frozen
class ConvProblem:
    """A grouped convolution: G groups, N images, C input and K output channels per group; spatial
    tuples are outermost first (d, h, w), `ndim` entries each."""

    direction: str
    G: int
    N: int
    C: int
    K: int
    input: tuple[int, ...]
    filter: tuple[int, ...]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    left_pad: tuple[int, ...]
    right_pad: tuple[int, ...]
    k_batch: int = 1

    kind = "grouped_conv"
    group_shapes = ()
    """A conv problem has one shape (as a GEMM problem's `group_shapes`, so either is read alike)."""

    def group_problems(self) -> tuple:
        """Empty: a conv problem has one shape (as `GemmProblem.group_problems` of a one-shape problem)."""
        return ()

    @property
    def ndim(self) -> int:
        return len(self.filter)

    @property
    def output(self) -> tuple[int, ...]:
        """Output lengths, as CK's ConvParam computes them."""
        return tuple((i + lp + rp - (d * (f - 1) + 1)) // s + 1 for i, f, s, d, lp, rp in
                     zip(self.input, self.filter, self.stride, self.dilation, self.left_pad, self.right_pad))

    @property
    def gemm(self) -> tuple[int, int, int]:
        """The implicit GEMM's (M, N, K) of the forward convolution: N x output volume, K, C x filter volume
        (per group)."""
        return self.N * _product(self.output), self.K, self.C * _product(self.filter)

    @property
    def flops(self) -> int:
        m, n, k = self.gemm
        return 2 * self.G * m * n * k


Problem = GemmProblem | ConvProblem
T = TypeVar("T")


def per_shape(problems: Sequence[Problem], many: Callable[[list[int]], Sequence[T]], one: Callable[[int], T]) -> list[T]:
    """Each problem's result, in order: `many` of the indices of the problems of one shape at once (evaluated
    together), `one` of the index of each problem of per-group shapes (its groups evaluated one by one)."""
    out: list[Any] = [None] * len(problems)
    if one_shape := [i for i, p in enumerate(problems) if not p.group_shapes]:
        for i, result in zip(one_shape, many(one_shape)):
            out[i] = result
    for i, problem in enumerate(problems):
        if problem.group_shapes:
            out[i] = one(i)
    return out


def problem_fields(problem: Problem) -> dict[str, Any]:
    """The problem's fields as output shows them (a GEMM's D fields only where it has D tensors, its batch and
    groups where more than 1, its scale groups where its variant has them)."""
    fields = {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.asdict(problem, recurse=False).items()}
    if isinstance(problem, GemmProblem):
        hidden = (D_FIELDS if problem.variant != "multi_d" else ()) + (("batch",) if problem.batch == 1 else ())
        hidden += (("groups",) if problem.groups == 1 else ()) + tuple(f for f in QUANT_GROUPS if not fields[f])
        hidden += ("group_shapes",) if not problem.group_shapes else ()
        fields = {k: [list(s) for s in v] if k == "group_shapes" else v for k, v in fields.items() if k not in hidden}
    return {"kind": problem.kind, **fields}


def problem_label(problem: Problem, datatype: str | None = None, layout: str | None = None) -> str:
    """A problem in the spellings `--problem` reads, and the `datatype` and `layout` of its kernels when given:
    how output names a problem (a GEMM's batch and groups where more than 1, its variant, D fields and scale
    groups where not standard; conv
    C and K over all groups, strides, dilations and pads shown where not 1, 1 and 0)."""
    if isinstance(problem, GemmProblem):
        pairs: list[tuple[str, Any]] = _shape_pairs(problem)
        pairs += [("batch", problem.batch)] if problem.batch > 1 else []
        pairs += [("groups", problem.groups)] if problem.groups > 1 and not problem.group_shapes else []
        pairs += [("k_batch", problem.k_batch)] if problem.k_batch > 1 else []
        pairs += [("variant", problem.variant)] if problem.variant != "standard" else []
        pairs += [(f, getattr(problem, f)) for f in D_FIELDS] if problem.variant == "multi_d" else []
        pairs += list(problem.quant_groups.items())
    else:
        axes = AXES[3 - problem.ndim:]
        pairs = [("G", problem.G), ("N", problem.N), ("C", problem.C * problem.G), ("K", problem.K * problem.G),
                 *((f"{'DHW'[AXES.index(a)]}i", i) for a, i in zip(axes, problem.input)),
                 *(("ZYX"[AXES.index(a)], f) for a, f in zip(axes, problem.filter))]
        for name, values, plain in (("stride", problem.stride, 1), ("dilation", problem.dilation, 1)):
            pairs += [(f"{name}_{a}", v) for a, v in zip(axes, values) if v != plain]
        for a, left, right in zip(axes, problem.left_pad, problem.right_pad):
            if left or right:
                pairs += [(f"pad_{a}", left)] if left == right else [(f"left_pad_{a}", left), (f"right_pad_{a}", right)]
        pairs += [(f, v) for f, v in (("k_batch", problem.k_batch), ("direction", problem.direction))
                  if v not in (1, "forward")]
    pairs += [(f, v) for f, v in (("datatype", datatype), ("layout", layout)) if v is not None]
    return ",".join(f"{k}={v}" for k, v in pairs)


def _shape_pairs(problem: GemmProblem) -> list[tuple[str, Any]]:
    """M, N and K; a problem of per-group shapes: `group_m` with N and K where the groups share them, else
    `group_shapes`."""
    shapes = problem.group_shapes
    if not shapes:
        return [("M", problem.M), ("N", problem.N), ("K", problem.K)]
    if len({(n, k) for _, n, k in shapes}) == 1:
        return [("group_m", ":".join(str(m) for m, _, _ in shapes)), ("N", shapes[0][1]), ("K", shapes[0][2])]
    return [("group_shapes", ":".join("x".join(map(str, s)) for s in shapes))]


def bounds(name: str) -> tuple[int, int]:
    """The range of integer field `name` (as the reader spells it: `pad_h` is both pads of axis h): CK's index_t,
    from 1 (a pad from 0); `ndim` 1 to 3."""
    if name == "ndim":
        return 1, len(AXES)
    return (0 if name.startswith(_PADS) else 1), INT_MAX


def _product(values: tuple[int, ...]) -> int:
    out = 1
    for v in values:
        out *= v
    return out
