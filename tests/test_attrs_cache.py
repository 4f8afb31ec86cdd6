"""attrs's generated methods kept compiled between runs (`ckast.attrs_cache`): a second process compiles
none of them, and its classes are those attrs builds, the per-process hash salt included."""

from __future__ import annotations

import os
import subprocess
import sys

CLASSES = """
import builtins, attrs
from attr import _make
from ckast import attrs_cache
assert attrs_cache.install()
if NO_COMPILE:
    compile_ = builtins.compile
    def refuse(source, filename, *args, **kwargs):
        assert not str(filename).startswith("<attrs generated"), filename
        return compile_(source, filename, *args, **kwargs)
    builtins.compile = refuse

@attrs.frozen
class Point:
    x: int
    y: int = attrs.field(default=2, converter=int)

@attrs.define(eq=True)
class Box:
    items: list = attrs.Factory(list)

p = Point(1, "3")
assert p == Point(1, 3) and p != Point(1, 4) and p.y == 3 and repr(p) == "Point(x=1, y=3)"
assert Box() == Box([]) and Box([1]).items == [1]
salt = hash(_make._generate_unique_filename(Point, "hash"))  # what attrs itself would have used
assert salt in Point.__hash__.__code__.co_consts, "the salt of this process"
assert hash(p) == hash(Point(1, 3))
print("ok")
"""


def run(cache, seed: str, no_compile: bool) -> None:
    env = {**os.environ, "CKAST_CACHE_DIR": str(cache), "PYTHONHASHSEED": seed}
    code = CLASSES.replace("NO_COMPILE", str(no_compile))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr[-3000:]


def test_a_second_process_compiles_no_attrs_method(tmp_path):
    run(tmp_path, "1", no_compile=False)
    assert len(list((tmp_path / "attrs").glob("*.marshal"))) == 1
    run(tmp_path, "2", no_compile=True)  # another hash seed: another salt, swapped into the kept code
    run(tmp_path, "1", no_compile=True)


def test_without_a_cache_directory_nothing_is_installed(tmp_path):
    env = {**os.environ, "CKAST_CACHE_DIR": "off"}
    code = "from ckast import attrs_cache; print(attrs_cache.install())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout == "False\n"
