"""Pairing the kernels of two libraries and grouping what changed.

Kernels are paired in four steps, each over what the earlier ones left:
1. the same name (names hash every knob, so the configs are equal): unchanged, or changed code;
2. the same code up to the kernel's name (in every file and path): renamed;
3. the same registry key (the dispatcher's identity, `ckast.variants.registry_key`): changed;
4. configs equal but for one knob, where that pairing is unique on both sides: changed.
What is left is added or removed. A changed or renamed pair is grouped by its config difference
(knob: old -> new); within a group, pairs whose files changed the same way (the same lines removed
and added once each kernel's name and knob values are written as placeholders) form one `Way`,
reviewed through one representative.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from ckast.config.knobs import KNOB_NAMES

from .sides import Kernel, Side

MISSING = "(absent)"
"""How a knob that one side's config does not hold is shown."""

KnobChange = tuple[str, Any, Any]
_ORDER = {k: i for i, k in enumerate(KNOB_NAMES)}


def _knob_order(knob: str) -> tuple[int, str]:
    """The knob table's order; knobs it does not hold (a tree of another ckast) after, by name."""
    return _ORDER.get(knob, len(_ORDER)), knob



@attrs.frozen
class Way:
    """Pairs (old name, new name) whose files changed identically, the first one representative."""

    pairs: tuple[tuple[str, str], ...]


@attrs.frozen
class Group:
    """Pairs with the same config difference (empty: the configs are equal, the code is not)."""

    knobs: tuple[KnobChange, ...]
    ways: tuple[Way, ...]

    @property
    def count(self) -> int:
        return sum(len(w.pairs) for w in self.ways)


@attrs.frozen
class RunFiles:
    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed)


@attrs.frozen
class LibraryDiff:
    """The change from library `old` to library `new`: how many kernels are unchanged, the `changed` and
    `renamed` pairs grouped by their config change, the names `added` and `removed`, and the run files
    (registration, CMake) that changed."""

    old: Side
    new: Side
    unchanged: int
    changed: tuple[Group, ...]
    renamed: tuple[Group, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    run_files: RunFiles

    @property
    def same(self) -> bool:
        """Whether the two libraries are the same, file for file."""
        return not (self.changed or self.renamed or self.added or self.removed or self.run_files)

    def counts(self) -> dict[str, int]:
        """Kernels of each side, and how many are unchanged, changed, renamed, added and removed."""
        return {"old": len(self.old.kernels), "new": len(self.new.kernels), "unchanged": self.unchanged,
                "changed": sum(g.count for g in self.changed), "renamed": sum(g.count for g in self.renamed),
                "added": len(self.added), "removed": len(self.removed)}


def compare(old: Side, new: Side) -> LibraryDiff:
    left = dict(old.kernels)
    right = dict(new.kernels)
    same_name = sorted(left.keys() & right.keys())
    unchanged = [n for n in same_name if left[n].files == right[n].files]
    changed: list[tuple[Kernel, Kernel]] = [(left[n], right[n]) for n in same_name if left[n].files != right[n].files]
    for name in same_name:
        del left[name], right[name]
    renamed = _pair_by(left, right, _code_digest)
    changed += _pair_by(left, right, _registry_key)
    for knob in _knobs(left.values(), right.values()):
        changed += _pair_by(left, right, lambda k, knob=knob: _config_without(k, knob))
    return LibraryDiff(old, new, len(unchanged), _groups(changed), _groups(renamed), tuple(sorted(right)),
                       tuple(sorted(left)), _run_files(old.run_files, new.run_files))


def unified_diff(old: Kernel, new: Kernel, context: int = 3) -> list[str]:
    """The unified diff of a pair's files (paired up to the kernel name), each side's kernel name written as
    `<name>` so that only what differs beyond the name shows; files equal up to the name are left out."""
    lines: list[str] = []
    old_paths = {_placeholder(p, old.name): p for p in old.files}
    new_paths = {_placeholder(p, new.name): p for p in new.files}
    for key in sorted(old_paths.keys() | new_paths.keys()):
        a, b = old_paths.get(key), new_paths.get(key)
        a_text = _placeholder(old.files[a], old.name).splitlines() if a else []
        b_text = _placeholder(new.files[b], new.name).splitlines() if b else []
        if a_text != b_text or a is None or b is None:
            lines += [line.replace(_NAME, NAME_SHOWN) for line in difflib.unified_diff(
                a_text, b_text, f"a/{a}" if a else "/dev/null", f"b/{b}" if b else "/dev/null", n=context,
                lineterm="")]
    return lines


def knob_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[KnobChange, ...]:
    """(knob, old value, new value) for each knob that differs, in the knob table's order."""
    keys = sorted(old.keys() | new.keys(), key=_knob_order)
    return tuple((k, old.get(k, MISSING), new.get(k, MISSING)) for k in keys if old.get(k, MISSING) != new.get(k, MISSING))


def _pair_by(left: dict[str, Kernel], right: dict[str, Kernel], key) -> list[tuple[Kernel, Kernel]]:
    """Pairs of kernels whose `key` (None: no key) is unique on both sides; paired kernels leave `left`/`right`."""
    def unique(side: dict[str, Kernel]) -> dict[Any, str]:
        seen: dict[Any, list[str]] = {}
        for name in sorted(side):
            k = key(side[name])
            if k is not None:
                seen.setdefault(k, []).append(name)
        return {k: names[0] for k, names in seen.items() if len(names) == 1}

    a, b = unique(left), unique(right)
    pairs = [(left.pop(a[k]), right.pop(b[k])) for k in sorted(a.keys() & b.keys(), key=lambda k: a[k])]
    return pairs


_NAME = "\0name\0"
NAME_SHOWN = "<name>"
"""How a diff shows the kernel's own name."""


def _placeholder(text: str, name: str) -> str:
    return text.replace(name, _NAME)


def _code_digest(kernel: Kernel) -> str:
    h = hashlib.sha256()
    for path in sorted(kernel.files, key=lambda p: _placeholder(p, kernel.name)):
        h.update(f"{_placeholder(path, kernel.name)}\0{_placeholder(kernel.files[path], kernel.name)}\0".encode())
    return h.hexdigest()


def _registry_key(kernel: Kernel) -> tuple | None:
    """The kernel's registry key, or None when its config no longer validates (a tree of an older ckast)."""
    from ckast.config import resolve_kernel
    from ckast.variants import registry_key

    resolved = resolve_kernel(dict(kernel.config), kernel.name)
    return None if resolved.config is None else (resolved.config.kind, registry_key(resolved.config))


def _knobs(*sides: Iterable[Kernel]) -> list[str]:
    names = {knob for side in sides for k in side for knob in k.config}
    return sorted(names, key=_knob_order)


def _config_without(kernel: Kernel, knob: str) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in kernel.config.items() if k != knob))


_INT = re.compile(r"(?<![\w.])\d+(?![\w.])")


def _way_key(old: Kernel, new: Kernel) -> tuple:
    """What changed in a pair's files, independent of which kernel it is: per file, the lines removed and
    added (as multisets), with the names written as placeholders, and each integer that is the value of
    exactly one int knob of the pair's configs written as that knob (`{tile_m}`); a value several knobs
    hold stays as it is."""
    holders: dict[str, set[str]] = {}
    for config in (old.config, new.config):
        for knob, value in config.items():
            if type(value) is int:
                holders.setdefault(str(value), set()).add(knob)
    values = {v: "{" + next(iter(knobs)) + "}" for v, knobs in holders.items() if len(knobs) == 1}

    def lines(kernel: Kernel, text: str) -> Counter[str]:
        return Counter(_INT.sub(lambda m: values.get(m.group(), m.group()), line)
                       for line in _placeholder(text, kernel.name).splitlines())

    key = []
    old_paths = {_placeholder(p, old.name): p for p in old.files}
    new_paths = {_placeholder(p, new.name): p for p in new.files}
    for path in sorted(old_paths.keys() | new_paths.keys()):
        a = lines(old, old.files[old_paths[path]]) if path in old_paths else Counter()
        b = lines(new, new.files[new_paths[path]]) if path in new_paths else Counter()
        if a != b or path not in old_paths or path not in new_paths:
            key.append((path, path in old_paths, path in new_paths, tuple(sorted((a - b).items())),
                        tuple(sorted((b - a).items()))))
    return tuple(key)


def _groups(pairs: Sequence[tuple[Kernel, Kernel]]) -> tuple[Group, ...]:
    changes: dict[str, tuple[KnobChange, ...]] = {}
    by_knobs: dict[str, dict[tuple, list[tuple[str, str]]]] = {}
    for old, new in sorted(pairs, key=lambda p: (p[0].name, p[1].name)):
        knobs = knob_changes(old.config, new.config)
        key = json.dumps(knobs, sort_keys=True, default=str)
        changes.setdefault(key, knobs)
        by_knobs.setdefault(key, {}).setdefault(_way_key(old, new), []).append((old.name, new.name))
    groups = [Group(changes[key], tuple(Way(tuple(p)) for p in sorted(ways.values(), key=lambda p: (-len(p), p[0]))))
              for key, ways in by_knobs.items()]
    return tuple(sorted(groups, key=lambda g: (-g.count, json.dumps(g.knobs, sort_keys=True, default=str))))


def _run_files(old: Mapping[str, str], new: Mapping[str, str]) -> RunFiles:
    return RunFiles(tuple(sorted(p for p in old.keys() & new.keys() if old[p] != new[p])),
                    tuple(sorted(new.keys() - old.keys())), tuple(sorted(old.keys() - new.keys())))
