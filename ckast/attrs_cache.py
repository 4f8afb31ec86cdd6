"""The methods attrs writes for ckast's classes (`__init__`, `__eq__`, `__hash__`, `__repr__`, ...),
kept compiled between runs.

attrs generates each class's methods as Python source and compiles it when the class is defined:
about a hundred compiles, a fifth of the start of `ckast emit`. After `install()` (the command line
calls it before it imports a command's module), attrs takes each code object from a file in the cache
directory (`attrs/<python>-<bytecode magic>.marshal`) when that file holds one for the same source and
file name; the others are compiled as before and added to the file when the process exits. A code
object from the file is what `compile` returns for that source, so the classes are the same.

One literal differs from process to process: the salt `__hash__` mixes into a class's hash, attrs's
`hash()` of a string (randomized per process), the first item of the tuple it hashes (`return hash((`,
or `_cache_wrapper(hash((` for a class that caches its hash). The file keys each script with that literal
taken out and keeps the value it was compiled with; a hit with another salt gets it swapped in among the
code's constants, so the file stops changing once it holds the classes a command defines. It is bounded
all the same (`LIMIT`: scripts of another attrs or of edited classes are never hits again): a file found
larger is not read, and one that would be written larger keeps only this process's scripts. If attrs no
longer has the function this replaces, `install()` leaves attrs as it is.
"""

from __future__ import annotations
import __future__

import atexit
import importlib.util
import marshal
import os
import re
import sys
from pathlib import Path
from types import CodeType
from typing import Any

from ckast.data_files import cache_root, keep_bytes

_FUNCTION = "_compile_and_eval"
"""attr._make's function that compiles and runs a generated script: (script, globs, locs, filename)."""
_SALT = re.compile(r"(hash\(\(\n\s*)(-?\d+)(,)")
"""The first item of the tuple a generated `__hash__` hashes: the class's salt (no `\\b`: the literal prefix is
what makes the search fast)."""
LIMIT = 2 << 20
"""The cache file's bound in bytes (the classes of every module of ckast take 0.8 MB)."""
Entry = tuple[int, CodeType]
"""A script's salt (0 if it has none) and its code."""


def cache_file() -> Path | None:
    """The file for this interpreter's bytecode (the scripts, keys of the file, tell attrs's versions apart)."""
    root = cache_root()
    tag = f"{sys.implementation.cache_tag}-{importlib.util.MAGIC_NUMBER.hex()}"
    return None if root is None else root / "attrs" / f"{tag}.marshal"


def install() -> bool:
    """Have attrs take its generated methods from the cache file; False where it cannot (no cache
    directory, or an attrs without the function replaced)."""
    # Not keyed by attr.__version__: attrs reads it with importlib.metadata (14 ms).
    from attr import _make

    original = getattr(_make, _FUNCTION, None)
    path = cache_file()
    if original is None or getattr(original, "cached", False) or path is None:
        return False
    codes = _load(path)
    used: set[tuple[str, str]] = set()
    added = False
    # compile() inherits the __future__ flags of its caller: those of attr._make, given explicitly here.
    feature = getattr(_make, "annotations", None)
    flags = feature.compiler_flag if isinstance(feature, __future__._Feature) else 0

    def compile_and_eval(script: str, globs: dict[str, Any] | None, locs: Any = None, filename: str = "") -> None:
        nonlocal added
        salts: list[int] = []
        key = (filename, _SALT.sub(lambda m: salts.append(int(m[2])) or f"{m[1]}#{m[3]}", script, count=1))
        salt = salts[0] if salts else 0
        used.add(key)
        kept = codes.get(key)
        if not _entry(kept):  # none, or not what this module writes: compiled again
            code = compile(script, filename, "exec", flags=flags, dont_inherit=True)
            codes[key] = (salt, code)
            added = True
        else:
            code = kept[1] if kept[0] == salt else _with_constant(kept[1], kept[0], salt)
        eval(code, globs, locs)

    compile_and_eval.cached = True  # type: ignore[attr-defined]
    setattr(_make, _FUNCTION, compile_and_eval)
    pid = os.getpid()
    atexit.register(lambda: added and os.getpid() == pid and _save(path, codes, used))
    return True


def _save(path: Path, codes: dict[tuple[str, str], Entry], used: set[tuple[str, str]]) -> None:
    """Write `codes` to `path`, or only the `used` ones where all of them pass `LIMIT`."""
    data = marshal.dumps(codes)
    if len(data) > LIMIT:
        data = marshal.dumps({key: codes[key] for key in used})
    if len(data) <= LIMIT:
        keep_bytes(path, data)


def _with_constant(code: CodeType, old: int, new: int) -> CodeType:
    """`code` with the int constant `old` replaced by `new`, in it and the functions it defines."""
    consts = tuple(new if type(c) is int and c == old else _with_constant(c, old, new) if isinstance(c, CodeType)
                   else c for c in code.co_consts)
    return code.replace(co_consts=consts)


def _entry(kept: Any) -> bool:
    return type(kept) is tuple and len(kept) == 2 and type(kept[0]) is int and type(kept[1]) is CodeType


def _load(path: Path) -> dict[tuple[str, str], Entry]:
    """The file's scripts; none from a file that is missing, unreadable or larger than `LIMIT`."""
    try:
        with path.open("rb") as f:
            data = f.read(LIMIT + 1)
        codes = marshal.loads(data) if len(data) <= LIMIT else {}
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return codes if isinstance(codes, dict) else {}
