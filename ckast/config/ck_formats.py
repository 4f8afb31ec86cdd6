"""CK's own kernel-set configs, read unchanged and expanded into ckast kernel objects.

Three formats of CK's `dispatcher/codegen`, told apart by their structure (each has `tile_config`
or `trait_config`):

- GEMM generator config (`default_config.json` of `unified_gemm_codegen.py`): `tile_config`,
  `trait_config` and `multi_d_config` whose leaves are plain lists. CK takes datatype, layout, target
  and variants from its command line; here they are optional top-level keys with CK's CLI defaults:
  `datatype` ("fp16"), `layout` ("rcr"), `gpu_target` ("gfx942"; or a `gpu_targets` list) and
  `variants` (["standard"]).
  As CK forms it, per variant: tile x trait product; multi_d also x `elementwise_ops` x
  `num_d_tensors` (`multi_d_config` is used by multi_d only); preshuffle keeps the combinations with
  pipeline compv3 and scheduler intrawave and turns them into preshufflev2 / cshuffle / default;
  stream_k keeps the cshuffle combinations, times `streamk_config.reduction_strategy` (default
  ["atomic"]; used by stream_k only).
- GEMM kernel-set config (`sample_kernel_config.json` of `kernel_config_loader.py`): `datatype`
  {a, b, c, acc}, `layout`, `variant`, `gpu_targets` (or `gpu_target`), `kernel_set_name`, and
  `tile_config` / `trait_config` leaves `{"values": [...]}` or `{"min", "max", "step"}` (trait_config
  also takes tile_engine's `persistent`).
- Grouped-conv kernel-set config (`sample_conv_config.json`): `datatype` {input, weight, output, acc},
  `variant`, `ndim`, `layout`, and the leaf sections `tile_config`, `trait_config`, `vector_config`,
  `occupancy_config`. A file with `ndim`, `vector_config`, `occupancy_config`, a conv variant or an
  `input` datatype is this format; one whose tile/trait leaves are all lists (or that has
  `multi_d_config` or `variants`) is the generator's; any other is the GEMM kernel-set format.

Every format accepts either leaf form. The product runs over `gpu_targets` (one kernel each), then
tile, trait and the other sections, in CK's order; a leaf the file omits takes the default of CK's
loader (tile 128x128x32, waves 2x2x1, warp tile 32x32x16, pipeline compv4 for GEMM / compv3 for
conv, conv vectors 4/8/8, ...). Omitted top-level keys take ckast's defaults, which are CK's. Keys
starting with `_` are comments. `kernel_set_name` is a label only. CK's generator silently drops
combinations its filters reject; ckast validates each kernel and refuses the file instead. A product
over MAX_KERNELS is refused before it is built.

Keys and values in CK's spellings are read by the one table of them (`ck_spellings`), as in a plain
kernel object: section keys such as `elementwise_ops`, `ndim` and each target name knobs (`elementwise_op`,
`ndim_spatial`, `arch`), a datatype object becomes the one ckast datatype with those A, B, C and
accumulator types (none: refused here, naming `datatype`), and leaf values such as `"COMPUTE_V3"` or
`"Intrawave"` are read by `load.resolve_kernel`. CK's 4-letter GEMM layout "rcrr" is `layout` "rcr"
plus, for multi_d only (CK uses the 4th letter for D tensors, whichever variants the file names),
`d_layout` "r". Conv `pad_*` true is what ckast's conv kernels always do (false is refused). Conv
`block_per_cu` is read and not used (a CKFormatWarning says so once per file), as CK's conv generator
derives kBlockPerCu itself.

Each kernel's JSON path is `product[i] (section.key=value, ...)`, naming the values of every key
with more than one value, so a refusal points at the values in the file.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ckast.arch.rules import CONV_VARIANTS

from . import ck_quant_configs
from .ck_spellings import KEYS, MULTI_D_LAYOUTS, CKFormatWarning, datatype_object
from .errors import ConfigError, ConfigIssue, key_path, plain, shown

MAX_KERNELS = 100_000
"""Most kernels a config file may hold (a CK config: expand to); more are refused by rule `config.max_kernels`."""

_TILE = dict(zip((f"{p}_{d}" for p in ("tile", "warp", "warp_tile") for d in "mnk"),
                 (128, 128, 32, 2, 2, 1, 32, 32, 16)))
_PADS = {f"pad_{d}": False for d in "mnk"}


@attrs.frozen
class _Format:
    name: str
    kind: str
    top: tuple[str, ...]  # top-level keys besides the sections
    sections: Mapping[str, Mapping[str, Any]]  # section -> {key: CK's default}
    variant: str  # CK's default variant


_GEMM_SECTIONS = {
    "tile_config": _TILE,
    "trait_config": {"pipeline": "compv4", "scheduler": "intrawave", "epilogue": "cshuffle", **_PADS,
                     "persistent": False},
}
_TARGETS = ("gpu_targets", "gpu_target")
_VARIANT_SECTIONS = {"multi_d_config": "multi_d", "streamk_config": "stream_k"}
"""Generator sections only one variant reads."""
GENERATOR = _Format("CK's GEMM generator config", "gemm", ("datatype", "layout", "variants", *_TARGETS),
                    {**_GEMM_SECTIONS, "multi_d_config": {"elementwise_ops": "MultiDAdd", "num_d_tensors": 1},
     "streamk_config": {"reduction_strategy": "atomic"}},
                    "standard")
GEMM_SET = _Format("CK's GEMM kernel-set config", "gemm",
                   ("kernel_set_name", "datatype", "layout", "variant", *_TARGETS), _GEMM_SECTIONS, "standard")
CONV_SET = _Format(
    "CK's grouped-conv kernel-set config", "grouped_conv",
    ("kernel_set_name", "datatype", "variant", "ndim", "layout", *_TARGETS),
    {
        "tile_config": _TILE,
        "trait_config": {"pipeline": "compv3", "scheduler": "intrawave", "epilogue": "cshuffle",
                         **{k: True for k in _PADS}, "double_smem_buffer": False, "num_groups_to_merge": 1},
        "vector_config": {"vector_size_a": 4, "vector_size_b": 8, "vector_size_c": 8},
        "occupancy_config": {"block_per_cu": 1, "num_wave_groups": 1},
    },
    "forward",
)


@attrs.frozen
class _Axis:
    label: str  # where its values are in the file
    knob: str | None
    values: Sequence[Any]


def expand(data: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """(JSON path, kernel object) of every kernel of a CK config; None if `data` is not one.

    Raises ConfigError for a structural problem (naming its JSON path) or a product over MAX_KERNELS.
    CK's quant codegen configs, manifest cases and manifest are read by `ck_quant_configs`.
    """
    quant = ck_quant_configs.expand(data)
    if quant is not None:
        return quant
    fmt = _detect(data)
    if fmt is None:
        return None
    issues: list[ConfigIssue] = []
    allowed = (*fmt.top, *fmt.sections)
    issues += [ConfigIssue(key_path("", k), f"unknown top-level key of {fmt.name}; allowed: {', '.join(allowed)}")
               for k in data if not _comment(k) and k not in allowed]
    axes = [*_targets(data, issues), *_section_axes(fmt, data, issues)]
    variants = (_leaf(data.get("variants", [fmt.variant]), "variants", issues) if fmt is GENERATOR
                else [data.get("variant", fmt.variant)])
    base = {"kind": fmt.kind, **(_datatype(fmt, data["datatype"], issues) if "datatype" in data else {}),
            **({_knob("ndim"): data["ndim"]} if "ndim" in data else {})}
    if issues:
        raise ConfigError(issues)
    per_variant = [(v, [a for a in axes if _VARIANT_SECTIONS.get(a.label.partition(".")[0], v) == v])
                   for v in variants]
    total = sum(math.prod(len(a.values) for a in v_axes) for _, v_axes in per_variant)
    if total > MAX_KERNELS:
        sizes = [f"{a.label} {len(a.values)}" for a in axes if len(a.values) > 1]
        sizes += [f"variants {len(variants)}"] if len(variants) > 1 else []
        raise ConfigError([ConfigIssue("", f"expands to {total} kernels ({' x '.join(sizes)}), "
                                           f"over the limit of {MAX_KERNELS}", "config.max_kernels")])
    kernels = [kernel for variant, v_axes in per_variant
               for kernel in _product(fmt, {**base, "variant": variant, **_layout(fmt, data, variant)}, v_axes,
                                      f"variants={_show(variant)}" if len(variants) > 1 else None)]
    if not kernels:
        raise ConfigError([ConfigIssue("variants", "expands to no kernels: CK's preshuffle variant keeps only "
                                       "the trait_config combinations with pipeline compv3 and scheduler intrawave, "
                                       "its stream_k variant only those with epilogue cshuffle")])
    return [(f"product[{i}]" + (f" ({shown})" if shown else ""), obj) for i, (shown, obj) in enumerate(kernels)]


def _product(fmt: _Format, base: dict[str, Any], axes: list[_Axis],
             variant_label: str | None) -> list[tuple[str, dict[str, Any]]]:
    """(values shown in the path, kernel object) of one variant's product, as CK forms it."""
    out = []
    for combo in itertools.product(*(a.values for a in axes)):
        knobs = {a.knob: value for a, value in zip(axes, combo) if a.knob is not None}
        if fmt is GENERATOR and base["variant"] == "preshuffle":
            if (knobs["pipeline"], knobs["scheduler"]) != ("compv3", "intrawave"):
                continue
            knobs.update(pipeline="preshufflev2", epilogue="cshuffle", scheduler="default")
        if fmt is GENERATOR and base["variant"] == "stream_k" and knobs["epilogue"] != "cshuffle":
            continue
        shown = [variant_label] if variant_label else []
        shown += [f"{a.label}={_show(value)}" for a, value in zip(axes, combo) if len(a.values) > 1]
        out.append((", ".join(shown), {**base, **knobs}))
    return out


def _comment(key: Any) -> bool:
    return isinstance(key, str) and key.startswith("_")


def _show(value: Any) -> str:
    """A value in a kernel's path: a plain name as it is, anything else as (shortened) JSON."""
    return value if plain(value) else shown(value)


def _detect(data: Any) -> _Format | None:
    if not isinstance(data, dict) or not {"tile_config", "trait_config"} & data.keys():
        return None
    datatype = data.get("datatype")
    if ({"ndim", "vector_config", "occupancy_config"} & data.keys() or data.get("variant") in CONV_VARIANTS
            or isinstance(datatype, dict) and "input" in datatype):
        return CONV_SET
    leaves = [leaf for s in ("tile_config", "trait_config") if isinstance(data.get(s), dict)
              for k, leaf in data[s].items() if not _comment(k)]
    if ({"multi_d_config", "streamk_config", "variants"} & data.keys()
            or leaves and all(isinstance(leaf, list) for leaf in leaves)):
        return GENERATOR
    return GEMM_SET


_LEAF_FORMS = 'expected a list, {"values": [...]} or {"min": ..., "max": ..., "step": ...}'


def _leaf(leaf: Any, path: str, issues: list[ConfigIssue]) -> Sequence[Any]:
    """The values of one leaf (a range stays lazy), or [] after recording a problem."""
    keys = {k for k in leaf if not _comment(k)} if isinstance(leaf, dict) else set()
    if isinstance(leaf, list):
        values: Sequence[Any] = leaf
    elif keys == {"values"}:
        values = leaf["values"]
        if not isinstance(values, list):
            issues.append(ConfigIssue(f"{path}.values", "must be a list"))
            return []
    elif keys in ({"min", "max"}, {"min", "max", "step"}):
        bad = [k for k in sorted(keys) if not isinstance(leaf[k], int) or isinstance(leaf[k], bool)]
        issues += [ConfigIssue(f"{path}.{k}", f"{shown(leaf[k])} is not an integer") for k in bad]
        if bad:
            return []
        step = leaf.get("step", 1)
        if step <= 0:
            issues.append(ConfigIssue(f"{path}.step", f"{step} must be positive"))
            return []
        values = range(leaf["min"], leaf["max"] + 1, step)
    else:
        issues.append(ConfigIssue(path, _LEAF_FORMS))
        return []
    if not values:
        issues.append(ConfigIssue(path, "has no values"))
    return values


def _section_axes(fmt: _Format, data: Mapping[str, Any], issues: list[ConfigIssue]) -> list[_Axis]:
    """One axis per section key, in CK's order; an omitted key has CK's default as its one value."""
    axes: list[_Axis] = []
    for section, defaults in fmt.sections.items():
        given = data.get(section, {})
        if not isinstance(given, dict):
            issues.append(ConfigIssue(section, "must be an object"))
            continue
        issues += [ConfigIssue(key_path(section, k), f"unknown key; allowed: {', '.join(defaults)}")
                   for k in given if not _comment(k) and k not in defaults]
        for key, default in defaults.items():
            label = f"{section}.{key}"
            knob = _knob(key)
            if knob is None and key in given:
                warnings.warn(f"{label}: not used; {KEYS[key].lossy}", CKFormatWarning)
            axes.append(_Axis(label, knob, _leaf(given[key], label, issues) if key in given else [default]))
    return axes


def _targets(data: Mapping[str, Any], issues: list[ConfigIssue]) -> list[_Axis]:
    """The `arch` axis: `gpu_targets` (a leaf) or `gpu_target` (one name); none: ckast's default."""
    if all(k in data for k in _TARGETS):
        issues.append(ConfigIssue("gpu_target", "give gpu_targets or gpu_target, not both"))
    if "gpu_targets" in data:
        return [_Axis("gpu_targets", _knob("gpu_target"), _leaf(data["gpu_targets"], "gpu_targets", issues))]
    return [_Axis("gpu_target", _knob("gpu_target"), [data["gpu_target"]])] if "gpu_target" in data else []


def _knob(key: str) -> str | None:
    """The knob a CK section or top-level key names (None: none, the key is not used)."""
    return KEYS[key].accepted if key in KEYS else key


def _datatype(fmt: _Format, value: Any, issues: list[ConfigIssue]) -> dict[str, Any]:
    """`datatype`: a name passes through; CK's object of per-tensor types becomes the ckast datatype
    (`ck_spellings.datatype_object`)."""
    if not isinstance(value, dict):
        return {"datatype": value}
    name, problems = datatype_object(fmt.kind, value, "datatype")
    issues += problems
    return {"datatype": name} if name else {}


def _layout(fmt: _Format, data: Mapping[str, Any], variant: Any) -> dict[str, Any]:
    """`layout`; CK's 4-letter GEMM layout "rcrr" is A/B/C plus the D layout, which only multi_d uses."""
    if "layout" not in data:
        return {}
    layout = data["layout"]
    if fmt.kind == "gemm" and isinstance(layout, str) and layout in MULTI_D_LAYOUTS:
        abc, d = MULTI_D_LAYOUTS[layout]
        return {"layout": abc, **({"d_layout": d} if variant == "multi_d" else {})}
    return {"layout": layout}
