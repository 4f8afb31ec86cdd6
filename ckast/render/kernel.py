"""One kernel's files, built and printed in full: the path every template is recorded from."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ckast import nodes as n
from ckast.arch.rules import Violation
from ckast.arch.waivers import banner
from ckast.catalog import Profile
from ckast.lower.identity import EntryPoint, wrapper_path
from ckast.variants import has_wrapper, lower_kernel, unit_source, wrapper_header


@attrs.frozen
class KernelText:
    """A kernel's name, its files (path relative to the output root, text) and entry points."""

    name: str
    files: tuple[tuple[str, str], ...]
    entry_points: tuple[EntryPoint, ...]

    @property
    def header(self) -> str:
        return self.files[0][0]


def file_names(name: str) -> tuple[str, str, str]:
    """Paths of kernel `name`'s header, one-line TU and dispatcher wrapper."""
    return f"{name}.hpp", f"{name}.cpp", wrapper_path(name)


def render_kernel(config, profile: Profile, waived: Sequence[Violation] = ()) -> KernelText:
    """Lower and print the kernel's header, TU and wrapper (raises ValueError or PrintError); a kernel CK's
    dispatcher cannot register (`variants.has_wrapper`) has no wrapper. The header of a kernel that breaks rules
    (`waived`: they were waived to emit it) opens with their banner (`arch.waivers.banner`)."""
    unit = lower_kernel(config, profile)
    header, unit_cpp, wrapper = file_names(unit.name)
    top = unit.header
    if waived:
        top = attrs.evolve(top, preamble=f"{top.preamble}\n\n{banner(waived)}" if top.preamble else banner(waived))
    files = (
        (header, n.to_source(top)),
        (unit_cpp, n.to_source(unit_source(header))),
    )
    if has_wrapper(config):
        files += ((wrapper, n.to_source(wrapper_header(config, profile, header))),)
    return KernelText(unit.name, files, unit.entry_points)
