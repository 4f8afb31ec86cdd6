"""The problem structs of the C++ selector: one per op kind, every field a `std::int64_t`.

A field per column the features read (`featureset.PROBLEM_COLUMNS`: a 1-D or 2-D conv problem is a
3-D one with size-1 leading axes, stride 1, dilation 1, pad 0), then what applicability reads
besides: a conv problem's `k_batch`, `ndim` (1-3: which axes are the problem's own) and `direction`
(its place in `problem.DIRECTIONS`: forward 0, bwd_data 1, bwd_weight 2); a GEMM problem's `variant`
(standard 0, preshuffle 1, multi_d 2: the problem variants, `problem.problem_variants`), D tensors
(`num_d_tensors`; `d_layout` and `elementwise_op` as codes, 0 for none, then the knob's values in order) and
a quantized problem's scale groups (`problem.QUANT_GROUPS`, 0 where its variant has none). A GEMM problem's
direction is always "gemm" and has no field (`ProblemStruct.constants`). C and K are per group, as
`ConvProblem` holds them.

Every field defaults to a valid value (`DEFAULTS`), so a problem that sets only the fields it needs is one the
selector ranks: sizes 1, `k_batch`, `batch` and `groups` 1, strides and dilations 1, pads 0, a standard GEMM without
D tensors or scale groups, a
2-D forward convolution (CK's defaults: `GemmHostArgs`' k_batch, ckast's and CK's 2-D conv kernels).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ckast import nodes as n
from ckast.config.knobs import GEMM, KNOBS, VARIANTS
from ckast.select.features.featureset import PROBLEM_COLUMNS
from ckast.select.problem import D_FIELDS, DIRECTIONS, QUANT_GROUPS, Problem, problem_variants
from ckast.select.serving.validity import values

from .numeric import INT64

_EXTRA = {"gemm": ("variant", *D_FIELDS, *QUANT_GROUPS), "grouped_conv": ("k_batch", "ndim", "direction")}
_NAMES = {"gemm": "GemmProblem", "grouped_conv": "ConvProblem"}
_CONSTANTS = {"gemm": {"direction": "gemm"}, "grouped_conv": {}}
_DEFAULTS = {"gemm": {"num_d_tensors": 0, **dict.fromkeys(QUANT_GROUPS, 0)},
             "grouped_conv": {"ndim": 2, **{f"{pad}_{a}": 0 for pad in ("left_pad", "right_pad") for a in "dhw"}}}
"""Fields whose default is not 1 (a coded field's default is its first code, 0: standard, forward, none)."""
_CODES = {
    "gemm": {"variant": {v: i for i, v in enumerate(problem_variants(VARIANTS[GEMM]))},
             **{k.name: {v: i for i, v in enumerate(("", *k.choices))} for k in KNOBS
                if k.name in D_FIELDS and k.type is str}},
    "grouped_conv": {"direction": {d: i for i, d in enumerate(DIRECTIONS)}},
}


@attrs.frozen
class ProblemStruct:
    """The struct of one op kind: `name`, `fields` in declaration order, `codes` (string field -> its
    values' integer codes) and `constants` (fields every problem of the kind has the same value of)."""

    kind: str
    name: str
    fields: tuple[str, ...]
    codes: Mapping[str, Mapping[str, int]]
    constants: Mapping[str, str]
    defaults: Mapping[str, int]
    """Each field's value in a default-initialized struct: a valid problem (`validity.rules`)."""

    @property
    def type(self) -> n.TypeName:
        return n.TypeName(n.Name((self.name,)))

    def decl(self) -> n.Struct:
        """`struct <name> { std::int64_t <field> = <default>; ... };`."""
        return n.Struct(self.name, [n.VarDecl(INT64, f, n.IntLit(self.defaults[f])) for f in self.fields])

    def reader(self, name: str) -> n.FunctionDef:
        """`inline <name>(const std::int64_t* v)`: the struct from an array in field order (what
        `values` gives), for drivers that pass problems as rows of integers."""
        v = n.ident("v")
        body = [n.VarDecl(self.type, "p"),
                *(n.ExprStmt(n.BinOp("=", n.Member(n.ident("p"), f), n.Index(v, n.IntLit(i))))
                  for i, f in enumerate(self.fields)),
                n.Return(n.ident("p"))]
        return n.FunctionDef(name, self.type, [n.FuncParam(n.Ptr(n.Const(INT64)), "v")], body, inline=True)

    def values(self, problem: Problem) -> tuple[int, ...]:
        """`problem`'s field values, in field order."""
        if problem.kind != self.kind:
            raise ValueError(f"a {problem.kind} problem given to the {self.kind} problem struct")
        fields = values(problem)
        return tuple(self.codes[f][fields[f]] if f in self.codes else int(fields[f]) for f in self.fields)


def problem_struct(kind: str) -> ProblemStruct:
    """The problem struct of `kind` ("gemm" or "grouped_conv")."""
    if kind not in PROBLEM_COLUMNS:
        raise ValueError(f"no problem struct for {kind!r}; known: {', '.join(PROBLEM_COLUMNS)}")
    fields = tuple(dict.fromkeys((*PROBLEM_COLUMNS[kind], *_EXTRA[kind])))
    defaults = {f: 0 if f in _CODES[kind] else _DEFAULTS[kind].get(f, 1) for f in fields}
    return ProblemStruct(kind, _NAMES[kind], fields, _CODES[kind], _CONSTANTS[kind], defaults)

