"""attrs's generated methods kept compiled between runs (`ckast.attrs_cache`): a second process compiles
none of them, and its classes are those attrs builds, the per-process hash salt included; the file does
not change from one process to the next, stays within its bound and is ignored when it cannot be read."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys

import pytest

from ckast.attrs_cache import LIMIT

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

@attrs.frozen(cache_hash=True)
class Cached:
    a: int

p = Point(1, "3")
assert p == Point(1, 3) and p != Point(1, 4) and p.y == 3 and repr(p) == "Point(x=1, y=3)"
assert Box() == Box([]) and Box([1]).items == [1]
salt = hash(_make._generate_unique_filename(Point, "hash"))  # what attrs itself would have used
assert salt in Point.__hash__.__code__.co_consts, "the salt of this process"
assert hash(p) == hash(Point(1, 3))
salt = hash(_make._generate_unique_filename(Cached, "hash"))
assert salt in Cached.__hash__.__code__.co_consts and hash(Cached(1)) == hash(Cached(1))
import IMPORT
print("ok")
"""


def run(cache, seed: str, no_compile: bool, module: str = "os") -> None:
    env = {**os.environ, "CKAST_CACHE_DIR": str(cache), "PYTHONHASHSEED": seed}
    code = CLASSES.replace("NO_COMPILE", str(no_compile)).replace("IMPORT", module)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr[-3000:]


def test_a_second_process_compiles_no_attrs_method(tmp_path):
    run(tmp_path, "1", no_compile=False)
    (path,) = (tmp_path / "attrs").glob("*.marshal")
    kept = path.read_bytes()
    run(tmp_path, "2", no_compile=True)  # another hash seed: another salt, swapped into the kept code
    run(tmp_path, "1", no_compile=True)
    assert path.read_bytes() == kept


def test_the_file_does_not_change_with_the_hash_seed(tmp_path):
    """ckast's own classes (the selection language's nodes cache their hash): a second process with another
    salt finds every script and writes nothing; the file grew with each process before."""
    run(tmp_path, "1", no_compile=False, module="ckast.select.expr")
    (path,) = (tmp_path / "attrs").glob("*.marshal")
    kept, stat = path.read_bytes(), path.stat()
    run(tmp_path, "2", no_compile=True, module="ckast.select.expr")
    assert path.read_bytes() == kept and path.stat().st_mtime_ns == stat.st_mtime_ns
    assert all("hash((\n" not in script or "#," in script for _, script in marshal.loads(kept))


def _junk_file(tmp_path, data):
    """The cache file holding `data` (bytes, or made from a good file's dict)."""
    (tmp_path / "attrs").mkdir()
    run(tmp_path / "probe", "1", no_compile=False)
    (probe,) = (tmp_path / "probe" / "attrs").glob("*.marshal")
    path = tmp_path / "attrs" / probe.name
    path.write_bytes(data if isinstance(data, bytes) else marshal.dumps(data(marshal.loads(probe.read_bytes()))))
    return path


def test_a_file_past_the_bound_is_not_read_and_is_rewritten_within_it(tmp_path):
    junk = {("<attrs generated methods old.Class>", str(i)): (0, compile("pass", "x", "exec")) for i in range(3)}
    junk[("<attrs generated methods old.Big>", "x" * LIMIT)] = (0, compile("pass", "x", "exec"))
    path = _junk_file(tmp_path, marshal.dumps(junk))
    run(tmp_path, "1", no_compile=False)
    kept = marshal.loads(path.read_bytes())
    assert path.stat().st_size <= LIMIT and not any(f.startswith("<attrs generated methods old.") for f, _ in kept)
    run(tmp_path, "2", no_compile=True)


@pytest.mark.parametrize("data", [b"\x00garbage", marshal.dumps([1, 2]), lambda d: dict.fromkeys(d, 3),
                                  lambda d: {k: (v[0], "code") for k, v in d.items()}],
                         ids=["bytes", "list", "entries", "codes"])
def test_an_unreadable_file_is_ignored_and_replaced(tmp_path, data):
    path = _junk_file(tmp_path, data)
    run(tmp_path, "1", no_compile=False)
    assert isinstance(marshal.loads(path.read_bytes()), dict)
    run(tmp_path, "2", no_compile=True)


def test_without_a_cache_directory_nothing_is_installed(tmp_path):
    env = {**os.environ, "CKAST_CACHE_DIR": "off"}
    code = "from ckast import attrs_cache; print(attrs_cache.install())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout == "False\n"
