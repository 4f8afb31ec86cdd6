"""CK's quantized-GEMM codegen configs, read unchanged and expanded into ckast kernel objects.

CK's dispatcher builds each quant family with its own generator (`dispatcher/codegen/unified_gemm_<family>
_codegen.py`) from a config dict that its `python/gemm_<family>_utils.py` factories make; CK's byte goldens
record every default factory's dict (`dispatcher/tests/golden/codegen/manifest.json` at ROCm/rocm-libraries
ea607ecdb59e970dc748d4848363b800334ba5c6). Three forms are read:

- the manifest itself (`{"cases": {...}, ...}`): every case, each as below;
- one manifest case (`{"module", "arch", "config", ...}`): its config for its family (`module`, the
  factory's module: `gemm_aquant_utils`, `gemm_rowcolquant_utils`, `gemm_tensor_quant_utils`) and arch;
- a bare config dict (`tile_configs` and `variant_keys`): CK takes the family from the generator that runs
  and the arch from its command line, so here they are the top-level keys `variant` (aquant, rowcolquant,
  tensor_quant; a config with `preshuffle_aquant` is aquant's) and `gpu_target` (or a `gpu_targets` list;
  none: ckast's default arch).

As CK's generators form it, a config is the product variant_keys x layouts x tile_configs, times the
`quant_groups` and `epilogues` lists where the family has them; `variant_keys` are data types, each
`tile_configs` entry names the nine tile knobs, each `quant_groups` entry `quant_group_m/n/k` (AQuant's
groups are 1 x 1 x K, which CK's AQuant pipelines assert: `quant_group_k` is the knob `aquant_group_k`). The
families' fixed choices come from their generators as the goldens show them: AQuant's pipeline follows
`preshuffle_aquant` (CompV3 if set, else Mem); tensor quant pads K. `k_block_per_cu` is 1 (ckast's
launchers use one block per CU). Every key is checked; kernels are validated as any other.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from ckast.arch.quant import AQUANT, ROWCOL_QUANT, TENSOR_QUANT

from .errors import ConfigError, ConfigIssue, key_path, shown

MODULES = {"gemm_aquant_utils": AQUANT, "gemm_rowcolquant_utils": ROWCOL_QUANT,
           "gemm_tensor_quant_utils": TENSOR_QUANT}
"""CK's config-factory modules -> the family (ckast variant) whose generator reads their dicts."""
_TILE_KEYS = tuple(f"{p}_{d}" for p in ("tile", "warp", "warp_tile") for d in "mnk")
_GROUP_KEYS = tuple(f"quant_group_{d}" for d in "mnk")
_COMMON = ("variant_keys", "layouts", "tile_configs", "scheduler", "double_smem_buffer", "k_block_per_cu")
KEYS = {
    AQUANT: (*_COMMON, "epilogues", "quant_groups", "preshuffle_aquant"),
    ROWCOL_QUANT: (*_COMMON, "epilogue", "pipeline"),
    TENSOR_QUANT: (*_COMMON, "epilogue", "pipeline"),
}
"""The keys of each family's config dict (all required, as CK's factories write them all)."""
FIXED = {TENSOR_QUANT: {"pad_k": True}}
"""Knobs a family's generator fixes (CK's tensor-quant header sets kPadK = true)."""
_CASE = ("module", "arch", "config")
_CASE_EXTRA = ("config_name", "factory", "sha256")
_MANIFEST = ("cases", "arches", "case_count")


def expand(data: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """(JSON path, kernel object) of every kernel of a CK quant config, case or manifest; None if `data` is none
    of them. Raises ConfigError naming the JSON path of every problem."""
    if not isinstance(data, dict):
        return None
    issues: list[ConfigIssue] = []
    if "cases" in data and "tile_configs" not in data:
        out = _manifest(data, issues)
    elif {"module", "config"} <= data.keys():
        out = _case(data, "", issues)
    elif {"tile_configs", "variant_keys"} <= data.keys():
        out = _bare(data, issues)
    else:
        return None
    if issues:
        raise ConfigError(issues)
    return out


def _manifest(data: Mapping[str, Any], issues: list[ConfigIssue]) -> list[tuple[str, dict[str, Any]]]:
    issues += [ConfigIssue(key_path("", k), f"unknown key of CK's golden manifest; allowed: {', '.join(_MANIFEST)}")
               for k in data if k not in _MANIFEST and not _comment(k)]
    cases = data["cases"]
    if not isinstance(cases, dict) or not cases:
        issues.append(ConfigIssue("cases", "must be a non-empty object of cases"))
        return []
    return [kernel for name, case in cases.items() for kernel in _case(case, key_path("cases", name), issues)]


def _case(case: Any, path: str, issues: list[ConfigIssue]) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(case, dict):
        issues.append(ConfigIssue(path, "must be an object with module, arch and config"))
        return []
    known = _CASE + _CASE_EXTRA
    issues += [ConfigIssue(key_path(path, k), f"unknown key of a manifest case; allowed: {', '.join(known)}")
               for k in case if k not in known and not _comment(k)]
    missing = [k for k in _CASE if k not in case]
    if missing:
        issues.append(ConfigIssue(path, f"missing {', '.join(missing)}"))
        return []
    module = case["module"]
    if module not in MODULES:
        issues.append(ConfigIssue(key_path(path, "module"), f"{shown(module)} is not a quant family ckast builds; "
                                                             f"known: {', '.join(MODULES)}"))
        return []
    return _config(case["config"], key_path(path, "config"), MODULES[module], [case["arch"]], issues)


def _bare(data: Mapping[str, Any], issues: list[ConfigIssue]) -> list[tuple[str, dict[str, Any]]]:
    family = data.get("variant", AQUANT if "preshuffle_aquant" in data else None)
    if family not in KEYS:
        issues.append(ConfigIssue("variant", (f"{shown(family)} is not a quant family; " if "variant" in data else
                                              "missing: CK's row-col and tensor quant configs are alike, so name the "
                                              "family; ") + f"allowed: {', '.join(KEYS)}"))
        return []
    if "gpu_target" in data and "gpu_targets" in data:
        issues.append(ConfigIssue("gpu_target", "give gpu_targets or gpu_target, not both"))
        return []
    targets = data.get("gpu_targets", [data["gpu_target"]] if "gpu_target" in data else [None])
    if not isinstance(targets, list) or not targets:
        issues.append(ConfigIssue("gpu_targets", "must be a non-empty list of arch names"))
        return []
    config = {k: v for k, v in data.items() if k not in ("variant", "gpu_target", "gpu_targets")}
    return _config(config, "", family, targets, issues)


def _config(config: Any, path: str, family: str, archs: list[Any],
            issues: list[ConfigIssue]) -> list[tuple[str, dict[str, Any]]]:
    """The product of one family's config dict, as CK's generator forms it."""
    if not isinstance(config, dict):
        issues.append(ConfigIssue(path, "must be an object"))
        return []
    allowed = KEYS[family]
    problems = [ConfigIssue(key_path(path, k), f"unknown key of CK's {family} config; allowed: {', '.join(allowed)}")
                for k in config if k not in allowed and not _comment(k)]
    problems += [ConfigIssue(path, f"missing {k}") for k in allowed if k not in config]
    if not problems and config["k_block_per_cu"] != 1:
        problems.append(ConfigIssue(key_path(path, "k_block_per_cu"),
                                    f"{shown(config['k_block_per_cu'])}: ckast's launchers run one block per CU (1)"))
    lists = {k: _list(config.get(k), key_path(path, k), problems)
             for k in ("variant_keys", "layouts", "tile_configs", "quant_groups", "epilogues") if k in allowed}
    tiles = [_entry(t, key_path(key_path(path, "tile_configs"), i), _TILE_KEYS, problems)
             for i, t in enumerate(lists["tile_configs"])]
    groups = [_group(g, key_path(key_path(path, "quant_groups"), i), problems)
              for i, g in enumerate(lists.get("quant_groups", [{}]))]
    issues += problems
    if problems:
        return []
    base = {"kind": "gemm", "variant": family, "scheduler": config["scheduler"],
            "double_smem_buffer": config["double_smem_buffer"], **FIXED.get(family, {})}
    if family == AQUANT:
        base["preshuffle_aquant"] = config["preshuffle_aquant"]
    else:
        base.update(pipeline=config["pipeline"], epilogue=config["epilogue"])
    out = []
    axes = (archs, lists["variant_keys"], lists["layouts"], tiles, groups, lists.get("epilogues", [None]))
    for i, (arch, dtype, layout, tile, group, epilogue) in enumerate(itertools.product(*axes)):
        kernel = {**base, "datatype": dtype, "layout": layout, **tile, **group}
        if arch is not None:
            kernel["arch"] = arch
        if epilogue is not None:
            kernel["epilogue"] = epilogue
        out.append((f"{path}.product[{i}]" if path else f"product[{i}]", kernel))
    return out


def _list(value: Any, path: str, issues: list[ConfigIssue]) -> list[Any]:
    if not isinstance(value, list) or not value:
        issues.append(ConfigIssue(path, "must be a non-empty list"))
        return []
    return value


def _entry(value: Any, path: str, keys: tuple[str, ...], issues: list[ConfigIssue]) -> dict[str, Any]:
    """One `tile_configs` or `quant_groups` entry: exactly `keys`."""
    if not isinstance(value, dict):
        issues.append(ConfigIssue(path, f"must be an object with {', '.join(keys)}"))
        return {}
    issues += [ConfigIssue(key_path(path, k), f"unknown key; allowed: {', '.join(keys)}")
               for k in value if k not in keys]
    issues += [ConfigIssue(path, f"missing {k}") for k in keys if k not in value]
    return {k: value[k] for k in keys if k in value}


def _group(value: Any, path: str, issues: list[ConfigIssue]) -> dict[str, Any]:
    """One AQuant `quant_groups` entry: groups of 1 x 1 x quant_group_k (the knob `aquant_group_k`)."""
    if value == {}:  # a family without quant groups
        return {}
    group = _entry(value, path, _GROUP_KEYS, issues)
    issues += [ConfigIssue(key_path(path, k), f"{shown(group[k])}: CK's AQuant pipelines take groups of 1 x 1 x K")
               for k in _GROUP_KEYS[:2] if k in group and group[k] != 1]
    return {"aquant_group_k": group["quant_group_k"]} if "quant_group_k" in group else {}


def _comment(key: Any) -> bool:
    return isinstance(key, str) and key.startswith("_")
