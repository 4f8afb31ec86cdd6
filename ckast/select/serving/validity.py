"""The rules a problem meets for ckast to select a kernel for it: one ordered list per op kind, each rule a
bool tree of the selection language (`select.expr`) over the fields the C++ selector's problem struct holds
(`values`: a conv problem as a 3-D one, as the features read it, with its `ndim` and `direction`).

- every integer field is within CK's `index_t` (int32) and at least 1 (a pad at least 0; `ndim` 1 to 3);
  a coded field holds one of its values (a GEMM's D fields only in a multi_d problem);
- a conv problem's axes beyond its `ndim` hold the lengths of no axis (1, pads 0), and along each axis the
  dilated filter fits the padded input (an output length of at least 1);
- a quantized GEMM's scale groups are at least 1 where its variant has them, 0 where not;
- each tensor's elements (GEMM A = M x K, B = K x N, C and each D = M x N, all `batch` of them: CK's batched
  kernel offsets each batch's tensors by an index_t product, while a grouped kernel takes each group's own
  pointers, so a group's tensors count alone; conv input, weight and output, all groups) are within `index_t`,
  which CK's kernels address them by. The counts are products of floats:
  exact below 2**53, and rounding never takes a product above `INT_MAX` below it, so each comparison is
  the exact one, and no product can overflow in the C++.

A grouped problem of per-group shapes meets them group by group: each non-empty group alone (groups 1), its
tensors those of that group (the reader checks them, `check`; the C++ selector's `invalid_groups`).

Python decides the rules of one field as it reads that field (`problem._int`, `_choice`: the rules are
made of the same bounds, `problem.bounds`, and choices), the others (`read` false) through their trees: for
one problem (`check`) or for many read problems at once (`first_broken`, each tree evaluated over numpy
columns of their fields: what `select --problems` checks a batch with); the C++ selector's `invalid` evaluates
every rule's tree, in order, so a later rule sees fields the earlier ones bounded.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ckast.config.knobs import GEMM, KNOBS, VARIANTS

from ckast.select.features.featureset import problem_columns as feature_problem_columns
from ckast.select.expr import Expr, Field, ProblemsScope, Scope, problems_values, walk, where
from ckast.select.problem import (
    _FILTER,
    _INPUT,
    AXES,
    D_FIELDS,
    DIRECTIONS,
    INT_MAX,
    QUANT_GROUPS,
    ConvProblem,
    Problem,
    ProblemError,
    bounds,
    problem_variants,
    quant_groups,
)

_PADS = ("left_pad", "right_pad")


@attrs.frozen
class Rule:
    """A rule of a problem: `holds` (a bool tree) and what a refusal names (`field`) and says (`text`, the
    rule); `shown` is the value a message shows, `read` that the reader decides the rule per field."""

    field: str
    text: str
    holds: Expr
    shown: Expr | None = None
    read: bool = False

    def message(self, value: Any) -> str:
        """The refusal's text for a problem whose `shown` is `value`."""
        return f"{self.text}, not {_number(value)}"


def problem_columns(problem: Problem) -> dict[str, int]:
    """The problem columns the trees read: the feature set's (`featureset.problem_columns`) and, for a
    conv problem, its `k_batch`."""
    columns = feature_problem_columns(problem)
    columns.setdefault("k_batch", problem.k_batch)
    return columns


def values(problem: Problem) -> dict[str, Any]:
    """`problem`'s fields as the C++ selector's struct holds them, coded fields as their names: the problem
    columns (a conv problem's absent axes as length 1, stride and dilation 1, pads 0) with a GEMM's
    variant and D fields, or a conv problem's k_batch, ndim and direction."""
    out: dict[str, Any] = problem_columns(problem)
    if isinstance(problem, ConvProblem):
        out.update(ndim=problem.ndim, direction=problem.direction)
    else:
        out.update({f: getattr(problem, f) for f in ("variant", *D_FIELDS, *QUANT_GROUPS)})
    return out


@functools.cache
def rules(kind: str) -> tuple[Rule, ...]:
    """The rules of a problem of `kind` ("gemm" or "grouped_conv"), in the order they are checked."""
    if kind == "gemm":
        return _gemm_rules()
    if kind == "grouped_conv":
        return _conv_rules()
    raise ValueError(f"no problem rules for {kind!r}; known: gemm, grouped_conv")


def broken(kind: str, fields: Mapping[str, Any], unread_only: bool = False) -> Rule | None:
    """The first rule of `kind` that the problem of struct `fields` (`values`) breaks, or None; with
    `unread_only`, only among the rules the reader does not decide."""
    scope = Scope(None, fields)
    for rule in rules(kind):
        if not (unread_only and rule.read) and not scope.value(rule.holds):
            return rule
    return None


def check(problem: Problem, where: str = "") -> None:
    """Refuse a read `problem` that breaks a rule the reader does not decide (ProblemError naming it); a problem
    of per-group shapes: each non-empty group's tensors alone (`group_shapes[i].A`, ...)."""
    for index, one in problem.group_problems() or ((None, problem),):
        alone = one if index is None else attrs.evolve(one, groups=1)
        rule = _broken_unread(alone.kind, tuple(values(alone).items()))
        if rule is not None:
            raise refusal(alone, rule, where, "" if index is None else f"group_shapes[{index}].")


def refusal(problem: Problem, rule: Rule, where: str = "", at: str = "") -> ProblemError:
    """The error refusing `problem` for breaking `rule` (the value shown: `rule.shown` of the problem alone), its
    field named under `at` (a group's `group_shapes[i].`)."""
    return ProblemError(at + rule.field, rule.message(Scope(None, values(problem)).value(rule.shown)), where)


def first_broken(problems: Sequence[Problem]) -> tuple[int, Rule] | None:
    """The first of read `problems` (of one kind) that breaks a rule the reader does not decide and the first
    such rule it breaks (what `check` refuses it for), or None: each rule's tree is evaluated once for all the
    problems (`ProblemsScope`), every entry as `check` computes it (the fields of read problems are within
    index_t, so no int64 operation of the trees wraps). Problems of per-group shapes are left out: the reader
    checks them (`check`)."""
    rows = [i for i, p in enumerate(problems) if not p.group_shapes]
    if not rows:
        return None
    found = _first_broken([problems[i] for i in rows])
    return None if found is None else (rows[found[0]], found[1])


def _first_broken(problems: Sequence[Problem]) -> tuple[int, Rule] | None:
    unread, names = _unread(problems[0].kind)
    scope = ProblemsScope(None, problems_values([{name: v[name] for name in names} for v in map(values, problems)]))
    holds = np.column_stack([np.broadcast_to(scope.value(rule.holds), (len(problems), 1))[:, 0] for rule in unread])
    bad = np.flatnonzero(~holds.all(axis=1))
    if not len(bad):
        return None
    row = int(bad[0])
    return row, unread[int(np.argmin(holds[row]))]


@functools.cache
def _unread(kind: str) -> tuple[tuple[Rule, ...], tuple[str, ...]]:
    """The rules of `kind` the reader does not decide, in order, and the fields their trees read."""
    unread = tuple(rule for rule in rules(kind) if not rule.read)
    names = (node.name for rule in unread for node in walk(rule.holds) if isinstance(node, Field))
    return unread, tuple(dict.fromkeys(names))


@functools.lru_cache(maxsize=4096)
def _broken_unread(kind: str, fields: tuple[tuple[str, Any], ...]) -> Rule | None:
    """`broken` among the rules the reader does not decide, of the problems met lately (a table of timings
    repeats each problem once per kernel timed)."""
    return broken(kind, dict(fields), unread_only=True)


def _number(value: Any) -> str:
    """A value as a message shows it: an integer count exactly while a double holds it exactly."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value) if not isinstance(value, float) else f"{value:.4g}"


def _range(name: str) -> Rule:
    lo, hi = bounds(name)
    field = Field(name)
    return Rule(name, f"must be in [{lo}, {hi}]", (field >= lo) & (field <= hi), field, read=True)


def _one_of(name: str, choices: tuple[Any, ...]) -> Rule:
    return Rule(name, f"must be one of {', '.join(map(str, choices))}", Field(name).isin(choices), Field(name),
                read=True)


def _elements(tensor: str, factors: tuple[Expr, ...], what: str) -> Rule:
    """Tensor `tensor`, of the product of `factors` (int trees) elements, within index_t (a float product)."""
    count = factors[0].as_float()
    for factor in factors[1:]:
        count = count * factor.as_float()
    return Rule(tensor, f"the {tensor} tensor ({what}) must have at most {INT_MAX} elements (CK's index_t)",
                count <= float(INT_MAX), count)


def _gemm_rules() -> tuple[Rule, ...]:
    knobs = {k.name: k for k in KNOBS}
    multi_d = Field("variant").eq("multi_d")
    out = [*(_range(f) for f in ("M", "N", "K", "k_batch", "batch", "groups")),
           _one_of("variant", problem_variants(VARIANTS[GEMM]))]
    for name in D_FIELDS:
        choices, none = knobs[name].choices, 0 if knobs[name].type is int else ""
        holds = where(multi_d, Field(name).isin(choices), Field(name).eq(none))
        out.append(Rule(name, f"must be one of {', '.join(map(str, choices))} in a multi_d problem, "
                              f"{none if none == 0 else 'none'} in another", holds, Field(name), read=True))
    variants = problem_variants(VARIANTS[GEMM])
    for name in QUANT_GROUPS:
        having = tuple(v for v in variants if name in quant_groups(v))
        holds = where(Field("variant").isin(having), Field(name) >= 1, Field(name).eq(0)) if having else \
            Field(name).eq(0)
        out.append(Rule(name, f"must be at least 1 in a {'/'.join(having) or 'quantized'} problem, 0 in another",
                        holds & (Field(name) <= INT_MAX), Field(name), read=True))
    m, n, k, batch = Field("M"), Field("N"), Field("K"), Field("batch")  # a grouped launch: each group its own
    return (*out, _elements("A", (batch, m, k), "M x K, all batches"),
            _elements("B", (batch, k, n), "K x N, all batches"), _elements("C", (batch, m, n), "M x N, all batches, as each D tensor"))


def _output(axis: str) -> Expr:
    """The output length along `axis` (an int tree), as `ConvProblem.output` computes it."""
    def at(name: str) -> Field:
        return Field(f"{name}_{axis}")

    span = at("dilation") * (Field(_FILTER[axis]) - 1) + 1
    return (Field(_INPUT[axis]) + at("left_pad") + at("right_pad") - span) // at("stride") + 1


def _conv_rules() -> tuple[Rule, ...]:
    per_axis = [(f"{name}_{a}", a) for name in ("stride", "dilation", *_PADS) for a in AXES]
    lengths = [*((_INPUT[a], a) for a in AXES), *((_FILTER[a], a) for a in AXES), *per_axis]
    out = [_one_of("direction", DIRECTIONS), _range("ndim"),
           *(_range(f) for f in ("G", "N", "C", "K", "k_batch")), *(_range(f) for f, _ in lengths)]
    ndim = Field("ndim")
    for name, axis in lengths:  # an axis the problem may lack: the lengths of no axis
        rank = len(AXES) - AXES.index(axis)
        if rank <= bounds("ndim")[0]:
            continue
        default = 0 if name.startswith(_PADS) else 1
        out.append(Rule(name, f"must be {default} when ndim < {rank} (no {axis} axis)",
                        (ndim >= rank) | Field(name).eq(default), Field(name), read=True))
    outputs = {a: _output(a) for a in AXES}
    out += [Rule(_INPUT[a], f"the output length along {a} must be at least 1 (the dilated filter must fit the "
                            "padded input)", outputs[a] >= 1, outputs[a]) for a in AXES]
    g, n, c, k = (Field(f) for f in ("G", "N", "C", "K"))
    inputs, filters = tuple(Field(_INPUT[a]) for a in AXES), tuple(Field(_FILTER[a]) for a in AXES)
    out += [_elements("input", (g, n, c, *inputs), "N x C x its lengths, all groups"),
            _elements("weight", (g, k, c, *filters), "K x C / G x the filter lengths"),
            _elements("output", (g, n, k, *outputs.values()), "N x K x the output lengths, all groups")]
    return tuple(out)

