"""Kernel libraries: what a rule set (or config files) yields for an arch (`build_library`, what `ckast list`
shows), writing it (`generate_library`, `ckast generate`) and reviewing the change between two libraries
(`diff_libraries`, `ckast diff`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from ckast.errors import CkastError
from ckast.library.selection import Selection, SelectionError

from .paths import PathLike, path_list

if TYPE_CHECKING:
    from ckast.library.build import Library
    from ckast.review.compare import LibraryDiff

# A rerun whose tree is up to date imports nothing more than this module and `ckast.output.stamp`: the
# library's validation and rendering are imported once they are needed.


class EmptyLibrary(CkastError):
    """A library request that yields no kernel: every candidate was refused.

    For a rule set the message says how many were proposed, refused and merged (`build_library(...).refused`
    says why); for config files it lists every problem of their kernels, one line each (`issues`).
    """

    def __init__(self, message: str, counts: Mapping[str, int], issues: Iterable = ()) -> None:
        super().__init__(message)
        self.counts = dict(counts)
        """Candidates proposed, refused and merged."""
        self.issues = tuple(issues)
        """With config files: the problems of their kernels (`ckast.config.ConfigIssue`)."""


def counts_line(counts: Mapping[str, int]) -> str:
    """`N proposed, N refused, N merged`: what became of a library's candidates."""
    return f"{counts['proposed']} proposed, {counts['refused']} refused, {counts['merged']} merged"


def _names(value: str | int | Iterable) -> tuple:
    """One name (or rank) or several, as a tuple."""
    return (value,) if isinstance(value, (str, int)) else tuple(value)


def _selection(rule_set: str | None, arch: str | None, datatypes: str | Iterable[str], ndims: int | Iterable[int],
               variants: str | Iterable[str], ck_api: str | None, builder_conf: PathLike | None,
               configs: PathLike | Iterable[PathLike], checked: bool = True) -> Selection:
    """The library request of the options; `checked`: it must name a rule set and an arch (or config files),
    and only names ckast knows (else SelectionError)."""
    from ckast.arch import ARCH_NAMES
    from ckast.catalog import DEFAULT_PROFILE, profile_names

    files = tuple(path_list(configs))
    profile = ck_api or DEFAULT_PROFILE
    if checked:
        if not files and (not rule_set or not arch):
            raise SelectionError("a library needs a rule set and an arch (or config files)")
        if arch and arch not in ARCH_NAMES:
            raise SelectionError(f"unknown arch {arch!r}; known: {', '.join(ARCH_NAMES)}")
        if profile not in profile_names():
            raise SelectionError(f"unknown CK API profile {profile!r}; known: {', '.join(profile_names())}")
    return Selection(rule_set or "", arch or "", profile, _names(datatypes), _names(ndims), _names(variants),
                     None if builder_conf is None else Path(builder_conf), files)


def _chunk_size(given: int | None) -> int:
    if given is not None:
        return given
    from ckast.emit import CHUNK_SIZE

    return CHUNK_SIZE


def build_library(rule_set: str | None = None, arch: str | None = None, *, datatypes: str | Iterable[str] = (),
                  ndims: int | Iterable[int] = (), variants: str | Iterable[str] = (), ck_api: str | None = None,
                  builder_conf: PathLike | None = None, configs: PathLike | Iterable[PathLike] = ()) -> Library:
    """What a rule set (or config files) yields for an arch, without rendering anything: every candidate
    config, accepted, merged into an identical one, or refused with the rules that refused it.

    Args:
        rule_set: a named rule set (`ckast.library.rule_set_names()`), e.g. `"tiny"`, `"full"`.
        arch: the target architecture, e.g. `"gfx942"`.
        datatypes: only these datatypes (default: all the rule set has).
        ndims: only these spatial ranks of grouped-conv kernels (default: all).
        variants: only these variants (default: all).
        ck_api: the CK API profile the library is built for (default: ckast's default profile).
        builder_conf: a directory of CK Builder instance `.conf` files (the `profiler` and `tests` rule sets).
        configs: config files to take the candidates from instead of a rule set.

    Returns:
        The library: `accepted`, `refused` and `with_status("merged")` entries, `names`, `kernels()`.

    Raises:
        SelectionError: no rule set and arch (nor config files), an unknown name, or a selection the rule
            set cannot serve.
    """
    from ckast.library import build

    return build(_selection(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs))


@attrs.frozen
class GenerateResult:
    """What `generate_library` did to its output directory."""

    output: Path
    kernels: int
    """Kernels in the library."""
    proposed: int
    """Candidate configs the rule set (or the config files) proposed."""
    refused: int
    """Candidates refused (see `build_library(...).refused`)."""
    merged: int
    """Candidates identical to an earlier one."""
    written: int
    """Files written (new or changed)."""
    unchanged: int
    """Files left as they were."""
    removed: int
    """Files of an earlier run that this one does not produce."""
    up_to_date: bool
    """The tree was already what this run would write (found from its stamp: nothing was rendered)."""
    run_key: str
    """The digest of everything the tree depends on (ckast's files, the options, the input files' bytes)."""

    @property
    def counts(self) -> dict[str, int]:
        """Proposed, refused and merged candidates."""
        return {"proposed": self.proposed, "refused": self.refused, "merged": self.merged}


def generate_library(output: PathLike, rule_set: str | None = None, arch: str | None = None, *,
                     datatypes: str | Iterable[str] = (), ndims: int | Iterable[int] = (),
                     variants: str | Iterable[str] = (), ck_api: str | None = None,
                     builder_conf: PathLike | None = None, configs: PathLike | Iterable[PathLike] = (),
                     jobs: int | None = None, chunk_size: int | None = None,
                     progress: Callable[[int, int], None] | None = None,
                     on_wait: Callable[[str], None] | None = None) -> GenerateResult:
    """Write a whole kernel library into the directory `output`: every accepted config of a rule set (or of
    config files), as `emit_kernels` writes kernels.

    The library is selected as by `build_library` (same arguments). A rerun with the same inputs into a tree
    left as it was finds it up to date and renders nothing. The output is byte-identical for every `jobs`.

    Args:
        output: the output directory.
        jobs: rendering processes (default: the cores ckast may run on).
        chunk_size: grouped-conv kernels per registration translation unit (default: CK's, 25).
        progress: called as `progress(done, total)` with the kernels rendered so far: 0 before rendering
            starts, then after each batch.
        on_wait: called with a message when another run holds `output` and this one waits for it.

    Raises:
        SelectionError: as `build_library`.
        EmptyLibrary: every candidate was refused.
        ConfigError: an accepted kernel could not be rendered.
        OutputError: the output directory cannot take the run (nothing is changed).
    """
    from ckast.output.stamp import run_key, up_to_date
    from ckast.output.transaction import remove_leftovers

    selection = _selection(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs)
    chunk_size = _chunk_size(chunk_size)
    out = Path(output)
    key = run_key("generate", {"selection": selection.as_dict(), "chunk_size": chunk_size}, selection.input_files())
    remove_leftovers(out)
    last = up_to_date(out, key)
    if last is not None:
        return GenerateResult(out, last["kernels"], last["proposed"], last["refused"], last["merged"], 0,
                              last["files"], 0, True, key)
    from ckast.config import ConfigError
    from ckast.emit import write_outputs
    from ckast.library import build, index
    from ckast.cores import default_jobs
    from ckast.library.generate import render_into
    from ckast.output import Transaction

    indexed = index.load(selection)  # a selection built before, under the same key: no enumeration, no validation
    if indexed is not None:
        kernels, counts = indexed
    else:
        library = build(selection)
        kernels = library.kernels()
        counts = {"proposed": len(library.entries), "refused": len(library.refused),
                  "merged": len(library.with_status("merged"))}
        if not kernels and selection.configs:  # the user's own configs, all refused: reported as emit does
            issues = [i for e in library.refused for i in e.issues]
            raise EmptyLibrary("\n".join(ConfigError(issues).lines()), counts, issues)
        if not kernels:
            from ckast.library.listing import empty_reason

            raise EmptyLibrary(empty_reason(library), counts)
        del library  # its refused and merged entries are not needed past here (a smaller peak RSS)
        index.keep(selection, kernels, counts)
    total, done = len(kernels), 0

    def advance(count: int) -> None:
        nonlocal done
        done += count
        progress(done, total)  # type: ignore[misc]  # only passed on when given

    with Transaction(out, on_wait=on_wait) as tx:
        if progress is not None:
            progress(0, total)
        rendered = render_into(kernels, tx.stage, jobs or default_jobs(), advance if progress else None, chunk_size)
        emitted = rendered.emitted
        stats = write_outputs(emitted, tx, chunk_size=chunk_size, run=selection.as_dict(),
                              stamp=(key, {"kernels": len(emitted), **counts}), done=rendered.written,
                              printed=rendered.printed)
    return GenerateResult(out, len(emitted), counts["proposed"], counts["refused"], counts["merged"], stats["written"],
                          stats["unchanged"], stats["removed"], False, key)


def diff_libraries(old: PathLike, new: PathLike, *, rule_set: str | None = None, arch: str | None = None,
                   datatypes: str | Iterable[str] = (), ndims: int | Iterable[int] = (),
                   variants: str | Iterable[str] = (), ck_api: str | None = None,
                   builder_conf: PathLike | None = None, configs: PathLike | Iterable[PathLike] = (),
                   chunk_size: int | None = None, jobs: int | None = None) -> LibraryDiff:
    """What changed from library `old` to library `new`: kernels added, removed, renamed with identical code,
    and changed, grouped by their config change and, within a group, by the way their code changed.

    Each side is a generated tree (a directory with `manifest.json`), a config file, `REV:FILE` (a config
    file at a git revision), or `key=value[,key=value...]` changes to the selection the keyword arguments
    describe (as `build_library`'s), e.g. `"ck-api=ck-2026.06"`. Sides that are selections or config files
    are rendered in memory (`jobs` processes; default: the cores ckast may run on).

    Returns:
        The difference: `same`, `counts()`, `added`, `removed`, `changed` and `renamed` groups; the
        `ckast.review.report` module prints it as `ckast diff` does.

    Raises:
        SideError: a side cannot be read or rendered.
    """
    from ckast.cores import default_jobs
    from ckast.review import Request, compare, read_side

    selection = _selection(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs, checked=False)
    request = Request(selection, _chunk_size(chunk_size), jobs or default_jobs())
    return compare(read_side(str(old), request), read_side(str(new), request))
