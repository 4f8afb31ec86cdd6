"""CK's hand-curated "default" grouped-conv rule set (`data/conv_default.toml`)."""

from __future__ import annotations

from .conv_common import axes, conv_candidate, data, tile_knobs, triple
from .selection import Candidate, Selection


def candidates(selection: Selection) -> list[Candidate]:
    table = data("conv_default")
    variants, ndims, datatypes = axes(selection)
    out: list[Candidate] = []
    for variant in variants:
        direction = table["directions"].get(variant)
        if direction is None:  # the default set has no depthwise kernels
            continue
        for ndim in ndims:
            index = 0
            for pipeline, epilogue in direction["pipelines"]:
                for row in table["tiles"]:
                    if pipeline == "compv4" and not row["compv4"]:
                        continue
                    tile = triple(row["tile"])
                    if pipeline == "compv4":
                        tile = (tile[0], tile[1], tile[2] * table["compv4_tile_k_factor"])
                    for two_stage in direction["two_stage"]:
                        knobs = {**tile_knobs(tile, triple(row["waves"]), triple(row["warp_tile"])),
                                 **{f"vector_size_{x}": v for x, v in zip("abc", row["vectors"])},
                                 "pipeline": pipeline, "epilogue": epilogue, "scheduler": "intrawave",
                                 "double_smem_buffer": pipeline == "compv4",
                                 **({"two_stage": True} if two_stage else {})}
                        out += [conv_candidate(f"default/{variant}/{ndim}d/{dtype}[{index}]", variant, ndim, dtype,
                                               selection.arch, **knobs) for dtype in datatypes]
                        index += 1
    return out
