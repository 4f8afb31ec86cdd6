"""Fuzzing the config language: configs drawn from the whole knob table (both kinds, every variant, both
profiles, every arch, hostile values among them; `tests/config_strategies.py`) are each refused with every
problem naming a rule or a field, or emit files that hold no string of the config that is not an allowed
enumerator and that JIT against the host model. A real-compile sample keeps "accepted" meaning "compiles".
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from itertools import groupby, zip_longest
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from ckast import testing
from ckast.arch import ARCH_NAMES
from ckast.arch.rules import INT_KNOBS
from ckast.check import Toolchain, check_headers, compile_one
from ckast.config import KNOBS, ConfigError, as_dict, kernel_objects, load_data
from ckast.config.ck_spellings import VALUES, translate
from ckast.emit import EmittedKernel, render, run_files, write_outputs
from ckast.lower.identity import WRAPPER_DIR
from ckast.output import entry_points_for

from .config_strategies import ENUMERATORS, configs, strings
from .test_jit import expected_constants

SETTINGS = settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))
OLD = "ck-2025.11"
COMPILE_SEED = 20261123
"""The fixed seed of the real-compile sample; each run adds one new seed ($CKAST_FUZZ_SEED replays one)."""
COMPILES_PER_SEED = 2
KNOB = {k.name: k for k in KNOBS}
CK_VALUES = frozenset(ck for table in VALUES.values() for ck in table)
"""CK's enumerator spellings: CK's names, which emitted C++ may hold (`DataType::FP16`) as ckast's own."""


def kernels_of(data: Any, defaults: dict[str, Any]) -> list[EmittedKernel] | None:
    """The rendered kernels of a config, or None if it is refused, every problem naming a rule or a field
    (a path below its kernel's own); an accepted kernel holds every knob value its object gives, unchanged
    (an inert knob's value: its default; CK's spelling of a value: ckast's)."""
    try:
        loaded = load_data(data, defaults)
        kernels = render(loaded, save=False)
    except ConfigError as exc:
        try:
            kernel_paths = {path for path, _ in kernel_objects(data)}
        except ConfigError:
            kernel_paths = set()
        unnamed = [issue.line() for issue in exc.issues if issue.rule is None and issue.path in {"", *kernel_paths}]
        assert not unnamed, f"refusals naming no rule or field: {unnamed}"
        return None
    objects = dict(kernel_objects(data))
    for kernel in loaded:
        knobs = as_dict(kernel.config)
        spelled = translate(objects[kernel.path], kernel.path)  # CK's spellings are read as ckast's
        given = objects[kernel.path] if spelled is None else spelled.obj
        changed = {k: v for k, v in given.items() if (knobs[k], type(knobs[k])) != (v, type(v))
                   and not (KNOB[k].inert and KNOB[k].inert(knobs) and knobs[k] == KNOB[k].default_for(knobs))}
        assert not changed, f"{kernel.path}: accepted with values it does not hold: {changed}"
    return kernels


def assert_no_leak(data: Any, kernels: list[EmittedKernel]) -> None:
    """No string of `data` that is not an allowed enumerator occurs in any emitted file."""
    texts = [text for k in kernels for _, text in k.files] + [text for _, text in run_files(kernels)]
    leaked = {s for s in strings(data)
              if s not in ENUMERATORS and s not in CK_VALUES and any(s in text for text in texts)}
    assert not leaked, f"emitted text holds config strings: {leaked}"


def fuzz(examples: int, draws: Callable[..., Any] = given(configs()), **options: Any) -> dict[str, EmittedKernel]:
    """Check `examples` drawn configs; the accepted kernels by name, in the order first drawn."""
    accepted: dict[str, EmittedKernel] = {}

    @settings(SETTINGS, max_examples=examples, **options)
    @draws
    def check(case: tuple[Any, dict[str, Any]]) -> None:
        data, defaults = case
        kernels = kernels_of(data, defaults)
        if kernels is not None:
            assert_no_leak(data, kernels)
            for k in kernels:
                accepted.setdefault(k.name, k)

    check()
    return accepted


def spread(kernels: dict[str, EmittedKernel], count: int) -> list[EmittedKernel]:
    """Up to `count` kernels, round-robin over (kind, variant, profile) so each appears early."""
    key = lambda k: (k.config["kind"], k.config["variant"], k.config["ck_api"])  # noqa: E731
    groups = [list(g) for _, g in groupby(sorted(kernels.values(), key=key), key)]
    return [k for row in zip_longest(*groups) for k in row if k is not None][:count]


def jit(kernel: EmittedKernel, out: Path) -> None:
    """Emit `kernel` as a run of its own into `out` and JIT its registration (so its wrapper and header; its header
    alone when it has no wrapper) against
    its profile's host model; its launcher derives the config's constants and its launch instantiates."""
    write_outputs([kernel], out)
    registration = sorted((out / WRAPPER_DIR).glob("register_*"))  # none for a kernel without a wrapper
    unit = testing.jit_files(registration or [out / kernel.header], kernel.config["ck_api"], out)
    config = load_data(kernel.config)[0].config
    unit.static_assert(*expected_constants(unit, config))
    try:
        if config.kind == "gemm":
            unit.launch_gemm(2 * config.tile_m, 2 * config.tile_n, 4 * config.tile_k)
        else:
            ndim = config.ndim_spatial
            unit.launch_conv(testing.ConvProblem(G=2, N=2, K=16, C=16, filter=(3,) * ndim, input=(8,) * ndim))
    except testing.LaunchError:
        pass  # arguments this kernel does not support: the launch path compiled, which is what is checked


def fuzz_and_jit(examples: int, jits: int, tmp_path: Path) -> None:
    accepted = fuzz(examples, derandomize=True)
    sample = spread(accepted, jits)
    assert len(sample) == min(jits, len(accepted)) > 0
    for i, kernel in enumerate(sample):
        try:
            jit(kernel, tmp_path / str(i))
        except testing.JitError as exc:
            raise AssertionError(f"{kernel.name} {kernel.config} does not JIT:\n{exc}") from None


def test_drawn_configs_are_refused_by_name_or_emit_clean_files_that_jit(tmp_path):
    fuzz_and_jit(examples=800, jits=8, tmp_path=tmp_path)


@pytest.mark.slow
def test_many_drawn_configs_are_refused_by_name_or_emit_clean_files_that_jit(tmp_path):
    fuzz_and_jit(examples=8000, jits=80, tmp_path=tmp_path)


# --- real compiles ---------------------------------------------------------------------------------

def targets(toolchain: Toolchain, tmp_path: Path) -> tuple[str, ...]:
    """The archs whose kernels the toolchain's clang can compile."""
    empty = tmp_path / "empty.cpp"
    empty.write_text("\n")
    return tuple(a for a in ARCH_NAMES if compile_one(empty, attrs.evolve(toolchain, arch=a)).passed)


def sample(seed_: int, archs: tuple[str, ...]) -> list[EmittedKernel]:
    """COMPILES_PER_SEED kernels chosen with `seed_` among those accepted of ck-2025.11 configs drawn with it,
    200 at a time (from `seed_`, then `seed_ + 1`, ...) until enough are accepted."""
    accepted: dict[str, EmittedKernel] = {}
    for round_ in range(10):
        draws = lambda f: seed(seed_ + round_)(given(configs(hostile_rate=0, profiles=(OLD,), archs=archs))(f))  # noqa: E731
        accepted |= fuzz(200, draws, phases=[Phase.generate])
        if len(accepted) >= COMPILES_PER_SEED:
            break
    return random.Random(seed_).sample(list(accepted.values()), COMPILES_PER_SEED)


@pytest.mark.ck_compile
def test_a_random_sample_of_accepted_configs_compiles(tmp_path, capsys):
    toolchain = Toolchain.discover()
    archs = targets(toolchain, tmp_path)
    new_seed = int(os.environ.get("CKAST_FUZZ_SEED") or random.randrange(2**32))
    with capsys.disabled():  # in the log of every run, passed or failed
        print(f"\nfuzz seeds: {COMPILE_SEED} (fixed), {new_seed} (this run; replay with CKAST_FUZZ_SEED={new_seed}); "
              f"archs {', '.join(archs)}")
    kernels = list({k.name: k for s in (COMPILE_SEED, new_seed) for k in sample(s, archs)}.values())
    out = tmp_path / "out"
    write_outputs(kernels, out)

    def compile_(kernel: EmittedKernel):
        toolchain_ = attrs.evolve(toolchain, arch=kernel.arch)
        [result] = check_headers([out / kernel.header], toolchain_, entry_points_for)
        print(f"{result.line()} [{kernel.arch}]")
        return result

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(compile_, kernels))
    failed = [f"{k.name} {k.config}:\n" + "\n".join(r.errors) for k, r in zip(kernels, results) if not r.passed]
    assert not failed, "\n".join(failed)
    assert len(results) >= COMPILES_PER_SEED


def test_every_unbounded_integer_knob_is_range_checked():
    assert {k.name for k in KNOBS if k.type is int and k.choices is None} == set(INT_KNOBS)
