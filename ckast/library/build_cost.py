"""Estimated build cost of a library: per-kernel compile figures (`data/compile_cost.toml`, measured with
`ckast check --codegen`, per arch and variant; the file says how and when) summed over its kernels, one TU
per kernel. Figures that could not be measured name those they are estimated by (`like`: another variant of
the arch, or for the variants an arch does not list, another arch); their kernels are counted as borrowed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from ckast.data_files import load_toml
from ckast.wording import quantity

COST_FILE = Path(__file__).parent / "data" / "compile_cost.toml"


@attrs.frozen
class BuildCost:
    """`cpu_hours` of compiling the kernels with figures, the largest `peak_mib` of one of their TUs, how
    many kernels have no figure (`unmeasured`, not counted) and how many are estimated by the figures of
    another arch or variant (`borrowed`, counted)."""

    cpu_hours: float
    peak_mib: int
    unmeasured: int
    borrowed: int = 0

    def as_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    def text(self) -> str:
        return cost_text(self.as_json())


def cost_text(cost: Mapping[str, Any]) -> str:
    """A build cost (`BuildCost.as_json`) in words."""
    if not cost["peak_mib"]:
        return (f"not estimated (no compile figures for the arch and variant of its "
                f"{quantity(cost['unmeasured'], 'kernel')})")
    notes = []
    if cost["borrowed"]:
        notes.append(f"{quantity(cost['borrowed'], 'kernel')} by another arch's or variant's figures")
    if cost["unmeasured"]:
        notes.append(f"{quantity(cost['unmeasured'], 'kernel')} without compile figures left out")
    more = f" ({'; '.join(notes)})" if notes else ""
    return f"{cost['cpu_hours']:.2f} CPU-hours, peak {cost['peak_mib']} MiB per TU{more}"


def _figures(table: Mapping[str, Any], arch: str, variant: str) -> tuple[Mapping[str, Any] | None, bool]:
    """The figures of (arch, variant) and whether they are borrowed: a variant whose `like` names another
    variant of its arch takes that one's; a variant an arch does not list, when the arch's `like` names
    another arch, that arch's."""
    borrowed = False
    for _ in range(2 * len(table) + 2):  # every arch and variant once at most: no loop in the data runs forever
        entries = table.get(arch, {})
        figures = entries.get(variant)
        if figures is not None and "like" not in figures:
            return figures, borrowed
        if figures is not None:
            variant, borrowed = figures["like"], True
        elif "like" in entries:
            arch, borrowed = entries["like"], True
        else:
            break
    return None, borrowed


def build_cost(kernels: Iterable[tuple[str, str]], path: Path = COST_FILE) -> BuildCost:
    """The estimated cost of building `kernels`, each an (arch, variant)."""
    table = load_toml(path)
    seconds, peak, unmeasured, borrowed = 0.0, 0, 0, 0
    for (arch, variant), count in sorted(Counter(kernels).items()):
        figures, like = _figures(table, arch, variant)
        if figures is None:
            unmeasured += count
            continue
        seconds += count * float(figures["seconds"])
        peak = max(peak, int(figures["peak_mib"]))
        borrowed += count if like else 0
    return BuildCost(seconds / 3600, peak, unmeasured, borrowed)
