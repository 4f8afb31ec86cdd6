"""CK Builder's grouped-conv instance `.conf` files as rule sets (`profiler` and `tests`).

The directory is CK's `experimental/grouped_convolution_tile_instances/configs/`, laid out as
`<direction>/<subset>/<layout>_<dtype>[_streamk].conf`, plus `forward/<subset>/ngchw_depthwise.conf`,
which is read once per datatype. Each line is one instance's type string: an old-CK device op, a native
CK Tile kernel, or a depthwise kernel. It becomes the kernel object that CK's dispatcher rule module
(`grouped_config_rules_builder.py`, on CK Builder's parsers) makes of it. The rank and datatype come
from the file name only. A line that contains `#` or `;` is a comment, and blank lines are ignored
(CK's GEMM parsers crash on them). Identical kernel objects of one file are proposed once, as CK's
per-file dedup does. An origin names the line, 1-based: `tests/backward_weight/nhwgc_fp16.conf:12`.

CK's parsers skip some instances. Where ckast's validation refuses such a config by a rule, it is
proposed and refused: odd vectors (conv.vector_width), the WMMA limits of warp-size-32 archs (wmma.*,
warp_tile.supported, tile.divisible) and stream-K there (streamk.arch). Three skips are conventions
of CK Builder's instance list that ckast's kernel rules do not state (ck-2026.06 builds the configs),
and they are reproduced (`ck_leaves_out`, `_native`):
- old-CK bwd_weight/bwd_data lines whose A extent (tile_m; bwd_data: tile_k) exceeds warp size x
  vector A, or tile_n warp size x vector B ("warp coverage"; CK's later rules call it over-conservative);
- old-CK bwd_data lines whose A or B vector exceeds a thread's share of its block tile (CK's own `full`
  vectors allow a multiple of the share, and so does ckast's conv.vector_per_thread);
- fp32 stream-K lines with an async pipeline ("not supported yet").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from ckast.arguments import argument
from ckast.arch import arch_spec
from ckast.arch.rules import DEPTHWISE
from ckast.config.knobs import CONV_LAYOUTS
from ckast.errors import CkastError
from ckast.number_text import parse_int

from .conv_common import Triple, axes, conv_candidate, tile_knobs
from .selection import Candidate, Selection, SelectionError

Knobs = dict[str, Any]

DIRECTORIES = {"forward": "forward", "bwd_data": "backward_data", "bwd_weight": "backward_weight",
               DEPTHWISE: "forward"}
DEPTHWISE_FILE = "ngchw_depthwise.conf"
STREAMK_SUFFIX = "_streamk"

PIPELINES = {"V1": "compv1", "V2": "mem", "V3": "compv3", "V4": "compv4", "V5": "compv5", "V6": "compv6",
             "ASYNC_V1": "basic_async_v1", "ASYNC_V4": "mem", "WAVELET": "wavelet"}
"""CK Builder pipeline version -> dispatcher pipeline (CK's map_pipeline_version; ASYNC_V4 is `mem` there)."""
OLD_CK_VERSIONS = {"v1": "V1", "v2": "V2", "v3": "V3", "v4": "V4", "v5": "V6"}
"""Old-CK block-GEMM pipeline version -> CK Builder version (old CK's v5 is CK Tile's V6)."""
DIRECT_LOAD_VERSIONS = {"v1": "ASYNC_V1", "v4": "ASYNC_V4"}
"""Old-CK version of a direct-load instance -> CK Builder version."""
NATIVE_PIPELINES = {"BASIC_V1": "V1", "MEMORY": "V2", "COMPUTE_V3": "V3", "COMPUTE_V4": "V4", "COMPUTE_V5": "V5",
                    "COMPUTE_V6": "V6", "BASIC_ASYNC_V1": "ASYNC_V1", "COMPUTE_ASYNC": "ASYNC_V4", "WAVELET": "WAVELET"}
"""CK Tile pipeline name (GetPipelineName) -> CK Builder version."""
SCHEDULERS = {"Intrawave": "intrawave", "Interwave": "interwave", "Default": "intrawave"}
"""Old CK's `Default` loop scheduler (bwd_data) is the intrawave one."""
SPECIALIZATIONS = {"Default": "default", "OddC": "default", "Filter1x1Pad0": "filter1x1_pad0",
                   "Filter1x1Stride1Pad0": "filter1x1_stride1_pad0", "Filter3x3": "filter3x3"}
STREAMK_REDUCTIONS = {1: "linear", 2: "tree"}
"""CK Tile's StreamKReductionStrategy as an int; 0 (atomic) has no builder mapping."""
FLAGS = {"true": True, "false": False, "1": True, "0": False}
MFMA_K = {"fp32": {32: 2, 16: 4}, "fp16": {32: 16, 16: 32}, "bf16": {32: 16, 16: 32}}
"""K of one MFMA per datatype and XDL size (CK Builder takes every XDL size but 32 as 16)."""


class LineError(CkastError, ValueError):
    """A line CK Builder's grammar does not cover (reported with its file and line)."""


@attrs.frozen
class DeviceOp:
    """Argument positions CK Builder reads from one old-CK device op (`at`: field -> position)."""

    nargs: int
    at: dict[str, int]
    k0: bool = False  # the K position holds K0 (K per block = K0 x K1)
    split_image: bool = False
    two_stage: bool = False


_FWD = {"spec": 14, "block": 17, "m": 18, "n": 19, "k": 20, "k1": 21, "xdl_m": 23, "xdl_n": 24,
        "rep_m": 25, "rep_n": 26, "vec_a": 31, "vec_b": 38, "vec_c": 44}
_BWD_WEIGHT = {"spec": 11, "block": 12, "m": 13, "n": 14, "k": 15, "k1": 16, "xdl_m": 17, "xdl_n": 18,
               "rep_m": 19, "rep_n": 20, "vec_a": 25, "vec_b": 32, "vec_c": 38}
DEVICE_OPS: dict[str, dict[str, DeviceOp]] = {
    "forward": {
        "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle": DeviceOp(49, {**_FWD, "ngm": 48}),
        "DeviceGroupedConvFwdMultipleD_Xdl_CShuffle_Large_Tensor": DeviceOp(48, _FWD, split_image=True),
        "DeviceGroupedConvFwdMultipleABD_Xdl_CShuffle_V3": DeviceOp(50, {
            "spec": 14, "block": 16, "m": 17, "n": 18, "k": 19, "k1": 20, "xdl_m": 22, "xdl_n": 23, "rep_m": 24,
            "rep_n": 25, "vec_a": 30, "vec_b": 37, "vec_c": 43, "scheduler": 44, "version": 45, "direct_load": 48,
            "ngm": 49}),
    },
    "bwd_data": {
        "DeviceGroupedConvBwdDataMultipleD_Xdl_CShuffle": DeviceOp(51, {
            "spec": 13, "block": 17, "m": 18, "n": 19, "k": 20, "k1": 21, "bk1": 22, "xdl_m": 23, "xdl_n": 24,
            "rep_m": 25, "rep_n": 26, "vec_a": 31, "vec_b": 38, "vec_c": 44, "scheduler": 46}),
    },
    "bwd_weight": {
        "DeviceGroupedConvBwdWeight_Xdl_CShuffle": DeviceOp(43, _BWD_WEIGHT, k0=True),
        "DeviceGroupedConvBwdWeight_Xdl_CShuffleV3": DeviceOp(45, {
            **_BWD_WEIGHT, "scheduler": 39, "version": 40, "direct_load": 43, "ngm": 44}),
        "DeviceGroupedConvBwdWeightTwoStage_Xdl_CShuffle": DeviceOp(46, {
            **_BWD_WEIGHT, "scheduler": 39, "version": 40, "ngm": 41}, two_stage=True),
    },
}
"""Old-CK device ops per direction, as ckProfiler prints them."""
EXPLICIT_GEMM_OP = "DeviceGroupedConvBwdWeight_Explicit_Xdl"
NATIVE_KERNELS = {"forward": ("GroupedConvolutionForwardKernel", 31),
                  "bwd_data": ("GroupedConvolutionBackwardDataKernel", 31),
                  "bwd_weight": ("GroupedConvolutionBackwardWeightKernel", 34)}
"""CK Tile kernel of each direction and its argument count (bwd_weight adds the three stream-K fields)."""
NATIVE_INTS = frozenset((*range(6, 21), 25, 26, 31, 32, 33))
"""Positions of a native kernel line's integers CK Builder reads."""
DEPTHWISE_KERNEL = "GroupedConvolutionForwardDepthwise"
DEPTHWISE_FIELDS = ("tile_h", "tile_w", "filt", "str_h", "str_w", "pad_h", "pad_w", "nbatch", "sub_h", "sub_w",
                    "in_vec", "out_vec")


@attrs.frozen
class XdlInstance:
    """An old-CK XDL instance as CK Builder reads it (old-CK spellings, before any mapping)."""

    spec: str
    block: int
    tile: Triple
    k1: int
    xdl: tuple[int, int]
    per_wave: tuple[int, int]  # XdlPerWave in M and N
    vectors: Triple
    scheduler: str = "Intrawave"
    version: str = "v1"
    direct_load: bool = False
    groups_to_merge: int = 1
    split_image: bool = False
    two_stage: bool = False
    explicit_gemm: bool = False

    def knobs(self, datatype: str, warp_size: int) -> Knobs:
        """Waves from the block size and XdlPerWave, warp_tile_k = min(max(K1, MFMA K), tile_k)."""
        (m, n, k), (xdl_m, xdl_n) = self.tile, self.xdl
        if xdl_m != xdl_n:
            raise LineError(f"MPerXdl {xdl_m} != NPerXdl {xdl_n}; CK Builder takes square XDL tiles only")
        waves_m, waves_n = m // (xdl_m * self.per_wave[0]), n // (xdl_n * self.per_wave[1])
        if not waves_m or not waves_n:
            raise LineError(f"the {m}x{n} block tile holds no {xdl_m}x{xdl_n} XDL tile x XdlPerWave")
        waves_k = self.block // (warp_size * waves_m * waves_n)
        versions = DIRECT_LOAD_VERSIONS if self.direct_load else OLD_CK_VERSIONS
        version = _lookup(versions, self.version, "direct-load pipeline version" if self.direct_load
                          else "pipeline version")
        warp_tile_k = min(max(self.k1, MFMA_K[datatype][32 if xdl_m == 32 else 16]), k)
        return {**tile_knobs(self.tile, (waves_m, waves_n, waves_k), (xdl_m, xdl_n, warp_tile_k)),
                **_vector_knobs(self.vectors), "pipeline": PIPELINES[version],
                "scheduler": _lookup(SCHEDULERS, self.scheduler, "scheduler"), "epilogue": "cshuffle",
                "double_smem_buffer": self.version == "v4", "num_wave_groups": 1,
                "specialization": _lookup(SPECIALIZATIONS, self.spec, "specialization"),
                "num_groups_to_merge": self.groups_to_merge, "split_image": self.split_image,
                "explicit_gemm": self.explicit_gemm, **({"two_stage": True} if self.two_stage else {})}


def candidates(selection: Selection, subset: str) -> list[Candidate]:
    """Every instance of the subset's files the selection asks for (CK's file order per variant)."""
    root = selection.builder_conf
    if root is None:
        raise SelectionError(f"rule set {selection.rule_set!r} reads CK Builder .conf files: pass "
                             f"{argument('builder_conf')} DIR (CK's experimental/grouped_convolution_tile_instances/"
                             "configs/ directory)")
    variants, ndims, datatypes = axes(selection)
    warp_size = arch_spec(selection.arch).warp_size
    out: list[Candidate] = []
    read = 0
    for variant in variants:
        for name, ndim, dtype in _files(variant, ndims, datatypes):
            path = root / DIRECTORIES[variant] / subset / name
            if not path.is_file():  # CK's builder skips a missing file too
                continue
            read += 1
            origin = f"{subset}/{DIRECTORIES[variant]}/{name}"
            out += [conv_candidate(f"{origin}:{line}", variant, ndim, dtype, selection.arch, **knobs)
                    for line, knobs in read_conf(path, variant, dtype, warp_size)]
    if not read:
        raise SelectionError(f"no CK Builder .conf file of the selection under {root}/<direction>/{subset}/")
    return out


def _files(variant: str, ndims: tuple[int, ...], datatypes: tuple[str, ...]) -> list[tuple[str, int, str]]:
    """(file name, rank, datatype) CK's builder reads for one variant."""
    if variant == DEPTHWISE:
        return [(DEPTHWISE_FILE, 2, dtype) for dtype in datatypes] if 2 in ndims else []
    suffixes = ("", STREAMK_SUFFIX) if variant == "bwd_weight" else ("",)
    return [(f"{CONV_LAYOUTS[ndim]}_{dtype}{suffix}.conf", ndim, dtype)
            for suffix in suffixes for ndim in ndims for dtype in datatypes]


def read_conf(path: Path, variant: str, datatype: str, warp_size: int) -> list[tuple[int, Knobs]]:
    """(1-based line, kernel object without variant, rank and datatype) per instance line of one file,
    identical objects once. A line the grammar does not cover raises `SelectionError` naming file:line."""
    seen: dict[tuple, int] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if "#" in line or ";" in line or not line.strip():
            continue
        try:
            knobs = parse_line(line.strip(), variant, datatype, warp_size)
        except LineError as exc:
            raise SelectionError(f"{path}:{number}: {exc}") from None
        if knobs is not None:
            seen.setdefault(tuple(sorted(knobs.items())), number)
    return [(number, dict(key)) for key, number in seen.items()]


def parse_line(line: str, variant: str, datatype: str, warp_size: int) -> Knobs | None:
    """The kernel object of one instance line (None: an instance CK's selection leaves out)."""
    if variant == DEPTHWISE:
        return _depthwise(line)
    name, args = _split_instance(line)
    kernel, nargs = NATIVE_KERNELS[variant]
    if name == kernel:
        return _native(_expect(args, nargs, name), variant, datatype)
    if variant == "bwd_weight" and name == EXPLICIT_GEMM_OP:
        knobs = _explicit_gemm(line, datatype).knobs(datatype, warp_size)
    else:
        op = DEVICE_OPS[variant].get(name)
        if op is None:
            known = ", ".join([kernel, *DEVICE_OPS[variant], *([EXPLICIT_GEMM_OP] if variant == "bwd_weight" else [])])
            raise LineError(f"unknown {variant} instance kind {name!r}; known: {known}")
        knobs = _device_op(op, _expect(args, op.nargs, name)).knobs(datatype, warp_size)
    return None if ck_leaves_out(variant, knobs, warp_size) else knobs


def ck_leaves_out(variant: str, k: Knobs, warp_size: int) -> bool:
    """CK Builder's warp-coverage and bwd_data vector-coverage skips of old-CK backward lines
    (selection conventions, see the module docstring)."""
    if variant == "forward":
        return False
    a_extent = k["tile_k"] if variant == "bwd_data" else k["tile_m"]
    if a_extent > warp_size * k["vector_size_a"] or k["tile_n"] > warp_size * k["vector_size_b"]:
        return True
    threads = warp_size * k["warp_m"] * k["warp_n"] * k["warp_k"]
    return variant == "bwd_data" and (k["vector_size_a"] > k["tile_m"] * k["tile_k"] // threads
                                      or k["vector_size_b"] > k["tile_n"] * k["tile_k"] // threads)


def _device_op(op: DeviceOp, args: list[str]) -> XdlInstance:
    def num(field: str) -> int:
        return _int(args[op.at[field]])

    k1 = num("k1")
    if "bk1" in op.at and num("bk1") != k1:
        raise LineError(f"AK1 {k1} != BK1 {num('bk1')}; CK Builder takes equal K1s only")
    return XdlInstance(
        spec=args[op.at["spec"]], block=num("block"), tile=(num("m"), num("n"), num("k") * (k1 if op.k0 else 1)),
        k1=k1, xdl=(num("xdl_m"), num("xdl_n")), per_wave=(num("rep_m"), num("rep_n")),
        vectors=(num("vec_a"), num("vec_b"), num("vec_c")),
        scheduler=args[op.at["scheduler"]] if "scheduler" in op.at else "Intrawave",
        version=args[op.at["version"]] if "version" in op.at else "v1",
        direct_load="direct_load" in op.at and _lookup(FLAGS, args[op.at["direct_load"]], "direct-load flag"),
        groups_to_merge=num("ngm") if "ngm" in op.at else 1, split_image=op.split_image, two_stage=op.two_stage)


def _explicit_gemm(line: str, datatype: str) -> XdlInstance:
    """`DeviceGroupedConvBwdWeight_Explicit_Xdl<DeviceBatchedGemmXdlUniversal<...> Key: value, ...>`:
    a batched GEMM over 1x1 stride-1 unpadded convolutions; an odd C vector (not fp32) means two-stage."""
    inner = line[line.index("<") + 1:line.rindex(">")]
    if ">" not in inner:
        raise LineError(f"expected {EXPLICIT_GEMM_OP}<DeviceBatchedGemm...<...> Key: value, ...>")
    fields: dict[str, str] = {}
    for item in _split_args(inner[inner.index(">") + 1:]):
        key, sep, value = item.partition(":")
        if not sep:
            raise LineError(f"{item!r} is not a `Key: value` field")
        fields[key.strip()] = value.strip()

    def get(key: str, parts: int) -> list[str]:
        if key not in fields:
            raise LineError(f"explicit-GEMM instance without {key}")
        values = fields[key].split("x", parts - 1)
        if len(values) != parts:
            raise LineError(f"{key}: {fields[key]!r} is not {parts} values joined by 'x'")
        return values

    a, b, seq = get("VmemReadVec", 3)
    if not (seq.startswith("Seq(") and seq.endswith(")")):
        raise LineError(f"VmemReadVec: {seq!r} is not Seq(...)")
    c_values = {_int(v) for v in seq[4:-1].split(",")}
    if len(c_values) != 1:
        raise LineError(f"VmemReadVec: C vectors {seq} differ; CK Builder takes one C vector")
    vec_c = c_values.pop()
    return XdlInstance(
        spec="Filter1x1Stride1Pad0", block=_int(get("BlkSize", 1)[0]),
        tile=_triple(get("BlkTile", 3)), k1=min(map(_int, get("K1", 2))),
        xdl=_pair(get("WaveTile", 2)), per_wave=_pair(get("WaveMap", 2)), vectors=(_int(a), _int(b), vec_c),
        scheduler=get("BlkGemmPipelineScheduler", 1)[0], version=get("BlkGemmPipelineVersion", 1)[0],
        explicit_gemm=True, two_stage=datatype != "fp32" and vec_c % 2 == 1)


def _native(args: list[str], variant: str, datatype: str) -> Knobs | None:
    """`GroupedConvolution<Direction>Kernel<...>`: CK Tile's own parameters, taken as written (NDim,
    layouts and types are not read). For bwd_weight, C vector 1 (not fp32) means two-stage unless
    stream-K is on."""
    n = {i: _int(args[i]) for i in NATIVE_INTS if i < len(args)}
    version = _lookup(NATIVE_PIPELINES, args[23], "CK Tile pipeline")
    knobs: Knobs = {
        **tile_knobs((n[12], n[13], n[14]), (n[15], n[16], n[17]), (n[18], n[19], n[20])),
        **_vector_knobs((n[6], n[7], n[8])), "pipeline": PIPELINES[version],
        "scheduler": _lookup(SCHEDULERS, args[24], "scheduler"), "epilogue": "cshuffle",
        "double_smem_buffer": bool(n[25]), "num_wave_groups": n[26],
        "specialization": _lookup(SPECIALIZATIONS, args[1], "specialization"), "num_groups_to_merge": n[9],
        "split_image": bool(n[10]), "explicit_gemm": bool(n[11])}
    if variant != "bwd_weight":
        return knobs
    if not n[31]:
        return {**knobs, **({"two_stage": True} if datatype != "fp32" and n[8] == 1 else {})}
    if datatype == "fp32" and version.startswith("ASYNC"):
        return None  # CK's convention (module docstring)
    return {**knobs, "streamk_enabled": True, "streamk_persistent": bool(n[33]),
            "streamk_reduction": _lookup(STREAMK_REDUCTIONS, n[32], "stream-K reduction")}


def _depthwise(line: str) -> Knobs:
    """`GroupedConvolutionForwardDepthwise<12 ints>` (or the bare list): CK's depthwise kernel fields."""
    body = line
    if "<" in line:
        name, args = _split_instance(line)
        if name != DEPTHWISE_KERNEL:
            raise LineError(f"unknown depthwise instance kind {name!r}; known: {DEPTHWISE_KERNEL}")
        body = ",".join(args)
    values = [_int(v.strip()) for v in body.split(",")]
    if len(values) != len(DEPTHWISE_FIELDS):
        raise LineError(f"a depthwise instance has {len(DEPTHWISE_FIELDS)} integers, not {len(values)}")
    return dict(zip(DEPTHWISE_FIELDS, values))


def _split_instance(line: str) -> tuple[str, list[str]]:
    """`Name<a, b, ...>` -> (Name, top-level arguments)."""
    if "<" not in line or not line.endswith(">"):
        raise LineError(f"expected an instance type string Name<...>, got {line[:60]!r}")
    start = line.index("<")
    return line[:start].strip(), _split_args(line[start + 1:-1])


def _split_args(text: str) -> list[str]:
    """Split on commas outside `(...)` and `<...>`, so `Seq(4,64,1)` stays one argument."""
    args: list[str] = []
    depth = start = 0
    for i, ch in enumerate(text):
        depth += (ch in "(<") - (ch in ")>")
        if ch == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    return [*args, text[start:].strip()]


def _expect(args: list[str], count: int, name: str) -> list[str]:
    if len(args) != count:
        raise LineError(f"{name} has {count} template arguments, this line {len(args)}")
    return args


def _int(text: str) -> int:
    try:
        return parse_int(text)
    except ValueError:
        raise LineError(f"{text!r} is not an integer") from None


def _pair(values: list[str]) -> tuple[int, int]:
    return (_int(values[0]), _int(values[1]))


def _triple(values: list[str]) -> Triple:
    return (_int(values[0]), _int(values[1]), _int(values[2]))


def _lookup(table: dict[Any, Any], word: Any, what: str) -> Any:
    if word not in table:
        raise LineError(f"unknown {what} {word!r}; known: {', '.join(map(str, table))}")
    return table[word]


def _vector_knobs(vectors: Triple) -> Knobs:
    return {f"vector_size_{x}": v for x, v in zip("abc", vectors)}
