"""Validation is memoized and has a fast path; these tests hold it to what the plain validation said.

- Every outcome of a sample of libraries and of mutated kernel objects (bad types, values below the
  minimum, knobs out of scope, unknown keys, a missing kind) matches a digest pinned with the
  validation before the speed-up: same accepted/refused sets, same issue lines in the same order,
  same KernelConfig values. If you change a rule, a knob or a rule set on purpose, re-pin with
  `python tests/test_validation_speed_equivalence.py`.
- The memoized `check_config` and `evaluate` equal a plain run of every covering rule's check.
- Each rule reads only the config fields it declares (its memo key).
"""

from __future__ import annotations

import functools
import hashlib
import random
from pathlib import Path
from typing import Any

import attrs
import pytest

from ckast.arch import RULES, arch_spec, check_config
from ckast.arch.rules import evaluate
from ckast.config import KNOB_NAMES, KNOBS, resolve_kernel
from ckast.library import Selection, build

CONFIGS = Path(__file__).parent / "data" / "builder" / "configs"

SELECTIONS = {
    "full fp16 2d": Selection("full", "gfx942", "ck-2025.11", ("fp16",), (2,)),
    "full bf16 3d wmma": Selection("full", "gfx1100", "ck-2026.06", ("bf16",), (3,)),
    "default": Selection("default", "gfx90a", "ck-2026.06"),
    "gemm-default fp16": Selection("gemm-default", "gfx942", "ck-2026.06", ("fp16",)),
    "gemm-default wmma": Selection("gemm-default", "gfx1201", "ck-2025.11", ("fp8", "fp32")),
    "fp16_rcr_all": Selection("fp16_rcr_all", "gfx950", "ck-2025.11"),
    "mixed_precision": Selection("mixed_precision", "gfx942", "ck-2026.06"),
    "builder tests": Selection("tests", "gfx942", "ck-2025.11", builder_conf=CONFIGS),
}
PINNED = {
    "full fp16 2d": (3207, "ebb31aea29d054ed964c1d9055be5a139a3d85ae01453aa7f2a48f72a59de985"),
    "full bf16 3d wmma": (2116, "fd19e696c3665e7031507e94c7aec78d2d41c9fa8385ec037cf6cac87406152d"),
    "default": (456, "dd67279b4850fcf30ac6fec018f67d3db849e5171d72528f9473cbdae311483e"),
    "gemm-default fp16": (14364, "083819243a9102702e016496371e13f56dfc0a3ae3de004454dc05634b7132aa"),
    "gemm-default wmma": (5072, "2e6c4720f49bd2f12936ef4c8a530eefd9cf82883e375b60fd4eead6ec43d1a3"),
    "fp16_rcr_all": (27, "4ca5e37c42151049b6fa7a39a90ac2b331524b2af32c193307a8581d7f93e5aa"),
    "mixed_precision": (2, "f9ac1a28b7876a828f7633090acb1a0209fc0141051d13513e6bcb607f5e2f61"),
    "builder tests": (30, "1dc28e70c368c53535234cc509821a98517d77bba3ca637fc9965b82c4e0c82d"),
}
"""Selection -> (entries, digest of every entry), from the validation before it was memoized (re-pinned for the
block-scale knobs and for `preshuffle_aquant`, and for the quant families' `grouped` knob and its rules: see
PINNED_MUTATIONS)."""
PINNED_MUTATIONS = (6000, "62a2d25d777dda3af794fa208971fbb98b43ef016cdd2fe31699e9695c014460")
"""(kernel objects, digest of every `resolve_kernel` result and its rules' outcomes). Changed twice on
purpose: inert knobs (`Knob.inert`, stream-K's reduction and persistence without stream-K) resolve to
their defaults (with `inert` cleared the digest is the earlier 4cd11d37...6fc); CK's spellings are read
(`ck_spellings`: 269 of the objects hold one, mostly conv pads; with `translate` returning None the digest
is the earlier b3ce8f12...c667). Re-pinned (with 'full fp16 2d' and 'builder tests') when the catalog's
notes lost their internal drift tags: with the tagged notes the digests are the earlier 7cf1e143...0cce,
b02a5aca...9ce3 and 179f071f...f068. Re-pinned when GEMM gained the batched and stream_k variants: the
variant knob's choices (which the mutations draw from) and streamk_reduction's scope grew, and their rules
are new; the library digests did not change (earlier: 5e1023b0...7922). Re-pinned with every library digest
when GEMM gained the block-scale variants bquant and abquant: each config holds their seven knobs (None
outside them); with those fields left out every library digest is the earlier one (checked), and the
mutations draw the new variants (earlier: 78731a1b...e5e3). Re-pinned with every library digest when the
quant variants aquant, rowcolquant and tensor_quant joined them: each config holds `preshuffle_aquant` (None
outside aquant); with that field left out every library digest is the earlier one (checked), and the mutations
draw the new variants and knobs (earlier: 10900a60...a20b). Re-pinned with every library digest when the quant
families gained the knobs of CK's grouped quant generators' form (bq_layout, b_cast_policy, tile_partitioner,
permute_n; None outside their families) and the rules quant.permute_n, profile.cast_policy and profile.bq_layout: the entry counts
are unchanged, and the mutations draw the new knobs (earlier: ada70d3a...e01)."""


def _config(config: Any) -> str | None:
    return None if config is None else repr(attrs.astuple(config))


def library_digest(selection: Selection) -> tuple[int, str]:
    h = hashlib.sha256()
    entries = build(selection).entries
    for e in entries:
        issues = [(i.path, i.message, i.rule) for i in e.issues]
        h.update(repr((e.candidate.origin, e.status, _config(e.config), issues, e.merged_into)).encode() + b"\n")
    return len(entries), h.hexdigest()


TRICKY: list[tuple[Any, dict[str, Any] | None]] = [
    ({"kind": "grouped_conv", "ndim_spatial": 7, "layout": 5}, None),  # layout: wrong type, choices need ndim
    ({"kind": "grouped_conv", "ndim_spatial": 7, "layout": "nhwgc"}, None),  # choices need ndim: left out
    ({"kind": "gemm", "pad_m": 1, "tile_m": True, "persistent": 0}, None),  # int for bool and bool for int
    ({"kind": "gemm", "tile_m": 0, "warp_m": -1, "num_wave_groups": 0}, None),
    ({"kind": "gemm", "variant": "forward", "tile_m": "x"}, None),  # bad variant ends the check
    ({"kind": "conv", "variant": 3, "tile_mm": 1}, None),
    ({"variant": "standard", "Kind": "gemm"}, {"kind": "gemm"}),  # kind is required even with a default
    ({"kind": "gemm", "vector_size_a": 4, "filt": 3, "two_stage": True}, None),  # out of scope
    ({"kind": "grouped_conv", "variant": "forward_depthwise", "tile_m": 64, "ndim_spatial": 3},
     {"ck_api": "ck-2026.06"}),
    ({"kind": "gemm", "ck_api": "ck-1999"}, None),
    ({"kind": "gemm", "arch": "gfx1100", "datatype": "fp32", "split_k": True, "epilogue": "default"}, None),
    ({"kind": "grouped_conv", "variant": "bwd_weight", "pipeline": "compv4", "double_smem_buffer": False,
      "lds_policy": "conv", "streamk_enabled": True, "two_stage": True}, {"ck_api": "ck-2026.06", "arch": "gfx1201"}),
    ([{"kind": "gemm"}], None),
]


def mutations(n: int, seed: int = 2026) -> list[tuple[Any, str, dict[str, Any] | None]]:
    """`n` kernel objects: candidates of two rule sets with 0-3 knobs changed (a valid or invalid value, or
    removed), sometimes an unknown key or no kind, then the TRICKY ones; each with a path and run defaults."""
    from ckast.library import conv_full, gemm_sets

    rng = random.Random(seed)
    bases = [dict(c.knobs) for c in conv_full.candidates(Selection("full", "gfx942", "ck-2026.06", ("fp16",)))[::5]]
    bases += [dict(c.knobs) for c in gemm_sets.default_candidates(Selection("gemm-default", "gfx942", "ck-2025.11",
                                                                            ("fp16", "int8")))[::41]]
    ints = [-1, 0, 1, 2, 3, 4, 5, 8, 16, 20, 32, 48, 64, 96, 128, 256, 512]
    words = ["gemm", "grouped_conv", "standard", "preshuffle", "multi_d", "forward", "bwd_data", "bwd_weight",
             "forward_depthwise", "fp16", "bf16", "fp32", "fp8", "int8", "pk_fp4", "rcr", "crr", "nhwgc", "ngchw",
             "gfx942", "gfx950", "gfx1100", "gfx999", "ck-2025.11", "ck-2026.06", "mem", "compv3", "compv4", "compv6",
             "preshufflev2", "basic_v1", "wavelet", "intrawave", "interwave", "default", "cshuffle", "Relu", "conv",
             "c", "tree", "filter3x3", "bogus"]
    odd = [True, False, None, 1.5, "8", [1], {"a": 1}]
    knobs = {k.name: k for k in KNOBS}
    runs = [None, {}, {"ck_api": "ck-2026.06"}, {"arch": "gfx950"}, {"arch": "gfx1100", "ck_api": "ck-2025.11"}]
    out: list[tuple[Any, str, dict[str, Any] | None]] = []
    for i in range(n - len(TRICKY)):
        obj = dict(rng.choice(bases))
        for _ in range(rng.choice([0, 1, 1, 2, 2, 3])):
            name, r = rng.choice(KNOB_NAMES), rng.random()
            knob = knobs[name]
            if r < 0.05:
                obj[name] = rng.choice(odd)
            elif r < 0.1:
                obj.pop(name, None)
            elif knob.type is bool:
                obj[name] = rng.choice([True, False])
            elif knob.type is int:
                obj[name] = rng.choice(ints)
            else:
                fixed = knob.choices if isinstance(knob.choices, tuple) else None
                obj[name] = rng.choice(fixed) if fixed and r < 0.6 else rng.choice(words)
        if rng.random() < 0.05:
            obj[rng.choice(["tile_mm", "warps_m", "pipelin", "foo"])] = 1
        if rng.random() < 0.01:
            obj.pop("kind", None)
        out.append((obj, f"kernels[{i}]" if i % 3 else "", rng.choice(runs)))
    return out + [(obj, "k", run) for obj, run in TRICKY]


def mutations_digest(n: int) -> tuple[int, str]:
    h = hashlib.sha256()
    for obj, path, run in mutations(n):
        r = resolve_kernel(obj, path, run)
        issues = [(i.path, i.message, i.rule) for i in r.issues]
        outcomes = [] if r.config is None else [(o.rule.id, o.status, o.findings) for o in evaluate(r.config)]
        h.update(repr((_config(r.config), issues, outcomes)).encode() + b"\n")
    return n, h.hexdigest()


@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_library_outcomes_match_the_plain_validation(name):
    assert library_digest(SELECTIONS[name]) == PINNED[name]


def test_kernel_object_outcomes_match_the_plain_validation():
    assert mutations_digest(PINNED_MUTATIONS[0]) == PINNED_MUTATIONS


@functools.cache
def _configs() -> tuple[Any, ...]:
    """Resolved configs (accepted or refused by a rule) of the mutations and of two libraries."""
    resolved = [resolve_kernel(obj, path, run).config for obj, path, run in mutations(3000, seed=7)]
    for name in ("full bf16 3d wmma", "gemm-default wmma"):
        resolved += [e.config for e in build(SELECTIONS[name]).entries]
    return tuple(c for c in resolved if c is not None)


def _plain_findings(config: Any) -> dict[str, tuple | None]:
    """Rule id -> findings of every rule covering `config`, run without memo (None: skipped)."""
    arch, failed, out = arch_spec(config.arch), set(), {}
    for r in RULES:
        if not r.covers(config):
            continue
        if failed.intersection(r.needs):
            out[r.id] = None
            continue
        out[r.id] = tuple(r.check(config, arch))
        if out[r.id]:
            failed.add(r.id)
    return out


def test_memoized_rules_equal_plain_runs():
    for config in _configs()[::5]:
        plain = _plain_findings(config)
        assert [(v.rule.id, v.field, v.detail) for v in check_config(config)] == [
            (rule, field, detail) for rule, found in plain.items() for field, detail in found or ()]
        assert [(o.rule.id, o.status, o.findings) for o in evaluate(config) if o.status != "n/a"] == [
            (rule, "skipped" if found is None else "fail" if found else "pass", found or ())
            for rule, found in plain.items()]


class _Recorder:
    """Passes attribute reads through to `target` and records their names (or `as_name` for all)."""

    def __init__(self, target: Any, seen: set[str], as_name: str | None = None) -> None:
        self._target, self._seen, self._as = target, seen, as_name

    def __getattr__(self, name: str) -> Any:
        self._seen.add(self._as or name)
        return getattr(self._target, name)


def test_each_rule_reads_only_the_fields_it_declares():
    undeclared: dict[str, set[str]] = {}
    for config in _configs()[::4]:
        arch = arch_spec(config.arch)
        for r in RULES:
            if r.covers(config):
                seen: set[str] = set()
                try:
                    list(r.check(_Recorder(config, seen), _Recorder(arch, seen, "arch")))
                except (ArithmeticError, KeyError):  # a rule it needs failed: its check is not meaningful
                    pass
                if seen - set(r.reads):
                    undeclared.setdefault(r.id, set()).update(seen - set(r.reads))
    assert not undeclared


if __name__ == "__main__":  # print the digests to pin
    for name in SELECTIONS:
        print(f"    {name!r}: {library_digest(SELECTIONS[name])},")
    print(f"PINNED_MUTATIONS = {mutations_digest(PINNED_MUTATIONS[0])}")
