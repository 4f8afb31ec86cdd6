"""Configuration problems: each names the JSON path, the bad value and what is allowed."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import attrs

from ckast.errors import CkastError

SHOWN_MAX = 60
"""Longest value (or object key) a message shows in full; a longer one is cut (`shorten`)."""
MAX_REPORTED = 100
"""Problems listed per ConfigError; the rest are counted on one more line."""

_PLAIN = re.compile(r"\w{1,%d}" % SHOWN_MAX, re.ASCII)


def shorten(text: str, limit: int = SHOWN_MAX) -> str:
    """`text`, or its start and end with its length if it is longer than `limit`."""
    if len(text) <= limit:
        return text
    return f"{text[:limit - 16]}...{text[-8:]} ({len(text)} characters)"


def shown(value: Any) -> str:
    """A JSON value as a message shows it: JSON, ASCII only (so quotes, control characters, zero-width
    characters and homoglyphs are escapes), shortened."""
    return shorten(json.dumps(value))


def plain(text: Any) -> bool:
    """Whether a string is a short ASCII name (letters, digits, underscores) that needs no quoting."""
    return isinstance(text, str) and _PLAIN.fullmatch(text) is not None


def key_path(path: str, key: str | int) -> str:
    """`path` extended by a list index (`[3]`) or an object key: `.name` for a plain key, else `["..."]`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if plain(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{shown(key)}]"


@attrs.frozen
class ConfigIssue:
    """One problem with one config field (or a whole kernel, then `path` is the kernel's path)."""

    path: str
    message: str
    rule: str | None = None

    def line(self, source: str = "") -> str:
        where = f"{source}: " if source else ""
        rule = f" [rule {self.rule}]" if self.rule else ""
        return f"{where}{self.path or '<root>'}: {self.message}{rule}"


class ConfigError(CkastError, ValueError):
    """All problems found in a config file; nothing may be written when this is raised."""

    def __init__(self, issues: Iterable[ConfigIssue], source: str = "") -> None:
        self.issues = tuple(issues)
        self.source = source
        super().__init__("\n".join(self.lines()))

    def __reduce__(self):  # picklable across worker processes
        return (type(self), (self.issues, self.source))

    def lines(self) -> list[str]:
        """One line per problem, the first MAX_REPORTED of them, then how many more there are."""
        lines = [issue.line(self.source) for issue in self.issues[:MAX_REPORTED]]
        more = len(self.issues) - MAX_REPORTED
        if more > 0:
            where = f"{self.source}: " if self.source else ""
            lines.append(f"{where}... and {more} more problems (only the first {MAX_REPORTED} are listed)")
        return lines
