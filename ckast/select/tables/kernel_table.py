"""CK's kernel tables: which config each kernel name of CK's timing tables was built as, and so which library
kernel its runs are of.

CK's benchmark runners name a kernel by a few of its knobs and build the nearest config their codegen lists,
so a CK name is not a kernel (CK's MI355X conv table: 30 names, 13 kernels). A kernel table, a CSV of the form
of `examples/ck-real/*_kernels.csv`, says per name how it was built. Each name resolves to the one library
kernel whose config agrees with every knob its row gives (by the config, never by a name); names built alike
resolve to one kernel, whose runs are then repeated measurements of it.

Columns, one row per name (an empty cell of an optional column says nothing):

- `csv_kernel_name`: the name CK's timing tables use, once per table.
- `built_tile`, `built_wave`, `built_warp_tile`: `MxNxK` (tile_*, warp_*, warp_tile_*).
- `built_pipeline`, `scheduler`, `epilogue`: ckast's values of those knobs.
- `layout`: a GEMM layout (`rcr`, ...), or CK's input/weight/output layout names of one conv rank
  (`NHWGC/GKYXC/NHWGK`, or the input's alone); it tells GEMM tables from conv ones.
- `dtype`: the datatype, optionally with the tensors of that type and the accumulator (`bf16(in,wei,out) fp32
  acc`; GEMM tensors a, b, c).
- `arch`.
- optional knobs: `double_smem_buffer` (true/false), `vector_a_b_c` (conv, `AxBxC`), `num_wave_groups`,
  `pad_mnk` (`true,false,false`; conv all true, as ckast's conv kernels always pad), `persistent` (GEMM),
  `ndim` (conv, the layout's rank), `variant`.
- checked, not matched: `block_size` (the waves times the arch's wavefront size), `block_per_cu` (a positive
  integer: ckast derives the occupancy hint, as CK's generators do), `codegen_kernel_name` (a label).
- `identical_to`: the other names built alike, `;`-separated; when the column is given, exactly the other
  rows whose every other column is equal.

A bad table (a missing or unknown column, a bad value, a name twice, `identical_to` naming an unknown name or
disagreeing with the built configs, a row that no library kernel or several match, two names of one library
kernel that are not identical) is a `TimingError` naming the file, the row and the column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ckast.arch import ARCH_NAMES, arch_spec
from ckast.config.ck_spellings import CONV_PADS_FIXED, VALUES, tensor_types
from ckast.config.errors import shorten
from ckast.config.knobs import (CONV, CONV_LAYOUTS, DATATYPES, EPILOGUES, GEMM, GEMM_LAYOUTS, PIPELINES, SCHEDULERS,
                                VARIANTS)
from ckast.number_text import parse_int

from ckast.select.serving.library import Library
from .timings import TimingError, csv_rows

NAME, IDENTICAL = "csv_kernel_name", "identical_to"
REQUIRED = (NAME, "built_tile", "built_wave", "built_warp_tile", "built_pipeline", "scheduler", "epilogue", "layout",
            "dtype", "arch")
OPTIONAL = ("double_smem_buffer", "vector_a_b_c", "num_wave_groups", "pad_mnk", "persistent", "ndim", "variant",
            "block_size", "block_per_cu", "codegen_kernel_name", IDENTICAL)
_DIMS = {"built_tile": "tile", "built_wave": "warp", "built_warp_tile": "warp_tile"}
_WORDS: dict[str, tuple[str, Mapping[str, tuple[str, ...]]]] = {
    "built_pipeline": ("pipeline", PIPELINES),
    "scheduler": ("scheduler", dict.fromkeys((GEMM, CONV), SCHEDULERS)),
    "epilogue": ("epilogue", dict.fromkeys((GEMM, CONV), EPILOGUES)),
    "variant": ("variant", VARIANTS),
}
"""Column -> (knob, its values per kind)."""
_ONLY = {"vector_a_b_c": CONV, "ndim": CONV, "persistent": GEMM}
_ROLES = {CONV: ("in", "wei", "out"), GEMM: ("a", "b", "c")}
_DTYPE = re.compile(r"(\w+)(?:\(([\w,]+)\))?(?:\s+(\w+)\s+acc)?")


@attrs.frozen
class KernelTable:
    """A kernel table read against a library: `index` maps each CK name to its library kernel (index)."""

    path: Path
    index: Mapping[str, int]


@attrs.frozen
class _Row:
    number: int
    name: str
    cells: Mapping[str, str]
    values: Mapping[str, Any]
    """Column -> its value as read (what `identical_to` compares)."""
    knobs: Mapping[str, Any]
    """Knob -> value: what a library kernel must hold."""
    columns: Mapping[str, str]
    """Knob -> the column it came from."""


def read_kernel_table(path: Path, library: Library) -> KernelTable:
    """The CK names of the kernel table at `path` and the library kernel each was built as (TimingError)."""
    path = Path(path)
    rows: list[_Row] = []
    first: dict[str, int] = {}
    for number, (where, cells) in enumerate(csv_rows(path, "kernel"), start=1):
        if number == 1:
            _check_columns(path, cells)
        row = _row(number, where, cells)
        if row.name in first:
            raise TimingError(f"{where}: {NAME}: {row.name} is also row {first[row.name]}")
        first[row.name] = number
        rows.append(row)
    if IDENTICAL in rows[0].cells:
        _check_identical(path, rows)
    index: dict[str, int] = {}
    holder: dict[int, _Row] = {}
    by_key = _by_key(library)
    for row in rows:
        kernel = _match(path, row, library, by_key)
        other = holder.setdefault(kernel, row)
        if other is not row and other.values != row.values:
            column = _differing(other, row)
            raise TimingError(f"{path}: row {row.number}: {column}: {row.name} is library kernel "
                              f"{library.names[kernel]}, as is {other.name} (row {other.number}), which differs in "
                              f"{column} ({other.cells.get(column, '')!r}, not {row.cells.get(column, '')!r})")
        index[row.name] = kernel
    return KernelTable(path, index)


def _check_columns(path: Path, cells: Mapping[str, str]) -> None:
    for column in cells:
        if column not in REQUIRED and column not in OPTIONAL:
            raise TimingError(f"{path}: column {column!r}: not a kernel-table column (columns: "
                              f"{', '.join(REQUIRED + OPTIONAL)})")
    for column in REQUIRED:
        if column not in cells:
            raise TimingError(f"{path}: column {column}: missing")


def _row(number: int, where: str, cells: Mapping[str, str]) -> _Row:
    """One row's knobs and values (TimingError naming the column of a bad cell)."""
    for column in REQUIRED:
        if not cells.get(column):
            raise TimingError(f"{where}: {column}: missing")
    kind, layout, ndim = _layout(where, cells["layout"])
    knobs: dict[str, Any] = {"kind": kind, "layout": layout}
    columns = {"kind": "layout", "layout": "layout"}
    values: dict[str, Any] = {"layout": (kind, layout, ndim)}

    def put(column: str, value: Any, **held: Any) -> None:
        values[column] = value
        knobs.update(held)
        columns.update(dict.fromkeys(held, column))

    given = {c: v for c, v in cells.items() if v and c not in (NAME, IDENTICAL, "layout")}
    for column, text in given.items():
        if column in _ONLY and _ONLY[column] != kind:
            raise TimingError(f"{where}: {column}: a {'GEMM' if kind == GEMM else 'grouped-conv'} kernel has none "
                              "(leave the cell empty)")
        if column in _DIMS:
            dims = _dims(where, column, text)
            put(column, dims, **{f"{_DIMS[column]}_{d}": v for d, v in zip("mnk", dims)})
        elif column in _WORDS:
            knob, allowed = _WORDS[column]
            if text not in allowed[kind]:
                raise TimingError(f"{where}: {column}: {text!r} is not a ckast {knob} of {kind} kernels "
                                  f"({', '.join(allowed[kind])})")
            put(column, text, **{knob: text})
        elif column == "dtype":
            datatype = _datatype(where, kind, text)
            put(column, datatype, datatype=datatype)
        elif column == "arch":
            if text not in ARCH_NAMES:
                raise TimingError(f"{where}: arch: {text!r} is not an arch ckast knows ({', '.join(ARCH_NAMES)})")
            put(column, text, arch=text)
        elif column in ("double_smem_buffer", "persistent"):
            flag = _bool(where, column, text)
            put(column, flag, **{column: flag})
        elif column == "pad_mnk":
            pads = tuple(_bool(where, column, t) for t in text.split(","))
            if len(pads) != 3:
                raise TimingError(f"{where}: pad_mnk: {text!r} is not three true/false values (M, N, K)")
            if kind == CONV and not all(pads):
                raise TimingError(f"{where}: pad_mnk: {text!r}: {CONV_PADS_FIXED}")
            put(column, pads, **({f"pad_{d}": p for d, p in zip("mnk", pads)} if kind == GEMM else {}))
        elif column == "vector_a_b_c":
            vectors = _dims(where, column, text)
            put(column, vectors, **{f"vector_size_{x}": v for x, v in zip("abc", vectors)})
        elif column == "ndim":
            rank = _int(where, column, text)
            if ndim is not None and rank != ndim:
                raise TimingError(f"{where}: ndim: {rank} is not the rank of layout {cells['layout']} ({ndim})")
            put(column, rank, ndim_spatial=rank)
        elif column in ("num_wave_groups", "block_per_cu", "block_size"):
            count = _int(where, column, text)
            put(column, count, **({column: count} if column == "num_wave_groups" else {}))
        else:  # codegen_kernel_name: a label
            put(column, text)
    if "block_size" in values:
        waves = values["built_wave"][0] * values["built_wave"][1] * values["built_wave"][2]
        lanes = arch_spec(values["arch"]).warp_size
        if values["block_size"] != waves * lanes:
            raise TimingError(f"{where}: block_size: {values['block_size']} is not the {cells['built_wave']} waves' "
                              f"{waves * lanes} threads ({lanes} per wave on {values['arch']})")
    return _Row(number, cells[NAME], dict(cells), values, knobs, columns)


def _layout(where: str, text: str) -> tuple[str, str, int | None]:
    """(kind, ckast layout, conv rank or None) of a `layout` cell."""
    if text in GEMM_LAYOUTS:
        return GEMM, text, None
    names = text.split("/")
    spellings = [VALUES["layout"].get(name) for name in names]
    layout = spellings[0].accepted if spellings[0] is not None else None
    if (layout is None or len(names) not in (1, 3) or len(set(names)) != len(names)
            or any(s is None or s.accepted is not None or s.ckast != (layout,) for s in spellings[1:])):
        raise TimingError(f"{where}: layout: {text!r} is neither a GEMM layout ({', '.join(GEMM_LAYOUTS)}) nor CK's "
                          "input/weight/output layout names of one conv rank (NHWGC/GKYXC/NHWGK)")
    rank = next((r for r, name in CONV_LAYOUTS.items() if name == layout), None)
    return CONV, layout, rank


def _datatype(where: str, kind: str, text: str) -> str:
    match = _DTYPE.fullmatch(text)
    name = match.group(1) if match else None
    if name not in DATATYPES[kind]:
        raise TimingError(f"{where}: dtype: {text!r} is not a ckast datatype of {kind} kernels "
                          f"({', '.join(DATATYPES[kind])}), optionally as bf16(in,wei,out) fp32 acc")
    types = tensor_types(kind, name)
    roles = ",".join(role for role, t in zip(_ROLES[kind], types) if t == name)
    if match.group(2) is not None and match.group(2) != roles:
        raise TimingError(f"{where}: dtype: {text!r}: the {name} tensors of a {kind} kernel are {roles}")
    if match.group(3) is not None and match.group(3) != types[3]:
        raise TimingError(f"{where}: dtype: {text!r}: a {name} {kind} kernel accumulates in {types[3]}")
    return name


def _dims(where: str, column: str, text: str) -> tuple[int, int, int]:
    parts = text.split("x")
    dims = tuple(_positive(p) for p in parts)
    if len(dims) != 3 or None in dims:
        raise TimingError(f"{where}: {column}: {shorten(repr(text))} is not three positive integers AxBxC")
    return dims  # type: ignore[return-value]


def _bool(where: str, column: str, text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise TimingError(f"{where}: {column}: {text!r} is not true or false")
    return text.lower() == "true"


def _int(where: str, column: str, text: str) -> int:
    value = _positive(text)
    if value is None:
        raise TimingError(f"{where}: {column}: {shorten(repr(text))} is not a positive integer")
    return value


def _positive(text: str) -> int | None:
    """`text` as a positive integer (`number_text.parse_int`, without spaces), else None."""
    if text != text.strip():
        return None
    try:
        value = parse_int(text)
    except ValueError:
        return None
    return value if value > 0 else None


def _check_identical(path: Path, rows: list[_Row]) -> None:
    """Each row's `identical_to` lists exactly the other rows built alike (rows grouped by their values once)."""
    by_name = {row.name: row for row in rows}
    alike: dict[tuple, list[_Row]] = {}
    for row in rows:
        alike.setdefault(_built(row), []).append(row)
    for row in rows:
        where = f"{path}: row {row.number}: {IDENTICAL}"
        listed = [name.strip() for name in row.cells.get(IDENTICAL, "").split(";") if name.strip()]
        for name in listed:
            other = by_name.get(name)
            if other is None:
                raise TimingError(f"{where}: {name} is not a {NAME} of the table")
            if other is row:
                raise TimingError(f"{where}: lists the row's own name")
            if other.values != row.values:
                column = _differing(row, other)
                raise TimingError(f"{where}: {name} (row {other.number}) is built differently: {column} "
                                  f"{other.cells.get(column, '')!r}, not {row.cells.get(column, '')!r}")
        named = set(listed)
        missing = next((other for other in alike[_built(row)] if other is not row and other.name not in named), None)
        if missing is not None:
            raise TimingError(f"{where}: omits {missing.name} (row {missing.number}), built alike")


def _built(row: _Row) -> tuple:
    """A row's values as a key: rows built alike have equal keys."""
    return tuple(sorted(row.values.items()))


def _differing(a: _Row, b: _Row) -> str:
    return next(c for c in (*REQUIRED, *OPTIONAL) if a.values.get(c) != b.values.get(c))


_MISSING = object()
_KEY = ("kind", "layout", "datatype", "arch", "pipeline", "scheduler", "epilogue",
        *(f"{p}_{d}" for p in ("tile", "warp", "warp_tile") for d in "mnk"))
"""The knobs of the required columns, which every row gives."""


def _match(path: Path, row: _Row, library: Library, by_key: Mapping[tuple, list[int]]) -> int:
    """The one library kernel whose config holds every knob of `row` (looked up among the kernels `by_key` holding
    the knobs every row gives)."""
    where = f"{path}: row {row.number}"
    matches = [i for i in by_key.get(tuple(row.knobs.get(k, _MISSING) for k in _KEY), ())
               if all(library.configs[i].get(k, _MISSING) == v for k, v in row.knobs.items())]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(sorted(library.names[i] for i in matches)[:3])
        raise TimingError(f"{where}: {NAME}: {row.name} is built as {len(matches)} kernels of the library "
                          f"{library.path} ({names}{', ...' if len(matches) > 3 else ''}): the row does not tell "
                          "them apart (a variant column would)")

    def agreeing(i: int) -> tuple[int, tuple[bool, ...]]:
        """How many of the row's knobs kernel i holds, then which, earlier columns first."""
        held = tuple(library.configs[i].get(k, _MISSING) == v for k, v in row.knobs.items())
        return sum(held), held

    nearest = max(range(len(library.configs)), key=agreeing)
    config = library.configs[nearest]
    knob = next(k for k, v in row.knobs.items() if config.get(k, _MISSING) != v)
    column = row.columns[knob]
    held = [str(config.get(k, "none")).lower() if isinstance(config.get(k), bool) else str(config.get(k, "none"))
            for k, c in row.columns.items() if c == column and k != "kind"]
    raise TimingError(f"{where}: {column}: no kernel of the library {library.path} is built as {row.name} "
                      f"({row.cells[column]!r}); the nearest, {library.names[nearest]}, has "
                      f"{('x' if column in _DIMS or column == 'vector_a_b_c' else ',').join(held)}")


def _by_key(library: Library) -> dict[tuple, list[int]]:
    """The library's kernels by their `_KEY` knobs (built once per table: its rows are matched in one pass)."""
    index: dict[tuple, list[int]] = {}
    for i, config in enumerate(library.configs):
        index.setdefault(tuple(config.get(k, _MISSING) for k in _KEY), []).append(i)
    return index
