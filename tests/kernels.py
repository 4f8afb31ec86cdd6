"""Test helpers: configs from a case table, their lowered headers, whitespace-free text."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ckast.catalog import load_profile
from ckast.config import load_data
from ckast.nodes import to_source
from ckast.variants import lower_kernel


def config_of(cases: Mapping[str, dict], case: str | dict, profile: str, **extra):
    data = dict(cases[case] if isinstance(case, str) else case, ck_api=profile, **extra)
    return load_data(data)[0].config


def header_of(config) -> str:
    return to_source(lower_kernel(config, load_profile(config.ck_api)).header)


def squash(text: str) -> str:
    """`text` without whitespace (so checks do not depend on where the printer breaks lines)."""
    return re.sub(r"\s+", "", text)


def output_tree(root) -> dict[str, bytes]:
    """Path -> bytes of every file a run wrote under `root`."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
