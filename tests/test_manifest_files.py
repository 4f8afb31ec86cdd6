"""A library's manifest is data from anywhere: every command that reads one (`diff`, `select`, `select emit`,
`bench emit`, `check`, `jit`, a run writing over a tree) checks it with the one reader (`ckast.output.manifest`)
and refuses a bad one, or a listed file it cannot read inside the library, with one line and exit 2; nothing
reads a path outside the library, nothing hangs on a FIFO or a device, and no command writes into a library."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.output.manifest import ManifestError, read_manifest

from .conftest import EXAMPLES

SECRET = "not-for-ckast-eyes"
PROBLEM = ("--problem", "M=256,N=256,K=256", "--layout", "rcr")


def cli(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def refused(result, *needles: str, status: int = 2) -> str:
    """The one line a refused command printed (on stderr, nothing on stdout), holding every needle."""
    lines = result.stderr.splitlines()
    assert result.exit_code == status and len(lines) == 1, (result.exit_code, result.output)
    assert result.stdout == "" and SECRET not in result.output
    assert all(needle in lines[0] for needle in needles), lines[0]
    return lines[0]


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """A command blocked on a FIFO or reading a device fails its test instead of hanging the run."""
    def stop(signum, frame):
        raise TimeoutError("the command did not finish")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def emitted(tmp_path_factory) -> Path:
    """A generated library of two GEMM kernels (their files, registration and CMake)."""
    out = tmp_path_factory.mktemp("emitted") / "lib"
    assert cli("emit", "--config", EXAMPLES / "gemm_standard.json", "-o", out).exit_code == 0
    return out


@pytest.fixture
def lib(emitted, tmp_path) -> Path:
    """A copy of the library to spoil, beside a file it must never read."""
    (tmp_path / "secret.txt").write_text(SECRET)
    return Path(shutil.copytree(emitted, tmp_path / "lib", symlinks=True))


def edit(lib: Path, change: Callable[[dict], object]) -> Path:
    manifest = lib / "manifest.json"
    data = json.loads(manifest.read_text())
    change(data)
    manifest.write_text(json.dumps(data))
    return lib


def kernel_file(lib: Path) -> Path:
    return lib / json.loads((lib / "manifest.json").read_text())["kernels"][0]["files"][1]


def fifo(path: Path) -> Path:
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


def test_the_library_is_read_as_it_was_written(emitted, lib):
    """The cases below spoil a library that every command reads: the same library diffs as the same, ranks."""
    assert cli("diff", "-j", "1", emitted, lib).exit_code == 0
    assert cli("select", "--library", lib, *PROBLEM).exit_code == 0
    manifest = read_manifest(lib)
    assert [k.name for k in manifest.kernels] == [p.stem for p in sorted(lib.glob("gemm_*.hpp"))]
    assert manifest.read(manifest.kernels[0].header).decode() == (lib / manifest.kernels[0].header).read_text()


# --- the manifest: paths, names, types ------------------------------------------------------------------------

SPOILED = {
    "climbs_out_of_files": (lambda m: m["files"].append("../../../../etc/hostname"),
                            'files[8]: "../../../../etc/hostname" climbs out', "manifest.path"),
    "climbs_out_of_a_kernel": (lambda m: m["kernels"][0]["files"].__setitem__(1, "../secret.txt"),
                               'kernels[0].files[1]: "../secret.txt" climbs out', "manifest.path"),
    "absolute": (lambda m: m["files"].__setitem__(0, "/etc/hostname"), 'files[0]: "/etc/hostname" is absolute',
                 "manifest.path"),
    "duplicate_names": (lambda m: m["kernels"].append(m["kernels"][0]), "kernels[2].name: ", "manifest.duplicate"),
    "config_not_an_object": (lambda m: m["kernels"][0].__setitem__("config", "oops"),
                             'kernels[0].config: "oops" is not an object', "manifest.type"),
    "kernels_null": (lambda m: m.__setitem__("kernels", None), "kernels: null is not a list", "manifest.type"),
    "kernel_without_config": (lambda m: m["kernels"][1].pop("config"), "kernels[1].config: missing",
                              "manifest.required"),
}


@pytest.mark.parametrize("case", SPOILED)
def test_a_spoiled_manifest_is_refused_by_diff_and_select(emitted, lib, case):
    change, message, rule = SPOILED[case]
    edit(lib, change)
    where = f"{lib / 'manifest.json'}: "
    refused(cli("diff", "-j", "1", emitted, lib), f"ckast diff: {where}{message}", f"[rule {rule}]")
    refused(cli("select", "--library", lib, *PROBLEM), where + message, f"[rule {rule}]")


def test_a_config_select_cannot_read_as_knobs_is_refused_naming_the_knob(lib):
    edit(lib, lambda m: m["kernels"][1]["config"].__setitem__("tile_m", "big"))
    refused(cli("select", "--library", lib, *PROBLEM), "manifest.json: kernels[1].config.tile_m: ")


@pytest.mark.parametrize(("tile_m", "message"), [(-1, "-1 must be at least 1"), (0, "0 must be at least 1")])
def test_a_config_breaking_the_knob_rules_is_refused_by_every_library_command(emitted, lib, tmp_path, tile_m,
                                                                             message):
    """A hand-edited config the knob rules refuse is not ranked, emitted into a selector or driver, or diffed as
    unchanged: each command refuses the library as `emit` refuses the config."""
    edit(lib, lambda m: m["kernels"][0]["config"].__setitem__("tile_m", tile_m))
    problems = tmp_path / "problems.csv"
    problems.write_text("M,N,K\n256,256,256\n")
    where = f"{lib / 'manifest.json'}: kernels[0].config.tile_m: {message} [rule tile.positive]"
    refused(cli("select", "--library", lib, *PROBLEM), where)
    refused(cli("diff", "-j", "1", emitted, lib), where)
    for command in (("select", "emit", "--library", lib, "-o", tmp_path / "sel"),
                    ("bench", "emit", "--library", lib, "--problems", problems, "-o", tmp_path / "bench")):
        refused(cli(*command), where)
        assert not command[-1].exists()


def test_a_library_this_ckast_wrote_is_not_checked_again_until_its_manifest_changes(tmp_path, monkeypatch):
    """A large library's configs are checked once, by the run that wrote it (its stamp records the manifest's
    digest); a manifest edited since is checked in full."""
    from ckast.output import manifest as manifest_module

    out = tmp_path / "lib"
    assert cli("emit", "--config", EXAMPLES / "gemm_standard.json", "-o", out).exit_code == 0
    monkeypatch.setattr(manifest_module, "STAMP_FROM", 2)
    checked = []
    monkeypatch.setattr("ckast.config.resolve_kernel", lambda config, path: checked.append(config))
    written = read_manifest(out).kernels
    assert manifest_module.read_library(out).kernels == written and checked == []
    edit(out, lambda m: m["kernels"][0]["config"].__setitem__("tile_m", 0))
    monkeypatch.undo()
    monkeypatch.setattr(manifest_module, "STAMP_FROM", 2)
    with pytest.raises(ManifestError, match=r"kernels\[0\]\.config\.tile_m: 0 must be at least 1"):
        manifest_module.read_library(out)


def test_a_config_breaking_an_arch_rule_is_refused_naming_the_rule(lib):
    edit(lib, lambda m: m["kernels"][0]["config"].__setitem__("warp_tile_m", 64))
    line = refused(cli("select", "--library", lib, *PROBLEM), "manifest.json: kernels[0].config.warp_tile_m: ")
    assert "[rule " in line


def test_a_listed_link_leading_out_of_the_library_is_not_followed(emitted, lib, tmp_path):
    target = kernel_file(lib)
    target.unlink()
    target.symlink_to(tmp_path / "secret.txt")
    refused(cli("diff", "-j", "1", emitted, lib), "kernels[0].files[1]: ", "leads out of", "[rule manifest.path]")


def test_a_listed_device_or_fifo_is_refused_without_reading_it(emitted, lib):
    target = kernel_file(lib)
    target.unlink()
    target.symlink_to("/dev/zero")
    refused(cli("diff", "-j", "1", emitted, lib), "kernels[0].files[1]: ", "(to /dev/zero)", "[rule manifest.path]")
    fifo(target)
    refused(cli("diff", "-j", "1", emitted, lib), "kernels[0].files[1]: ", "a FIFO, not a regular file",
            "[rule file.read]")


def test_a_manifest_that_is_a_fifo_or_a_device_is_refused_by_every_command(lib, tmp_path):
    problems = tmp_path / "problems.csv"
    problems.write_text("M,N,K\n256,256,256\n")
    manifest = fifo(lib / "manifest.json")
    commands = (("diff", "-j", "1", lib, lib), ("select", "--library", lib, *PROBLEM),
                ("select", "emit", "--library", lib, "-o", tmp_path / "sel"),
                ("bench", "emit", "--library", lib, "--problems", problems, "-o", tmp_path / "bench"))
    for args in commands:
        refused(cli(*args), f"{manifest}: <root>: a FIFO, not a regular file", "[rule file.read]")
    manifest.unlink()
    manifest.symlink_to("/dev/zero")
    for args in commands:
        refused(cli(*args), f"{manifest}: <root>: a character device", "[rule file.read]")
    assert not (tmp_path / "sel").exists() and not (tmp_path / "bench").exists()


def test_a_run_over_a_tree_whose_manifest_is_a_fifo_stops_before_writing(lib):
    """Which files there are ckast's is unknown: the output directory's problem (exit 1), nothing changed."""
    before = sorted(p.name for p in lib.iterdir())
    fifo(lib / "manifest.json")
    refused(cli("emit", "--config", EXAMPLES / "gemm_standard.json", "-o", lib), "manifest.json: <root>: a FIFO",
            "move the manifest away", status=1)
    assert sorted(p.name for p in lib.iterdir()) == before


def test_check_and_jit_refuse_the_manifest_beside_a_header(lib):
    edit(lib, lambda m: m["kernels"].append(m["kernels"][0]))
    header = kernel_file(lib)
    for args in (("check", "--compile", header), ("jit", header)):
        refused(cli(*args), "manifest.json: kernels[2].name: ", "[rule manifest.duplicate]")


# --- no command writes into a library --------------------------------------------------------------------------


@pytest.mark.parametrize("inside", ["", "sub"])
def test_bench_emit_and_select_emit_refuse_an_output_in_the_library(lib, tmp_path, inside):
    problems = tmp_path / "problems.csv"
    problems.write_text("M,N,K\n256,256,256\n")
    out = lib / inside if inside else lib
    where = "the library's own directory" if not inside else "inside the library"
    before = sorted(p.name for p in lib.iterdir())
    refused(cli("bench", "emit", "--library", lib, "--problems", problems, "-o", out), f"-o: {out} is {where}",
            "the driver goes into a directory of its own")
    refused(cli("select", "emit", "--library", lib, "-o", out), f"-o: {out} is {where}",
            "the selector goes into a directory of its own")
    assert sorted(p.name for p in lib.iterdir()) == before


# --- the reader itself -------------------------------------------------------------------------------------------

KERNEL = {"name": "k", "config": {"kind": "gemm"}, "header": "k.hpp", "files": ["k.hpp", "k.cpp"],
          "entry_points": [{"function": "ckast::k::Launcher::launch", "args": "ckast::k::Launcher::HostArgs"}]}


def _with(**changes: object) -> dict:
    return {**KERNEL, **changes}


READER_CASES = [  # manifest -> (JSON path, rule)
    ({"files": ["a//b"]}, "files[0]", "manifest.path"),
    ({"files": ["./a"]}, "files[0]", "manifest.path"),
    ({"files": ["a/"]}, "files[0]", "manifest.path"),
    ({"files": [""]}, "files[0]", "manifest.path"),
    ({"files": ["a\u0000b"]}, "files[0]", "manifest.path"),
    ({"files": ["a", "a"]}, "files[1]", "manifest.duplicate"),
    ({"files": "a"}, "files", "manifest.type"),
    ({"files": [3]}, "files[0]", "manifest.type"),
    ({"kernels": [_with(header="../k.hpp")]}, "kernels[0].header", "manifest.path"),
    ({"kernels": [_with(header="x.hpp")]}, "kernels[0].header", "manifest.files"),
    ({"files": ["k.hpp"], "kernels": [KERNEL]}, "kernels[0].files[1]", "manifest.files"),
    ({"kernels": [KERNEL, _with(name="j")]}, "kernels[1].files[0]", "manifest.files"),
    ({"kernels": [_with(name="a b")]}, "kernels[0].name", "manifest.name"),
    ({"kernels": [_with(name="int")]}, "kernels[0].name", "manifest.name"),
    ({"kernels": [_with(name=7)]}, "kernels[0].name", "manifest.type"),
    ({"kernels": [{"config": {}}]}, "kernels[0].name", "manifest.required"),
    ({"kernels": ["k"]}, "kernels[0]", "manifest.type"),
    ({"kernels": [_with(entry_points=[{"function": "f(); evil", "args": "a"}])]}, "kernels[0].entry_points[0].function",
     "manifest.name"),
    ({"kernels": [_with(entry_points=[{"function": "f"}])]}, "kernels[0].entry_points[0].args", "manifest.required"),
    ({"kernels": [_with(colour="red")]}, "kernels[0].colour", "manifest.unknown_key"),
    ({"kernel": []}, "kernel", "manifest.unknown_key"),
    ({"run": []}, "run", "manifest.type"),
    ({"selector": {"parts": []}}, "selector.library", "manifest.required"),
    ({"selector": {"library": ""}}, "selector.library", "manifest.type"),
    ({"selector": {"library": "/etc"}}, "selector.library", "manifest.path"),
    ({"bench": {"library": "/"}}, "bench.library", "manifest.path"),
    ({"selector": {"library": "../lib", "parts": [{"kernels": -1}]}}, "selector.parts[0].kernels", "manifest.type"),
    ({"selector": {"library": "../lib", "applicability": [1]}}, "selector.applicability[0]", "manifest.type"),
    ([], "<root>", "manifest.type"),
]


@pytest.mark.parametrize("data, where, rule", READER_CASES)
def test_the_reader_names_the_manifest_the_json_path_and_the_rule(tmp_path, data, where, rule):
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(ManifestError) as info:
        read_manifest(tmp_path)
    message = str(info.value)
    assert "\n" not in message and len(message) < 400
    assert message.startswith(f"{tmp_path / 'manifest.json'}: {where}: ") and message.endswith(f"[rule {rule}]")


def test_the_reader_takes_the_strict_json_of_config_files(tmp_path):
    for raw, rule in ((b'{"files": [], "files": []}', "json.duplicate_key"), (b"\xef\xbb\xbf{}", "json.encoding"),
                      (b'{"run": {"x": NaN}}', "json.constant"), (b"", "json.syntax")):
        (tmp_path / "manifest.json").write_bytes(raw)
        with pytest.raises(ManifestError, match=rf"\[rule {rule}\]$"):
            read_manifest(tmp_path)


def test_a_valid_manifest_reads_whole_and_its_files_only_inside_its_folder(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "k.hpp").write_text("// k")
    (tmp_path / "out" / "k.cpp").symlink_to("k.hpp")  # a link that stays inside is followed
    (tmp_path / "out" / "manifest.json").write_text(json.dumps({"files": ["k.cpp", "k.hpp"], "kernels": [KERNEL]}))
    manifest = read_manifest(tmp_path / "out")
    [kernel] = manifest.kernels
    assert (kernel.name, kernel.header, kernel.files) == ("k", "k.hpp", ("k.hpp", "k.cpp"))
    assert kernel.entry_points == (("ckast::k::Launcher::launch", "ckast::k::Launcher::HostArgs"),)
    assert manifest.read("k.cpp") == b"// k" and manifest.selector is None
    (tmp_path / "out" / "k.hpp").unlink()
    with pytest.raises(ManifestError, match=r"kernels\[0\]\.header: \"k\.hpp\": cannot read"):
        manifest.read("k.hpp")


@pytest.mark.parametrize("key", ["selector", "bench"])
def test_a_recorded_library_must_be_a_library(lib, tmp_path, key):
    """A selector's or driver's manifest points `ckast jit` at its library's folder: a folder that holds no
    library (`../..`, a folder of the user's) is refused with one line, so no manifest adds any folder to the
    include path; the library it was emitted for is taken."""
    from ckast.select.cxx.record import RecordError, recorded_library

    out = tmp_path / "deep" / "sel"
    out.mkdir(parents=True)
    for record in ("../..", "../../secret.txt/..", "..", "../../lib/../deep"):
        (out / "manifest.json").write_text(json.dumps({key: {"library": record}}))
        with pytest.raises(RecordError, match=rf"^{out / 'manifest.json'}: {key}.library: .* holds no library "
                                              r"\(no manifest listing kernels\)"):
            recorded_library(out)
    (out / "manifest.json").write_text(json.dumps({key: {"library": "../../lib"}}))
    assert recorded_library(out) == lib
