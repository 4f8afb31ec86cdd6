"""Validate a rule set's candidates with ckast's one validation and sort out the library."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import attrs

from ckast.config import ConfigIssue, LoadedKernel, resolve_kernel
from ckast.config.knobs import CONV_LAYOUTS
from ckast.lower.identity import kernel_name
from ckast.variants import KEY_GAPS, KEY_RULE, registry_key

from . import config_files
from .rulesets import RULE_SETS
from .selection import Candidate, Selection, SelectionError

ACCEPTED, REFUSED, MERGED = "accepted", "refused", "merged"
@attrs.frozen
class Entry:
    """One candidate and what became of it. `config` is set whenever every knob resolved (so a
    config the arch rules refused still has a kernel name); `merged_into` names the kernel an
    identical earlier candidate already produced."""

    candidate: Candidate
    status: str
    config: Any = None  # KernelConfig
    issues: tuple[ConfigIssue, ...] = ()
    merged_into: str | None = None

    @property
    def name(self) -> str | None:
        return kernel_name(self.config) if self.config is not None else None

    @property
    def rules(self) -> tuple[str, ...]:
        """Ids of the rules that refused it ("knob" for a value the knob table refuses)."""
        return tuple(dict.fromkeys(i.rule or "knob" for i in self.issues))


class Validator:
    """`resolve_kernel` for candidates of one selection, memoized by knob values (rule sets that
    derive from another, like `tiny`, validate the same candidates again)."""

    def __init__(self, selection: Selection) -> None:
        self.defaults = {k: v for k, v in (("ck_api", selection.ck_api), ("arch", selection.arch)) if v}
        self._seen: dict[tuple, tuple[Any, tuple[ConfigIssue, ...]]] = {}

    def __call__(self, candidate: Candidate) -> tuple[Any, tuple[ConfigIssue, ...]]:
        knobs = candidate.knobs  # a dict (Candidate converts), which resolve_kernel only reads
        key = (tuple(knobs), tuple(knobs.values()))  # the items as two flat tuples: less for the GC to track
        try:
            found = self._seen.get(key)
        except TypeError:  # a config file's value that is a list or an object (refused): not memoized
            key, found = None, None
        if found is None:
            r = resolve_kernel(knobs, candidate.origin, self.defaults)
            found = (r.config, r.issues)
            if key is not None:
                self._seen[key] = found
        return found

    def accepts(self, candidate: Candidate) -> bool:
        config, issues = self(candidate)
        return config is not None and not issues


@attrs.frozen
class Library:
    """What a selection yields: every candidate config (`entries`, in the rule set's order), each accepted,
    merged into an identical earlier one, or refused with the issues that refused it."""

    selection: Selection
    entries: tuple[Entry, ...]

    def with_status(self, status: str) -> list[Entry]:
        """The entries of `status` (`accepted`, `merged` or `refused`)."""
        return [e for e in self.entries if e.status == status]

    @property
    def accepted(self) -> list[Entry]:
        """The entries that are the library's kernels."""
        return self.with_status(ACCEPTED)

    @property
    def refused(self) -> list[Entry]:
        """The entries refused, each with its issues and rules."""
        return self.with_status(REFUSED)

    @property
    def names(self) -> list[str]:
        """The kernels' names, sorted."""
        return sorted(e.name for e in self.accepted)

    def kernels(self) -> list[LoadedKernel]:
        """The accepted configs, as `ckast emit` takes them."""
        return [LoadedKernel(e.candidate.origin, e.config) for e in self.accepted]

    def by_rule(self) -> dict[str, list[Entry]]:
        """Refused entries grouped by each rule that refused them (an entry may stand under several)."""
        out: dict[str, list[Entry]] = {}
        for e in self.refused:
            for rule in e.rules:
                out.setdefault(rule, []).append(e)
        return dict(sorted(out.items()))

    def counts(self, status: str = ACCEPTED) -> Counter:
        """Entries of `status` per (variant, datatype, ndim)."""
        return Counter(group_of(e) for e in self.with_status(status))


def group_of(entry: Entry) -> tuple[str, str, int | None]:
    """(variant, datatype, spatial rank) of an entry: its config's, else what its knobs say."""
    c = entry.config
    if c is not None:
        return (c.variant, c.datatype, c.ndim_spatial)
    k = entry.candidate.knobs
    return (str(k.get("variant", "?")), str(k.get("datatype", "?")), k.get("ndim_spatial"))


def build(selection: Selection) -> Library:
    """Enumerate the selection's rule set (or read its config files), validate every candidate,
    merge and refuse. SelectionError for a rule set or a spatial rank ckast does not know."""
    for ndim in selection.ndims:
        if ndim not in CONV_LAYOUTS:
            raise SelectionError(f"ndim {ndim} is no spatial rank of a grouped convolution; known: "
                                 f"{', '.join(map(str, CONV_LAYOUTS))}")
    validate = Validator(selection)
    if selection.configs:
        candidates = config_files.candidates(selection.configs)
    else:
        try:
            rule_set = RULE_SETS[selection.rule_set]
        except KeyError:
            raise SelectionError(f"unknown rule set {selection.rule_set!r}; known: {', '.join(RULE_SETS)}") from None
        candidates = rule_set.candidates(selection, validate.accepts)
    return Library(selection, tuple(_sort_out(candidates, validate)))


def _sort_out(candidates: Iterable[Candidate], validate: Validator) -> Iterable[Entry]:
    names: dict[str, str] = {}
    keys: dict[tuple, str] = {}
    for cand in candidates:
        config, issues = validate(cand)
        if config is None or issues:
            yield Entry(cand, REFUSED, config, issues)
            continue
        if cand.refusal is not None:
            rule, message = cand.refusal
            yield Entry(cand, REFUSED, config, (ConfigIssue(cand.origin, message, rule),))
            continue
        name = kernel_name(config)
        if name in names:
            yield Entry(cand, MERGED, config, merged_into=name)
            continue
        key = registry_key(config)
        if key in keys:
            key_type, missing = KEY_GAPS[config.kind]
            yield Entry(cand, REFUSED, config, (ConfigIssue(cand.origin, (
                f"CK's {key_type} cannot tell it from {keys[key]} (the key holds no {missing}); "
                "its registry would keep only one"), KEY_RULE),))
            continue
        keys[key] = name
        names[name] = cand.origin
        yield Entry(cand, ACCEPTED, config)
