"""Numbers written as text in the files ckast reads (problem, timing and kernel tables, models, CK's builder
files): one grammar, ASCII only.

Python's `int()` and `float()` also read digits of other scripts (Arabic-Indic `١٢٨`), underscores (`1_0`),
and raise for superscript digits and integers of more than 4,300 digits; ckast reads none of these as a
number. An integer is ASCII digits 0-9, optionally after `-`, at most `DIGITS_MAX` of them besides leading
zeros (more is beyond every bound ckast checks); a real is an ASCII decimal (`-1.5`, `.5`, `2e-3`), never
`inf`, `nan` or hexadecimal. ASCII white space around the text is ignored. A refusal is a ValueError whose
message says what is wrong, for the caller to put after the file and the field.
"""

from __future__ import annotations

import re
import string

INTEGER = r"-?[0-9]+"
"""An integer's text (a regular expression, ASCII only)."""
REAL = r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
"""A real's text (a regular expression, ASCII only)."""
DIGITS_MAX = 20
"""Significant digits an integer may have: more is out of every range ckast checks."""
LENGTH_MAX = 400
"""Characters a real may have."""

_SPACE = string.whitespace
_INTEGER = re.compile(INTEGER)
_REAL = re.compile(REAL)


class OutOfRange(ValueError):
    """An integer of more than `DIGITS_MAX` digits."""


def parse_int(text: str) -> int:
    """`text` as an integer (see the module docstring); ValueError saying why it is not one (OutOfRange when it
    has too many digits)."""
    body = text.strip(_SPACE)
    if _INTEGER.fullmatch(body) is None:
        raise ValueError("is not an integer (ASCII digits 0-9, optionally after '-')")
    if len(body.lstrip("-").lstrip("0")) > DIGITS_MAX:
        raise OutOfRange(f"has more than {DIGITS_MAX} digits (out of range)")
    return int(body)


def parse_float(text: str) -> float:
    """`text` as a real (see the module docstring), which may still overflow to infinity or underflow to 0 (the
    caller checks the range it needs); ValueError saying why it is not one."""
    body = text.strip(_SPACE)
    if len(body) > LENGTH_MAX or _REAL.fullmatch(body) is None:
        raise ValueError("is not a number (ASCII digits 0-9, a '.', an exponent e-3)")
    return float(body)
