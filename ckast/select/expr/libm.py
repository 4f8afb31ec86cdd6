"""The C library's math functions over numpy arrays.

numpy's own transcendental functions (SVML on AVX-512 machines) differ from the C library's in the last
bit for some arguments: `log2` for about 1 in 10,000, `exp` and `expm1` for about 1 in 10. LightGBM's C++
and the emitted selector call the C library's, so Python computes with them too (`math.*`, element by
element), and its values do not depend on the CPU.
"""

from __future__ import annotations

import math

import numpy as np


def libm(function, x: np.ndarray) -> np.ndarray:
    """`function` (a `math` function) of each element of `x`; an overflow is infinity, as in C."""

    def one(v: float) -> float:
        try:
            return function(v)
        except OverflowError:
            return math.inf

    x = np.asarray(x, dtype=np.float64)
    return np.fromiter((one(v) for v in x.ravel().tolist()), dtype=np.float64, count=x.size).reshape(x.shape)
