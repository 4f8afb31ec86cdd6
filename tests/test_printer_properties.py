"""Property tests: random well-formed ASTs print to clang-format-stable C++ that g++ accepts."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from ckast.nodes import to_source

from .ast_strategies import files
from .cpp_tools import GXX, gxx_accepts, reformat

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(files())
def test_printed_random_ast_is_clang_format_clean(f):
    source = to_source(f)
    assert reformat(source) == source


@pytest.mark.skipif(GXX is None, reason="g++ not installed")
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(f=files())
def test_printed_random_ast_compiles(f, tmp_path):
    ok, errors = gxx_accepts(to_source(f), tmp_path)
    assert ok, errors


@SETTINGS
@given(files())
def test_printing_is_deterministic_and_structural(f):
    rebuilt = type(f)(f.body, f.includes, f.preamble, f.pragma_once)
    assert rebuilt == f and hash(rebuilt) == hash(f)
    assert to_source(rebuilt) == to_source(f)
