"""Slotted configs: a kernel config whose int knobs are opaque slot values while a template is recorded.

A `SlotInt` stands for an int that may only be printed (which marks it, see `ckast.nodes.marks`) or combined
by `+ - * // %` into another slot value; comparing, hashing, indexing, truth-testing or converting it
raises `SlotEscape` naming the knobs involved. So if lowering a `SlottedConfig` finishes, the AST
depends on the slotted knobs only through printed leaves, and the printed text is valid for any other
values of them (under the printer's recorded guards). A knob that escapes is structural for its
(kind, variant) from then on.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import Any

from ckast.config.knobs import KNOB_NAMES
from ckast.nodes import marks

Meaning = tuple  # ("name",) | ("knob", knob) | ("op", symbol, Meaning | int, Meaning | int)
_OPS: dict[str, Callable[[int, int], int]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
}


class SlotEscape(BaseException):
    """A slot value was used for more than printing (a BaseException, so no `except Exception` hides it)."""

    def __init__(self, knobs: Iterable[str]) -> None:
        self.knobs = frozenset(knobs)
        super().__init__(f"slot values of {', '.join(sorted(self.knobs))} were used for more than printing")


def knobs_of(meaning: Meaning | int) -> set[str]:
    if isinstance(meaning, int):
        return set()
    if meaning[0] == "knob":
        return {meaning[1]}
    if meaning[0] == "op":
        return knobs_of(meaning[2]) | knobs_of(meaning[3])
    return set()


Evaluate = Callable[[Any, str], Any]


def evaluator(meaning: Meaning | int) -> Evaluate:
    """A function (config, name) -> the value a slot with this meaning stands for in that kernel."""
    if isinstance(meaning, int):
        return lambda c, name: meaning
    if meaning[0] == "knob":
        get = attrgetter(meaning[1])
        return lambda c, name: get(c)
    if meaning[0] == "name":
        return lambda c, name: name
    op, a, b = _OPS[meaning[1]], evaluator(meaning[2]), evaluator(meaning[3])
    return lambda c, name: op(a(c, name), b(c, name))


def _arith(symbol: str, reflected: bool = False):
    def op(self: SlotInt, other: object) -> SlotInt:
        if not isinstance(other, (int, SlotInt)) or isinstance(other, bool):
            raise SlotEscape(knobs_of(self.meaning))
        a, b = (other, self) if reflected else (self, other)
        value = _OPS[symbol](_value(a), _value(b))
        return SlotInt(value, ("op", symbol, _meaning(a), _meaning(b)))
    return op


def _refuse(self: SlotInt, *_args: object, **_kw: object):
    raise SlotEscape(knobs_of(self.meaning))


def _value(x: int | SlotInt) -> int:
    return x.sample if isinstance(x, SlotInt) else x


def _meaning(x: int | SlotInt) -> Meaning | int:
    return x.meaning if isinstance(x, SlotInt) else x


class SlotInt(marks.Slot):
    """An int knob value (or a sum/product of them) that prints as a slot mark.

    Not an int: C-level int fast paths (indexing, `range`, int methods) would read its sample value
    without asking; here they fail instead.
    """

    __slots__ = ("sample", "meaning")

    def __init__(self, sample: int, meaning: Meaning) -> None:
        self.sample = sample
        self.meaning = meaning

    def __format__(self, spec: str) -> str:
        rec = marks.current()
        if spec or rec is None:
            raise SlotEscape(knobs_of(self.meaning))
        return rec.slot(self.meaning, str(self.sample))

    def __str__(self) -> str:
        return self.__format__("")

    __add__, __radd__ = _arith("+"), _arith("+", True)
    __sub__, __rsub__ = _arith("-"), _arith("-", True)
    __mul__, __rmul__ = _arith("*"), _arith("*", True)
    __floordiv__, __rfloordiv__ = _arith("//"), _arith("//", True)
    __mod__, __rmod__ = _arith("%"), _arith("%", True)
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __hash__ = __bool__ = __index__ = __int__ = __float__ = __repr__ = __neg__ = __abs__ = _refuse
    __truediv__ = __rtruediv__ = __pow__ = __and__ = __or__ = __getstate__ = __reduce_ex__ = _refuse


class SlottedConfig:
    """A read-only view of a KernelConfig whose `slotted` knobs are SlotInts and whose name is a slot."""

    __slots__ = ("_config", "_slotted", "symbolic_name")

    def __init__(self, config: Any, slotted: Iterable[str], name: str, recording: marks.Recording) -> None:
        self._config = config
        self._slotted = frozenset(slotted)
        self.symbolic_name = recording.slot(("name",), name)
        """What `ckast.lower.identity.kernel_name` returns for this view."""

    def __getattr__(self, knob: str) -> Any:
        if knob not in KNOB_NAMES:
            raise AttributeError(knob)
        value = getattr(self._config, knob)
        return SlotInt(value, ("knob", knob)) if knob in self._slotted and value is not None else value
