"""The one identity function: kernel name, registry key and file stem all come from here.

A name is a readable prefix of the main knobs plus a short hash of *every* knob that applies to
the kernel (the canonical JSON of the config), so two different configs never share a name and
identical configs deduplicate. Names are never parsed back into configs.
"""

from __future__ import annotations

import hashlib
import json

from ckast.config import as_dict

MAX_NAME = 200
HASH_LEN = 10
NAMESPACE = "ckast"
"""Every kernel lives in `ckast::<name>`, in a struct `LAUNCHER` with a static `launch`."""
LAUNCHER = "Launcher"


def config_digest(config: object) -> str:
    """Stable hash of all applicable knobs (key order fixed, independent of the hash seed)."""
    canonical = json.dumps(as_dict(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:HASH_LEN]


def kernel_name(config) -> str:
    """`gemm_fp16_rcr_standard_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_<hash>`."""
    c = config
    parts = [c.kind, c.datatype, c.layout, c.variant]
    if c.tile_m is not None:
        parts += [
            c.pipeline, c.epilogue, c.scheduler,
            f"{c.tile_m}x{c.tile_n}x{c.tile_k}",
            f"{c.warp_m}x{c.warp_n}x{c.warp_k}",
            f"{c.warp_tile_m}x{c.warp_tile_n}x{c.warp_tile_k}",
        ]
    prefix = "_".join(str(p) for p in parts)[: MAX_NAME - HASH_LEN - 1]
    return f"{prefix}_{config_digest(config)}"


def entry_points(name: str) -> tuple[str, ...]:
    """Qualified names of the launcher functions of kernel `name` (what a compile check ODR-uses)."""
    return (f"{NAMESPACE}::{name}::{LAUNCHER}::launch",)
