"""Rendering many kernels fast: per-shape templates recorded from the AST, filled per kernel.

Kernels that differ only in int knobs (tile sizes, waves, vector sizes, ...) share one printed text
up to those values and the name. `Renderer` records a template (`templates.record`) the first time it
meets a shape, through the same lowering and printer as a single kernel, and fills it for the rest.
The AST stays the only source of C++: a template is the printer's output with marks where the values
go. `verify=True` also renders every kernel in full and compares (tests). Templates are kept
between runs (`cache`), a shape's read when the renderer first meets it; `shared()` is the renderer of
this process, on that cache.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from pathlib import Path
from typing import Any

from ckast.catalog import Profile
from ckast.config.knobs import KNOB_NAMES
from ckast.lower.identity import kernel_name

from . import cache
from .kernel import KernelText, render_kernel
from .slots import SlotEscape
from .templates import KernelTemplate, record

__all__ = ["KernelText", "Renderer", "TemplateMismatch", "render_kernel", "shared"]


class TemplateMismatch(AssertionError):
    """A filled template differs from the full render of the same kernel (verify mode)."""


class Renderer:
    """Renders kernels through per-shape templates; output is byte-identical to `render_kernel`."""

    def __init__(self, verify: bool = False, cache_path: Path | None = None) -> None:
        self.verify = verify
        self.cache_path = cache_path  # the template directory (`cache.cache_dir`)
        self._templates: dict[tuple, list[KernelTemplate] | None] = {}  # None: this shape renders in full
        # knobs that escaped, per (kind, variant)
        self._structural: dict[tuple[str, str], set[str]] = cache.structural(cache_path)
        self._shapes: dict[tuple[str, str], tuple[list[str], Callable[[Any], tuple]]] = {}
        self._new: dict[tuple, list[KernelTemplate]] = {}  # recorded by this process, not yet saved
        self.recorded = self.filled = self.full = 0

    @property
    def template_count(self) -> int:
        """The templates this renderer holds and those its cache holds of other shapes (reads every shape's
        file: for reports)."""
        stored = cache.stored_count(self.cache_path)
        return (sum(len(ts) for ts in self._templates.values() if ts)
                + sum(n for key, n in stored.items() if key not in self._templates))

    def take_new(self) -> tuple[dict[tuple, list[KernelTemplate]], dict[tuple[str, str], set[str]]]:
        """What this renderer learned since the last call (to send to the process that saves)."""
        new, self._new = self._new, {}
        return new, {v: set(s) for v, s in self._structural.items()}

    def learn(self, new: dict[tuple, list[KernelTemplate]], structural: dict[tuple[str, str], set[str]]) -> None:
        """Take in what another process's renderer learned."""
        for variant, knobs in structural.items():
            if not knobs <= self._structural.setdefault(variant, set()):
                self._structural[variant] |= knobs
                self._shapes.pop(variant, None)
        for key, templates in new.items():
            mine = self._known(key)
            if mine is not None:
                mine += [t for t in templates if t not in mine]
            self._new.setdefault(key, []).extend(templates)

    def save(self) -> None:
        """Merge the templates recorded since the last save into the cache."""
        if self._new:
            cache.save(self.cache_path, self._new, self._structural)
            self._new = {}

    def render(self, config: Any, profile: Profile) -> KernelText:
        """The kernel's files."""
        name = kernel_name(config)
        variant = (config.kind, config.variant)
        while True:
            slotted, shape = self._shape(variant, config)
            key = (profile.name, variant, *shape(config))
            known = self._known(key)
            if known is None:
                self.full += 1
                return render_kernel(config, profile)
            for template in known:
                text = template.fill(config, name)
                if text is not None:
                    self.filled += 1
                    return self._checked(text, config, profile)
            try:
                template = record(config, profile, slotted, name)
            except SlotEscape as exc:
                structural = self._structural.setdefault(variant, set())
                if exc.knobs <= structural:
                    self._templates[key] = None
                structural |= exc.knobs
                self._shapes.pop(variant, None)
                continue
            except (ValueError, TypeError):  # refusals (also of a slot value where a node wants a literal)
                self._templates[key] = None  # the full path renders it, or reports why it cannot
                continue
            known.append(template)
            self._new.setdefault(key, []).append(template)
            self.recorded += 1
            text = template.fill(config, name)
            assert text is not None, "a template's guards hold for the kernel it was recorded from"
            return self._checked(text, config, profile)

    def _known(self, key: tuple) -> list[KernelTemplate] | None:
        """The templates of shape `key` (a list this renderer adds to), or None if it renders in full."""
        if key not in self._templates:
            self._templates[key] = [cache.template(t) for t in cache.stored(self.cache_path, key)]
        return self._templates[key]

    def _shape(self, variant: tuple[str, str], config: Any) -> tuple[list[str], Callable[[Any], tuple]]:
        """The knobs slotted for `variant` (its int knobs that never escaped) and a function giving a
        config's shape: the values of all other knobs, and which slotted knobs are unset."""
        if variant not in self._shapes:
            structural = self._structural.get(variant, set())
            slotted = [k for k in KNOB_NAMES if k not in structural and type(getattr(config, k)) is int]
            others = attrgetter(*(k for k in KNOB_NAMES if k not in slotted))  # kind, variant, ...: 2 or more

            def shape(c: Any) -> tuple:
                return others(c), tuple(getattr(c, k) is None for k in slotted)

            self._shapes[variant] = (slotted, shape)
        return self._shapes[variant]

    def _checked(self, text: KernelText, config: Any, profile: Profile) -> KernelText:
        if self.verify and text != (full := render_kernel(config, profile)):
            raise TemplateMismatch(f"{full.name}: the filled template differs from the full render")
        return text


_shared: list[Renderer] = []


def shared() -> Renderer:
    """This process's renderer, on the template cache (forked workers inherit what it holds)."""
    if not _shared:
        _shared.append(Renderer(cache_path=cache.cache_dir()))
    return _shared[0]
