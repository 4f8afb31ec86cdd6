"""CK's quantized-GEMM codegen configs, read as they are and expanded into kernel objects.

CK's dispatcher builds each quant family with its own generator (rocm-libraries
ea607ecdb59e970dc748d4848363b800334ba5c6: `dispatcher/codegen/unified_gemm_<family>_codegen.py`) from a config
dict that the factories of `dispatcher/python/gemm_<family>_utils.py` make; CK's byte goldens record every
default factory's dict (`dispatcher/tests/golden/codegen/manifest.json`). Three forms are read:

- the manifest: `{"cases": {id: {"module", "arch", "config", ...}}, ...}`, each case's family named by its
  config-factory module (`gemm_bquant_utils`, `gemm_abquant_utils`, `gemm_aquant_utils`,
  `gemm_rowcolquant_utils`, `gemm_tensor_quant_utils`, and the grouped generators'
  `grouped_gemm_{bquant,abquant,aquant}_utils`: the same families' QuantGemmKernel, one problem per launch,
  formed by those generators' conventions, `_GROUPED_FORM`);
- one manifest case (`{"module", "arch", "config", ...}`);
- one bare codegen config (`variant_keys`, `tile_configs`, ...). CK feeds a config to one family's
  generator; here the family is the top-level `variant` key, or told by the keys (`bquant_groups`,
  `aquant_group_k` or `eight_waves`: abquant; `preshuffle_b` or `preshuffle_bquant`: bquant;
  `preshuffle_aquant`: aquant; the grouped generators' `aquant_groups` or `preshuffle_bq`: grouped abquant,
  `preshuffle_aq`: grouped aquant; row-col and tensor quant configs are alike and must name it). The target is
  `arch` or `gpu_target` (default gfx942), or each of a `gpu_targets` list.

A config's keys per family: the lists `variant_keys` (data types), `layouts`, `tile_configs` (the nine tile
knobs each), the scalars that are knobs of the same name and value, and the quant groups: bquant's
`quant_groups` ({quant_group_m, quant_group_n, quant_group_k}; M must be 1), abquant's `aquant_group_k` and
`bquant_groups` ({bquant_group_n, bquant_group_k}) with `eight_waves` and `transpose_c`, aquant's
`quant_groups` (1 x 1 x K: the knob `aquant_group_k`) and `epilogues`. A config expands as CK's generators
form it: variant_keys x layouts x tile_configs x quant groups (x epilogues). `eight_waves` must agree with
the pipeline (eightwaves); `block_size` is CK's constant and not used (ckast derives the block from the
waves). A key this reader does not know is refused, naming its path.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from .errors import ConfigError, ConfigIssue, key_path, shown

MODULES = {"gemm_bquant_utils": "bquant", "gemm_abquant_utils": "abquant", "gemm_aquant_utils": "aquant",
           "gemm_rowcolquant_utils": "rowcolquant", "gemm_tensor_quant_utils": "tensor_quant",
           "grouped_gemm_bquant_utils": "bquant", "grouped_gemm_abquant_utils": "abquant",
           "grouped_gemm_aquant_utils": "aquant"}
"""CK's config-factory module -> ckast variant."""
GROUPED = "grouped_gemm_"
"""Prefix of the modules of CK's grouped quant generators (`unified_grouped_gemm_<family>_codegen.py`): one
problem per launch of the same QuantGemmKernel (CK's "grouped" is the quant group), formed by their own
conventions, which `_GROUPED_FORM` spells as knobs."""
_GROUPED_FORM: dict[str, dict[str, Any]] = {
    "bquant": {"bq_layout": "r", "b_cast_policy": "after_lds_read"},
    "abquant": {"tile_partitioner": "1d"},
    "aquant": {"tile_partitioner": "1d", "pad_k": True, "permute_n": True},
}
"""Per family: the knobs CK's grouped generator sets apart from its GEMM generator (B scales row-major and
CK's default cast policy for bquant; the 1-D partitioner for abquant and aquant; K padded and N permuted where
the tile allows it for aquant, as CK's aquant_effective_epilogue decides)."""
_COMMON = ("scheduler", "double_smem_buffer", "k_block_per_cu")
_BLOCK_SCALE = (*_COMMON, "pipeline", "epilogue", "pad_m", "pad_n", "pad_k", "preshuffle_b", "preshuffle_bquant")
SCALARS = {"bquant": _BLOCK_SCALE, "abquant": (*_BLOCK_SCALE, "transpose_c"), "aquant": (*_COMMON, "preshuffle_aquant"),
           "rowcolquant": (*_COMMON, "pipeline", "epilogue"), "tensor_quant": (*_COMMON, "pipeline", "epilogue")}
"""Per family: the config keys that are knobs of the same name and value."""
_KEYS = {
    "bquant": {"variant_keys", "layouts", "tile_configs", "quant_groups", "block_size", "transpose_c",
               *SCALARS["bquant"]},
    "abquant": {"variant_keys", "layouts", "tile_configs", "aquant_group_k", "bquant_groups", "eight_waves",
                "block_size", *SCALARS["abquant"]},
    "aquant": {"variant_keys", "layouts", "tile_configs", "quant_groups", "epilogues", *SCALARS["aquant"]},
    "rowcolquant": {"variant_keys", "layouts", "tile_configs", *SCALARS["rowcolquant"]},
    "tensor_quant": {"variant_keys", "layouts", "tile_configs", *SCALARS["tensor_quant"]},
}
_GROUPED_KEYS = {
    "bquant": _KEYS["bquant"] - {"transpose_c"},
    "abquant": {"variant_keys", "layouts", "tile_configs", "aquant_groups", "bquant_groups", "block_size",
                "preshuffle_aq", "preshuffle_bq", *SCALARS["abquant"]} - {"preshuffle_bquant"},
    "aquant": {"variant_keys", "layouts", "tile_configs", "quant_groups", "block_size", "pipeline", "epilogue",
               "pad_m", "pad_n", "pad_k", "preshuffle_aq", "transpose_c", *_COMMON},
}
"""The keys of CK's grouped generators' configs (`preshuffle_aq`, `preshuffle_bq`: A and B scales preshuffled;
abquant's `aquant_groups` and `bquant_groups` of {m, n, k})."""
_TILE_KEYS = tuple(f"{p}_{d}" for p in ("tile", "warp", "warp_tile") for d in "mnk")
_GROUP_KEYS = ("quant_group_m", "quant_group_n", "quant_group_k")
_TOP = ("variant", "arch", "gpu_target", "gpu_targets")
_CASE = ("module", "arch", "config", "config_name", "factory", "sha256")


def family(data: Any) -> str | None:
    """The quant family of one CK codegen config, or None if `data` is not one (or does not tell)."""
    if not isinstance(data, dict) or not {"variant_keys", "tile_configs"} <= data.keys():
        return None
    if data.get("variant") in _KEYS:
        return data["variant"]
    if {"bquant_groups", "aquant_group_k", "eight_waves", "aquant_groups", "preshuffle_bq"} & data.keys():
        return "abquant"
    if {"preshuffle_b", "preshuffle_bquant"} & data.keys():
        return "bquant"
    if {"preshuffle_aquant", "preshuffle_aq"} & data.keys():
        return "aquant"
    return None


def grouped(fam: str, data: Mapping[str, Any]) -> bool:
    """Whether a bare config of family `fam` is one of CK's grouped generators' (told by its keys: abquant's
    `aquant_groups` or `preshuffle_bq`, aquant's `preshuffle_aq`; a grouped bquant config looks like a bquant
    one, so only its manifest module tells)."""
    return bool({"abquant": {"aquant_groups", "preshuffle_bq"}, "aquant": {"preshuffle_aq"}}.get(fam, set())
                & data.keys())


def expand(data: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """(JSON path, kernel object) of every kernel of a CK quant config, manifest case or manifest; None if
    `data` is none of them. Raises ConfigError naming the JSON path of every problem."""
    if not isinstance(data, dict):
        return None
    issues: list[ConfigIssue] = []
    if isinstance(data.get("cases"), dict) and "tile_configs" not in data:
        out = [k for name, case in data["cases"].items() for k in _case(case, key_path("cases", name), issues)]
    elif {"module", "config"} <= data.keys():
        out = _case(data, "", issues)
    elif {"variant_keys", "tile_configs"} <= data.keys():
        fam = family(data)
        if fam is None:
            given = data.get("variant")
            issues.append(ConfigIssue("variant", (f"{shown(given)} is not a quant family; " if "variant" in data else
                                                  "missing: CK's row-col and tensor quant configs are alike, so name "
                                                  "the family; ") + f"allowed: {', '.join(_KEYS)}"))
            raise ConfigError(issues)
        targets = data.get("gpu_targets", [data.get("arch", data.get("gpu_target", "gfx942"))])
        if not isinstance(targets, list) or not targets:
            issues.append(ConfigIssue("gpu_targets", "expected a non-empty list of arch names"))
            raise ConfigError(issues)
        config = {k: v for k, v in data.items() if k not in _TOP}
        out = [kernel for arch in targets
               for kernel in _config(fam, config, arch, "", issues, grouped(fam, config))]
    else:
        return None
    if issues:
        raise ConfigError(issues)
    return out


def _case(case: Any, path: str, issues: list[ConfigIssue]) -> list[tuple[str, dict[str, Any]]]:
    """One manifest case: its config for the family its module names, on its arch."""
    if not isinstance(case, dict) or not {"module", "config"} <= case.keys():
        issues.append(ConfigIssue(path, "expected a manifest case with module, arch and config"))
        return []
    issues += [ConfigIssue(key_path(path, k), f"unknown key of a manifest case; allowed: {', '.join(_CASE)}")
               for k in case if k not in _CASE and not str(k).startswith("_")]
    fam = MODULES.get(case["module"])
    if fam is None:
        issues.append(ConfigIssue(key_path(path, "module"), f"{case['module']}: ckast reads the quant "
                                                             f"families of {', '.join(MODULES)}"))
        return []
    return _config(fam, case["config"], case.get("arch", "gfx942"), key_path(path, "config"), issues,
                   str(case["module"]).startswith(GROUPED))


def _list(data: Mapping[str, Any], key: str, path: str, issues: list[ConfigIssue], default: list) -> list:
    value = data.get(key, default)
    if not isinstance(value, list) or not value:
        issues.append(ConfigIssue(key_path(path, key), "expected a non-empty list"))
        return []
    return value


def _quant_groups(fam: str, data: Mapping[str, Any], path: str, issues: list[ConfigIssue]) -> list[dict[str, Any]]:
    """bquant's and aquant's `quant_groups` as knob values: B groups 1 x N x K, A groups 1 x 1 x K."""
    out = []
    fixed = ("quant_group_m",) if fam == "bquant" else ("quant_group_m", "quant_group_n")
    default = [{"quant_group_m": 1, "quant_group_n": 1, "quant_group_k": 128}]
    for i, g in enumerate(_list(data, "quant_groups", path, issues, default)):
        where = f"{key_path(path, 'quant_groups')}[{i}]"
        if not isinstance(g, dict) or set(g) - set(_GROUP_KEYS):
            issues.append(ConfigIssue(where, f"expected {{{', '.join(_GROUP_KEYS)}}}"))
            continue
        wrong = [k for k in fixed if g.get(k, 1) != 1]
        issues += [ConfigIssue(key_path(where, k), f"{shown(g[k])}: CK's {fam} pipelines take groups of "
                                                    f"{'1 x N x K' if fam == 'bquant' else '1 x 1 x K'}")
                   for k in wrong]
        if not wrong and fam == "bquant":
            out.append({"bquant_group_n": g.get("quant_group_n", 1), "bquant_group_k": g.get("quant_group_k", 128)})
        elif not wrong:
            out.append({"aquant_group_k": g.get("quant_group_k", 128)})
    return out


def _grouped_abquant_groups(data: Mapping[str, Any], path: str, issues: list[ConfigIssue]) -> list[dict[str, Any]]:
    """CK's grouped abquant groups: `aquant_groups` (1 x 1 x K) x `bquant_groups` (1 x N x K), one K for both."""
    axes: dict[str, list[dict[str, int]]] = {}
    for side, fixed in (("aquant", ("m", "n")), ("bquant", ("m",))):
        key, names = f"{side}_groups", tuple(f"{side}_group_{d}" for d in "mnk")
        axes[side] = []
        for i, g in enumerate(_list(data, key, path, issues, [{names[2]: 128}])):
            where = f"{key_path(path, key)}[{i}]"
            if not isinstance(g, dict) or set(g) - set(names):
                issues.append(ConfigIssue(where, f"expected {{{', '.join(names)}}}"))
                continue
            wrong = [f"{side}_group_{d}" for d in fixed if g.get(f"{side}_group_{d}", 1) != 1]
            issues += [ConfigIssue(key_path(where, k), f"{shown(g[k])}: CK's abquant pipelines take {side[0].upper()} "
                                   f"groups of {'1 x 1 x K' if side == 'aquant' else '1 x N x K'}") for k in wrong]
            if not wrong:
                axes[side].append({k: g.get(k, 1 if k != names[2] else 128) for k in names})
    out = []
    for a, b in itertools.product(axes["aquant"], axes["bquant"]):
        if a["aquant_group_k"] != b["bquant_group_k"]:
            issues.append(ConfigIssue(key_path(path, "aquant_groups"), f"aquant_group_k {a['aquant_group_k']} with "
                                      f"bquant_group_k {b['bquant_group_k']}: CK's ABQuant takes one K group for A "
                                      "and B"))
        else:
            out.append({"aquant_group_k": a["aquant_group_k"], "bquant_group_n": b["bquant_group_n"],
                        "bquant_group_k": b["bquant_group_k"]})
    return out


def _groups(fam: str, data: Mapping[str, Any], path: str, issues: list[ConfigIssue],
            is_grouped: bool = False) -> list[dict[str, Any]]:
    """The quant-group axis as knob values (one empty entry for the families without groups)."""
    if fam in ("bquant", "aquant"):
        return _quant_groups(fam, data, path, issues)
    if fam == "abquant" and is_grouped:
        return _grouped_abquant_groups(data, path, issues)
    if fam != "abquant":
        return [{}]
    out = []
    default = [{"bquant_group_n": 1, "bquant_group_k": 128}]
    for i, g in enumerate(_list(data, "bquant_groups", path, issues, default)):
        where = f"{key_path(path, 'bquant_groups')}[{i}]"
        if not isinstance(g, dict) or set(g) - {"bquant_group_n", "bquant_group_k"}:
            issues.append(ConfigIssue(where, "expected {bquant_group_n, bquant_group_k}"))
        else:
            out.append({"bquant_group_n": g.get("bquant_group_n", 1), "bquant_group_k": g.get("bquant_group_k", 128),
                        "aquant_group_k": data.get("aquant_group_k", 128)})
    return out


def _grouped_base(fam: str, data: Mapping[str, Any], path: str, issues: list[ConfigIssue]) -> dict[str, Any]:
    """The knobs of a config of CK's grouped generator of `fam`: its form (`_GROUPED_FORM`), its scalars, and
    its spellings `preshuffle_aq` / `preshuffle_bq` read as preshuffle_aquant / preshuffle_bquant."""
    scalars = {"aquant": (*_COMMON, "pipeline", "epilogue", "pad_m", "pad_n", "pad_k")}.get(fam, SCALARS[fam])
    base = {**_GROUPED_FORM[fam], **{k: data[k] for k in scalars if k in data}}
    if fam == "abquant":  # CK's grouped abquant permutes N (TiledMMAPermuteN) but on its transposed-C pipelines
        base["permute_n"] = data.get("pipeline", "compv3") not in ("eightwaves", "preshuffleb")
        if "preshuffle_bq" in data:
            base["preshuffle_bquant"] = data["preshuffle_bq"]
    if fam == "aquant" and "preshuffle_aq" in data:
        base["preshuffle_aquant"] = data["preshuffle_aq"]
    refused = {"abquant": ("preshuffle_aq", "CK's abquant kernels here take A scales unshuffled"),
               "aquant": ("transpose_c", "CK's aquant kernels never transpose C")}.get(fam)
    if refused and data.get(refused[0], False) is not False:
        issues.append(ConfigIssue(key_path(path, refused[0]), f"{shown(data[refused[0]])}: {refused[1]}"))
    return base


def _config(fam: str, data: Any, arch: Any, path: str, issues: list[ConfigIssue],
            is_grouped: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """The kernels of one codegen config of family `fam` (CK's product order); `is_grouped`: a config of
    CK's grouped generator of the family."""
    if not isinstance(data, dict):
        issues.append(ConfigIssue(path, "expected a codegen config object"))
        return []
    keys, which = (_GROUPED_KEYS[fam], f"grouped {fam}") if is_grouped else (_KEYS[fam], fam)
    unknown = sorted(k for k in data if not str(k).startswith("_") and k not in keys)
    issues += [ConfigIssue(key_path(path, k), f"unknown key of CK's {which} codegen config; allowed: "
                                              f"{', '.join(sorted(keys))}") for k in unknown]
    scalars = _grouped_base(fam, data, path, issues) if is_grouped else {k: data[k] for k in SCALARS[fam] if k in data}
    base: dict[str, Any] = {"kind": "gemm", "variant": fam, "arch": arch, **scalars}
    eight_waves = data.get("pipeline") == "eightwaves"
    if not is_grouped and fam == "abquant" and "eight_waves" in data and data["eight_waves"] != eight_waves:
        issues.append(ConfigIssue(key_path(path, "eight_waves"), f"{data['eight_waves']} with pipeline "
                                  f"{data.get('pipeline')}: CK's eight-wave path is the eightwaves pipeline"))
    elif fam == "bquant" and data.get("transpose_c", False):
        issues.append(ConfigIssue(key_path(path, "transpose_c"), "true: CK's bquant kernels never transpose C"))
    tiles = []
    for i, t in enumerate(_list(data, "tile_configs", path, issues, [])):
        if not isinstance(t, dict) or set(t) != set(_TILE_KEYS):
            issues.append(ConfigIssue(f"{key_path(path, 'tile_configs')}[{i}]", f"expected {', '.join(_TILE_KEYS)}"))
        else:
            tiles.append(t)
    variant_keys = _list(data, "variant_keys", path, issues, [])
    layouts = _list(data, "layouts", path, issues, ["rcr"])
    groups = _groups(fam, data, path, issues, is_grouped)
    epilogues = [{"epilogue": e} for e in _list(data, "epilogues", path, issues, ["cshuffle"])] \
        if fam == "aquant" and not is_grouped else [{}]
    out = []
    for datatype, layout, tile, group, epilogue in itertools.product(variant_keys, layouts, tiles, groups, epilogues):
        shown_ = f"{datatype} {layout} {'x'.join(str(tile[k]) for k in _TILE_KEYS)}"
        out.append((f"{path or 'config'} ({shown_})", {**base, "datatype": datatype, "layout": layout, **tile,
                                                       **group, **epilogue}))
    return out
