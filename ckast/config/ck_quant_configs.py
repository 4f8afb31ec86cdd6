"""CK's block-scale GEMM codegen configs (bquant, abquant), read as they are and expanded into kernel objects.

Two forms, as CK's dispatcher holds them (rocm-libraries ea607ecdb59e970dc748d4848363b800334ba5c6:
`dispatcher/codegen/unified_gemm_{bquant,abquant}_codegen.py`, the factories of `dispatcher/python/
gemm_{bquant,abquant}_utils.py`, and the goldens' `dispatcher/tests/golden/codegen/manifest.json`):

- one codegen config: `variant_keys`, `layouts`, `tile_configs` (lists), `pipeline`, `epilogue`,
  `scheduler`, the pads, `k_block_per_cu`, `double_smem_buffer`, `preshuffle_b`, `preshuffle_bquant`, and
  the quant groups: bquant's `quant_groups` ({quant_group_m, quant_group_n, quant_group_k}; M must be 1),
  abquant's `aquant_group_k` and `bquant_groups` ({bquant_group_n, bquant_group_k}) with `eight_waves`
  and `transpose_c`. CK feeds a config to one family's generator; here the family is the top-level
  `variant` key, or told by the keys (`bquant_groups`/`aquant_group_k`: abquant; `preshuffle_bquant` or
  `preshuffle_b` with `quant_groups`: bquant). The target is `arch` (or `gpu_target`), default gfx942.
- the manifest: `{"cases": {id: {"module", "arch", "config", ...}}}`, each case's family named by its
  config-factory module (`gemm_bquant_utils`, `gemm_abquant_utils`).

A config expands as CK's `_build_specs` does: variant_keys x layouts x tile_configs x quant groups.
`eight_waves` must agree with the pipeline (eightwaves); `block_size` is CK's constant and not used (ckast
derives the block from the waves). A key this reader does not know is refused, naming its path.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from .errors import ConfigError, ConfigIssue, key_path

MODULES = {"gemm_bquant_utils": "bquant", "gemm_abquant_utils": "abquant"}
"""CK's config-factory module -> ckast variant."""
_SCALARS = ("pipeline", "epilogue", "scheduler", "pad_m", "pad_n", "pad_k", "k_block_per_cu", "double_smem_buffer",
            "preshuffle_b", "preshuffle_bquant")
"""Keys that are knobs of the same name and value."""
_KEYS = {
    "bquant": {"variant_keys", "layouts", "tile_configs", "quant_groups", "block_size", "transpose_c", *_SCALARS},
    "abquant": {"variant_keys", "layouts", "tile_configs", "aquant_group_k", "bquant_groups", "eight_waves",
                "transpose_c", "block_size", *_SCALARS},
}
_TILE_KEYS = tuple(f"{p}_{d}" for p in ("tile", "warp", "warp_tile") for d in "mnk")
_TOP = ("variant", "arch", "gpu_target")


def family(data: Any) -> str | None:
    """The block-scale family of one CK codegen config, or None if `data` is not one."""
    if not isinstance(data, dict) or not {"variant_keys", "tile_configs"} <= data.keys():
        return None
    if data.get("variant") in _KEYS:
        return data["variant"]
    if {"bquant_groups", "aquant_group_k", "eight_waves"} & data.keys():
        return "abquant"
    if {"preshuffle_b", "preshuffle_bquant"} & data.keys():
        return "bquant"
    return None


def expand(data: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """(JSON path, kernel object) of every kernel of a CK block-scale config or manifest; None if neither."""
    if isinstance(data, dict) and isinstance(data.get("cases"), dict) and all(
            isinstance(c, dict) and "module" in c and "config" in c for c in data["cases"].values()):
        return _manifest(data["cases"])
    fam = family(data)
    if fam is None:
        return None
    issues: list[ConfigIssue] = []
    arch = data.get("arch", data.get("gpu_target", "gfx942"))
    kernels = _config(fam, {k: v for k, v in data.items() if k not in _TOP}, arch, "", issues)
    if issues:
        raise ConfigError(issues)
    return kernels


def _manifest(cases: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    issues: list[ConfigIssue] = []
    out: list[tuple[str, dict[str, Any]]] = []
    for name, case in cases.items():
        path = key_path("cases", name)
        fam = MODULES.get(case["module"])
        if fam is None:
            issues.append(ConfigIssue(key_path(path, "module"), f"{case['module']}: ckast reads the block-scale "
                                      f"families of {', '.join(MODULES)}"))
            continue
        out += _config(fam, case["config"], case.get("arch", "gfx942"), key_path(path, "config"), issues)
    if issues:
        raise ConfigError(issues)
    return out


def _list(data: Mapping[str, Any], key: str, path: str, issues: list[ConfigIssue], default: list) -> list:
    value = data.get(key, default)
    if not isinstance(value, list) or not value:
        issues.append(ConfigIssue(key_path(path, key), "expected a non-empty list"))
        return []
    return value


def _groups(fam: str, data: Mapping[str, Any], path: str, issues: list[ConfigIssue]) -> list[dict[str, Any]]:
    """The quant-group axis as knob values: bquant's quant_groups, abquant's bquant_groups (x aquant_group_k)."""
    out = []
    if fam == "bquant":
        default = [{"quant_group_m": 1, "quant_group_n": 1, "quant_group_k": 128}]
        for i, g in enumerate(_list(data, "quant_groups", path, issues, default)):
            where = f"{key_path(path, 'quant_groups')}[{i}]"
            if not isinstance(g, dict) or set(g) - {"quant_group_m", "quant_group_n", "quant_group_k"}:
                issues.append(ConfigIssue(where, "expected {quant_group_m, quant_group_n, quant_group_k}"))
            elif g.get("quant_group_m", 1) != 1:
                issues.append(ConfigIssue(key_path(where, "quant_group_m"), f"{g['quant_group_m']}: B scales group "
                                          "N and K only (CK's BQuant pipeline asserts quant_group_m 1)"))
            else:
                out.append({"bquant_group_n": g.get("quant_group_n", 1), "bquant_group_k": g.get("quant_group_k", 128)})
        return out
    default = [{"bquant_group_n": 1, "bquant_group_k": 128}]
    for i, g in enumerate(_list(data, "bquant_groups", path, issues, default)):
        where = f"{key_path(path, 'bquant_groups')}[{i}]"
        if not isinstance(g, dict) or set(g) - {"bquant_group_n", "bquant_group_k"}:
            issues.append(ConfigIssue(where, "expected {bquant_group_n, bquant_group_k}"))
        else:
            out.append({"bquant_group_n": g.get("bquant_group_n", 1), "bquant_group_k": g.get("bquant_group_k", 128),
                        "aquant_group_k": data.get("aquant_group_k", 128)})
    return out


def _config(fam: str, data: Any, arch: Any, path: str, issues: list[ConfigIssue]) -> list[tuple[str, dict[str, Any]]]:
    """The kernels of one codegen config of family `fam` (CK's product order)."""
    if not isinstance(data, dict):
        issues.append(ConfigIssue(path, "expected a codegen config object"))
        return []
    unknown = sorted(k for k in data if not str(k).startswith("_") and k not in _KEYS[fam])
    issues += [ConfigIssue(key_path(path, k), f"unknown key of CK's {fam} codegen config; allowed: "
                                              f"{', '.join(sorted(_KEYS[fam]))}") for k in unknown]
    base: dict[str, Any] = {"kind": "gemm", "variant": fam, "arch": arch,
                            **{k: data[k] for k in _SCALARS if k in data}}
    if fam == "abquant":
        if "transpose_c" in data:
            base["transpose_c"] = data["transpose_c"]
        if "eight_waves" in data and data["eight_waves"] != (data.get("pipeline") == "eightwaves"):
            issues.append(ConfigIssue(key_path(path, "eight_waves"), f"{data['eight_waves']} with pipeline "
                                      f"{data.get('pipeline')}: CK's eight-wave path is the eightwaves pipeline"))
    elif data.get("transpose_c", False):
        issues.append(ConfigIssue(key_path(path, "transpose_c"), "true: CK's bquant kernels never transpose C"))
    tiles = []
    for i, t in enumerate(_list(data, "tile_configs", path, issues, [])):
        if not isinstance(t, dict) or set(t) != set(_TILE_KEYS):
            issues.append(ConfigIssue(f"{key_path(path, 'tile_configs')}[{i}]", f"expected {', '.join(_TILE_KEYS)}"))
        else:
            tiles.append(t)
    variant_keys = _list(data, "variant_keys", path, issues, [])
    layouts = _list(data, "layouts", path, issues, ["rcr"])
    groups = _groups(fam, data, path, issues)
    out = []
    for datatype, layout, tile, group in itertools.product(variant_keys, layouts, tiles, groups):
        shown = f"{datatype} {layout} {'x'.join(str(tile[k]) for k in _TILE_KEYS)}"
        out.append((f"{path or 'config'} ({shown})", {**base, "datatype": datatype, "layout": layout, **tile, **group}))
    return out
