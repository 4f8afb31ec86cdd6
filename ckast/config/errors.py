"""Configuration problems: each names the JSON path, the bad value and what is allowed."""

from __future__ import annotations

from collections.abc import Iterable

import attrs


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


class ConfigError(Exception):
    """All problems found in a config file; nothing may be written when this is raised."""

    def __init__(self, issues: Iterable[ConfigIssue], source: str = "") -> None:
        self.issues = tuple(issues)
        self.source = source
        super().__init__("\n".join(self.lines()))

    def __reduce__(self):  # picklable across worker processes
        return (type(self), (self.issues, self.source))

    def lines(self) -> list[str]:
        return [issue.line(self.source) for issue in self.issues]
