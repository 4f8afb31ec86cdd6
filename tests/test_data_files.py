"""Packaged TOML data read through the JSON cache is the TOML file's tables, and follows its edits."""

import tomllib
from pathlib import Path

from ckast.data_files import load_toml

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
