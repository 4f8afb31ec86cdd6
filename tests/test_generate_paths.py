"""What a fast `generate` relies on: the command line and `ckast.output` load their modules on first use,
`Stage.put` reports the staged file's state, and rendering processes send back kernels whose manifest
entries and file states are those of a render in this process."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

from ckast.data_files import file_states
from ckast.emit import RunFiles, registrables, render, run_files
from ckast.library import Selection, build
from ckast.library.generate import render_into
from ckast.output.transaction import Stage


def modules_after(code: str, prefix: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", f"import sys; {code}; "
                          f"print(sorted(m for m in sys.modules if m.startswith({prefix!r})))"],
                         check=True, capture_output=True, text=True).stdout
    return ast.literal_eval(out)


def test_the_command_line_imports_no_command_module_until_a_command_is_looked_up():
    assert modules_after("import ckast.cli", "ckast.cli.") == []
    assert modules_after("import ckast.cli; ckast.cli.main.get_command(None, 'emit')", "ckast.cli.") == [
        "ckast.cli.common", "ckast.cli.emit"]


def test_checking_a_stamp_imports_neither_the_transaction_nor_the_tree_writer():
    assert modules_after("import ckast.output.stamp", "ckast.output.") == ["ckast.output.stamp"]


def test_put_reports_the_state_of_the_staged_file(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "kept.hpp").write_text("same")
    stage = Stage(str(tmp_path / "old"), str(tmp_path / "new"))
    written = stage.put("a/new.hpp", "text")
    kept = stage.put("kept.hpp", "same")
    assert written[0] is True and kept[0] is False
    assert file_states(stage.new, ["a/new.hpp", "kept.hpp"]) == {"a/new.hpp": written[1], "kept.hpp": kept[1]}
    assert os.stat(tmp_path / "new" / "kept.hpp").st_ino == os.stat(tmp_path / "old" / "kept.hpp").st_ino


def test_rendering_processes_send_back_what_this_process_would_write(tmp_path):
    kernels = build(Selection("default", "gfx942", "ck-2026.06", ("fp16",), (2,))).kernels()
    stage = Stage(str(tmp_path / "none"), str(tmp_path / "stage"), reuse=False)
    os.mkdir(stage.new)
    staged, done, printed = render_into(kernels, stage, jobs=2, chunk_size=7)
    here = render(kernels)
    assert printed.items == registrables(here) and printed.chunk_size == 7
    assert printed.files == run_files(here, 7)  # printed here, on one process
    assert [k.name for k in staged] == [k.name for k in here]
    assert [k.manifest_entry() for k in staged] == [
        json.dumps(k.manifest_entry(), sort_keys=True) for k in here]
    paths = [path for k in here for path, _ in k.files]
    assert sorted(done) == sorted(paths) and all(written for written, _ in done.values())
    assert {path: state for path, (_, state) in done.items()} == file_states(stage.new, paths)
    assert all((tmp_path / "stage" / path).read_text() == text for k in here for path, text in k.files)


def test_run_files_printed_ahead_are_used_only_for_the_same_kernels_and_chunks():
    kernels = render(build(Selection("tiny", "gfx942", "ck-2026.06", ("fp16",), (2,))).kernels())
    real = run_files(kernels, 7)
    fake = [("marker.hpp", "printed for other kernels\n")]
    assert run_files(kernels, 7, RunFiles(registrables(kernels), 7, fake)) == fake
    assert run_files(kernels, 7, RunFiles(registrables(kernels[1:]), 7, fake)) == real
    assert run_files(kernels, 7, RunFiles(registrables(kernels), 25, fake)) == real
