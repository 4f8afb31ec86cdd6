"""The public Python API (`import ckast`): configs, emitting, libraries, review, selection, evaluation and checks,
each giving what the command line gives; errors are `CkastError`s carrying the command's line; `import ckast`
stays cheap."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import ckast
from ckast.cli import main

from .kernels import output_tree
from .select_helpers import gemm_entries, write_library

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GEMM = {"kind": "gemm", "datatype": "fp16", "layout": "rcr", "pipeline": "compv3"}


def _cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_import_ckast_loads_nothing_else():
    code = "import sys, ckast; print(sorted(m for m in sys.modules if m.startswith(('ckast.', 'numpy', 'networkx', " \
           "'click', 'attr'))))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_public_names_resolve_typed_and_documented():
    assert ckast.__all__ == sorted(ckast._SOURCES)
    for name in ckast.__all__:
        value = getattr(ckast, name)
        assert (value.__doc__ or "").strip(), name
        if isinstance(value, type) and issubclass(value, BaseException):
            assert issubclass(value, ckast.CkastError), name
        if inspect.isfunction(value):
            signature = inspect.signature(value)
            assert signature.return_annotation is not inspect.Signature.empty, name
            assert all(p.annotation is not inspect.Parameter.empty for p in signature.parameters.values()), name
    assert set(dir(ckast)) >= set(ckast.__all__)
    assert (Path(ckast.__file__).parent / "py.typed").is_file()
    with pytest.raises(AttributeError):
        ckast.no_such_name  # noqa: B018


def test_the_packages_example_runs(tmp_path, monkeypatch, capsys):
    doc = ckast.__doc__
    example = textwrap.dedent(doc[doc.index("    import ckast\n"):doc.index("\nConfigs come from")])
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "ckast.__doc__", "exec"), {})
    name, tflops = capsys.readouterr().out.split()
    assert (tmp_path / "lib" / f"{name}.hpp").is_file() and float(tflops) > 0
    assert len(output_tree(tmp_path / "out")) == 6  # header, TU, wrapper, registration, CMake list, manifest


def test_kernel_from_keywords_is_emitted_and_rerun_changes_nothing(tmp_path):
    config = ckast.kernel(**GEMM, tile_m=256, tile_n=128, tile_k=64)
    assert isinstance(config, ckast.KernelConfig) and (config.tile_m, config.arch) == (256, "gfx942")
    result = ckast.emit_kernels(config, tmp_path / "out")
    assert len(result.kernels) == 1 and result.headers == (tmp_path / "out" / f"{result.kernels[0]}.hpp",)
    assert result.headers[0].is_file() and result.written == len(output_tree(tmp_path / "out")) - 1  # + manifest
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [k["name"] for k in manifest["kernels"]] == list(result.kernels)
    assert manifest["kernels"][0]["config"]["tile_m"] == 256
    again = ckast.emit_kernels([config], tmp_path / "out")
    assert (again.written, again.unchanged, again.removed) == (0, result.written, 0)


def test_configs_from_a_file_emit_what_the_command_emits(tmp_path):
    path = EXAMPLES / "gemm_standard.json"
    configs = ckast.load_configs(path)
    assert configs == ckast.parse_configs(json.loads(path.read_text()))
    assert [c.layout for c in configs] == ["rcr", "rrr"]
    result = ckast.emit_kernels(configs, tmp_path / "api")
    cli = _cli("emit", "--config", str(path), "-o", str(tmp_path / "cli"))
    assert cli.exit_code == 0, cli.output
    assert cli.stdout == (f"2 kernels -> {tmp_path / 'cli'}: {result.written} files written, 0 unchanged, "
                          "0 removed\n")
    assert output_tree(tmp_path / "api") == output_tree(tmp_path / "cli")


def test_rule_set_library_is_listed_generated_and_found_up_to_date(tmp_path):
    options = {"datatypes": "fp16", "ndims": 2}
    library = ckast.build_library("tiny", "gfx942", **options)
    assert isinstance(library, ckast.Library) and len(library.names) == len(library.accepted) > 0
    out = tmp_path / "lib"
    result = ckast.generate_library(out, "tiny", "gfx942", **options, jobs=1)
    assert isinstance(result, ckast.GenerateResult) and not result.up_to_date
    assert (result.kernels, result.proposed) == (len(library.names), len(library.entries))
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(k["name"] for k in manifest["kernels"]) == library.names
    again = ckast.generate_library(out, "tiny", "gfx942", **options)
    assert again.up_to_date and again.run_key == result.run_key
    assert (again.kernels, again.written, again.unchanged) == (result.kernels, 0, result.written)


def test_diff_of_two_config_files(tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps([{**GEMM, "tile_m": 128}, {**GEMM, "tile_m": 256, "ck_api": "ck-2025.11"}]))
    new.write_text(json.dumps([{**GEMM, "tile_m": 128}, {**GEMM, "tile_m": 256, "ck_api": "ck-2026.06"}]))
    diff = ckast.diff_libraries(old, new, jobs=1)
    assert isinstance(diff, ckast.LibraryDiff) and not diff.same
    assert diff.counts() == {"old": 2, "new": 2, "unchanged": 1, "changed": 1, "renamed": 0, "added": 0,
                             "removed": 0}
    assert diff.changed[0].knobs == (("ck_api", "ck-2025.11", "ck-2026.06"),)
    assert ckast.diff_libraries(old, old, jobs=1).same


@pytest.fixture(scope="module")
def gemm_library(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("api-select")
    return write_library(root / "lib", gemm_entries(root))


def test_select_for_a_gemm_problem_gives_typed_results(gemm_library):
    choices = ckast.select_kernels(gemm_library, "M=4096,N=4096,K=4096", top=3)
    assert choices.predictor["name"] == "analytic" and "dispatcher" in choices.layers
    (choice,) = list(choices)
    assert isinstance(choice, ckast.ProblemChoice) and choice.fields["M"] == 4096
    assert len(choice.top) == 3 and all(isinstance(k, ckast.RankedKernel) for k in choice.top)
    assert [k.rank for k in choice.top] == [1, 2, 3] and choice.best is choice.top[0]
    tflops = [k.predicted_tflops for k in choice.top]
    assert tflops == sorted(tflops, reverse=True) and tflops[0] > 0
    (same,) = ckast.select_kernels(gemm_library, [{"M": 4096, "N": 4096, "K": 4096}], top=3)
    assert [k.name for k in same.top] == [k.name for k in choice.top]
    cli = _cli("select", "--library", str(gemm_library), "--problem", "M=4096,N=4096,K=4096", "-k", "3", "--json")
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.stdout) == {**choices.head(), "problems": [choice.as_dict()]}


def test_evaluation_on_a_timing_table_is_the_commands(gemm_library, tmp_path):
    names = json.loads((gemm_library / "manifest.json").read_text())["kernels"]
    table = tmp_path / "timings.csv"
    table.write_text("kernel,M,N,K,tflops\n" + "".join(
        f"{k['name']},{m},{m},{m},{10 + i % 7}\n" for m in (512, 2048) for i, k in enumerate(names[:6])))
    runs = ckast.read_timings(table, gemm_library)
    assert len(runs.timings.runs) == 12 and runs.timings.bad == ()
    evaluation = ckast.evaluate_model(runs)
    assert (evaluation.problems, evaluation.kernels) == (2, 6) and 0 < evaluation.summary["mean"] <= 1
    cli = _cli("select", "eval", "--data", str(table), "--library", str(gemm_library), "--json")
    assert cli.exit_code == 0, cli.output
    assert cli.stdout == json.dumps(evaluation.as_dict(), indent=2) + "\n"


def _stderr_line(*args: str) -> str:
    result = _cli(*args)
    assert result.exit_code == 2, result.output
    return result.stderr.rstrip("\n")


def test_errors_are_ckast_errors_carrying_the_commands_line(gemm_library, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**GEMM, "tile_m": "big"}))
    with pytest.raises(ckast.ConfigError) as config_error:
        ckast.load_configs(bad)
    assert str(config_error.value) == _stderr_line("emit", "--config", str(bad), "-o", str(tmp_path / "out"))
    with pytest.raises(ckast.CkastError, match=r'^tile_m: "big" is not an integer$'):
        ckast.kernel(**GEMM, tile_m="big")

    with pytest.raises(ckast.CkastError) as problem_error:
        ckast.select_kernels(gemm_library, "M=0,N=1,K=1")
    # the same message, naming the Python argument where the command names its option
    assert str(problem_error.value) == "problems: M: 0 is out of range [1, 2147483647]"
    assert _stderr_line("select", "--library", str(gemm_library), "--problem", "M=0,N=1,K=1") == (
        "--problem: M: 0 is out of range [1, 2147483647]")

    with pytest.raises(ckast.EmptyLibrary) as empty:
        ckast.generate_library(tmp_path / "lib", configs=bad)
    assert isinstance(empty.value, ckast.CkastError)
    assert str(empty.value) == _stderr_line("generate", "--config", str(bad), "-o", str(tmp_path / "lib"))

    taken = tmp_path / "a_file"
    taken.write_text("")
    with pytest.raises(ckast.CkastError) as output_error:
        ckast.emit_kernels(ckast.kernel(**GEMM), taken)
    cli = _cli("emit", "--config", str(EXAMPLES / "gemm_standard.json"), "-o", str(taken))
    assert cli.exit_code == 1 and cli.stderr == f"ckast: {output_error.value}\n"

    with pytest.raises(ckast.CkastError, match="unknown rule set 'nope'"):
        ckast.build_library("nope", "gfx942")
    with pytest.raises(ckast.CkastError, match="needs a rule set and an arch"):
        ckast.build_library(arch="gfx942")
    text = tmp_path / "notes.txt"
    text.write_text("")
    with pytest.raises(ckast.CkastError) as source_error:
        ckast.jit_check(text)
    assert str(source_error.value) == _stderr_line("jit", str(text))
