"""The per-selection index (`ckast.library.index`): a warm fresh `generate` takes the accepted kernels from
it, exactly as `build` gives them, and anything else than an index of the same key is a miss."""

from __future__ import annotations

from click.testing import CliRunner

import ckast.library
from ckast.cli import main
from ckast.library import Selection, build, index

from .kernels import output_tree

SMALL = Selection("default", "gfx942", "ck-2026.06", ("fp16",), (2,))
ARGS = ["--rule-set", "default", "--arch", "gfx942", "--datatype", "fp16", "--ndim", "2", "--ck-api", "ck-2026.06"]


def counts_of(library) -> dict[str, int]:
    return {"proposed": len(library.entries), "refused": len(library.refused),
            "merged": len(library.with_status("merged"))}


def test_an_index_gives_back_the_kernels_and_counts_build_gave(tmp_path, monkeypatch):
    monkeypatch.setenv("CKAST_CACHE_DIR", str(tmp_path))
    library = build(SMALL)
    assert index.load(SMALL) is None
    index.keep(SMALL, library.kernels(), counts_of(library))
    kernels, counts = index.load(SMALL)
    assert kernels == library.kernels() and counts == counts_of(library)
    assert [k.config for k in kernels] == [k.config for k in library.kernels()]  # every knob, same values and types
    assert index.load(Selection("default", "gfx942", "ck-2025.11", ("fp16",), (2,))) is None  # another selection


def test_a_changed_key_or_an_unreadable_file_is_a_miss(tmp_path, monkeypatch):
    monkeypatch.setenv("CKAST_CACHE_DIR", str(tmp_path))
    library = build(SMALL)
    index.keep(SMALL, library.kernels(), counts_of(library))
    monkeypatch.setattr(index, "selection_key", lambda selection: "another ckast")
    assert index.load(SMALL) is None
    monkeypatch.undo()
    monkeypatch.setenv("CKAST_CACHE_DIR", str(tmp_path))
    index.index_path(SMALL).write_bytes(b"\x80\x05truncated")
    assert index.load(SMALL) is None


def test_a_value_json_does_not_hold_as_it_is_keeps_no_index(tmp_path, monkeypatch):
    monkeypatch.setenv("CKAST_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(index, "PLAIN", (int, str, type(None)))  # as if a knob held a value JSON would change
    library = build(SMALL)
    index.keep(SMALL, library.kernels(), counts_of(library))
    assert not index.index_path(SMALL).exists() and index.load(SMALL) is None


def test_no_cache_directory_keeps_no_index(monkeypatch):
    monkeypatch.setenv("CKAST_CACHE_DIR", "off")
    library = build(SMALL)
    index.keep(SMALL, library.kernels(), counts_of(library))
    assert index.index_path(SMALL) is None and index.load(SMALL) is None


def test_generate_from_the_index_writes_the_same_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("CKAST_CACHE_DIR", str(tmp_path / "cache"))
    outputs = []
    for name in ("cold", "indexed"):
        if name == "indexed":  # no enumeration, no validation: the library is not built
            monkeypatch.setattr(ckast.library, "build", lambda selection: 1 / 0)
        result = CliRunner().invoke(main, ["generate", *ARGS, "-j", "1", "-o", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
        outputs.append(result.output.split(" in ")[0].replace(name, ""))
        assert index.index_path(SMALL).is_file()
    assert outputs[0] == outputs[1]  # the same counts in the summary line
    assert output_tree(tmp_path / "cold") == output_tree(tmp_path / "indexed")
