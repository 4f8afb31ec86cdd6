"""Reading a CSV table strictly, as `config.json_file` reads JSON: the problems files, timing tables and kernel
tables of selection all go through `read_csv`.

A table is UTF-8 without a byte order mark, in the csv module's dialect (comma-separated, `"` quoting, strict
quoting), read through `input_file.read_input` (a regular file of bounded size). Blank lines are skipped. The
first line is the header row: every column named in printable characters (names are stripped of spaces), no
name twice. Every other line is a row with exactly one field per column, and there is at least one. A refusal
is a `CsvError`, one line naming the file, the row (or line, or column) and what is wrong.

The whole file is checked when it is read; its rows are then parsed again as they are iterated, so a caller
can work through a large table row by row without holding every row.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import attrs

from ckast.config.errors import shown
from ckast.errors import CkastError
from ckast.input_file import InputFileError, read_input

_BOM = b"\xef\xbb\xbf"


class CsvError(CkastError, ValueError):
    """A CSV table that cannot be read: `file: [row N: | line N: | column N: ]message`, one line."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = str(path)
        self.message = message


@attrs.frozen
class CsvTable:
    """A checked table: its column names; iterating yields (row number from 1, column -> field) per row, blank
    lines not counted."""

    columns: tuple[str, ...]
    _raw: bytes = attrs.field(repr=False)

    def __iter__(self) -> Iterator[tuple[int, dict[str, str]]]:
        records = _Records(self._raw)
        next(records)  # the header, checked when read
        for number, record in enumerate(records, start=1):
            yield number, dict(zip(self.columns, record))


def read_csv(path: Path | str, what: str) -> CsvTable:
    """The table at `path`, whose rows are each one `what` (as messages name them: "problem", "run"); CsvError
    naming the file and the row, line or column if it is unreadable, not UTF-8, not CSV, has no header row, a
    blank or repeated column name, a row with more or fewer fields than the header, or no row."""
    path = Path(path)
    try:
        raw = read_input(path)
    except InputFileError as exc:
        raise CsvError(path, exc.message) from None
    if raw.startswith(_BOM):
        raise CsvError(path, "starts with a UTF-8 byte order mark; save the file without it")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = raw.count(b"\n", 0, exc.start) + 1, exc.start - raw.rfind(b"\n", 0, exc.start)
        raise CsvError(path, f"line {line}: not UTF-8: byte 0x{raw[exc.start]:02x} at column {column}") from None
    if not text.strip():
        raise CsvError(path, f"empty; expected a header row, then one {what} per row")
    del text
    records = _Records(raw)
    try:
        columns = _header(path, next(records))
        rows = 0
        for rows, record in enumerate(records, start=1):
            if len(record) != len(columns):
                raise CsvError(path, f"row {rows}: {len(record)} field{'s' * (len(record) != 1)}, but the header has "
                                     f"{len(columns)} columns")
    except csv.Error as exc:
        raise CsvError(path, f"line {records.line_num}: not CSV: {exc}") from None
    if not rows:
        raise CsvError(path, f"no {what} given: the file holds a header row only")
    return CsvTable(columns, raw)


class _Records:
    """The non-blank records of a table's bytes (`line_num`: the lines read so far)."""

    def __init__(self, raw: bytes) -> None:
        self._reader = csv.reader(io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", newline=""), strict=True)

    def __iter__(self) -> _Records:
        return self

    def __next__(self) -> list[str]:
        record = next(self._reader)
        while not record:
            record = next(self._reader)
        return record

    @property
    def line_num(self) -> int:
        return self._reader.line_num


def _header(path: Path, record: list[str]) -> tuple[str, ...]:
    columns = tuple(name.strip() for name in record)
    first: dict[str, int] = {}
    for number, name in enumerate(columns, start=1):
        if not name:
            raise CsvError(path, f"column {number}: blank name in the header row (every column needs a name)")
        if not name.isprintable():
            raise CsvError(path, f"column {number}: {shown(name)} holds a character that is not printable")
        if name in first:
            raise CsvError(path, f"column {number}: {shown(name)} repeats column {first[name]}; each column is named "
                                 "once")
        first[name] = number
    return columns
