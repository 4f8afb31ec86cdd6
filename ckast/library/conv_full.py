"""CK's rule-based "full" grouped-conv rule set, from the tables in `data/conv_full.toml`.

Per direction, rank and datatype: every tile of the tile table gets its curated wave layouts and
warp tiles (kept where `conv_tile_math` says they tile the block; all fitting pairs when none do),
a warp_tile_k from CK Builder's MFMA-K formula, the curated vector triples the tile math allows,
the tile's curated (pipeline, scheduler) list and its specializations. Then each feature spec
(split image, merged groups, two-stage, explicit GEMM, stream-K, ...) repeats that over its own
tiles and pipelines. Depthwise configs come from a curated list. Candidates that CK's 26-field
key would see twice are proposed once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import conv_tile_math as tm
from .conv_common import Triple, axes, conv_candidate, data, tile_knobs, triple
from .selection import Candidate, Selection

DEPTHWISE = "forward_depthwise"


def _t(key: str) -> Triple:
    m, n, k = key.split("x")
    return (int(m), int(n), int(k))


def _key(tile: Triple) -> str:
    return "x".join(map(str, tile))


class FullTables:
    """Lookups over the data file (tile keys are "MxNxK")."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.excluded_warp_mn = {(m, n) for m, n in raw["warp_mn"]["excluded"]}

    def dtype_class(self, datatype: str) -> str:
        return self.raw["dtype_class"][datatype]

    def tiles(self, variant: str, ndim: int, datatype: str) -> list[Triple]:
        return [triple(t) for t in self.raw["tiles"][variant].get(f"{ndim}d_{datatype}", [])]

    def waves(self, variant: str, tile: Triple) -> list[Triple]:
        w = self.raw["waves"]
        names = w["overrides"].get(variant, {}).get(_key(tile)) or w["base"].get(_key(tile)) or w["default"]
        return [triple(w["strategies"][name]) for name in names]

    def warp_mn(self, variant: str, tile: Triple, waves: Triple) -> list[tuple[int, int]]:
        """Curated warp tile (m, n) candidates: the exception table, else 32x32 when the per-wave tile
        is a multiple of 32 in M and N, else 16x16."""
        for e in self.raw["warp_mn"]["exceptions"]:
            if e["variant"] == variant and triple(e["tile"]) == tile and triple(e["waves"]) == waves:
                return [(m, n) for m, n in e["warp_mn"]]
        per_m, per_n = tile[0] // waves[0], tile[1] // waves[1]
        big = self.raw["warp_mn"]["large"]
        return [(big, big)] if per_m % big == 0 and per_n % big == 0 else [tuple(self.raw["warp_mn"]["small"])]

    def warp_tile_k(self, dclass: str, warp_tile_m: int, tile_k: int, legacy: bool) -> int:
        """CK Builder's MFMA K: min(max(AK1, MFMA K), tile_k); stream-K native instances and a few
        wavelet tiles keep the older gfx942 values instead."""
        f = self.raw["warp_tile_k"]

        def by_m(table: dict[str, int]) -> int:
            return table.get(str(warp_tile_m), table["other"])

        if legacy:
            cap = tile_k // f["legacy_float_divisor"] if dclass == "float" else tile_k
            return min(by_m(f["legacy"]), cap)
        k1 = f["ak1_small"] if tile_k <= f["ak1_small_max_tile_k"] else f["ak1"]
        return min(max(k1, by_m(f["mfma"][dclass])), tile_k)

    def legacy_wavelet_tile(self, variant: str, tile: Triple) -> bool:
        return [*tile] in self.raw["warp_tile_k"]["legacy_wavelet_tiles"].get(variant, [])

    def vectors(self, variant: str, tile: Triple, dclass: str) -> list[Triple]:
        """Curated vector triples: the tile's strategies (generic when the tile has no entry) plus extras."""
        v = self.raw["vectors"]
        entry = v["tiles"][variant].get(_key(tile))
        names = v["default"] if entry is None else entry.get(dclass, [])
        scale = {"1": 1, "max": 1, "half": 2, "quarter": 4}
        top = v["max"][dclass]
        out = {tuple(1 if s == "1" else max(1, top // scale[s]) for s in v["strategies"][name]) for name in names}
        out |= {triple(t) for t in v["extra"].get(variant, {}).get(_key(tile), {}).get(dclass, [])}
        return sorted(out)  # type: ignore[arg-type]

    def pipelines(self, variant: str, tile: Triple, dclass: str) -> list[tuple[str, str]]:
        p = self.raw["pipelines"]
        by_class = p["by_class"].get(variant, {}).get(_key(tile), {})
        pairs = by_class[dclass] if dclass in by_class else p["tiles"][variant][_key(tile)]
        return [(pipe, sched) for pipe, sched in pairs]

    def specializations(self, variant: str, tile: Triple) -> list[str]:
        s = self.raw["specializations"][variant]
        if tile[2] <= s.get("default_only_max_tile_k", 0):
            return ["default"]
        extra = s.get("small_area")
        return [*s["all"], *([extra["add"]] if extra and tile[0] * tile[1] <= extra["max_area"] else [])]


def candidates(selection: Selection) -> list[Candidate]:
    t = FullTables(data("conv_full"))
    variants, ndims, datatypes = axes(selection)
    out: list[Candidate] = []
    for variant in variants:
        if variant == DEPTHWISE:
            out += _depthwise(t, selection, ndims, datatypes)
            continue
        features = t.raw["features"].get(variant, [])
        for ndim in ndims:
            for dtype in datatypes:
                dclass = t.dtype_class(dtype)
                group = f"full/{variant}/{ndim}d/{dtype}"
                base = t.tiles(variant, ndim, dtype)
                made: list[dict[str, Any]] = []
                for tile in base:
                    made += _tile_configs(t, selection.arch, variant, dtype, dclass, tile,
                                          t.pipelines(variant, tile, dclass), {})
                for feat in features:
                    if dclass not in feat.get("dtype_classes", [dclass]) or ndim not in feat.get("ndims", [ndim]):
                        continue
                    knobs = _feature_knobs(feat)
                    for tile in ([triple(x) for x in feat["tiles"]] if "tiles" in feat else base):
                        pipes = ([(p, s) for p, s in feat["pipelines"]] if "pipelines" in feat
                                 else t.pipelines(variant, tile, dclass))
                        made += _tile_configs(t, selection.arch, variant, dtype, dclass, tile, pipes, knobs)
                seen: set[tuple] = set()  # CK's dedup key holds the direction, rank and datatype
                index = 0
                for knobs in made:
                    key = tuple(sorted(knobs.items()))
                    if key in seen:
                        continue
                    seen.add(key)
                    out.append(conv_candidate(f"{group}[{index}]", variant, ndim, dtype, selection.arch, **knobs))
                    index += 1
    return out


def _feature_knobs(feat: dict[str, Any]) -> dict[str, Any]:
    knobs = {k: feat[k] for k in ("split_image", "explicit_gemm", "two_stage", "num_groups_to_merge") if k in feat}
    if "streamk" in feat:
        knobs.update(streamk_enabled=True, streamk_reduction=feat["streamk"]["reduction"],
                     streamk_persistent=feat["streamk"]["persistent"])
    return knobs


def _tile_configs(t: FullTables, arch: str, variant: str, dtype: str, dclass: str, tile: Triple,
                  pipelines: list[tuple[str, str]], feature: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Knob objects for one tile under one feature (CK's loop order: wave/warp pair, vectors,
    pipeline, specialization)."""
    fits = tm.wave_warp_pairs(tile, dtype, arch)
    pairs = [(waves, mn) for waves in t.waves(variant, tile) for mn in t.warp_mn(variant, tile, waves)
             if mn not in t.excluded_warp_mn and (waves, mn) in fits]
    if not pairs:
        pairs = list(fits)
    vectors = t.vectors(variant, tile, dclass)
    legacy_tile = t.legacy_wavelet_tile(variant, tile)
    streamk = feature.get("streamk_enabled", False)
    for waves, (wt_m, wt_n) in pairs:
        gate = tm.vector_triples(tile, waves, dtype)
        for vec in (v for v in vectors if v in gate):
            for pipeline, scheduler in pipelines:
                if pipeline == "wavelet" and feature.get("explicit_gemm"):
                    continue  # the wavelet pipeline has no explicit-GEMM form
                wt_k = t.warp_tile_k(dclass, wt_m, tile[2], streamk or (legacy_tile and pipeline == "wavelet"))
                for spec in t.specializations(variant, tile):
                    yield {**tile_knobs(tile, waves, (wt_m, wt_n, wt_k)),
                           **{f"vector_size_{x}": v for x, v in zip("abc", vec)},
                           "pipeline": pipeline, "scheduler": scheduler, "epilogue": "cshuffle",
                           "double_smem_buffer": pipeline == "compv4", "specialization": spec, **feature}


def _depthwise(t: FullTables, selection: Selection, ndims: tuple[int, ...], datatypes: tuple[str, ...]) -> list[Candidate]:
    if 2 not in ndims:
        return []
    out = []
    for dtype in datatypes:
        for i, row in enumerate(t.raw["depthwise"]):
            pad = (row["filt"] - 1) // 2
            knobs = {"tile_h": row["tile"][0], "tile_w": row["tile"][1], "filt": row["filt"],
                     "str_h": row["stride"][0], "str_w": row["stride"][1], "pad_h": pad, "pad_w": pad,
                     "nbatch": row["nbatch"], "sub_h": row["sub"][0], "sub_w": row["sub"][1],
                     "in_vec": row["vectors"][0], "out_vec": row["vectors"][1]}
            out.append(conv_candidate(f"full/{DEPTHWISE}/2d/{dtype}[{i}]", DEPTHWISE, 2, dtype, selection.arch, **knobs))
    return out
