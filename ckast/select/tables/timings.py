"""Timing tables: measured (problem, kernel) runs, read from CSV (strictly, `csv_table`), Parquet or JSON
and checked against a library.

Columns (one row per run; other columns are ignored):

- `kernel` (or `kernel_name`): a kernel of the library, by name.
- the problem: GEMM `M, N, K` and optionally `k_batch` (CK's `m, n, k, split_k` too); grouped conv in
  CK's spellings (`G, N, C, K`, `Hi, Wi`, `Y, X`, `stride_h`, `pad_h`, ... see `problem.py`). The spatial
  rank and, when no `direction` column is given, the direction are the kernel's, as are a GEMM's
  `variant` and D fields (`num_d_tensors`, `d_layout`, `elementwise_op`) when the row has none (given,
  they must be the kernel's); a 2-D kernel's row may carry CK's `Di = Z = 1` (and other trivial depth
  fields).
- the measurement: `tflops` (or `measured_tflops`), or `time_ms` (or `latency_ms`, `avg_time_ms`); TFLOPS
  is derived from the problem's FLOPs and the time when only the time is given.
- optionally `arch` (must be the kernel's) and `is_valid` (rows with false are failed runs, dropped and
  counted, as CK's benchmark JSON records them): true or false, 1 or 0, yes or no, in any format and case.

Numbers written as text are read as `ckast.number_text` reads them (ASCII digits only). A measurement must be
physical: a positive, finite time or TFLOPS of normal magnitude (not 0, subnormal or infinite), whose TFLOPS (as
derived from a time) is finite and positive too.

JSON holds a list of such row objects, `{"rows": [...]}`, or CK's benchmark result file (`metadata`,
`results[].kernel_config.name`, `results[].benchmarks[]` with `m, n, k, avg_time_ms, tflops, is_valid`),
whose kernels are found by name or, when CK's names are not the library's, by the knobs their
`kernel_config` holds. A bad row (missing column, unknown kernel, non-positive measurement, another
arch) is a `TimingError` naming the file, the row and the column, or, with `skip_bad`, counted and
listed.

CK's tile_engine tables are read as published (conv `kernel, problem_idx, N, C, K, G, Hi, Wi, Y, X,
stride_*, pad_*, latency_ms, tflops, non_zero`; GEMM sweeps `kernel, problem_idx, M, N, K, ...`) with their
kernel table (`kernel_table.py`), which names the library kernel each CK name was built as: every name
must be in it. A problem is its shape (`problem_idx` and `non_zero` are not read), so rows of one shape
under two indices, like rows of two names built as one kernel, are repeated runs of one (problem, kernel).

Runs of kernels that ckast finds not applicable to their problem under the applicability layers asked for
(`applicability.py`; CK's runners time kernels outside their domain) are set apart (`Timings.outside`): no
model trains on them and no evaluation takes them as the best or as a pick. Training asks the kernel's own
checks (a run is a measurement when the launcher accepts the problem); evaluation asks both layers by
default, what a dispatcher user can be given.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ckast.errors import CkastError
from ckast.number_text import parse_float

from ckast.select.serving.applicability import KERNEL_ONLY, applicable
from ckast.select.serving.library import Library, direction_of
from ckast.select.problem import (
    AXES,
    D_FIELDS,
    Problem,
    ProblemError,
)
from ckast.select.serving.problem_read import (
    CONV_FIELDS,
    GEMM_ALIASES,
    GEMM_FIELDS,
    conv_problem,
    gemm_problem,
)

if TYPE_CHECKING:
    from .kernel_table import KernelTable

KERNEL_COLUMNS = ("kernel", "kernel_name")
TFLOPS_COLUMNS = ("tflops", "measured_tflops")
TIME_COLUMNS = ("time_ms", "latency_ms", "avg_time_ms")
_SIZES = {"Di": "d", "Z": "d", "Hi": "h", "Y": "h"}
_CK_MATCH_KNOBS = ("pipeline", "epilogue", "scheduler", "pad_m", "pad_n", "pad_k", "persistent",
                   *(f"{p}_{d}" for p in ("tile", "warp", "warp_tile") for d in "mnk"))
"""The knobs of CK's benchmark `kernel_config` that identify a kernel when its CK name is not the library's."""


class TimingError(CkastError, ValueError):
    """A timing table or row ckast cannot use: `file: row N: column: message`."""


@attrs.frozen
class Run:
    """One measured run: the problem, the kernel (library index) and its TFLOPS."""

    problem: Problem
    kernel: int
    tflops: float


@attrs.frozen
class Timings:
    runs: tuple[Run, ...]
    """The runs of kernels applicable to their problem."""
    bad: tuple[str, ...]
    """The refused rows (with `skip_bad`), one line each."""
    failed: int
    """Rows marked is_valid = false (failed runs), dropped."""
    outside: tuple[Run, ...] = ()
    """Runs of kernels ckast finds not applicable to their problem, set apart."""


def read_timings(paths: list[Path], library: Library, skip_bad: bool = False,
                 kernels: KernelTable | None = None, layers: Sequence[str] = KERNEL_ONLY) -> Timings:
    """Every run of the tables at `paths`, their kernels named as in the library or, with `kernels`, as in
    that kernel table (TimingError on the first bad row unless `skip_bad`); runs of kernels not applicable
    under `layers` set apart."""
    runs, bad, failed = [], [], 0
    for path in paths:
        for where, row in _rows(Path(path), library):
            try:
                if not _valid(row.get("is_valid"), where):
                    failed += 1
                    continue
                runs.append(_run(row, where, library, kernels))
            except TimingError as exc:
                if not skip_bad:
                    raise
                bad.append(str(exc))
    usable, outside = _applicable(runs, library, layers)
    if not usable:
        counts = [f"{n} {what}" for n, what in ((len(bad), "bad rows"), (failed, "failed runs"),
                                                 (len(outside), "runs of kernels not applicable to their problem"))
                  if n]
        raise TimingError(f"{', '.join(map(str, paths))}: no usable run"
                          + (f" ({', '.join(counts)})" if counts else ""))
    return Timings(tuple(usable), tuple(bad), failed, tuple(outside))


def _applicable(runs: list[Run], library: Library, layers: Sequence[str]) -> tuple[list[Run], list[Run]]:
    """The runs split into those of kernels applicable to their problem under `layers` and the others."""
    masks: dict[tuple, tuple[Any, Any]] = {}
    usable, outside = [], []
    for run in runs:
        config = library.configs[run.kernel]
        key = (run.problem, config["datatype"], config["layout"] if config["kind"] == "gemm" else None)
        if key not in masks:
            part = library.part(*key)
            masks[key] = (part, applicable(run.problem, part.table, layers))
        part, mask = masks[key]
        (usable if mask[part.index[library.names[run.kernel]]] else outside).append(run)
    return usable, outside


def _run(row: Mapping[str, Any], where: str, library: Library, kernels: KernelTable | None) -> Run:
    column = next((c for c in KERNEL_COLUMNS if _given(row.get(c))), None)
    if column is None:
        raise TimingError(f"{where}: kernel: missing")
    name = row[column]
    if not isinstance(name, str):
        raise TimingError(f"{where}: {column}: {_short(name)} is not a kernel's name (a string)")
    if kernels is not None:
        if name not in kernels.index:
            raise TimingError(f"{where}: kernel: {_short(name)} is not in the kernel table {kernels.path}")
        index = kernels.index[name]
    elif name in library.index:
        index = library.index[name]
    else:
        raise TimingError(f"{where}: kernel: {_short(name)} is not a kernel of the library {library.path}")
    config = library.configs[index]
    arch = row.get("arch")
    if _given(arch) and str(arch) != config["arch"]:
        raise TimingError(f"{where}: arch: {arch} is not the kernel's arch ({config['arch']})")
    try:
        problem = _problem(row, config, where)
    except ProblemError as exc:
        raise TimingError(str(exc)) from None
    return Run(problem, index, _tflops(row, problem, where))


def _problem(row: Mapping[str, Any], config: Mapping[str, Any], where: str) -> Problem:
    if config["kind"] == "gemm":
        fields = {GEMM_ALIASES.get(k, k): v for k, v in row.items()
                  if GEMM_ALIASES.get(k, k) in GEMM_FIELDS and _given(v)}
        for name in ("variant", *D_FIELDS):  # the op the kernel computes, which a row may repeat
            if name in config and str(fields.setdefault(name, config[name])) != str(config[name]):
                raise ProblemError(name, f"{fields[name]} is not the kernel's {name} ({config[name]})", where)
        return gemm_problem(fields, where)
    ndim = config["ndim_spatial"]
    absent = AXES[:3 - ndim]
    fields = {k: v for k, v in row.items() if k in CONV_FIELDS and _given(v) and k != "ndim"}
    for name in list(fields):  # CK's tables fill the axes a lower-rank problem lacks with 1 (sizes) and 0 (pads)
        axis = _SIZES.get(name) or (name[-1] if name[-2:] in ("_d", "_h") else None)
        if axis in absent and _number(fields[name]) == (0 if "pad" in name else 1):
            del fields[name]
    direction = direction_of(config)
    if fields.setdefault("direction", direction) != direction:
        raise ProblemError("direction", f"{fields['direction']} is not the kernel's direction ({direction})", where)
    return conv_problem({**fields, "ndim": ndim}, where)


def _tflops(row: Mapping[str, Any], problem: Problem, where: str) -> float:
    for columns, to_tflops in ((TFLOPS_COLUMNS, lambda v: v), (TIME_COLUMNS, lambda v: problem.flops / v / 1e9)):
        column = next((c for c in columns if _given(row.get(c))), None)
        if column is None:
            continue
        value = _number(row[column])
        if value is None or not math.isfinite(value) or value <= 0:
            raise TimingError(f"{where}: {column}: {_short(row[column])} is not a positive number")
        if value < sys.float_info.min:
            raise TimingError(f"{where}: {column}: {_short(row[column])} is not a physical measurement (a subnormal "
                              f"number, below {sys.float_info.min:g})")
        tflops = to_tflops(value)
        if not sys.float_info.min <= tflops <= sys.float_info.max:
            raise TimingError(f"{where}: {column}: {_short(row[column])} gives {tflops:g} TFLOPS for "
                              f"{problem.flops:g} FLOPs, not a physical measurement")
        return tflops
    raise TimingError(f"{where}: tflops: missing (give tflops or time_ms)")


def _rows(path: Path, library: Library) -> Iterator[tuple[str, dict[str, Any]]]:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        yield from csv_rows(path)
    elif suffix == ".parquet":
        yield from _parquet_rows(path)
    elif suffix == ".json":
        yield from _json_rows(path, library)
    else:
        raise TimingError(f"{path}: not a timing table (.csv, .parquet or .json)")


def csv_rows(path: Path, what: str = "run") -> Iterator[tuple[str, dict[str, str]]]:
    """The rows of the CSV table at `path` (read strictly: `csv_table.read_csv`; each row one `what`), with
    where each is (`file: row N`) and the spaces around its cells stripped; TimingError naming the file and
    the row, line or column if it is not a table."""
    from .csv_table import CsvError, read_csv

    try:
        table = read_csv(path, what)
    except CsvError as exc:
        raise TimingError(str(exc)) from None
    for n, row in table:
        yield f"{path}: row {n}", {k: v.strip() for k, v in row.items()}


def _parquet_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        from ckast.select.models.lightgbm_model import MissingPackage

        raise MissingPackage(f"{path}: reading Parquet needs pyarrow: pip install 'ckast[select]'") from None
    from ckast.input_file import InputFileError, read_input

    try:
        table = pq.read_table(pa.BufferReader(read_input(path)))
    except InputFileError as exc:
        raise TimingError(str(exc)) from None
    except Exception as exc:  # pyarrow raises ArrowInvalid and friends for files that are not Parquet
        raise TimingError(f"{path}: not a Parquet file ({str(exc).splitlines()[0]})") from None
    columns = table.to_pydict()
    for n in range(table.num_rows):
        yield f"{path}: row {n + 1}", {k: v[n] for k, v in columns.items()}


def _json_rows(path: Path, library: Library) -> Iterator[tuple[str, dict[str, Any]]]:
    from ckast.config import ConfigError, read_json

    try:
        data = read_json(path)
    except ConfigError as exc:
        raise TimingError(exc.lines()[0]) from None
    if isinstance(data, dict) and "results" in data:
        yield from _ck_benchmark_rows(path, data, library)
        return
    rows = data.get("rows") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise TimingError(f"{path}: expected a list of rows, {{\"rows\": [...]}} or CK's benchmark results")
    for n, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise TimingError(f"{path}: row {n}: expected an object")
        yield f"{path}: row {n}", row


def _ck_benchmark_rows(path: Path, data: Mapping[str, Any], library: Library) -> Iterator[tuple[str, dict]]:
    """CK's `benchmark_results_<dtype>_<layout>.json` (what its heuristics convert to Parquet)."""
    results = data["results"]
    if not isinstance(results, list):
        raise TimingError(f"{path}: results: expected a list")
    for i, result in enumerate(results):
        config = result.get("kernel_config") if isinstance(result, dict) else None
        benchmarks = result.get("benchmarks") if isinstance(result, dict) else None
        if not isinstance(config, dict) or not isinstance(benchmarks, list):
            raise TimingError(f"{path}: results[{i}]: expected kernel_config and benchmarks")
        name = _ck_kernel(config, library)
        for j, bench in enumerate(benchmarks):
            if not isinstance(bench, dict):
                raise TimingError(f"{path}: results[{i}].benchmarks[{j}]: expected an object")
            yield f"{path}: results[{i}].benchmarks[{j}]", {"kernel": name, **bench}


def _ck_kernel(config: Mapping[str, Any], library: Library) -> Any:
    """The library's name of a kernel CK's benchmark names `config["name"]`: the name itself, else the one
    library kernel whose knobs agree with every identifying knob the config holds."""
    name = config.get("name")
    if not isinstance(name, str) or name in library.index:
        return name  # a name that is not a string is refused with its row
    knobs = {k: config[k] for k in _CK_MATCH_KNOBS if k in config}
    if "dtype" in config:
        knobs["datatype"] = config["dtype"]
    if "layout" in config:
        knobs["layout"] = config["layout"]
    matches = [n for n, c in zip(library.names, library.configs)
               if c["kind"] == "gemm" and all(c.get(k) == v for k, v in knobs.items())]
    return matches[0] if len(knobs) > 2 and len(matches) == 1 else name


def _given(value: Any) -> bool:
    return value is not None and value != "" and not (isinstance(value, float) and math.isnan(value))


_VALID = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def _valid(value: Any, where: str) -> bool:
    """Whether a row's `is_valid` cell says the run succeeded (absent: it did), read alike in every format: a
    boolean, the number 1 or 0, or a string of `_VALID` in any case."""
    if not _given(value):
        return True
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return value == 1
    if isinstance(value, str) and value.strip().lower() in _VALID:
        return _VALID[value.strip().lower()]
    raise TimingError(f"{where}: is_valid: {_short(value)} is not true or false (1 or 0, yes or no)")


def _number(value: Any) -> float | None:
    """A cell as a number (text as `number_text.parse_float` reads it); None if it is none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer beyond every float
            return math.inf
    if isinstance(value, str):
        try:
            return parse_float(value)
        except ValueError:
            return None
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
