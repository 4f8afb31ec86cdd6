"""Slot marks: values the printer prints now and a renderer fills in later (`ckast.render`).

While a file is printed under `recording()`, a value that stands for a slot (an int knob, the
kernel name) appears in the text as a mark: OPEN, the slot number, SEP, the sample value, CLOSE.
Identifiers and header paths are validated on their sample text. Every decision the printer takes
on the text (does a line fit, in which order are includes sorted) is recorded as a guard; a
template made from the text is valid for other slot values only while each guard gives the same
answer. Outside `recording()` a mark is an error: nothing marked ever reaches a file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from operator import itemgetter

import attrs

OPEN, SEP, CLOSE = "\x02", "\x1f", "\x03"
MARK = re.compile("\x02(\\d+)\x1f([A-Za-z0-9_]*)\x03")
"""A mark; slot values are identifier characters (digits, names), so they never need escaping."""


class Slot:
    """Base of values that print as a slot mark (an int literal's value may be one)."""

    __slots__ = ()


class MarkError(ValueError):
    """Marked text outside a recording, or a malformed mark."""


def mark(slot: int, sample: str) -> str:
    return f"{OPEN}{slot}{SEP}{sample}{CLOSE}"


def unmark(text: str) -> str:
    """The text as printed for the sample values."""
    return MARK.sub(r"\2", text) if OPEN in text else text


def slots_in(text: str) -> tuple[tuple[int, str], ...]:
    """(slot, sample) of every mark in `text`, in order."""
    return tuple((int(s), v) for s, v in MARK.findall(text))


class Form:
    """Marked text compiled for filling: its literal pieces around slot numbers, filled in by one join."""

    __slots__ = ("pieces", "slots", "_frame", "_get")

    def __init__(self, pieces: tuple[str, ...], slots: tuple[int, ...]) -> None:
        self.pieces, self.slots = pieces, slots
        self._frame: list[str | None] = [None] * (2 * len(pieces) - 1)
        self._frame[0::2] = pieces
        self._get = (itemgetter(*slots) if len(slots) > 1 else
                     (lambda values: (values[slots[0]],)) if slots else (lambda values: ()))

    @classmethod
    def of(cls, marked: str) -> Form:
        parts = MARK.split(marked)
        return cls(tuple(parts[0::3]), tuple(int(p) for p in parts[1::3]))

    def fill(self, values: Sequence[str]) -> str:
        frame = self._frame.copy()
        frame[1::2] = self._get(values)
        return "".join(frame)  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Form) and (self.pieces, self.slots) == (other.pieces, other.slots)

    def __hash__(self) -> int:
        return hash((self.pieces, self.slots))

    def __reduce__(self) -> tuple:
        return Form, (self.pieces, self.slots)


@attrs.frozen
class WidthGuard:
    """A line-fit decision: `fixed` columns plus the widths of `slots` fit in `limit` or not."""

    fixed: int
    slots: tuple[int, ...]
    limit: int
    fits: bool

    def holds(self, values: Sequence[str]) -> bool:
        return (self.fixed + sum(len(values[s]) for s in self.slots) <= self.limit) == self.fits


@attrs.frozen
class OrderGuard:
    """A sort decision: `items` (marked texts) are in strictly increasing order of their values."""

    items: tuple[str, ...]
    _forms: tuple[Form, ...] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_forms", tuple(Form.of(t) for t in self.items))

    def holds(self, values: Sequence[str]) -> bool:
        filled = [form.fill(values) for form in self._forms]
        return all(a < b for a, b in zip(filled, filled[1:]))


Guard = WidthGuard | OrderGuard


class Recording:
    """The slots and guards of one recording."""

    def __init__(self) -> None:
        self.slots: list[object] = []  # what each slot stands for (opaque to the printer)
        self._index: dict[object, int] = {}
        self.guards: list[Guard] = []

    def slot(self, meaning: object, sample: str) -> str:
        """The mark of the slot for `meaning` (one slot per meaning)."""
        if meaning not in self._index:
            self._index[meaning] = len(self.slots)
            self.slots.append(meaning)
        return mark(self._index[meaning], sample)


_current: list[Recording] = []


def current() -> Recording | None:
    return _current[-1] if _current else None


@contextmanager
def recording() -> Iterator[Recording]:
    """Print with marks allowed, collecting slots and guards."""
    rec = Recording()
    _current.append(rec)
    try:
        yield rec
    finally:
        _current.pop()


def _active() -> Recording:
    """The current recording; marked text outside one is an error."""
    rec = current()
    if rec is None:
        raise MarkError("marked text outside a recording")
    return rec


def checked(text: str) -> str:
    """`text` with its marks replaced by their samples, for validation; marks need a recording."""
    if OPEN not in text:
        return text
    _active()
    return unmark(text)


def fits(indent: int, text: str, limit: int) -> bool:
    """Whether `text` fits on a line after `indent` columns; recorded as a guard if it holds marks."""
    if OPEN not in text:
        return indent + len(text) <= limit
    rec = _active()
    marks = slots_in(text)
    visible = len(unmark(text))
    fixed = indent + visible - sum(len(sample) for _, sample in marks)
    answer = indent + visible <= limit
    rec.guards.append(WidthGuard(fixed, tuple(s for s, _ in marks), limit, answer))
    return answer


def sorted_texts(texts: set[str] | frozenset[str]) -> list[str]:
    """`sorted(texts)` by printed value; recorded as a guard if any text holds marks."""
    if not any(OPEN in t for t in texts):
        return sorted(texts)
    rec = _active()
    out = sorted(texts, key=unmark)
    rec.guards.append(OrderGuard(tuple(out)))
    return out
