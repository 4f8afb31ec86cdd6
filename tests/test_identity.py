"""Identity over every library: each distinct config has its own kernel name, files and CK registry key
(`KernelKey` / `GroupedConvKernelKey`), and no two kernels emit the same code up to their name (configs
that differ only in knobs the code does not read are merged, not duplicated).

A library is a rule set on an arch under a CK API profile, as a whole and per single datatype (x rank
for conv); `profiler` and `tests` read tests/data/builder/configs (its `tests` files serve as the
`profiler` subset too). Per arch the checks also span libraries: one config per name, and per profile
one name per emitted code. The code is compared by a digest of the kernel's files with its name masked,
rendered once per name through the template renderer (`ckast.render`). Every library on every arch is
the slow test (about 7.5 min of CPU); the default run checks the small rule sets on two archs, and flips
one knob at a time of sample kernels (configs a rule set does not propose)."""

from __future__ import annotations

import functools
import hashlib
import itertools
import shutil
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

import attrs
import pytest

from ckast.arch.specs import ARCH_NAMES
from ckast.catalog import load_profile, profile_names
from ckast.config import as_dict
from ckast.config.knobs import CONV, DATATYPES, KNOBS
from ckast.emit import EmittedKernel, run_files
from ckast.library import RULE_SETS, Candidate, Entry, Library, Selection, SelectionError, build, rule_set_names
from ckast.library.build import ACCEPTED, KEY_RULE, MERGED, Validator, _sort_out
from ckast.library.conv_common import NDIMS
from ckast.library.gemm_sets import PRESELECTED
from ckast.output import CMAKE_FILE, MANIFEST
from ckast.render import shared
from ckast.variants import registry_key

from .conftest import ROOT

BUILDER_CONFIGS = ROOT / "tests" / "data" / "builder" / "configs"
MASK = "@KERNEL@"
WHOLE_ONLY = ("full", "gemm-default")
"""Rule sets checked as a whole only: they propose each (variant, rank, datatype) on its own (conv_full
and gemm_sets loop over them, gemm_full too; tiles depend on direction, rank, datatype and arch only), and names, keys
and paths hold all three, so a single-datatype (x rank) library is the whole library's kernels of that
datatype (and rank). Building them again would add about 5 min to the slow run (gemm-default: 151,620
candidates, 350,928 on gfx908, per arch and profile) and check nothing new."""

SAMPLED = {"gemm-full": ("fp16",)}
"""Rule sets checked on one datatype, on the archs they are for only (`FULL_GEMM_ARCHS`): gemm-full is CK
tile_engine's space, the same on every arch, of 48,128 kernels on gfx942 with ck-2025.11 and 60,160 with
ck-2026.06 (standard and Stream-K, four datatypes), each rendered for its code digest; its datatypes differ only
in their warp tiles, and names, keys and paths hold the datatype. The whole set takes 34 s per arch (both
profiles) where fp16 takes 10 s: on every arch, about 5 minutes more of the slow run for nothing new."""
FULL_GEMM_ARCHS = ("gfx942", "gfx950")

@attrs.define
class Seen:
    """What the libraries of one arch showed so far: per kernel name its config and (code digest, file
    paths); per (profile, code digest) the kernel name."""

    configs: dict[str, object] = attrs.Factory(dict)
    code: dict[str, tuple[bytes, tuple[str, ...]]] = attrs.Factory(dict)
    owners: dict[tuple[str, bytes], str] = attrs.Factory(dict)


@pytest.fixture(scope="module")
def builder_conf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test .conf tree with every `tests` directory also present as `profiler`."""
    root = tmp_path_factory.mktemp("builder")
    shutil.copytree(BUILDER_CONFIGS, root, dirs_exist_ok=True)
    for tests in root.glob("*/tests"):
        shutil.copytree(tests, tests.with_name("profiler"))
    return root


def selections(rule_set: str, arch: str, profile: str, builder_conf: Path) -> list[Selection]:
    """The rule set as a whole, then per single datatype (x rank for conv)."""
    kind = RULE_SETS[rule_set].kind
    whole = Selection(rule_set, arch, profile, builder_conf=builder_conf if rule_set in ("profiler", "tests") else None)
    if rule_set in SAMPLED:
        return [attrs.evolve(whole, datatypes=SAMPLED[rule_set])] if arch in FULL_GEMM_ARCHS else []
    if rule_set in WHOLE_ONLY:
        return [whole]
    axes = itertools.product(DATATYPES[kind], NDIMS if kind == CONV else (None,))
    return [whole, *(attrs.evolve(whole, datatypes=(d,), ndims=(n,) if n else ()) for d, n in axes)]


def libraries(rule_sets: Iterable[str], arch: str, builder_conf: Path) -> Iterator[Library]:
    """Every library of the rule sets on `arch`, both profiles (a builder selection without a .conf file
    of its own is skipped, as CK's builder skips it)."""
    for rule_set, profile in itertools.product(rule_sets, profile_names()):
        for selection in selections(rule_set, arch, profile, builder_conf):
            try:
                yield build(selection)
            except SelectionError as exc:
                if selection.builder_conf is None or "no CK Builder .conf file" not in str(exc):
                    raise


def checked(rule_sets: Iterable[str], arch: str, builder_conf: Path) -> int:
    """`check` every library of the rule sets on `arch`; the number of kernels checked. One library is
    alive at a time (`map` holds no reference to the previous one while the next one builds)."""
    seen = Seen()
    return sum(map(functools.partial(check, seen=seen), libraries(rule_sets, arch, builder_conf)))


def code(config, profile) -> tuple[str, bytes, tuple[str, ...]]:
    """The kernel's name, a digest of its files with the name masked, and its file paths."""
    text = shared().render(config, profile)
    digest = hashlib.blake2b(digest_size=16)
    for path, source in text.files:
        digest.update(f"{path}\0{source}\0".replace(text.name, MASK).encode())
    return text.name, digest.digest(), tuple(path for path, _ in text.files)


def repeated(values: Iterable) -> list:
    return [v for v, count in Counter(values).items() if count > 1]


def check(library: Library, seen: Seen) -> int:
    """Assert every identity property of one library (and against what `seen` holds); its kernel count."""
    s = library.selection
    where = f"{s.rule_set} {s.arch} {s.ck_api} datatypes={s.datatypes} ndims={s.ndims}"
    accepted = library.accepted
    by_name = {e.name: e for e in accepted}
    assert len(by_name) == len(accepted), f"{where}: names twice: {repeated(e.name for e in accepted)[:5]}"
    for e in library.with_status(MERGED):
        assert e.config == by_name[e.merged_into].config, f"{where}: {e.candidate.origin} merged into another config"
    for name, e in by_name.items():
        assert seen.configs.setdefault(name, e.config) == e.config, f"{where}: {name} names two configs"
    keys = Counter(registry_key(e.config) for e in accepted)
    clashes = [[e.name for e in accepted if registry_key(e.config) == key] for key, n in keys.items() if n > 1]
    assert not clashes, f"{where}: {len(clashes)} registry keys held by several kernels, e.g. {clashes[:3]}"

    profile = load_profile(s.ck_api)
    paths: list[str] = [MANIFEST, CMAKE_FILE]
    for name, e in by_name.items():
        if name not in seen.code:
            rendered, digest, files = code(e.config, profile)
            assert rendered == name, f"{where}: {e.candidate.origin} renders as {rendered}, is named {name}"
            seen.code[name] = (digest, files)
            owner = seen.owners.setdefault((s.ck_api, digest), name)
            assert owner == name, (f"{where}: {owner} and {name} emit the same code: "
                                   f"{as_dict(seen.configs[owner])} vs {as_dict(e.config)}")
        paths += seen.code[name][1]
    emitted = [EmittedKernel(name, seen.code[name][1][0], (), as_dict(by_name[name].config), s.arch, ())
               for name in sorted(by_name)]
    paths += [path for path, _ in run_files(emitted)]
    assert not (twice := repeated(p.casefold() for p in paths)), f"{where}: paths twice: {twice[:5]}"
    return len(accepted)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ARCH_NAMES)
def test_identity_of_every_library(arch: str, builder_conf: Path) -> None:
    """Every rule set x both profiles on `arch`, each as a whole and per single datatype (x rank for
    conv), except `WHOLE_ONLY`."""
    assert checked(rule_set_names(), arch, builder_conf)


SAMPLE = ("default", "tests", "profiler", *PRESELECTED)


@pytest.mark.parametrize("arch", ["gfx942", "gfx1201"])
def test_identity_of_small_libraries(arch: str, builder_conf: Path) -> None:
    """The default run's share: the small rule sets on a CDNA and a WMMA arch."""
    assert checked(SAMPLE, arch, builder_conf)


GEMM = {"kind": "gemm", "variant": "standard", "datatype": "fp16", "layout": "rcr"}
SPLIT_K_PAIR = (Candidate("a", GEMM), Candidate("b", {**GEMM, "split_k": False}))
"""Two GEMM configs whose code differs but whose `KernelKey` is one (split-K is a run-time argument)."""


def test_gemm_kernels_the_kernel_key_cannot_tell_apart_are_refused() -> None:
    entries = list(_sort_out(SPLIT_K_PAIR, Validator(Selection("gemm-default", "gfx942", "ck-2026.06"))))
    assert [e.status for e in entries] == ["accepted", "refused"] and entries[1].rules == (KEY_RULE,)
    assert entries[1].issues[0].message.startswith(f"CK's KernelKey cannot tell it from {entries[0].name} "
                                                   "(the key holds no split_k or batched)")


def test_check_finds_a_registry_key_clash() -> None:
    selection = Selection("gemm-default", "gfx942", "ck-2026.06")
    validate = Validator(selection)
    library = Library(selection, tuple(Entry(c, ACCEPTED, validate(c)[0]) for c in SPLIT_K_PAIR))
    with pytest.raises(AssertionError, match="1 registry keys held by several kernels"):
        check(library, Seen())


FIXED = ("kind", "variant", "ck_api")
"""Knobs not flipped: they choose the kernel family or the profile, whose code is compared apart."""


def flips(config) -> Iterator[tuple[str, dict]]:
    """(knob, the config's knobs with that knob set to another value it may take), per non-integer knob
    not in `FIXED`."""
    knobs = as_dict(config)
    for knob in KNOBS:
        if knob.name not in knobs or knob.name in FIXED or knob.type is int:
            continue
        for value in (True, False) if knob.type is bool else knob.choices_for(knobs) or ():
            if value != knobs[knob.name]:
                yield knob.name, {**knobs, knob.name: value}


@pytest.mark.parametrize(("selection", "stride"), [
    *(pytest.param(Selection("default", "gfx942", api, ("fp16",), (2,), variants), 1)
      for api in profile_names() for variants in (("forward", "bwd_data"), ("bwd_weight",))),
    pytest.param(Selection("tests", "gfx942", "ck-2026.06", variants=("forward", "forward_depthwise", "bwd_data"),
                           builder_conf=BUILDER_CONFIGS), 1),
    *(pytest.param(Selection("gemm-default", arch, "ck-2026.06", ("fp16",)), 200) for arch in ("gfx942", "gfx1201")),
])
def test_a_knob_change_that_changes_no_code_changes_no_name(selection: Selection, stride: int) -> None:
    """Every `stride`-th kernel of the library with one knob changed (`flips`): where ckast accepts the
    change, the code differs or the name stays."""
    validate, profile = Validator(selection), load_profile(selection.ck_api)
    for entry in build(selection).accepted[::stride]:
        digest = code(entry.config, profile)[1]
        for knob, knobs in flips(entry.config):
            config, issues = validate(Candidate("flip", knobs))
            if config is not None and not issues:
                name, other, _ = code(config, profile)
                assert name == entry.name or other != digest, \
                    f"{entry.name} with {knob}={knobs[knob]!r} is {name}, with the same code"
