"""Kernel columns: a library's configs as numpy columns, built once and read by every problem.

`KernelTable.of(configs)` takes the knob dicts of `ckast.config.as_dict` (a manifest's `config`
entries) and makes one column per knob: a float64 column for numbers and booleans (NaN where a
config has no such knob, e.g. `pad_m` of a conv kernel), and a categorical column (integer codes
into the distinct values, `None` for a config without the knob) for strings. Derived columns are
added from packaged data, never parsed from a name: `dtype_bytes` (bytes per element of the
kernel's `datatype`, from `archs.toml`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ckast.arch import DTYPES

DERIVED = ("dtype_bytes",)


@attrs.frozen(eq=False)
class KernelTable:
    """Columns of `size` kernels. `cache` holds the values of kernel-only feature subtrees."""

    size: int
    numbers: Mapping[str, np.ndarray]
    categories: Mapping[str, tuple[np.ndarray, tuple[str | None, ...]]]
    cache: dict = attrs.field(factory=dict, repr=False)

    @classmethod
    def of(cls, configs: Sequence[Mapping[str, Any]]) -> KernelTable:
        names = list(dict.fromkeys(name for c in configs for name in c))
        numbers: dict[str, np.ndarray] = {}
        categories: dict[str, tuple[np.ndarray, tuple[str | None, ...]]] = {}
        for name in names:
            values = [c.get(name) for c in configs]
            kinds = {type(v) for v in values if v is not None}
            if kinds <= {bool, int, float}:
                numbers[name] = np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
            elif kinds == {str}:
                categories[name] = _categorical(values)
            else:
                raise TypeError(f"knob {name!r} mixes value types {sorted(t.__name__ for t in kinds)}")
        datatypes = [c.get("datatype") for c in configs]
        numbers["dtype_bytes"] = np.array(
            [float(DTYPES[d].size) if d in DTYPES else np.nan for d in datatypes], dtype=np.float64)
        return cls(len(configs), numbers, categories)

    def __len__(self) -> int:
        return self.size

    def numeric(self, name: str) -> np.ndarray:
        """Float64 column `name`; all NaN when no config has the knob (a categorical column is
        refused: map it with a lookup)."""
        if name in self.categories:
            raise KeyError(f"kernel column {name!r} is categorical, not numeric")
        found = self.numbers.get(name)
        return np.full(self.size, np.nan) if found is None else found

    def categorical(self, name: str) -> tuple[np.ndarray, tuple[str | None, ...]]:
        """(codes, values) of categorical column `name`: kernel i holds `values[codes[i]]` (None
        where a config has no such knob)."""
        if name in self.numbers:
            raise KeyError(f"kernel column {name!r} is numeric, not categorical")
        found = self.categories.get(name)
        return (np.zeros(self.size, dtype=np.intp), (None,)) if found is None else found

    def labels(self, name: str) -> np.ndarray:
        """Categorical column `name` as an object array of its values (None where absent)."""
        codes, values = self.categorical(name)
        return np.array(values, dtype=object)[codes]


def _categorical(values: list[str | None]) -> tuple[np.ndarray, tuple[str | None, ...]]:
    index: dict[str | None, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.intp, count=len(values))
    return codes, tuple(index)
