"""The build cost estimate: per-kernel figures summed per (arch, variant), the largest TU peak, kernels
without figures counted apart; `list --for` prints it for the kept set and the whole selection."""

from pathlib import Path

import pytest

from ckast.library.build_cost import COST_FILE, build_cost
from ckast.data_files import load_toml


def test_sums_figures_and_counts_unmeasured(tmp_path: Path) -> None:
    table = tmp_path / "cost.toml"
    table.write_text("[gfx942.forward]\nseconds = 36.0\npeak_mib = 700\n\n"
                     "[gfx942.standard]\nseconds = 18.0\npeak_mib = 500\n")
    cost = build_cost([("gfx942", "forward")] * 100 + [("gfx942", "standard")] * 200 + [("gfx950", "forward")] * 3,
                      table)
    assert cost.cpu_hours == pytest.approx((100 * 36 + 200 * 18) / 3600)
    assert cost.peak_mib == 700
    assert cost.unmeasured == 3
    assert cost.text() == "2.00 CPU-hours, peak 700 MiB per TU (3 kernels without compile figures left out)"

    assert build_cost([("gfx950", "forward")], table).text().startswith("not estimated")


def test_packaged_figures_are_plausible() -> None:
    for arch, variants in load_toml(COST_FILE).items():
        for variant, figures in variants.items():
            assert 1 < figures["seconds"] < 600, (arch, variant)
            assert 100 < figures["peak_mib"] < 16384, (arch, variant)
