"""Kernel templates: one kernel's files printed with slot marks, filled in for other kernels of its shape.

A template is recorded by lowering and printing a `SlottedConfig` (`ckast.render.slots`): the text
of each file with its marks split out, what each slot stands for, and the printer's guards. Filling
it for another config evaluates the slots and checks every guard; if one gives another answer, the
layout would differ and the template does not apply (the caller records another one).
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter
from typing import Any

import attrs

from ckast.catalog import Profile
from ckast.lower.identity import EntryPoint
from ckast.nodes import identifier, marks
from ckast.nodes.marks import Form

from .kernel import KernelText, file_names, render_kernel
from .slots import Meaning, SlottedConfig, evaluator


@attrs.frozen
class KernelTemplate:
    slots: tuple[Meaning, ...]
    guards: tuple[marks.Guard, ...]
    files: tuple[Form, ...]  # header, TU, wrapper
    entry_points: tuple[tuple[Form, Form], ...]
    _plan: tuple = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        knobs = [(i, m[1]) for i, m in enumerate(self.slots) if m[0] == "knob"]
        get = attrgetter(*(k for _, k in knobs)) if len(knobs) > 1 else None
        others = tuple((i, evaluator(m)) for i, m in enumerate(self.slots) if m[0] != "knob")
        object.__setattr__(self, "_plan", (tuple(i for i, _ in knobs), get, others))

    def _values(self, config: Any, name: str) -> list[str]:
        """Each slot's text for the kernel: the knobs it holds in one attrgetter call, then the rest."""
        where, get, others = self._plan
        values = [""] * len(self.slots)
        for i, value in zip(where, get(config) if get else [getattr(config, self.slots[i][1]) for i in where]):
            values[i] = str(value)
        for i, value in others:
            values[i] = str(value(config, name))
        return values

    def __reduce__(self) -> tuple:  # workers send templates to the parent; evaluators are rebuilt there
        return KernelTemplate, (self.slots, self.guards, self.files, self.entry_points)

    def fill(self, config: Any, name: str) -> KernelText | None:
        """The kernel's files, or None where a guard does not hold for its values."""
        values = self._values(config, name)
        if not all(guard.holds(values) for guard in self.guards):
            return None
        identifier(name)
        texts = (form.fill(values) for form in self.files)
        entries = tuple(EntryPoint(f.fill(values), a.fill(values)) for f, a in self.entry_points)
        return KernelText(name, tuple(zip(file_names(name), texts)), entries)


def record(config: Any, profile: Profile, slotted: Iterable[str], name: str) -> KernelTemplate:
    """Lower and print `config` with the knobs `slotted` (and its name) as slots.

    Raises SlotEscape when lowering uses a slotted knob for more than printing, and whatever the
    full path raises for a config it cannot build.
    """
    with marks.recording() as rec:
        text = render_kernel(SlottedConfig(config, slotted, name, rec), profile)
    return KernelTemplate(
        tuple(rec.slots), tuple(rec.guards), tuple(Form.of(t) for _, t in text.files),
        tuple((Form.of(e.function), Form.of(e.args)) for e in text.entry_points),
    )
