"""Reading a config file strictly: UTF-8 without a byte order mark, standard JSON (no NaN or Infinity),
no key repeated within an object, integers within 64 bits, at most MAX_DEPTH levels of nesting.

Every refusal is a ConfigIssue with a rule id (`file.read`, `json.encoding`, `json.syntax`,
`json.constant`, `json.duplicate_key`, `json.number`, `json.depth`) and, where the parser got that
far, the JSON path of the offending value.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ckast.input_file import InputFileError, read_input

from .errors import ConfigError, ConfigIssue, key_path, shorten, shown

MAX_DEPTH = 32
"""Deepest nesting of arrays and objects read (ckast's and CK's configs need 4)."""
INT_LIMIT = 2**63
"""Integers must lie in [-INT_LIMIT, INT_LIMIT)."""

_BOM = b"\xef\xbb\xbf"


class _Constant:
    """Where the file has NaN, Infinity or -Infinity (Python's extensions of JSON)."""

    def __init__(self, name: str) -> None:
        self.name = name


class _Repeated(dict):
    """A JSON object that repeats keys (holding the last value of each, as json does)."""

    def __init__(self, pairs: list[tuple[str, Any]], repeated: list[str]) -> None:
        super().__init__(pairs)
        self.repeated = repeated


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    return _Repeated(pairs, [key for key, count in Counter(key for key, _ in pairs).items() if count > 1])


_CONTAINERS = (dict, list, _Repeated)


def read_json(path: Path) -> Any:
    """The parsed JSON of a config file; ConfigError naming the file and every problem if it is
    unreadable, not UTF-8, or not strict JSON."""
    try:
        raw = read_input(path)
    except InputFileError as exc:
        raise ConfigError([ConfigIssue("", exc.message, "file.read")], str(path)) from None
    return parse_json(raw, str(path))


def parse_json(raw: bytes, source: str = "") -> Any:
    """`raw` (a file's bytes, read through `read_input`) parsed as strict JSON; ConfigError naming `source`
    and every problem otherwise. For any JSON file ckast reads, not only configs."""
    data, issues = _parse(raw)
    if issues:
        raise ConfigError(issues, source)
    return data


def _parse(raw: bytes) -> tuple[Any, list[ConfigIssue]]:
    if raw.startswith(_BOM):
        return None, [ConfigIssue("", "starts with a UTF-8 byte order mark; save the file without it", "json.encoding")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = raw.count(b"\n", 0, exc.start) + 1, exc.start - raw.rfind(b"\n", 0, exc.start)
        message = f"not UTF-8: byte 0x{raw[exc.start]:02x} at line {line} column {column}"
        return None, [ConfigIssue("", message, "json.encoding")]
    if not text.strip():
        return None, [ConfigIssue("", "the file is empty; expected a JSON config", "json.syntax")]
    try:
        data = json.loads(text, object_pairs_hook=_object, parse_constant=_Constant)
    except json.JSONDecodeError as exc:
        return None, [ConfigIssue("", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                                  "json.syntax")]
    except RecursionError:
        return None, [_too_deep("")]
    except ValueError:  # an integer literal longer than Python converts (4300 digits)
        return None, [ConfigIssue("", "holds an integer too long to read (integers are 64-bit)", "json.number")]
    return data, _check_values(data)


def _check_values(data: Any) -> list[ConfigIssue]:
    """What the parser let through: repeated keys, NaN and Infinity, huge integers, deep nesting."""
    if data.__class__ not in _CONTAINERS:
        return [_scalar_issue("", data)] if _refused(data) else []
    issues: list[ConfigIssue] = []
    stack = [("", data, 1)]
    while stack:
        path, value, depth = stack.pop()
        if depth > MAX_DEPTH:
            issues.append(_too_deep(path))
            continue
        if value.__class__ is _Repeated:
            issues += [ConfigIssue(key_path(path, key), "appears more than once in its object; JSON readers keep "
                                   "only one of the values", "json.duplicate_key") for key in value.repeated]
        children = []
        for key, child in value.items() if isinstance(value, dict) else enumerate(value):
            if child.__class__ in _CONTAINERS:
                children.append((key_path(path, key), child, depth + 1))
            elif _refused(child):
                issues.append(_scalar_issue(key_path(path, key), child))
        stack += reversed(children)
    return issues


def _refused(value: Any) -> bool:
    kind = value.__class__
    return kind is _Constant or kind is int and not -INT_LIMIT <= value < INT_LIMIT


def _scalar_issue(path: str, value: Any) -> ConfigIssue:
    if isinstance(value, _Constant):
        return ConfigIssue(path, f"{value.name} is not JSON (JSON numbers are finite)", "json.constant")
    return ConfigIssue(path, f"{shown(value)} is out of range (integers are 64-bit)", "json.number")


def _too_deep(path: str) -> ConfigIssue:
    return ConfigIssue(shorten(path, 120), f"nested deeper than {MAX_DEPTH} levels of arrays and objects", "json.depth")
