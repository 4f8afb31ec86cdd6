"""CK's spellings of kernel knobs and values, and what each is in ckast: the one table read wherever a kernel
object is read (a plain kernel object, or a kernel of CK's own formats, `ck_formats`).

A spelling that stands for exactly one ckast knob or value is accepted as it: the config, its manifest
entry and its kernel name hold ckast's canonical spelling, so two spellings of one kernel give one name.
A spelling that stands for several ckast values (ambiguous), or that would lose or bend what it says
(lossy), is refused by rule `ck.spelling`, naming the ckast spelling(s) to write instead. No CK spelling
is a ckast value of the same knob, so a kernel written in ckast's spellings never needs this table
(`load.resolve_kernel` translates only an object the knob table refuses as written).

Beside the value table `VALUES`: CK's key names (`KEYS`), the fields of CK's dispatcher Python `KernelConfig`
(`KERNEL_CONFIG`: an object holding one of its own fields is read as one, and refused when it also gives
ckast's spelling of one of them), its 4-letter multi-D GEMM layout
(`MULTI_D_LAYOUTS`: A, B, C and then the D layout), its datatype objects of per-tensor types (`ROLES`), and
its conv pads, which CK's conv traits fix to true as ckast's conv kernels do (true says nothing more;
false is refused).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import attrs

from ckast.arch import DTYPES
from ckast.arch.rules import CONV_VARIANTS

from .errors import ConfigIssue, key_path, plain, shown
from .knobs import (CONV, CONV_LAYOUTS, DATATYPES, DEFAULT_VARIANT, DEPTHWISE_LAYOUT, GEMM, GEMM_LAYOUTS, KNOB_NAMES,
                    VARIANTS)

RULE = "ck.spelling"


class CKFormatWarning(UserWarning):
    """A CK key that ckast reads but does not use (why: its `KEYS` entry)."""


@attrs.frozen
class Spelling:
    """What one CK spelling is in ckast. `ckast`: the ckast spelling(s) it stands for (one: accepted;
    several: ambiguous, refused; none: ckast has no such knob and ignores it, `lossy` saying why);
    `source`: where CK spells it so; `lossy`: why it cannot be read as its one ckast spelling (refused)."""

    ckast: tuple[str, ...]
    source: str
    lossy: str = ""
    kinds: tuple[str, ...] = (GEMM, CONV)

    @property
    def accepted(self) -> str | None:
        """The ckast spelling it is read as; None if it is refused or ignored."""
        return self.ckast[0] if len(self.ckast) == 1 and not self.lossy else None

    def refusal(self, ck: str) -> str:
        """Why `ck` is refused, naming what to write instead."""
        use = " or ".join(f'"{c}"' for c in self.ckast)
        if self.lossy:
            return f"{shown(ck)} is CK's {self.source}; {self.lossy}: write {use}"
        return f"{shown(ck)} is CK's {self.source} for ckast's {' and '.join(self.ckast)} alike: write {use}"


def _each(source: str, pairs: Mapping[str, str | tuple[str, ...]], **kw: Any) -> dict[str, Spelling]:
    return {ck: Spelling(to if isinstance(to, tuple) else (to,), source, **kw) for ck, to in pairs.items()}


_INPUT_ONLY = "the layout knob names the input layout, and the weight and output layouts follow from it"
_CONV_LAYOUTS = {
    **_each("tensor_layout::convolution name of the input layout",
            {v.upper(): v for v in (*CONV_LAYOUTS.values(), DEPTHWISE_LAYOUT)}, kinds=(CONV,)),
    **{ck: Spelling((CONV_LAYOUTS[ndim],), f"tensor_layout::convolution name of the {ndim}-D {role} layout",
                    _INPUT_ONLY, (CONV,))
       for role, names in (("weight", ("GKXC", "GKYXC", "GKZYXC")), ("output", ("NWGK", "NHWGK", "NDHWGK")))
       for ndim, ck in enumerate(names, 1)},
}

VALUES: dict[str, dict[str, Spelling]] = {
    "variant": {
        "fwd": Spelling(("forward", "forward_depthwise"), "short name of the forward direction (kernel names, "
                        "generate_profiler_kernels --variant)", kinds=(CONV,)),
        **_each("conv kernel-set loader's name token", {"bwdd": "bwd_data", "bwdw": "bwd_weight"}, kinds=(CONV,)),
        **_each("CK Builder directory name", {"backward_data": "bwd_data", "backward_weight": "bwd_weight"},
                kinds=(CONV,)),
    },
    "datatype": {
        **_each("CK Tile type name", {"half_t": "fp16", "bf16_t": "bf16", "float": "fp32", "fp8_t": "fp8",
                                      "bf8_t": "bf8", "int8_t": "int8"}),
        **_each("dispatcher DataType enumerator", {d.upper(): d for d in DATATYPES[GEMM]}),
    },
    "layout": _CONV_LAYOUTS,
    "pipeline": {
        **_each("GemmPipeline enumerator", {
            "MEMORY": "mem", "COMPUTE_V3": "compv3", "COMPUTE_V4": "compv4", "COMPUTE_V5": "compv5",
            "COMPUTE_V6": "compv6", "COMPUTE_ASYNC": "comp_async", "BASIC_ASYNC_V1": "basic_async_v1",
            "WAVELET": "wavelet", "PRESHUFFLE_V2": "preshufflev2",
            "BASIC_V1": ("basic_v1", "compv1"), "BASIC_V2": ("basic_v2", "compv2")}),
        **_each("dispatcher Pipeline enumerator", {
            "Mem": "mem", "CompV3": "compv3", "CompV4": "compv4", "CompV5": "compv5", "CompV6": "compv6",
            "PreShuffleV2": "preshufflev2", "Wavelet": "wavelet",
            "CompV1": ("basic_v1", "compv1"), "CompV2": ("basic_v2", "compv2")}),
    },
    "scheduler": {
        **_each("GemmPipelineScheduler and dispatcher Scheduler enumerator",
                {"Intrawave": "intrawave", "Interwave": "interwave"}),
        **_each("GemmPipelineScheduler enumerator", {"Default": "default"}),
        **_each("dispatcher Scheduler enumerator", {"Auto": "default"}),
    },
    "epilogue": _each("dispatcher Epilogue enumerator", {"CShuffle": "cshuffle", "Default": "default"}),
    "specialization": _each("ConvolutionSpecialization enumerator", {
        "Default": "default", "Filter1x1Pad0": "filter1x1_pad0", "Filter1x1Stride1Pad0": "filter1x1_stride1_pad0",
        "Filter3x3": "filter3x3"}, kinds=(CONV,)),
    "streamk_reduction": {
        **_each("conv generator's StreamKReductionStrategy value", {"TREE": "tree", "LINEAR": "linear"},
                kinds=(CONV,)),
        **_each("StreamKReductionStrategy enumerator", {"Tree": "tree", "Linear": "linear"}),
        **_each("StreamKReductionStrategy and dispatcher ReductionStrategy enumerator", {"Atomic": "atomic"},
                kinds=(GEMM,)),
        **_each("ck-2025.11 StreamKReductionStrategy enumerator (its linear reduction)", {"Reduction": "linear"},
                kinds=(GEMM,)),
    },
}
"""knob -> CK's spelling of a value -> what it is in ckast."""

KEYS: dict[str, Spelling] = {
    "elementwise_ops": Spelling(("elementwise_op",), "GEMM generator key (multi_d_config)", kinds=(GEMM,)),
    "ndim": Spelling(("ndim_spatial",), "conv kernel-set key", kinds=(CONV,)),
    "gpu_target": Spelling(("arch",), "kernel-set key"),
    "gpu_targets": Spelling(("arch",), "kernel-set key for a list of targets",
                            "a kernel object is built for one target"),
    "streamk_reduction_strategy": Spelling(("streamk_reduction",), "conv generator option", kinds=(CONV,)),
    "reduction_strategy": Spelling(("streamk_reduction",), "GEMM generator key (streamk_config) and dispatcher "
                                   "KernelConfig field", kinds=(GEMM,)),
    "block_per_cu": Spelling((), "conv kernel-set key (occupancy_config)", "ckast derives kBlockPerCu from the LDS "
                             "buffering (1 with a double LDS buffer, else 2), as CK's conv generator does",
                             kinds=(CONV,)),
}
"""CK's key -> the ckast knob it names."""

MULTI_D_LAYOUTS: dict[str, tuple[str, str]] = {abc + d: (abc, d) for abc in GEMM_LAYOUTS for d in "rc"}
"""CK's 4-letter GEMM layout -> (layout, d_layout): the 4th letter is the D tensors' layout, used by multi_d only."""

ROLES = {GEMM: ("a", "b", "c", "acc"), CONV: ("input", "weight", "output", "acc")}
"""The keys of CK's datatype object per kind: A, B, C (conv: In, Wei, Out) and the accumulator."""
ROLE_DEFAULTS = {"acc": "fp32"}
"""A role a datatype object omits takes CK's loader default: fp16, the accumulator fp32."""

CONV_PADS = ("pad_m", "pad_n", "pad_k")
CONV_PADS_FIXED = "CK's conv traits fix kPadM/N/K = true and ckast's conv kernels always pad"

_KNOWN = frozenset(KNOB_NAMES)


def tensor_types(kind: str, name: str) -> tuple[str, str, str, str]:
    """The (A, B, C, accumulator) types of a ckast datatype (conv: In, Wei, Out and fp32)."""
    if kind == CONV:
        return (name, name, name, "fp32")
    return (name, name, DTYPES[name].output, DTYPES[name].acc)


def datatype_object(kind: str, value: Mapping[str, Any], path: str) -> tuple[str | None, list[ConfigIssue]]:
    """The ckast datatype of CK's datatype object `value` at `path` (its `ROLES`, each a type name or CK's
    spelling of one; keys starting with `_` are comments), or None and the problems."""
    roles = ROLES[kind]
    issues = [ConfigIssue(key_path(path, k), f"unknown key; allowed: {', '.join(roles)}")
              for k in value if not k.startswith("_") and k not in roles]
    types = tuple(_type_name(value.get(role, ROLE_DEFAULTS.get(role, "fp16"))) for role in roles)
    table = {tensor_types(kind, name): name for name in DATATYPES[kind]}
    if not issues and all(isinstance(t, str) for t in types) and types in table:
        return table[types], []  # type: ignore[index]
    if not issues:
        known = ", ".join(f"{name} = {'/'.join(t)}" for t, name in table.items())
        shown_types = "/".join(t if plain(t) else shown(t) for t in types)
        issues.append(ConfigIssue(path, f"{shown_types} ({'/'.join(roles)}) is no ckast datatype; ckast's: {known}",
                                  RULE))
    return None, issues


def _type_name(value: Any) -> Any:
    spelling = VALUES["datatype"].get(value) if isinstance(value, str) else None
    return spelling.accepted if spelling is not None and spelling.accepted else value


@attrs.frozen
class Translated:
    """A kernel object in ckast's spellings. `keys`: knob -> the CK key it was written as; `issues`: the
    refused CK spellings (their keys and values are kept as written); `refused`: the paths these refusals
    stand for, whose other problems they replace."""

    obj: dict[str, Any]
    keys: dict[str, str]
    issues: tuple[ConfigIssue, ...]
    refused: frozenset[str]


_KC = "dispatcher Python KernelConfig field"
KERNEL_CONFIG: dict[str, Spelling] = {
    **{f"warp_{d}": Spelling((f"warp_tile_{d}",), f"{_KC} for the warp tile along {d.upper()}", kinds=(GEMM,))
       for d in "mnk"},
    **{f"wave_{d}": Spelling((f"warp_{d}",), f"{_KC} for the waves per block along {d.upper()}", kinds=(GEMM,))
       for d in "mnk"},
    "gfx_arch": Spelling(("arch",), _KC, kinds=(GEMM,)),
}
"""CK's dispatcher Python `KernelConfig` (a GEMM kernel) fields that name a ckast knob otherwise, renamed in
this order (CK's `warp_m` is the warp tile, ckast's `warp_tile_m`; CK's `wave_m` the waves, ckast's `warp_m`).
Its `dtype_a/b/c/acc` are read as a datatype object (`ROLES`), `layout_a/b/c` ("row" or "col") as the layout's
letters, `block_size` is checked against the waves (ckast derives it); its other fields (`tile_m`,
`pipeline`, `pad_m`, `variant`, ...) are ckast's knobs of the same name. CK's newer `GemmKernelConfig` writes the
warp tile `warp_tile_m`, as ckast does."""
KERNEL_CONFIG_DTYPES = {"dtype_a": "a", "dtype_b": "b", "dtype_c": "c", "dtype_acc": "acc"}
KERNEL_CONFIG_LAYOUTS = ("layout_a", "layout_b", "layout_c")
KERNEL_CONFIG_DEFAULTS = {"dtype_a": "fp16", "dtype_b": "fp16", "dtype_c": "fp16", "dtype_acc": "fp32",
                          "layout_a": "row", "layout_b": "col", "layout_c": "row"}
"""The KernelConfig dataclass's defaults of the fields read together."""
KERNEL_CONFIG_MARKS = frozenset({*KERNEL_CONFIG_DTYPES, *KERNEL_CONFIG_LAYOUTS, "wave_m", "wave_n", "wave_k",
                                 "gfx_arch", "block_size"})
"""Fields only CK's KernelConfig has: an object holding one is read as a KernelConfig."""
_KC_MIXED = ("datatype", "layout", "arch")
"""ckast knobs a KernelConfig spells otherwise: an object with both spellings is refused."""
_LAYOUT_LETTERS = {"row": "r", "col": "c"}


def wave_hint(obj: Mapping[str, Any], path: str) -> list[ConfigIssue]:
    """For a ckast kernel object whose `warp_m/n/k` hold more waves than any arch runs along a dimension (4): what
    ckast's `warp_*` are, and the knob CK's KernelConfig `warp_*` (the warp tile) is in ckast."""
    said = ("ckast's warp_{d} counts waves per block (CK's KernelConfig wave_{d}); a warp tile of {value} (CK's "
            "KernelConfig warp_{d}) is ckast's warp_tile_{d}")
    return [ConfigIssue(key_path(path, f"warp_{d}"), said.format(d=d, value=obj[f"warp_{d}"]), RULE)
            for d in "mnk" if type(obj.get(f"warp_{d}")) is int and obj[f"warp_{d}"] > 4]


def translate(obj: Mapping[str, Any], path: str) -> Translated | None:
    """`obj` (a kernel object at `path`) in ckast's spellings; None when it holds no CK spelling."""
    t = _Translation(dict(obj), path)
    if not KERNEL_CONFIG_MARKS.isdisjoint(obj) and not t.kernel_config():
        return Translated(dict(obj), {}, tuple(t.issues), frozenset({path, *(key_path(path, k) for k in obj),
                                                                      key_path(path, "kind")}))
    kind = t.obj.get("kind")
    if kind not in (GEMM, CONV):  # every spelling is of a kind's knob
        return None
    for key in list(t.obj):
        spelling = KEYS.get(key) if key not in _KNOWN else None
        if spelling is not None and kind in spelling.kinds:
            t.key(key, spelling)
    for knob in VALUES:  # variant first: the rest depends on it, and a refused variant ends the check
        value = t.obj.get(knob)
        spelling = VALUES[knob].get(value) if isinstance(value, str) else None
        if spelling is not None and kind in spelling.kinds:
            t.value(knob, spelling)
            if knob == "variant" and t.issues and t.issues[-1].path == t.where(knob):
                return Translated(t.obj, t.keys, tuple(t.issues), frozenset(t.refused))
    variant = t.obj.get("variant", DEFAULT_VARIANT.get(kind))
    layout = t.obj.get("layout")
    if kind == GEMM and isinstance(layout, str) and layout in MULTI_D_LAYOUTS and variant in VARIANTS[GEMM]:
        t.multi_d_layout(variant)
    if kind in ROLES and isinstance(t.obj.get("datatype"), dict):
        name, issues = datatype_object(kind, t.obj["datatype"], t.where("datatype"))
        if name:
            t.set("datatype", name)
        else:
            t.refuse("datatype", *issues)
    if kind == CONV and variant in CONV_VARIANTS:
        for pad in CONV_PADS:
            if t.obj.get(pad) is True:
                t.set(pad, None)
            elif t.obj.get(pad) is False:
                t.refuse(pad, ConfigIssue(t.where(pad), f"false: {CONV_PADS_FIXED}; leave {pad} out", RULE))
    if not t.changed:
        return None
    return Translated(t.obj, t.keys, tuple(t.issues), frozenset(t.refused))


class _Translation:
    """The state of one `translate`: the object so far and what was renamed, refused or changed."""

    def __init__(self, obj: dict[str, Any], path: str) -> None:
        self.obj, self.path = obj, path
        self.keys: dict[str, str] = {}
        self.issues: list[ConfigIssue] = []
        self.refused: set[str] = set()
        self.changed = False

    def kernel_config(self) -> bool:
        """Read the object as CK's KernelConfig (`KERNEL_CONFIG`); False (and the issue) when it mixes its
        fields with ckast's spellings of them, or is not a GEMM kernel."""
        obj, path = self.obj, self.path
        marks = sorted(KERNEL_CONFIG_MARKS.intersection(obj))
        mixed = [k for k in _KC_MIXED if k in obj]
        if any(f"warp_{d}" in obj for d in "mnk"):
            mixed += [f"warp_tile_{d}" for d in "mnk" if f"warp_tile_{d}" in obj]
        if mixed:
            self.issues.append(ConfigIssue(path, f"mixes CK's KernelConfig fields ({', '.join(marks)}) with ckast's "
                                                 f"knobs ({', '.join(mixed)}): write one or the other (CK's wave_m is "
                                                 "ckast's warp_m, CK's warp_m ckast's warp_tile_m, dtype_a/b/c/acc "
                                                 "datatype, layout_a/b/c layout, gfx_arch arch)", RULE))
            return False
        if obj.get("kind", GEMM) != GEMM:
            said = f"{shown(obj['kind'])}: CK's KernelConfig fields ({', '.join(marks)}) describe a GEMM kernel"
            self.issues.append(ConfigIssue(key_path(path, "kind"), said, RULE))
            return False
        self.obj = {"kind": GEMM, **obj}
        for key, spelling in KERNEL_CONFIG.items():
            if key in obj:
                self.key(key, spelling)
        given = {k: self.obj.pop(k) for k in (*KERNEL_CONFIG_DTYPES, *KERNEL_CONFIG_LAYOUTS) if k in self.obj}
        typed = {**KERNEL_CONFIG_DEFAULTS, **given}
        if any(k in given for k in KERNEL_CONFIG_DTYPES):
            where = key_path(path, next(k for k in KERNEL_CONFIG_DTYPES if k in given))
            name, issues = datatype_object(GEMM, {role: typed[k] for k, role in KERNEL_CONFIG_DTYPES.items()}, where)
            self.obj["datatype"] = name if name else typed["dtype_a"]
            self.keys["datatype"] = where.rpartition(".")[2]
            if issues:
                self.refuse("datatype", *issues)
        if any(k in given for k in KERNEL_CONFIG_LAYOUTS):
            bad = [k for k in KERNEL_CONFIG_LAYOUTS if typed[k] not in _LAYOUT_LETTERS]
            self.obj["layout"] = "".join(_LAYOUT_LETTERS.get(typed[k], "?") for k in KERNEL_CONFIG_LAYOUTS)
            self.keys["layout"] = bad[0] if bad else next(k for k in KERNEL_CONFIG_LAYOUTS if k in given)
            if bad:
                self.refuse("layout", *(ConfigIssue(key_path(path, k), f"{shown(typed[k])} is not a layout of CK's "
                                                                       "KernelConfig; allowed: row, col", RULE)
                                        for k in bad))
        if "block_size" in self.obj:
            self._block_size(self.obj.pop("block_size"))
        self.changed = True
        return True

    def _block_size(self, value: Any) -> None:
        """CK's KernelConfig block_size: the waves times the arch's wave size, which ckast derives."""
        from ckast.arch import ARCH_NAMES, arch_spec

        waves = [self.obj.get(f"warp_{d}", 2 if d != "k" else 1) for d in "mnk"]
        arch = self.obj.get("arch", "gfx942")
        if arch not in ARCH_NAMES or any(type(w) is not int for w in waves):
            return  # the knobs say what is wrong
        lanes = arch_spec(arch).warp_size
        threads = waves[0] * waves[1] * waves[2] * lanes
        if value != threads:
            where = key_path(self.path, "block_size")
            self.issues.append(ConfigIssue(where, f"{shown(value)}: a kernel of {'x'.join(map(str, waves))} waves on "
                                                  f"{arch} ({lanes} lanes each) runs {threads} threads, which ckast "
                                                  "derives: leave block_size out or make it match", RULE))
            self.refused.add(where)

    def where(self, knob: str) -> str:
        return key_path(self.path, self.keys.get(knob, knob))

    def set(self, knob: str, value: Any) -> None:
        """`knob` holds `value` (None: leave it out)."""
        if value is None:
            del self.obj[knob]
        else:
            self.obj[knob] = value
        self.changed = True

    def refuse(self, knob: str, *issues: ConfigIssue) -> None:
        self.issues += issues
        self.refused.add(self.where(knob))
        self.changed = True

    def key(self, key: str, spelling: Spelling) -> None:
        knob = spelling.accepted
        where = key_path(self.path, key)
        if not spelling.ckast:
            warnings.warn(f"{where}: not used; {spelling.lossy}", CKFormatWarning, stacklevel=4)
            self.set(key, None)
        elif knob is None:
            self.refuse(key, ConfigIssue(where, spelling.refusal(key), RULE))
        elif knob in self.obj:
            self.refuse(key, ConfigIssue(where, f"{shown(key)} is CK's {spelling.source} for {knob}, which the "
                                                f"kernel also gives: write {knob} only", RULE))
        else:
            self.obj = {(knob if k == key else k): v for k, v in self.obj.items()}
            self.keys[knob] = key
            self.changed = True

    def value(self, knob: str, spelling: Spelling) -> None:
        if spelling.accepted is not None:
            self.set(knob, spelling.accepted)
        else:
            self.refuse(knob, ConfigIssue(self.where(knob), spelling.refusal(self.obj[knob]), RULE))

    def multi_d_layout(self, variant: str) -> None:
        ck = self.obj["layout"]
        abc, d = MULTI_D_LAYOUTS[ck]
        said = f'{shown(ck)} is CK\'s multi-D layout spelling of layout "{abc}" with d_layout "{d}"'
        if variant != "multi_d":
            self.refuse("layout", ConfigIssue(self.where("layout"), f'{said}; a {variant} kernel has no D tensors: '
                                                                    f'write layout "{abc}"', RULE))
        elif self.obj.get("d_layout", d) != d:
            self.refuse("layout", ConfigIssue(self.where("layout"), f"{said}, but d_layout is "
                                                                    f'{shown(self.obj["d_layout"])}: write layout '
                                                                    f'"{abc}" and one d_layout', RULE))
        else:
            self.set("layout", abc)
            self.set("d_layout", d)
