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
problem of batch > 1 is served by batched kernels only. Kernel variants that compute another variant's GEMM
(`COMPUTES`: Stream-K and batched kernels compute the standard GEMM) are no problem variants: a standard
problem is served by them too.
"""

from __future__ import annotations

from typing import Any

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
STREAM_K, BATCHED = "stream_k", "batched"
"""The GEMM kernel variants of CK's Stream-K and batched kernels."""
COMPUTES = {STREAM_K: "standard", BATCHED: "standard"}
"""Kernel variant -> the problem variant whose GEMM it computes (a variant not listed computes its own)."""


def problem_variants(kernel_variants: tuple[str, ...]) -> tuple[str, ...]:
    """The problem variants among GEMM `kernel_variants` (those no other variant's kernels stand for)."""
    return tuple(v for v in kernel_variants if v not in COMPUTES)


class ProblemError(CkastError, ValueError):
    """A problem that cannot be served: `field` names what is wrong (`where` is e.g. `problems.csv:3`)."""

    def __init__(self, field: str, message: str, where: str = "") -> None:
        self.field, self.where = field, where
        super().__init__(f"{where + ': ' if where else ''}{field}: {message}")


@attrs.frozen
class GemmProblem:
    """C[M, N] = A[M, K] x B[K, N], `batch` of them, K split `k_batch` ways; `variant` and, for multi_d, the
    D tensors (none: 0 tensors, empty layout and op)."""

    M: int
    N: int
    K: int
    k_batch: int = 1
    variant: str = "standard"
    num_d_tensors: int = 0
    d_layout: str = ""
    elementwise_op: str = ""
    batch: int = 1

    kind = "gemm"

    @property
    def flops(self) -> int:
        return 2 * self.batch * self.M * self.N * self.K

    @property
    def label(self) -> str:
        """The GEMM it is, as messages name it: `standard GEMM`, `multi_d GEMM (2 D tensors r, MultiDAdd)`,
        `batched standard GEMM (batch 8)`."""
        if self.batch > 1:
            return f"batched {self.variant} GEMM (batch {self.batch})"
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


def problem_fields(problem: Problem) -> dict[str, Any]:
    """The problem's fields as output shows them (a GEMM's D fields only where it has D tensors, its batch
    where more than 1)."""
    fields = {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.asdict(problem, recurse=False).items()}
    if isinstance(problem, GemmProblem):
        hidden = (D_FIELDS if problem.variant != "multi_d" else ()) + (("batch",) if problem.batch == 1 else ())
        fields = {k: v for k, v in fields.items() if k not in hidden}
    return {"kind": problem.kind, **fields}


def problem_label(problem: Problem, datatype: str | None = None, layout: str | None = None) -> str:
    """A problem in the spellings `--problem` reads, and the `datatype` and `layout` of its kernels when given:
    how output names a problem (a GEMM's batch where more than 1, its variant and D fields where not standard; conv
    C and K over all groups, strides, dilations and pads shown where not 1, 1 and 0)."""
    if isinstance(problem, GemmProblem):
        pairs: list[tuple[str, Any]] = [("M", problem.M), ("N", problem.N), ("K", problem.K)]
        pairs += [("batch", problem.batch)] if problem.batch > 1 else []
        pairs += [("k_batch", problem.k_batch)] if problem.k_batch > 1 else []
        pairs += [("variant", problem.variant)] if problem.variant != "standard" else []
        pairs += [(f, getattr(problem, f)) for f in D_FIELDS] if problem.variant == "multi_d" else []
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
