"""Rule sets that take a stratified subset of another: CK's `full-tests`, and `tiny`."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .selection import Candidate

TEST_STRIDE = 5
"""full-tests keeps every 5th config of each (feature category, datatype)."""
TINY_MIN = 10


def _is_gemm(c: Candidate) -> bool:
    return c.knobs["variant"] != "forward_depthwise"


def full_tests(candidates: Iterable[Candidate]) -> list[Candidate]:
    """CK's test subset: every 5th config per (feature category, datatype), at least one each; then
    the first config of every (pipeline, scheduler) a direction and datatype has but did not get."""
    configs = list(candidates)
    strata: dict[tuple[str, str], list[int]] = {}
    for i, c in enumerate(configs):
        strata.setdefault((c.category, c.knobs["datatype"]), []).append(i)
    chosen = set()
    for members in strata.values():
        picked = [i for rank, i in enumerate(members) if (rank + 1) % TEST_STRIDE == 0]
        chosen.update(picked or members[:1])
    covered = {_combo(configs[i]) for i in chosen if _is_gemm(configs[i])}
    for i, c in enumerate(configs):
        if _is_gemm(c) and _combo(c) not in covered:
            covered.add(_combo(c))
            chosen.add(i)
    return [configs[i] for i in sorted(chosen)]


def _combo(c: Candidate) -> tuple:
    k = c.knobs
    return (k["variant"], k["datatype"], k["pipeline"], k["scheduler"])


def tiny(candidates: Iterable[Candidate], accepts: Callable[[Candidate], bool]) -> list[Candidate]:
    """The first accepted config of every (direction, feature category, datatype, rank), then one more
    from each in turn until there are at least 10.

    CK's `tiny` strata lack the direction, so its fp16 2-D set has no bwd_data kernel, and it picks
    configs the profile may refuse; this one covers every direction and category the profile builds."""
    strata: dict[tuple, list[Candidate]] = {}
    for c in candidates:
        if accepts(c):
            k = c.knobs
            strata.setdefault((k["variant"], c.category, k["datatype"], k.get("ndim_spatial")), []).append(c)
    chosen = [members[0] for members in strata.values()]
    depth = 1
    while len(chosen) < TINY_MIN and any(depth < len(m) for m in strata.values()):
        for members in strata.values():
            if depth < len(members) and len(chosen) < TINY_MIN:
                chosen.append(members[depth])
        depth += 1
    return chosen
