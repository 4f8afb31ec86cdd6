"""The build cost estimate: per-kernel figures summed per (arch, variant), the largest TU peak, kernels
without figures counted apart, borrowed figures counted as such; the packaged figures cover every arch and variant."""

from pathlib import Path

import pytest

from ckast.arch.specs import ARCH_NAMES
from ckast.config.knobs import VARIANTS
from ckast.library.build_cost import COST_FILE, BuildCost, build_cost
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


def test_borrowed_figures_are_another_arch_s_or_variant_s_and_counted(tmp_path: Path) -> None:
    table = tmp_path / "cost.toml"
    table.write_text("[gfx942.forward]\nseconds = 36.0\npeak_mib = 700\n\n[gfx942.bwd_data]\nlike = \"forward\"\n\n"
                     "[gfx950]\nlike = \"gfx942\"\n\n[gfx950.forward]\nseconds = 72.0\npeak_mib = 900\n\n"
                     "[gfx1]\nlike = \"gfx2\"\n\n[gfx2]\nlike = \"gfx1\"\n")
    cost = build_cost([("gfx942", "forward")] * 2 + [("gfx942", "bwd_data"), ("gfx950", "forward"),
                                                     ("gfx950", "bwd_data"), ("gfx950", "standard"), ("gfx1", "x")],
                      table)
    assert cost == BuildCost((4 * 36 + 72) / 3600, 900, 2, 2)
    assert cost.text() == ("0.06 CPU-hours, peak 900 MiB per TU (2 kernels by another arch's or variant's figures; "
                           "2 kernels without compile figures left out)")


def test_packaged_figures_cover_every_arch_and_variant_and_are_plausible() -> None:
    table = load_toml(COST_FILE)
    for arch in ARCH_NAMES:
        for variant in (v for variants in VARIANTS.values() for v in variants):
            assert build_cost([(arch, variant)]).unmeasured == 0, (arch, variant)
    for arch, variants in table.items():
        for variant, figures in variants.items() if "like" not in variants else ():
            if "like" not in figures:
                assert 1 < figures["seconds"] < 600, (arch, variant)
                assert 100 < figures["peak_mib"] < 16384, (arch, variant)
