"""Estimated build cost of a library: per-kernel compile figures (`data/compile_cost.toml`, measured with
`ckast check --codegen`, per arch and variant; the file says how and when) summed over its kernels, one TU
per kernel."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import attrs

from ckast.data_files import load_toml

COST_FILE = Path(__file__).parent / "data" / "compile_cost.toml"


@attrs.frozen
class BuildCost:
    """`cpu_hours` of compiling the kernels with figures, the largest `peak_mib` of one of their TUs, and how
    many kernels have no figure (`unmeasured`, not counted)."""

    cpu_hours: float
    peak_mib: int
    unmeasured: int

    def text(self) -> str:
        if not self.peak_mib:
            return f"not estimated (no compile figures for its {self.unmeasured} kernels' arch and variant)"
        missing = f" ({self.unmeasured} kernels without compile figures left out)" if self.unmeasured else ""
        return f"{self.cpu_hours:.2f} CPU-hours, peak {self.peak_mib} MiB per TU{missing}"


def build_cost(kernels: Iterable[tuple[str, str]], path: Path = COST_FILE) -> BuildCost:
    """The estimated cost of building `kernels`, each an (arch, variant)."""
    table = load_toml(path)
    seconds, peak, unmeasured = 0.0, 0, 0
    for (arch, variant), count in Counter(kernels).items():
        figures = table.get(arch, {}).get(variant)
        if figures is None:
            unmeasured += count
            continue
        seconds += count * float(figures["seconds"])
        peak = max(peak, int(figures["peak_mib"]))
    return BuildCost(seconds / 3600, peak, unmeasured)
