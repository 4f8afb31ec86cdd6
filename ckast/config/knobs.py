"""The config language: every kernel knob, its type, default, allowed values and scope.

Knob names are CK's flat names. Defaults follow CK's dispatcher generators: GEMM takes the
128x128x64 / 2x2x1 / 32x32x16 compv3 cshuffle intrawave instance without padding; grouped conv
takes the generator's single-kernel defaults (compv4, all pads on, vectors 4/8/8, double LDS
buffer exactly when the pipeline needs it, 2-D), except compv3 for bwd_data (rule conv.backward_pipeline).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ckast.arch import ARCH_NAMES, PIPELINES as PIPELINE_SPECS
from ckast.arch.rules import (AQUANT, BLOCK_SCALE_VARIANTS, CONV_VARIANTS, DEPTHWISE, GEMM_VARIANTS, QUANT_VARIANTS,
                               STREAM_K, TENSOR_QUANT, TILED, UNARY_ELEMENTWISE_OPS, split_k_default)
from ckast.arch.specs import QUANT_DATATYPES, QUANT_PIPELINES, QUANT_SCHEDULES
from ckast import catalog
from ckast.catalog import DEFAULT_PROFILE, profile_names

GEMM, CONV = "gemm", "grouped_conv"
KINDS = (GEMM, CONV)
VARIANTS = {GEMM: GEMM_VARIANTS, CONV: (*CONV_VARIANTS, DEPTHWISE)}
DEFAULT_VARIANT = {GEMM: "standard", CONV: "forward"}
DATATYPES = {GEMM: ("fp16", "bf16", "fp32", "fp8", "bf8", "int8"), CONV: ("fp16", "bf16", "fp32")}
GEMM_LAYOUTS = ("rcr", "rrr", "crr", "ccr")
CONV_LAYOUTS = {1: "nwgc", 2: "nhwgc", 3: "ndhwgc"}
DEPTHWISE_LAYOUT = "ngchw"
PIPELINES = {
    GEMM: ("mem", "compv3", "compv4", "compv5", "preshufflev2"),
    CONV: (
        "basic_v1", "basic_v2", "compv1", "compv2", "mem", "compv3", "compv4", "compv5",
        "compv6", "comp_async", "basic_async_v1", "wavelet",
    ),
}
DOUBLE_BUFFER_PIPELINES = tuple(name for name, spec in PIPELINE_SPECS.items() if spec.lds == "double")
"""Pipelines whose LDS is always double-buffered; `double_smem_buffer` defaults to true for them."""
LDS_POLICIES = ("conv", "gemm")
"""LDS layout policy of a conv pipeline: CK's grouped-conv policy, or the pipeline's default GEMM policy."""

QUANT_TILES = {"abquant": (128, 128, 128, 1, 4, 1, 16, 16),
               **dict.fromkeys(("bquant", AQUANT, "rowcolquant", TENSOR_QUANT), (16, 64, 256, 1, 4, 1, 16, 16))}
"""Default tile, waves and warp tile M/N of the quant families: CK's default config factories
(gemm_<family>_utils at rocm-libraries ea607ecd); warp tile K is 128 on gfx950, else 32."""

SCHEDULERS = ("intrawave", "interwave", "default")
EPILOGUES = ("cshuffle", "default")
ELEMENTWISE_OPS = ("MultiDAdd", "MultiDMultiply", "AddScale", "PassThrough")
"""Ops CK's CShuffle epilogue can call as op(e, c, d0[, d1]) with one or two D tensors (checked by
compiling against the wheel's CK). The knob also takes the unary ops CK's preselected sets name
(`UNARY_ELEMENTWISE_OPS`), which rule multi_d.binary_op refuses. Not offered: Add (one D and few type
combinations), and the unary ops Scale, Silu, Sigmoid (no D argument at all)."""
SPECIALIZATIONS = ("default", "filter1x1_pad0", "filter1x1_stride1_pad0", "filter3x3")
STREAMK_REDUCTIONS = ("tree", "linear")
GEMM_STREAMK_REDUCTIONS = ("atomic", "linear", "tree")
"""The Stream-K GEMM's reduction strategies as CK's dispatcher spells them (its `reduction_strategy`, default
atomic); ck-2025.11 spells linear `Reduction` and has no tree (rule profile.streamk_reduction)."""

Config = Mapping[str, Any]


def _interned(name: str) -> str:
    """`sys.intern`, as a Python function: attrs reads a converter's signature, and a builtin's costs the
    first reader milliseconds (`inspect` parses its text signature with `tokenize`)."""
    return sys.intern(name)


@attrs.frozen
class Knob:
    """One config field.

    `default` is a value or a function of the already-resolved fields (for derived defaults);
    `choices` is a tuple or a function of the resolved fields; `minimum` bounds integers.
    `kinds`/`variants` restrict where the knob may appear (None: everywhere).
    """

    name: str = attrs.field(converter=_interned)
    """Interned: configs are built and read by knob name (keyword arguments, dict keys)."""
    type: type
    default: Any = None
    choices: tuple[Any, ...] | Callable[[Config], tuple[Any, ...]] | None = None
    minimum: int | None = None
    kinds: tuple[str, ...] | None = None
    variants: tuple[str, ...] | None = None
    inert: Callable[[Config], bool] | None = None
    """Where this holds the knob changes nothing in the kernel: a given value is checked and then
    replaced by the default, so configs that differ only there are one kernel (one name)."""

    def default_for(self, resolved: Config) -> Any:
        return self.default(resolved) if callable(self.default) else self.default

    def held(self, value: Any, resolved: Config) -> Any:
        """What a config holds for a given (valid) `value`: the default where the knob is inert."""
        return self.default_for(resolved) if self.inert is not None and self.inert(resolved) else value

    def choices_for(self, resolved: Config) -> tuple[Any, ...] | None:
        return self.choices(resolved) if callable(self.choices) else self.choices


def _streamk_off(c: Config) -> bool:
    return c["variant"] == "bwd_weight" and not c["streamk_enabled"]


def _streamk_gemm(c: Config) -> bool:
    return c["variant"] == STREAM_K


def _by_kind(table: Mapping[str, Any]) -> Callable[[Config], Any]:
    return lambda c: table[c["kind"]]


def _conv_layouts(c: Config) -> tuple[str, ...]:
    """The layout is fixed by the spatial rank (depthwise kernels are 2-D NGCHW only)."""
    return (DEPTHWISE_LAYOUT,) if c["variant"] == DEPTHWISE else (CONV_LAYOUTS[c["ndim_spatial"]],)


def _default_layout(c: Config) -> str:
    if c["kind"] == GEMM:
        return "rcr"
    return DEPTHWISE_LAYOUT if c["variant"] == DEPTHWISE else CONV_LAYOUTS[c["ndim_spatial"]]


def _default_lds_policy(c: Config) -> str:
    """CK's conv LDS policy wherever the profile has it and the pipeline takes it."""
    usable = catalog.load_profile(c["ck_api"]).feature("conv_lds_policy") and PIPELINE_SPECS[c["pipeline"]].conv_policy
    return "conv" if usable else "gemm"


def _quant(c: Config) -> bool:
    return c["variant"] in QUANT_VARIANTS


_QUANT_TILE_FIELDS = ("tile_m", "tile_n", "tile_k", "warp_m", "warp_n", "warp_k", "warp_tile_m", "warp_tile_n")


def _tile_default(field: str, plain: int) -> Callable[[Config], int]:
    """The tile knob's default: CK's factory tile for the block-scale families, else `plain`."""
    if field == "warp_tile_k":
        return lambda c: (128 if c["arch"] == "gfx950" else 32) if _quant(c) else plain
    index = _QUANT_TILE_FIELDS.index(field)
    return lambda c: QUANT_TILES[c["variant"]][index] if _quant(c) else plain


def _datatypes(c: Config) -> tuple[str, ...]:
    return QUANT_DATATYPES[c["variant"]] if _quant(c) else DATATYPES[c["kind"]]


def _pipelines(c: Config) -> tuple[str, ...]:
    return tuple(QUANT_PIPELINES[c["variant"]]) if _quant(c) else PIPELINES[c["kind"]]


def _default_pipeline(c: Config) -> str:
    if c["kind"] == CONV:
        return "compv3" if c["variant"] == "bwd_data" else "compv4"
    if _quant(c) and c["datatype"].startswith("mx_"):
        return "microscale"
    if c["variant"] == AQUANT:  # CK's generator: CompV3 with preshuffled scales, Mem without
        return "compv3" if c["preshuffle_aquant"] else "mem"
    return "preshufflev2" if c["variant"] == "preshuffle" else "compv3"


CAST_POLICIES = ("before_lds_write", "after_lds_read")
"""CK's CastPolicy (BeforeLDSWrite, AfterLDSRead): where a B of another type than A is cast to A's."""
TILE_PARTITIONERS = ("spatially_local", "1d")
"""CK's GemmSpatiallyLocalTilePartitioner (8 x 4 block groups) and GemmTile1DPartitioner."""


def _default_cast_policy(c: Config) -> str:
    """CK's gemm_bquant generator: cast before the LDS write when A and B share a type, where the profile's
    problem takes the policy (else CK's default, after the LDS read)."""
    from ckast.variants.gemm_quant import same_ab_types  # the one table of the quant types

    takes = catalog.load_profile(c["ck_api"]).template("GemmBQuantPipelineProblem").has_param("BCastPolicy_")
    return "before_lds_write" if takes and same_ab_types(c["variant"], c["datatype"]) else "after_lds_read"


def _default_persistent(c: Config) -> bool:
    """Off, except for a grouped quant kernel on a profile whose QuantGroupedGemmKernel is persistent only."""
    return bool(c.get("grouped")) and not catalog.load_profile(c["ck_api"]).feature("grouped_quant_non_persistent")


def _default_scheduler(c: Config) -> str:
    """Intrawave, except where the family's pipeline implements one schedule (AQuant's Mem: interwave)."""
    return QUANT_SCHEDULES.get(c["variant"], {}).get(c["pipeline"], "intrawave")


KNOBS: tuple[Knob, ...] = (
    Knob("kind", str, choices=KINDS),
    Knob("variant", str, default=_by_kind(DEFAULT_VARIANT), choices=_by_kind(VARIANTS)),
    Knob("datatype", str, default=lambda c: "fp8" if _quant(c) else "fp16", choices=_datatypes),
    Knob("ndim_spatial", int, default=2, kinds=(CONV,),
         choices=lambda c: (2,) if c["variant"] == DEPTHWISE else tuple(CONV_LAYOUTS)),
    Knob("layout", str, default=_default_layout,
         choices=lambda c: GEMM_LAYOUTS if c["kind"] == GEMM else _conv_layouts(c)),
    Knob("arch", str, default="gfx942", choices=ARCH_NAMES),
    Knob("ck_api", str, default=DEFAULT_PROFILE, choices=lambda c: profile_names()),
    # Tile geometry is checked by the arch rules (ckast.arch.rules: tile.positive, tile.divisible, ...).
    *(Knob(f"tile_{d}", int, default=_tile_default(f"tile_{d}", 128 if d != "k" else 64), variants=TILED)
      for d in "mnk"),
    *(Knob(f"warp_{d}", int, default=_tile_default(f"warp_{d}", 2 if d != "k" else 1), variants=TILED) for d in "mnk"),
    *(Knob(f"warp_tile_{d}", int, default=_tile_default(f"warp_tile_{d}", 32 if d != "k" else 16), variants=TILED)
      for d in "mnk"),
    # AQuant's scales preshuffled (CK's `preshuffle_aquant`): it chooses the pipeline's default.
    Knob("preshuffle_aquant", bool, default=False, variants=(AQUANT,)),
    Knob("pipeline", str, default=_default_pipeline, choices=_pipelines, variants=TILED),
    Knob("scheduler", str, default=_default_scheduler, choices=SCHEDULERS, variants=TILED),
    # CK's conv kernels are built around the CShuffle epilogue (CK's generator names "default" but emits CShuffle);
    # so are multi-D kernels, which CK's GEMM generator lists with either epilogue (rule multi_d.epilogue).
    Knob("epilogue", str, default="cshuffle", variants=TILED,
         choices=lambda c: ("cshuffle",) if c["variant"] in CONV_VARIANTS else EPILOGUES),
    # Conv kernels always pad (CK's implicit-GEMM traits fix kPadM/N/K = true and the kernels assert it).
    # CK's bquant and tensor-quant generators pad K by default (its other GEMM generators pad nothing by default).
    *(Knob(f"pad_{d}", bool, default=(lambda c: c["variant"] in ("bquant", TENSOR_QUANT)) if d == "k" else False,
           variants=GEMM_VARIANTS) for d in "mnk"),
    # CK Tile's multi-group quantized GEMM (QuantGroupedGemmKernel): the family's kernel run over a vector of
    # groups in one launch; persistent by default where the profile's kernel is persistent only.
    Knob("grouped", bool, default=False, variants=QUANT_VARIANTS),
    Knob("persistent", bool, default=_default_persistent, kinds=(GEMM,)),
    Knob("split_k", bool, default=lambda c: split_k_default(c["kind"], c["variant"], c["epilogue"], c["datatype"]),
         kinds=(GEMM,)),
    Knob("elementwise_op", str, default="MultiDAdd", choices=(*ELEMENTWISE_OPS, *UNARY_ELEMENTWISE_OPS),
         variants=("multi_d",)),
    Knob("num_d_tensors", int, default=1, choices=(1, 2), variants=("multi_d",)),
    Knob("d_layout", str, default="r", choices=("r", "c"), variants=("multi_d",)),
    # CK's generator defaults (4, 8, 8); bwd_weight loads A (dOut) in 8s, which its default tile needs
    # for the LDS transpose (rule conv.transpose_vector).
    Knob("vector_size_a", int, default=lambda c: 8 if c["variant"] == "bwd_weight" else 4, minimum=1,
         variants=CONV_VARIANTS),
    *(Knob(f"vector_size_{x}", int, default=8, minimum=1, variants=CONV_VARIANTS) for x in "bc"),
    Knob("double_smem_buffer", bool, default=lambda c: c["pipeline"] in DOUBLE_BUFFER_PIPELINES,
         variants=TILED),
    Knob("lds_policy", str, default=_default_lds_policy, choices=LDS_POLICIES, variants=CONV_VARIANTS),
    Knob("num_wave_groups", int, default=1, minimum=1, variants=TILED),
    Knob("specialization", str, default="default", choices=SPECIALIZATIONS, variants=CONV_VARIANTS),
    Knob("num_groups_to_merge", int, default=1, minimum=1, variants=CONV_VARIANTS),
    Knob("split_image", bool, default=False, variants=CONV_VARIANTS),
    Knob("explicit_gemm", bool, default=False, variants=CONV_VARIANTS),
    Knob("two_stage", bool, default=False, variants=("bwd_weight",)),
    Knob("streamk_enabled", bool, default=False, variants=("bwd_weight",)),
    Knob("streamk_reduction", str, default=lambda c: "atomic" if _streamk_gemm(c) else "tree",
         choices=lambda c: GEMM_STREAMK_REDUCTIONS if _streamk_gemm(c) else STREAMK_REDUCTIONS,
         variants=("bwd_weight", STREAM_K), inert=_streamk_off),
    Knob("streamk_persistent", bool, default=False, variants=("bwd_weight",), inert=_streamk_off),
    # Quantized GEMM (CK's config keys): the scale group sizes (A scales are 1 x aquant_group_k per row,
    # abquant's `aquant_group_k`, aquant's quant_groups[].quant_group_k; B scales bquant_group_n x
    # bquant_group_k), preshuffled B / B scales, C transposed in the warp GEMM (abquant's preshuffled-B
    # configs), and CK's kBlockPerCu.
    Knob("bquant_group_n", int, default=1, minimum=1, variants=BLOCK_SCALE_VARIANTS),
    Knob("bquant_group_k", int, default=128, minimum=1, variants=BLOCK_SCALE_VARIANTS),
    Knob("aquant_group_k", int, default=128, minimum=1, variants=("abquant", AQUANT)),
    Knob("preshuffle_b", bool, default=lambda c: c["pipeline"] in ("preshuffleb", "eightwaves"),
         variants=BLOCK_SCALE_VARIANTS),
    Knob("preshuffle_bquant", bool, default=False, variants=BLOCK_SCALE_VARIANTS),
    Knob("transpose_c", bool, default=lambda c: c["preshuffle_b"], variants=("abquant",)),
    # How CK's two generators of a quant family form the same QuantGemmKernel (unified_gemm_<family> and
    # unified_grouped_gemm_<family>): the B scales' layout (CK's BQLayout; the grouped bquant generator's are
    # row-major), where B is cast to A's type (CK's BCastPolicy; the grouped generator keeps CK's default), the
    # tile partitioner (CK's GemmSpatiallyLocalTilePartitioner or GemmTile1DPartitioner) and the N-permuted
    # warp tiles (CK's TiledMMAPermuteN: stored through the PermuteN epilogue where the geometry allows it).
    Knob("bq_layout", str, default="c", choices=("c", "r"), variants=("bquant",)),
    Knob("b_cast_policy", str, default=_default_cast_policy, choices=CAST_POLICIES, variants=("bquant",)),
    Knob("tile_partitioner", str, default="spatially_local", choices=TILE_PARTITIONERS, variants=("abquant", AQUANT)),
    Knob("permute_n", bool, default=lambda c: c["variant"] == "bquant" and c["preshuffle_b"],
         variants=(*BLOCK_SCALE_VARIANTS, AQUANT)),
    Knob("k_block_per_cu", int, default=1, minimum=1, variants=QUANT_VARIANTS),
    *(Knob(name, int, default=default, minimum=minimum, variants=(DEPTHWISE,))
      for name, default, minimum in (
          ("tile_h", 8, 1), ("tile_w", 8, 1), ("filt", 3, 1), ("str_h", 1, 1), ("str_w", 1, 1),
          ("pad_h", 1, 0), ("pad_w", 1, 0), ("nbatch", 1, 1), ("sub_h", 1, 1), ("sub_w", 1, 1),
          ("in_vec", 1, 1), ("out_vec", 1, 1),
      )),
)

KNOB_NAMES: tuple[str, ...] = tuple(k.name for k in KNOBS)
