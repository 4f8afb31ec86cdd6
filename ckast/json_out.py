"""The one JSON encoder for what ckast writes (output files, `--json` output, cache entries): strict JSON.

`json.dumps` writes `NaN` and `Infinity` by default, which no JSON parser reads (ckast's own included). Every
JSON ckast writes goes through `dumps`, which refuses them: a value that is not finite must be checked (or
written as null) before it gets here, and a ValueError is a bug, never a file no one can read.
"""

from __future__ import annotations

import json
from typing import Any


def dumps(value: Any, **options: Any) -> str:
    """`json.dumps(value, **options)`, refusing NaN and infinities (ValueError)."""
    return json.dumps(value, allow_nan=False, **options)
