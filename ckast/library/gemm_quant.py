"""`gemm-quant`: CK's default quantized GEMM configs, every config factory of its dispatcher per family, datatype
and arch (`data/gemm_quant.toml`: the golden manifest's codegen configs as they are, with the CK commit).

Each case of the set's arch is expanded as CK's generator expands it (variant keys x layouts x tiles x scale
groups) by ckast's reader of that family's configs (`READERS`), in the data's order; a kernel two cases propose
is proposed once (from the first). A factory module no reader reads (a family ckast does not build yet; the
grouped factories, whose configs spell their groups otherwise and configure the same single-problem kernels)
proposes nothing; `families` says which are read. The data's `extend` entries are
ckast's additions (each says why): a case of their modules is proposed again with their config keys set, its
origin marked `+extend<n>` (the n-th entry). Its `grouped` table is another: each kernel of its families is
proposed again as CK Tile's multi-group kernel (its knobs set), its origin marked `+grouped`.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from ckast.config import ck_quant_configs

from .conv_common import data
from .selection import Candidate, Selection, SelectionError

NAME = "gemm-quant"


READERS: tuple[ModuleType, ...] = (ck_quant_configs,)
"""ckast's readers of CK's quant codegen configs: each names the config-factory modules it reads (`MODULES`,
module -> ckast variant) and reads a manifest of cases (`expand`); a family joins the set by its reader."""


def reader(module: str) -> ModuleType | None:
    """The reader of CK's config-factory `module`, or None when ckast reads no configs of it."""
    return next((r for r in READERS if module in r.MODULES), None)


def family(module: str) -> str | None:
    """The ckast variant of CK's config-factory `module`, or None when ckast reads no configs of it."""
    r = reader(module)
    return None if r is None else r.MODULES[module]


def families() -> tuple[str, ...]:
    """The families of the data that the set proposes, in the data's order."""
    return tuple(dict.fromkeys(f for c in data("gemm_quant")["cases"] if (f := family(c["module"]))))


def candidates(selection: Selection) -> list[Candidate]:
    """The kernels of every case for the selection's arch, as its variants and datatypes filter them."""
    known = families()
    for variant in selection.variants:
        if variant not in known:
            raise SelectionError(f"variant {variant!r} is not in {NAME}; it has: {', '.join(known)}")
    out: list[Candidate] = []
    seen: set[tuple[tuple[str, Any], ...]] = set()
    grouped = data("gemm_quant")["grouped"]
    for case in data("gemm_quant")["cases"]:
        fam = family(case["module"])
        if fam is None or case["arch"] != selection.arch or not selection.wants(variant=fam):
            continue
        for origin, config in _configs(case):
            one = {"cases": {case["id"]: {"module": case["module"], "arch": case["arch"], "config": config}}}
            for i, (_, knobs) in enumerate(reader(case["module"]).expand(one)):
                key = tuple(sorted(knobs.items()))
                if key in seen or not selection.wants(datatype=knobs["datatype"]):
                    continue
                seen.add(key)
                out.append(Candidate(f"{origin}[{i}]", knobs))
                if fam in grouped["families"]:
                    out.append(Candidate(f"{origin}[{i}]+grouped", {**knobs, **grouped["knobs"]}))
    return out


def _configs(case: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(origin, CK codegen config) of a case: its own, then each `extend` entry's version of every config before
    it that the entry applies to."""
    out = [(f"{NAME}/{case['id']}", case["config"])]
    for j, extra in enumerate(data("gemm_quant").get("extend", []), 1):
        if case["module"] not in extra["modules"]:
            continue
        for origin, config in list(out):
            keys = [k for k in config["variant_keys"] if k in extra.get("variant_keys", config["variant_keys"])]
            if keys:
                out.append((f"{origin}+extend{j}", {**config, "variant_keys": keys, **extra["config"]}))
    return out
