"""Kernel templates: one kernel's files printed with slot marks, filled in for other kernels of its shape.

A template is recorded by lowering and printing a `SlottedConfig` (`ckast.render.slots`): the text
of each file with its marks split out, what each slot stands for, and the printer's guards. Filling
it for another config evaluates the slots and checks every guard; if one gives another answer, the
layout would differ and the template does not apply (the caller records another one).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from ckast.catalog import Profile
from ckast.lower.identity import EntryPoint
from ckast.nodes import identifier, marks

from .kernel import KernelText, file_names, render_kernel
from .slots import Evaluate, Meaning, SlottedConfig, evaluator

Form = str
"""Text with `{i}` where slot i goes (literal braces doubled): filled with `str.format`."""


def _form(text: str) -> Form:
    parts = marks.MARK.split(text)
    return "".join("{" + p + "}" if i % 3 == 1 else p.replace("{", "{{").replace("}", "}}")
                   for i, p in enumerate(parts) if i % 3 != 2)


@attrs.frozen
class KernelTemplate:
    slots: tuple[Meaning, ...]
    guards: tuple[marks.Guard, ...]
    files: tuple[Form, ...]  # header, TU, wrapper
    entry_points: tuple[tuple[Form, Form], ...]
    _values: tuple[Evaluate, ...] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_values", tuple(evaluator(m) for m in self.slots))

    def fill(self, config: Any, name: str) -> KernelText | None:
        """The kernel's files, or None where a guard does not hold for its values."""
        values = [str(value(config, name)) for value in self._values]
        if not all(guard.holds(values) for guard in self.guards):
            return None
        identifier(name)
        texts = (form.format(*values) for form in self.files)
        entries = tuple(EntryPoint(f.format(*values), a.format(*values)) for f, a in self.entry_points)
        return KernelText(name, tuple(zip(file_names(name), texts)), entries)


def record(config: Any, profile: Profile, slotted: Iterable[str], name: str) -> KernelTemplate:
    """Lower and print `config` with the knobs `slotted` (and its name) as slots.

    Raises SlotEscape when lowering uses a slotted knob for more than printing, and whatever the
    full path raises for a config it cannot build.
    """
    with marks.recording() as rec:
        text = render_kernel(SlottedConfig(config, slotted, name, rec), profile)
    return KernelTemplate(
        tuple(rec.slots), tuple(rec.guards), tuple(_form(t) for _, t in text.files),
        tuple((_form(e.function), _form(e.args)) for e in text.entry_points),
    )
