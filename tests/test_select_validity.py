"""`validity`: the rules a problem meets are the reader's: a problem the reader accepts meets every rule's tree,
one it refuses breaks a rule (the same one, for GEMM), the emitted selector's struct view of a read problem
(`values`) is the one the rules read, and many problems checked at once are refused as each alone."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ckast.select.cxx.problem_struct import problem_struct
from ckast.select.expr import Field, walk
from ckast.select.problem import INT_MAX, QUANT_GROUPS, ProblemError, bounds
from ckast.select.serving.problem_read import conv_problem, gemm_problem
from ckast.select.serving.validity import broken, check, first_broken, refusal, rules, values

SETTINGS = settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
SIZES = st.one_of(st.integers(1, 4096), st.sampled_from((0, -1, 46341, 65536, 2**20, INT_MAX, INT_MAX + 1, -2**63)),
                  st.integers(-2**63, 2**63 - 1))


@SETTINGS
@given(m=SIZES, n=SIZES, k=SIZES, k_batch=st.one_of(st.just(1), SIZES), batch=st.one_of(st.just(1), SIZES),
       groups=st.one_of(st.just(1), SIZES))
def test_the_gemm_reader_refuses_exactly_what_the_rules_refuse(m, n, k, k_batch, batch, groups):
    fields = {"M": m, "N": n, "K": k, "k_batch": k_batch, "batch": batch, "groups": groups, "variant": "standard",
              "num_d_tensors": 0, "d_layout": "", "elementwise_op": "", **dict.fromkeys(QUANT_GROUPS, 0)}
    rule = broken("gemm", fields)
    try:
        problem = gemm_problem({"M": str(m), "N": str(n), "K": str(k), "k_batch": k_batch, "batch": str(batch),
                                "groups": str(groups)})
    except ProblemError as exc:
        assert rule is not None and exc.field == rule.field, (exc, rule)
    else:
        assert rule is None and values(problem) == fields


CONV_SIZES = st.one_of(st.integers(1, 64), st.sampled_from((0, -1, 65536, 2**24, INT_MAX, INT_MAX + 1)))


@SETTINGS
@given(data=st.data(), ndim=st.integers(1, 3))
def test_the_conv_reader_refuses_exactly_what_the_rules_refuse(data, ndim):
    """One group, so C and K read as totals are the struct's per-group C and K."""
    axes = "dhw"[3 - ndim:]
    given_ = {"G": 1, **{f: data.draw(CONV_SIZES, f) for f in ("N", "C", "K", "k_batch")}}
    for a, i, f in zip("dhw", ("Di", "Hi", "Wi"), ("Z", "Y", "X")):
        if a in axes:
            given_.update({i: data.draw(CONV_SIZES, i), f: data.draw(st.sampled_from((1, 3, 0)), f),
                           f"stride_{a}": data.draw(st.sampled_from((1, 2, 0)), f"stride_{a}"),
                           f"dilation_{a}": data.draw(st.sampled_from((1, 2, INT_MAX)), f"dilation_{a}"),
                           f"pad_{a}": data.draw(st.sampled_from((0, 1, -1, INT_MAX)), f"pad_{a}")})
    struct = {"direction": "forward", "ndim": ndim, **given_}
    for a, i, f in zip("dhw", ("Di", "Hi", "Wi"), ("Z", "Y", "X")):
        default = {i: 1, f: 1, f"stride_{a}": 1, f"dilation_{a}": 1, f"pad_{a}": 0}
        struct.update({k: struct.get(k, v) for k, v in default.items()})
        pad = struct.pop(f"pad_{a}")
        struct.update({f"left_pad_{a}": pad, f"right_pad_{a}": pad})
    rule = broken("grouped_conv", struct)
    try:
        problem = conv_problem(given_)
    except ProblemError as exc:
        assert rule is not None, exc
    else:
        assert rule is None and values(problem) == struct


def test_every_struct_field_has_a_rule_and_the_rules_read_only_struct_fields():
    """The C++ selector checks every field of its struct before it computes with it."""
    for kind in ("gemm", "grouped_conv"):
        fields = set(problem_struct(kind).fields)
        named = {rule.field for rule in rules(kind) if rule.read}
        assert named == fields, kind
        read = {node.name for rule in rules(kind) for node in walk(rule.holds) if isinstance(node, Field)}
        assert read == fields, kind


def test_bounds_are_index_t_pads_from_zero_and_three_spatial_axes():
    assert bounds("M") == bounds("stride_h") == (1, INT_MAX)
    assert bounds("pad_w") == bounds("left_pad_d") == bounds("right_pad_h") == (0, INT_MAX)
    assert bounds("ndim") == (1, 3)


READ_SIZES = st.integers(0, 11).flatmap(lambda i: st.integers(1, 256) if i else
                                        st.sampled_from((46341, 2**20, INT_MAX)))
"""Sizes the reader accepts, one in twelve large enough for a tensor beyond index_t."""


@st.composite
def read_conv_fields(draw) -> dict:
    """A conv problem's fields the reader accepts (C and K over all groups, within index_t)."""
    ndim, groups = draw(st.integers(1, 3)), draw(st.sampled_from((1, 1, 2, 8)))
    fields = {"G": groups, **{f: draw(READ_SIZES) for f in ("N", "k_batch")}}
    for f in ("C", "K"):
        per_group = draw(READ_SIZES)
        fields[f] = groups * per_group if groups * per_group <= INT_MAX else groups
    for a, i, f in zip("dhw"[3 - ndim:], ("Di", "Hi", "Wi")[3 - ndim:], ("Z", "Y", "X")[3 - ndim:]):
        fields.update({i: draw(READ_SIZES), f: draw(st.sampled_from((1, 3, 7))),
                       f"stride_{a}": draw(st.sampled_from((1, 2))),
                       f"dilation_{a}": draw(st.sampled_from((1, 2) * 5 + (INT_MAX,))),
                       f"pad_{a}": draw(st.sampled_from((0, 1) * 5 + (INT_MAX,)))})
    return fields


GEMM_FIELDS = st.fixed_dictionaries({"M": READ_SIZES, "N": READ_SIZES, "K": READ_SIZES, "k_batch": READ_SIZES})


@SETTINGS
@given(rows=st.one_of(st.lists(GEMM_FIELDS, min_size=1, max_size=8),
                     st.lists(read_conv_fields(), min_size=1, max_size=8)))
def test_problems_checked_at_once_are_refused_as_each_alone(rows):
    """`first_broken` names the first problem `check` refuses and the rule `check` names, with its message."""
    read = gemm_problem if "M" in rows[0] else conv_problem
    problems = [read(fields, checked=False) for fields in rows]
    refused = []
    for problem in problems:
        try:
            check(problem, "row")
        except ProblemError as exc:
            refused.append(str(exc))
        else:
            refused.append(None)
    found = first_broken(problems)
    if found is None:
        assert refused == [None] * len(problems)
    else:
        row, rule = found
        assert refused[:row] == [None] * row and str(refusal(problems[row], rule, "row")) == refused[row] is not None
