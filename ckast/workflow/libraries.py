"""Kernel libraries: what a rule set (or config files) yields for an arch (`build_library`, what `ckast list`
shows), the part of it a workload needs (`workload_request`, `choose_for_workload`, `ckast list --for`), writing
it (`generate_library`, `ckast generate`) and reviewing the change between two libraries (`diff_libraries`,
`ckast diff`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ckast.arguments import checked
from ckast.errors import CkastError
from ckast.library.selection import Selection, SelectionError

from .paths import PathLike, path_list

if TYPE_CHECKING:
    from ckast.library.build import Library
    from ckast.review.compare import LibraryDiff
    from ckast.select.reports.workload import Request, WorkloadChoice

# A rerun whose tree is up to date imports nothing more than this module and `ckast.output.stamp`: the
# library's validation and rendering are imported once they are needed.


class EmptyLibrary(CkastError, ValueError):
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
    from ckast.catalog import DEFAULT_PROFILE
    from ckast.library.selection import check_names

    files = tuple(path_list(configs))
    profile = ck_api or DEFAULT_PROFILE
    if checked:
        if not files and (not rule_set or not arch):
            raise SelectionError("a library needs a rule set and an arch (or config files)")
        check_names(arch or "", profile)
    return Selection(rule_set or "", arch or "", profile, _names(datatypes), _names(ndims), _names(variants),
                     None if builder_conf is None else Path(builder_conf), files)


def _chunk_size(given: int | None) -> int:
    if given is not None:
        return given
    from ckast.emit import CHUNK_SIZE

    return CHUNK_SIZE


@checked(rule_set="optional name", arch="optional name", datatypes="names", ndims="counts", variants="names",
         ck_api="optional name", builder_conf="optional path", configs="paths")
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


@checked(workload="path", within="optional number", budget="optional int", model="optional path", timings="paths",
         kernels="optional path")
def workload_request(workload: PathLike, *, within: float | None = None, budget: int | None = None,
                     model: PathLike | None = None, timings: PathLike | Iterable[PathLike] = (),
                     kernels: PathLike | None = None) -> Request:
    """What a library for a workload asks (`ckast.select.reports.workload` says how the kernels are chosen).

    Args:
        workload: a problems file (as `ckast select --problems` reads), with an optional `weight` per problem.
        within: keep the fewest kernels that hold every problem within this many percent of its best.
        budget: keep at most this many kernels, of the best weighted mean efficiency (one of the two).
        model: a LightGBM model directory to predict with (default: the analytic model).
        timings: timing tables whose measured TFLOPS score the kernels instead of a model.
        kernels: CK's kernel table naming the kernels of the timing tables.

    Raises:
        WorkloadError: not exactly one of `within` and `budget`, a value out of range, a model and timings.
    """
    from ckast.select.reports.workload import Request

    return Request(Path(workload), within, budget, None if model is None else Path(model),
                   tuple(path_list(timings)), None if kernels is None else Path(kernels))


@checked(library="ckast.library.build:Library", request="ckast.select.reports.workload:Request")
def choose_for_workload(library: Library, request: Request) -> WorkloadChoice:
    """The kernels of `library` (`build_library`'s) that `request`'s workload keeps, and what they offer it.

    Raises:
        WorkloadError: a bad workload file or row, or no problem any kernel of the library serves.
        LibraryError, TimingError, ModelError: a problem the library cannot tell apart, a bad timing table or
            model.
    """
    return _choose(library.kernels(), request)[1]


def _choose(kernels: list, request: Request) -> tuple[list, WorkloadChoice]:
    """The `LoadedKernel`s kept for the workload (in the library's order) and the choice."""
    from ckast.config import as_dict
    from ckast.lower.identity import kernel_name
    from ckast.select.reports.workload import choose_for

    chosen = choose_for([kernel_name(k.config) for k in kernels], [as_dict(k.config) for k in kernels], request)
    kept = set(chosen.choice.kept)
    return [k for i, k in enumerate(kernels) if i in kept], chosen


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
    workload: dict[str, Any] | None = None
    """With a workload: the choice as data (`WorkloadChoice.as_json`; `ckast.select.reports.workload.choice_lines`
    prints it), kept in the tree's stamp, so also given when the tree was up to date."""

    @property
    def counts(self) -> dict[str, int]:
        """Proposed, refused and merged candidates."""
        return {"proposed": self.proposed, "refused": self.refused, "merged": self.merged}


@checked(output="path", rule_set="optional name", arch="optional name", datatypes="names", ndims="counts",
         variants="names", ck_api="optional name", builder_conf="optional path", configs="paths",
         jobs="optional count", chunk_size="optional count", progress="optional callable",
         on_wait="optional callable", workload="optional ckast.select.reports.workload:Request")
def generate_library(output: PathLike, rule_set: str | None = None, arch: str | None = None, *,
                     datatypes: str | Iterable[str] = (), ndims: int | Iterable[int] = (),
                     variants: str | Iterable[str] = (), ck_api: str | None = None,
                     builder_conf: PathLike | None = None, configs: PathLike | Iterable[PathLike] = (),
                     jobs: int | None = None, chunk_size: int | None = None,
                     progress: Callable[[int, int], None] | None = None,
                     on_wait: Callable[[str], None] | None = None, workload: Request | None = None) -> GenerateResult:
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
        workload: write only the kernels this workload keeps (`workload_request`); the manifest records the
            request with the digests of its files, and a changed file makes the tree out of date.

    Raises:
        SelectionError: as `build_library`.
        EmptyLibrary: every candidate was refused.
        WorkloadError, LibraryError, TimingError, ModelError: as `choose_for_workload`.
        ConfigError: an accepted kernel could not be rendered.
        OutputError: the output directory cannot take the run (nothing is changed).
    """
    from ckast.output.stamp import run_key, up_to_date
    from ckast.output.transaction import remove_leftovers

    selection = _selection(rule_set, arch, datatypes, ndims, variants, ck_api, builder_conf, configs)
    chunk_size = _chunk_size(chunk_size)
    out = Path(output)
    options, inputs, run = {"selection": selection.as_dict(), "chunk_size": chunk_size}, selection.input_files(), None
    if workload is not None:
        run = {**selection.as_dict(), "workload": workload.as_dict()}
        options, inputs = {**options, "workload": run["workload"]}, (*inputs, *workload.input_files())
    key = run_key("generate", options, inputs)
    remove_leftovers(out)
    last = up_to_date(out, key)
    if last is not None:
        return GenerateResult(out, last["kernels"], last["proposed"], last["refused"], last["merged"], 0,
                              last["files"], 0, True, key, last.get("workload"))
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
    chosen = None
    if workload is not None:
        kernels, choice = _choose(kernels, workload)
        chosen = choice.as_json()
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
        summary = {"kernels": len(emitted), **counts, **({"workload": chosen} if chosen else {})}
        stats = write_outputs(emitted, tx, chunk_size=chunk_size, run=run or selection.as_dict(),
                              stamp=(key, summary), done=rendered.written,
                              printed=rendered.printed)
    return GenerateResult(out, len(emitted), counts["proposed"], counts["refused"], counts["merged"], stats["written"],
                          stats["unchanged"], stats["removed"], False, key, chosen)


@checked(old="path", new="path", rule_set="optional name", arch="optional name", datatypes="names", ndims="counts",
         variants="names", ck_api="optional name", builder_conf="optional path", configs="paths",
         chunk_size="optional count", jobs="optional count")
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
