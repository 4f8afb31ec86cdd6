"""`ckast jit`'s include folders: quoted includes resolve next to the includer, then in the -I folders (by
default the library a selector's manifest records), then to the host model's headers; an include found
nowhere names the folders searched; bad folders, records and files are refused with exit 2."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.hostmodel.sources import SourceError, collect
from ckast.select.cxx.record import recorded_library

from .conftest import EXAMPLES

PROFILE = "ck-2026.06"


def _write(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_quoted_includes_search_the_includer_then_the_include_folders_then_the_model(tmp_path):
    unit, first, second = tmp_path / "unit", tmp_path / "first", tmp_path / "second"
    root = _write(unit / "root.hpp", '#pragma once\n#include "near.hpp"\n#include "lib/only.hpp"\n'
                                     '#include "ck_tile/host.hpp"\n#include "ck_tile/core.hpp"\n')
    near = _write(unit / "near.hpp")
    _write(first / "near.hpp")  # the includer's folder comes first
    only = _write(second / "lib" / "only.hpp")
    shadow = _write(first / "ck_tile" / "core.hpp")  # an include folder comes before the model's headers
    sources = collect([root], unit, frozenset({"ck_tile/host.hpp", "ck_tile/core.hpp"}), PROFILE, [first, second])
    assert sources.files == (near, only, shadow, root)


def test_an_include_found_nowhere_names_itself_its_file_and_line_and_the_folders_searched(tmp_path):
    root = _write(tmp_path / "sel" / "root.hpp", '#pragma once\n\n#include "wrappers/all.hpp"\n')
    with pytest.raises(SourceError) as info:
        collect([root], tmp_path / "sel", frozenset(), PROFILE, [tmp_path / "a", tmp_path / "b"])
    assert str(info.value) == (f'{root}:3: "wrappers/all.hpp" is in none of the folders searched ({tmp_path / "sel"}, '
                               f"{tmp_path / 'a'}, {tmp_path / 'b'}) nor a header of the {PROFILE} host model")


def test_bad_folders_files_and_selector_and_driver_records_are_refused_before_anything_is_compiled(tmp_path):
    header = _write(tmp_path / "sel" / "ckast_selector.hpp", "#pragma once\n")
    program = _write(tmp_path / "driver.cpp", "#pragma once\n\ninline int main(int argc, char** argv) { return 0; }\n")
    not_cpp = _write(tmp_path / "notes.txt")
    runner = CliRunner()
    result = runner.invoke(main, ["jit", "-I", str(tmp_path / "nowhere"), "-I", str(not_cpp), str(header),
                                  str(program), str(not_cpp)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"-I {tmp_path / 'nowhere'}: not a folder", f"-I {not_cpp}: not a folder",
        f"{program}:3: defines main; a program's entry point is not JIT-ed (only library code is)",
        f"{not_cpp}: not a C++ header or source (.hpp, .h, .hh, .hxx, .cpp, .cc, .cxx)"]
    manifest = tmp_path / "sel" / "manifest.json"
    for record, error in (
        ({"selector": {"library": "../lib"}}, f"{manifest}: selector.library: {tmp_path / 'lib'} is not a folder"),
        ({"selector": {"parts": []}}, f"{manifest}: selector.library: missing (required) [rule manifest.required]"),
        ({"bench": {"library": "../lib"}},
         f"{manifest}: bench.library: {tmp_path / 'lib'} is not a folder (the library the driver was emitted for"),
        ({"bench": {"library": ""}}, f"{manifest}: bench.library: \"\" is not a folder's path"),
        ("{", f"{manifest}: <root>: not valid JSON"),
    ):
        manifest.write_text(record if isinstance(record, str) else json.dumps(record))
        result = runner.invoke(main, ["jit", str(header)])
        assert result.exit_code == 2 and result.stdout == "", record
        assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith(error), result.stderr


def test_a_selector_jits_against_the_library_its_manifest_records_or_given_with_dash_i(tmp_path):
    """A real library (of the non-default profile, which the selector takes from it) and its selector: every
    selector file passes without -I (the manifest's record, which moves with the two) and with it."""
    runner = CliRunner()
    lib, sel = tmp_path / "run" / "lib", tmp_path / "run" / "sel"
    lib.parent.mkdir()
    for args in (["emit", "--config", str(EXAMPLES / "gemm_standard.json"), "--ck-api", PROFILE, "-o", str(lib)],
                 ["select", "emit", "--library", str(lib), "-o", str(sel)]):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, result.output
    assert json.loads((sel / "manifest.json").read_text())["selector"]["library"] == "../lib"
    shutil.move(tmp_path / "run", tmp_path / "moved")
    lib, sel = tmp_path / "moved" / "lib", tmp_path / "moved" / "sel"
    assert recorded_library(sel) == lib
    files = [*sorted(sel.glob("*.hpp")), sel / "ckast_selector.cpp"]
    for args in ([], ["-I", str(lib)]):
        result = runner.invoke(main, ["jit", *args, *map(str, files)])
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        assert [line.split(" [")[0] for line in lines[:-1]] == [f"PASS {f}" for f in files]
        assert all(f"[{PROFILE}]" in line for line in lines[:-1]) and lines[-1] == "4 passed, 0 failed"
    result = runner.invoke(main, ["jit", "-I", str(tmp_path), str(sel / "ckast_selector_dispatcher.hpp")])
    assert result.exit_code == 1  # -I replaces the record: the library's headers are not under tmp_path
    assert f"is in none of the folders searched ({sel}, {tmp_path})" in result.output
