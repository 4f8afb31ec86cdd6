"""The command line: emit writes headers and a manifest, refuses bad input with exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from click.testing import CliRunner

from ckast import __version__
from ckast.cli import main
from ckast.config import load_data
from ckast.lower.identity import kernel_name

from .conftest import EXAMPLES
from .kernels import output_tree


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_version():
    result = run("--version")
    assert result.exit_code == 0 and __version__ in result.output


def test_bad_config_exits_2_and_writes_nothing(tmp_path):
    cfg = tmp_path / "bad.json"
    cfg.write_text(json.dumps({"kernels": [{"kind": "gemm"}, {"kind": "gemm", "pipeline": "compv9"}]}))
    out = tmp_path / "out"
    result = run("emit", "--config", str(cfg), "-o", str(out))
    assert result.exit_code == 2
    assert f'{cfg}: kernels[1].pipeline: "compv9" is not allowed' in result.output
    assert not out.exists()


@pytest.mark.parametrize(("config", "rule"), [
    ({"kind": "grouped_conv", "variant": "forward_depthwise"}, "profile.depthwise"),
    ({"kind": "grouped_conv", "variant": "bwd_weight", "streamk_enabled": True}, "profile.streamk_conv"),
])
def test_newer_conv_kernels_need_their_profile(tmp_path, config, rule):
    """Depthwise and stream-K conv exist only from ck-2026.06: refused by rule on ck-2025.11, emitted there."""
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(config))
    result = run("emit", "--config", str(cfg), "-o", str(tmp_path / "o"))
    assert result.exit_code == 2 and f"[rule {rule}]" in result.output
    assert not (tmp_path / "o").exists()
    assert run("emit", "--config", str(cfg), "-o", str(tmp_path / "o"), "--ck-api", "ck-2026.06").exit_code == 0
    assert len(json.loads((tmp_path / "o" / "manifest.json").read_text())["kernels"]) == 1


def test_emit_writes_only_changes_and_removes_stale(tmp_path):
    out = tmp_path / "out"
    assert run("emit", "--config", str(EXAMPLES / "gemm_standard.json"), "-o", str(out)).exit_code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    files = manifest["files"]
    assert len(manifest["kernels"]) == 2 and len(files) == 2 * 3 + 2  # + registration, ckast_kernels.cmake
    assert set(output_tree(out)) == {*files, "manifest.json"}
    mtimes = {f: os.stat(out / f).st_mtime_ns for f in files}
    again = run("emit", "--config", str(EXAMPLES / "gemm_standard.json"), "-o", str(out))
    assert "0 files written, 8 unchanged, 0 removed" in again.output
    assert {f: os.stat(out / f).st_mtime_ns for f in files} == mtimes
    one = tmp_path / "one.json"
    one.write_text(json.dumps([json.loads((EXAMPLES / "gemm_standard.json").read_text())["kernels"][0]]))
    third = run("emit", "--config", str(one), "-o", str(out))
    assert "2 files written, 3 unchanged, 3 removed" in third.output  # the registration and the CMake list changed
    kept = json.loads((out / "manifest.json").read_text())
    assert len(kept["kernels"]) == 1 and set(kept["files"]) < set(files)
    assert set(output_tree(out)) == {*kept["files"], "manifest.json"}


def test_output_is_independent_of_hash_seed(tmp_path):
    digests = []
    for seed in ("0", "12345"):
        out = tmp_path / f"out{seed}"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run(
            [sys.executable, "-m", "ckast", "emit", "--config", str(EXAMPLES / "gemm_standard.json"), "-o", str(out)],
            check=True, env=env, capture_output=True,
        )
        digests.append(output_tree(out))
    assert digests[0] == digests[1]


def test_format_flag_is_a_no_op_on_printer_output(tmp_path):
    plain, formatted = tmp_path / "a", tmp_path / "b"
    run("emit", "--config", str(EXAMPLES / "gemm_standard.json"), "-o", str(plain))
    run("emit", "--config", str(EXAMPLES / "gemm_standard.json"), "-o", str(formatted), "--format")
    assert output_tree(plain) == output_tree(formatted)


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.json")))
def test_every_bundled_example_emits(tmp_path, example):
    result = run("emit", "--config", str(EXAMPLES / example), "-o", str(tmp_path))
    assert result.exit_code == 0, result.output
    kernels = json.loads((EXAMPLES / example).read_text())["kernels"]
    assert len(json.loads((tmp_path / "manifest.json").read_text())["kernels"]) == len(kernels)


def test_emit_refuses_two_kernels_that_one_registry_key_cannot_tell_apart(tmp_path):
    base = {"kind": "gemm", "variant": "standard", "datatype": "fp16", "layout": "rcr"}
    cfg = tmp_path / "pair.json"
    cfg.write_text(json.dumps({"kernels": [base, {**base, "split_k": False}]}))
    result = run("emit", "--config", str(cfg), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2 and not (tmp_path / "out").exists()
    assert "kernels[1]: " in result.output and "KernelKey does not hold (split_k or batched)" in result.output
    assert "[rule registry.key_unique]" in result.output


def test_explain_picks_one_kernel_of_a_file_by_index_or_name():
    example = EXAMPLES / "gemm_standard.json"
    names = [kernel_name(k.config) for k in load_data(json.loads(example.read_text()))]
    listed = run("explain", str(example))
    assert listed.exit_code == 2
    assert listed.output.splitlines() == [
        f"{example}: holds 2 kernels; explain takes one: give --index N or --kernel NAME",
        f"  [0] {names[0]}", f"  [1] {names[1]}"]
    by_index = run("explain", str(example), "--index", "1")
    assert by_index.exit_code == 0
    assert by_index.output.startswith(f"kernel {names[1]}  (from {example}:kernels[1])\n")
    assert run("explain", str(example), "--kernel", names[1]).output == by_index.output
    for args, message in [
        (["--index", "2"], f"--index 2: {example} holds 2 kernels (indexes 0 to 1)"),
        (["--kernel", names[0] + "x"], f"--kernel {names[0]}x: no kernel of {example} has this name"),
        (["--index", "0", "--kernel", names[0]], "give --index or --kernel, not both"),
    ]:
        refused = run("explain", str(example), *args)
        assert refused.exit_code == 2 and refused.output.startswith(message), refused.output
    by_name = run("explain", names[0], "--index", "0", "--rule-set", "tiny", "--arch", "gfx942")
    assert by_name.exit_code == 2 and "--index and --kernel pick a kernel of a config file" in by_name.output


def test_explain_index_of_a_ck_product_and_of_a_refused_kernel(tmp_path):
    cfg = tmp_path / "mixed.json"
    cfg.write_text(json.dumps([{"kind": "gemm", "pipeline": "compv9"}, {"kind": "gemm", "pipeline": "COMPUTE_V4"}]))
    listed = run("explain", str(cfg))
    assert listed.exit_code == 2 and "  [0] (no name: a knob is refused)" in listed.output.splitlines()
    refused = run("explain", str(cfg), "--index", "0")
    assert refused.exit_code == 2 and refused.output.startswith(f'{cfg}: [0].pipeline: "compv9" is not allowed')
    assert "pipeline = \"compv4\"" in run("explain", str(cfg), "--index", "1").output  # CK's spelling, read as ckast's
    product = run("explain", str(EXAMPLES / "ck" / "gemm_default_config.json"), "--index", "3")
    assert product.exit_code == 0 and "gemm_default_config.json:product[3] (" in product.output.splitlines()[0]


def test_list_of_a_config_file_with_a_list_value_refuses_it(tmp_path):
    cfg = tmp_path / "odd.json"
    cfg.write_text(json.dumps([{"kind": "gemm", "tile_m": [128]}, {"kind": "gemm"}]))
    result = run("list", "--config", str(cfg), "--json", "--rejected")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [sum(c[s] for c in data["counts"]) for s in ("accepted", "refused")] == [1, 1]
    assert data["rejected"]["knob"][0]["problems"] == ["[128] is not an integer"]


def test_emit_takes_every_config_option(tmp_path):
    """`--config A --config B` is A and B, as for the other commands (and as `--config A B`), not B alone."""
    a, b = EXAMPLES / "gemm_standard.json", EXAMPLES / "gemm_preshuffle.json"
    for out, args in ((tmp_path / "options", ["--config", a, "--config", b]), (tmp_path / "files", ["--config", a, b])):
        assert run("emit", *map(str, args), "-o", str(out)).exit_code == 0
    names = [[k["name"] for k in json.loads((tmp_path / d / "manifest.json").read_text())["kernels"]]
             for d in ("options", "files")]
    assert names[0] == names[1] and len(names[0]) == 4


@pytest.mark.parametrize(("side", "named"), [
    ("arch=gfx000", "unknown arch 'gfx000'; known: gfx908"),
    ("ck-api=ck-1999.01", "unknown CK API profile 'ck-1999.01'; known: ck-2025"),
    ("ndim=9", "ndim 9 is no spatial rank of a grouped convolution; known: 1, 2, 3")])
def test_diff_refuses_a_side_naming_an_unknown_arch_or_profile(side, named):
    """A key=value side is checked as the options are: one line naming the value and the known ones, exit 2
    (an unknown arch was a traceback, an unknown profile or rank an empty library)."""
    result = subprocess.run([sys.executable, "-m", "ckast", "diff", "--rule-set", "tiny", "--arch", "gfx942", side,
                             "arch=gfx942"], capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"ckast diff: {side}: {result.stderr.split(': ', 2)[2]}" and named in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("args", [["list", "--rule-set", "tiny", "--arch", "gfx942"], ["--version"]])
def test_stdout_on_a_full_disk_is_one_line(args):
    """Output that cannot be written (here /dev/full) is one line on stderr and exit 1, not a traceback, nor
    Python's report of its flush at exit."""
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "ckast", *args], stdout=full, stderr=subprocess.PIPE,
                                text=True)
    assert (result.returncode, result.stderr) == (1, "ckast: cannot write the output: No space left on device\n")


def test_a_closed_pipe_ends_the_command_quietly():
    """A reader that went away (`ckast list ... | head -1`): exit 1 as click gives it, and nothing on stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "ckast", "list", "--rule-set", "tiny", "--arch", "gfx942"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    assert proc.wait() == 1 and proc.stderr.read() == ""


@pytest.mark.parametrize("text", ["1_0", "\u0662", "\u00b2", " 2_0 "])
@pytest.mark.parametrize("option", ["--ndim", "-j", "--chunk-size"])
def test_integer_options_take_ascii_digits_only(option, text):
    """Python's int() reads `1_0` and other scripts' digits; ckast's options read numbers as its files do."""
    result = CliRunner().invoke(main, ["generate", "--rule-set", "tiny", "--arch", "gfx942", option, text, "-o", "x"])
    assert result.exit_code == 2 and f"{text!r} is not a valid integer" in result.output, result.output


@pytest.mark.parametrize("text", ["1_0", "nan", "inf", "\u0662%"])
def test_within_takes_ascii_decimals_only(text):
    result = CliRunner().invoke(main, ["list", "--rule-set", "tiny", "--arch", "gfx942", "--for", "w.csv",
                                       "--within", text])
    assert result.exit_code == 2 and f"{text!r} is not a percentage" in result.output, result.output


def test_a_rank_no_convolution_has_is_refused():
    """`--ndim 4` was an empty library, listed and generated without a word."""
    for command in ("list", "generate"):
        result = CliRunner().invoke(main, [command, "--rule-set", "tiny", "--arch", "gfx942", "--ndim", "4", "-o",
                                           "x"][:None if command == "generate" else -2])
        assert result.exit_code == 2 and "ndim 4 is no spatial rank of a grouped convolution" in result.output, (
            result.output)
