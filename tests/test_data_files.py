"""Packaged TOML data read through the JSON cache is the TOML file's tables, and follows its edits; every
cache directory is bounded (files and bytes), as are the template cache's builds and templates per shape."""

import os
import tomllib
from pathlib import Path

from ckast import data_files
from ckast.data_files import keep_bytes, load_toml
from ckast.nodes.marks import Form
from ckast.render import cache
from ckast.render.templates import KernelTemplate

PACKAGE = Path(__file__).resolve().parent.parent / "ckast"


def test_every_packaged_toml_reads_the_same_cached_or_not(monkeypatch, tmp_path):
    monkeypatch.setenv("CKAST_CACHE_DIR", str(tmp_path))
    for path in sorted(PACKAGE.rglob("*.toml")):
        want = tomllib.loads(path.read_text())
        assert load_toml(path) == want  # parsed, then kept
        assert load_toml(path) == want  # read back from the cache
    assert len(list((tmp_path / "toml").glob("*.json"))) == len(list(PACKAGE.rglob("*.toml")))


def test_an_edited_file_is_parsed_again(monkeypatch, tmp_path):
    monkeypatch.setenv("CKAST_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "x.toml"
    data.write_text("a = 1\n")
    assert load_toml(data) == {"a": 1}
    data.write_text("a = 2\n")
    assert load_toml(data) == {"a": 2}
    monkeypatch.setenv("CKAST_CACHE_DIR", "off")
    data.write_text("a = 3\n")
    assert load_toml(data) == {"a": 3}


def _aged(path: Path, age: int) -> None:
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns - age * 10**9))


def test_a_cache_directory_keeps_its_newest_files_within_the_bounds(monkeypatch, tmp_path):
    monkeypatch.setattr(data_files, "ENTRIES", 5)
    for i in range(5):
        keep_bytes(tmp_path / f"{i}.json", b"x")
        _aged(tmp_path / f"{i}.json", 100 - i)
    (tmp_path / ".4.json.123.tmp").write_bytes(b"another process's file being written")
    keep_bytes(tmp_path / "0.json", b"rewritten")  # not a new file: nothing removed
    assert len(list(tmp_path.glob("*.json"))) == 5
    keep_bytes(tmp_path / "new.json", b"x")  # the sixth: the oldest written (1.json) goes
    assert sorted(p.name for p in tmp_path.iterdir()) == [".4.json.123.tmp", "0.json", "2.json", "3.json", "4.json",
                                                          "new.json"]
    monkeypatch.setattr(data_files, "BYTES", 2500)
    for i in range(3):
        keep_bytes(tmp_path / f"big{i}.json", b"x" * 1000)
        _aged(tmp_path / f"big{i}.json", 50 - i)
    assert sorted(p.name for p in tmp_path.glob("big*")) == ["big1.json", "big2.json"]


def _template(i: int) -> KernelTemplate:
    return KernelTemplate((), (), (Form((f"text {i}",), ()),), ())


def test_the_template_cache_keeps_the_last_builds_and_the_newest_templates_of_a_shape(tmp_path):
    for i in range(cache.BUILDS + 2):
        cache.save(tmp_path / f"build{i}", {("shape",): [_template(0)]}, {})
        _aged(tmp_path / f"build{i}", 100 - i)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"build{i}" for i in range(2, cache.BUILDS + 2)]
    directory = tmp_path / "build2"
    cache.save(directory, {("shape",): [_template(i) for i in range(1, cache.PER_SHAPE + 5)]}, {})
    kept = cache.stored(directory, ("shape",))
    assert len(kept) == cache.PER_SHAPE and cache.template(kept[-1]) == _template(cache.PER_SHAPE + 4)
