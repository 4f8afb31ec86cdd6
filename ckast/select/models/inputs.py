"""The features ckast trains its models on: CK's feature set of the kind, then one feature per kernel
knob CK's set does not read (`knob_<name>`), then ckast's derived tiling features (`ckast_*`:
padding, blocks per CU, waves and their quantization, matrix-core use, depthwise tiling; see
`features.derived`).

CK's 97 conv features tell the 675 forward kernels of the fp16 2-D `full` library apart as only 92
vectors: vector widths, warp layouts, warp tiles, specializations, merged groups and every depthwise
knob are not in them, so no model on them can rank those kernels against each other (CK's report:
parsing more of the kernel name raised its top-1 from ~5-10% to 27.9%). ckast reads the knobs from
the configs instead. The set extends CK's, so models bind to it by name: CK's own models (a subset of
its names) load unchanged. The knob features are data like CK's (`expr` trees), so the C++ selector
is generated from them the same way.
"""

from __future__ import annotations

import functools

from ckast.config import knobs as K

from ckast.select.expr import Col, lookup
from ckast.select.features import Feature, FeatureSet, feature_set
from .derived import derived_features
from ckast.select.features.featureset import kernel

_ENCODINGS = {
    "pipeline": lambda kind: K.PIPELINES[kind],
    "scheduler": lambda kind: K.SCHEDULERS,
    "epilogue": lambda kind: K.EPILOGUES,
    "variant": lambda kind: K.VARIANTS[kind],
    "specialization": lambda kind: K.SPECIALIZATIONS,
    "lds_policy": lambda kind: K.LDS_POLICIES,
    "streamk_reduction": lambda kind: K.STREAMK_REDUCTIONS,
    "elementwise_op": lambda kind: K.ELEMENTWISE_OPS,
    "d_layout": lambda kind: ("r", "c"),
}
"""String knobs that tell kernels of one part apart, coded by their place in the knob table's values
(one code more for a kernel without the knob). Datatype, layout, arch and API profile are one value
per part (a model is for one of each) and stay out."""
_NUMERIC_TYPES = (int, bool)


@functools.cache
def model_features(kind: str) -> FeatureSet:
    """CK's feature set of `kind`, the knob features of that kind's kernels, then the derived ones."""
    base = feature_set(kind)
    extra = []
    for knob in K.KNOBS:
        if knob.kinds is not None and kind not in knob.kinds or knob.name == "ndim_spatial" and kind == "gemm":
            continue
        if knob.variants is not None and not set(knob.variants) & set(K.VARIANTS[kind]) or knob.name in base.names:
            continue  # not a knob of this kind, or one CK's set reads as it is
        name = f"knob_{knob.name}"
        if knob.type in _NUMERIC_TYPES:
            extra.append(Feature(name, kernel(knob.name)))
        elif knob.name in _ENCODINGS:
            encoding = {value: code for code, value in enumerate(_ENCODINGS[knob.name](kind))}
            extra.append(Feature(name, lookup(knob.name, encoding, Col(knob.name), len(encoding)).as_float(), encoding))
    return FeatureSet(kind, (*base.features, *extra, *derived_features(kind)))
