"""Every public function of the Python API called with a wrong-typed or out-of-range argument raises a CkastError
naming the argument (before any work), never a bare TypeError, AttributeError or ValueError; messages name the
Python argument where the command names its option; the API's names and errors are exported and consistent."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import ckast

GEMM = {"kind": "gemm", "datatype": "fp16", "layout": "rcr", "arch": "gfx942", "ck_api": "ck-2026.06"}
P = "somewhere"  # a well-typed path: the checks run before anything is read
WRONG = [None, 3, 2.5, ["a", "b"], {"a": 1}, b"bytes", "", object()]


def _fake_timings():
    return ckast.TimingRuns(Path(P), None, None, ())


CALLS = {  # function -> (well-typed arguments, {argument: wrong values of it})
    "load_configs": ((P,), {}, {"path": [None, 3, ["a"], ""], "ck_api": [3, ["x"], ""],
                                "waive": [3, [None], "", "quant.layout", ["quant.nope"]]}),
    "parse_configs": (({**GEMM},), {}, {"ck_api": [3, ("x",), ""], "waive": [3.5, {"quant.arch": 1}, "nope"]}),
    "emit_kernels": ((), {"configs": [], "output": P},
                     {"configs": [None, 3, "gemm", [GEMM], [None]], "output": [None, 3, ["a"], ""],
                      "format": [None, "yes", 1], "chunk_size": [0, -1, "25", 2.0, True], "on_wait": [3, "x"],
                      "run_key": [3, ["k"]]}),
    "build_library": (("tiny", "gfx942"), {},
                      {"rule_set": [3, ["tiny"]], "arch": [942, ["gfx942"]], "datatypes": [None, 16, [1], [""]],
                       "ndims": [None, "2", [2.0], 0, -1, [True]], "variants": [None, 1, [None]],
                       "ck_api": [2026, ["ck"]], "builder_conf": [3, ["a"]], "configs": [None, 3, [3]]}),
    "generate_library": ((P, "tiny", "gfx942"), {},
                         {"output": [None, 3, ""], "jobs": [0, -1, "2", 1.5], "chunk_size": [0, "x"],
                          "progress": [3, "x"], "on_wait": [1], "workload": [P, 3], "datatypes": [None, [1]]}),
    "diff_libraries": ((P, P), {}, {"old": [None, 3, ["a"]], "new": [None, 3], "jobs": [0, -2], "ndims": ["x"]}),
    "workload_request": ((P,), {"within": 2}, {"workload": [None, 3, ["w.csv"]], "within": ["2%", [2]],
                                               "budget": ["3", 2.5], "model": [3, ["m"]], "timings": [None, 3],
                                               "kernels": [3]}),
    "choose_for_workload": ((), {"library": None, "request": None}, {"library": [None, P, 3]}),
    "select_kernels": ((P, "M=64,N=64,K=64"), {},
                       {"library": [None, 3, ["a"], ""], "problems": [None, 3, [3], [None], b"M=1"],
                        "problems_file": [3, ["a"]], "model": [3, ["m"]],
                        "top": [0, -1, None, "5", 2.5, True], "datatype": [3, ["fp16"]], "layout": [3, ["rcr"]],
                        "features": [None, "yes", 1], "why_not": [None, 3, [3]], "kernel_only": [None, 0]}),
    "read_timings": ((P, P), {}, {"data": [None, 3, [3]], "library": [None, 3, ["a"]], "kernels": [3],
                                  "skip_bad": ["no", None], "kernel_only": [1]}),
    "train_model": ((), {"timings": _fake_timings(), "output": P},
                    {"timings": [None, P, 3], "output": [None, 3], "trees": [0, -1, "400", 1.5],
                     "folds": [-1, "5", None], "seed": [-1, "0", 0.5], "jobs": [0, "1"], "progress": [3]}),
    "evaluate_model": ((), {"timings": _fake_timings()}, {"timings": [None, P], "model": [3, ["m"]]}),
    "emit_selector": ((P, P), {}, {"library": [None, 3], "output": [None, 3, ""], "models": [None, 3, [3]],
                                   "kernel_only": ["yes"]}),
    "jit_check": ((P,), {}, {"paths": [None, 3, [3]], "ck_api": [3, ["x"]], "include": [None, 3, [3]],
                             "on_result": [3]}),
    "compile_check": ((P,), {}, {"headers": [None, 3, [None]], "ck_include": [3, ["a"]], "arch": [None, 942, ["a"]],
                                 "codegen": ["yes"], "jobs": [0, "2"], "on_result": ["x"]}),
}


def _cases():
    for function, (args, kwargs, wrong) in CALLS.items():
        for name, values in wrong.items():
            for value in values:
                yield pytest.param(function, args, kwargs, name, value, id=f"{function}-{name}={value!r}"[:80])


@pytest.mark.parametrize(("function", "args", "kwargs", "name", "value"), list(_cases()))
def test_a_wrong_argument_is_a_ckast_error_naming_it(function, args, kwargs, name, value):
    call = getattr(ckast, function)
    bound = inspect.signature(call).bind_partial(*args, **kwargs)
    bound.arguments[name] = value
    with pytest.raises(ckast.CkastError) as info:
        call(*bound.args, **bound.kwargs)
    assert str(info.value).startswith(f"{name}: "), str(info.value)
    assert isinstance(info.value, (TypeError, ValueError)) and len(info.value.lines()) == 1


def test_every_public_function_checks_its_arguments():
    """Each function of the API is in CALLS, with a wrong value of each argument that has a kind to check."""
    functions = {n for n in ckast.__all__ if n[0].islower()} - {"kernel"}  # kernel: every knob is checked
    assert functions == set(CALLS)


@pytest.mark.parametrize("value", [None, ["gemm"], 3, {"a": 1}])
def test_a_wrong_knob_names_the_knob(value):
    with pytest.raises(ckast.ConfigError, match=r"^kind: "):
        ckast.kernel(**{**GEMM, "kind": value})
    with pytest.raises(ckast.ConfigError, match=r"^tile_m: "):
        ckast.kernel(**GEMM, tile_m=value)


def test_a_mapping_for_a_list_and_a_missing_argument_are_refused_too():
    with pytest.raises(ckast.CkastError, match=r"^select_kernels: missing a required argument: 'library'"):
        ckast.select_kernels()
    with pytest.raises(ckast.CkastError, match=r"^datatypes: a name or an iterable of names"):
        ckast.build_library("tiny", "gfx942", datatypes={"fp16": 1})


def test_an_iterator_argument_is_checked_and_still_used(tmp_path):
    """A generator is read once to check it and then passed on as read (not found empty)."""
    library = ckast.build_library("tiny", "gfx942", datatypes=(d for d in ["fp16"]), ndims=iter([2]))
    assert library.kernels() and {k.config.datatype for k in library.kernels()} == {"fp16"}


def test_top_must_be_positive_and_top_1_keeps_one(tmp_path):
    from .select_helpers import gemm_entries, write_library

    lib = write_library(tmp_path / "lib", gemm_entries(tmp_path))
    for top in (0, -1):
        with pytest.raises(ckast.CkastError, match=rf"^top: a positive int, not {top}$"):
            ckast.select_kernels(lib, "M=512,N=512,K=512", top=top)
    (choice,) = ckast.select_kernels(lib, "M=512,N=512,K=512", top=1)
    assert len(choice.top) == 1


def test_choices_can_be_iterated_again(tmp_path):
    from .select_helpers import gemm_entries, write_library

    lib = write_library(tmp_path / "lib", gemm_entries(tmp_path))
    choices = ckast.select_kernels(lib, ["M=512,N=512,K=512", "M=64,N=4096,K=128"])
    first = iter(choices)
    one = next(first)
    assert [c.problem for c in choices] == ["M=512,N=512,K=512", "M=64,N=4096,K=128"]  # while another runs
    assert [one, *first] == list(choices) == list(choices)


def test_errors_name_the_python_argument_and_the_command_its_option(tmp_path):
    """One message: `problems_file` from Python, `--problems` from the command line."""
    from ckast.cli import main

    from .select_helpers import gemm_entries, write_library

    lib = write_library(tmp_path / "lib", gemm_entries(tmp_path, ("fp16", "bf16")))
    with pytest.raises(ckast.LibraryError, match=r"^datatype: the library's GEMM kernels have datatypes bf16, fp16; "):
        list(ckast.select_kernels(lib, "M=64,N=64,K=64"))
    with pytest.raises(ckast.ProblemError, match=r"^problems: XX: "):
        list(ckast.select_kernels(lib, "XX=1", datatype="fp16"))
    with pytest.raises(ckast.WorkloadError, match=r"^workload: give within P or budget N$"):
        ckast.workload_request(P)
    cli = CliRunner().invoke(main, ["select", "--library", str(lib), "--problem", "M=64,N=64,K=64"])
    assert cli.exit_code == 2 and re.match(r"--datatype: the library's GEMM kernels have datatypes", cli.stderr)
    with pytest.raises(ckast.SideError, match=r"needs a rule set and an arch \(rule_set, arch\) or a config file$"):
        ckast.diff_libraries("ck-api=ck-2026.06", "ck-api=ck-2025.11")
    with pytest.raises(ckast.SelectionError, match=r"reads CK Builder .conf files: pass builder_conf DIR "):
        ckast.build_library("profiler", "gfx942")
    with pytest.raises(ckast.TrainError, match=r"^folds: 1 fold cannot"):
        ckast.train_model(ckast.TimingRuns(Path(P), None, None, ()), P, folds=1)


def test_the_names_messages_and_docstrings_point_at_are_exported():
    assert ckast.workload_request and ckast.choose_for_workload
    assert issubclass(ckast.WorkloadError, ckast.CkastError) and issubclass(ckast.ConfigError, ckast.CkastError)
    raised = set()
    for name in ckast.__all__:
        doc = inspect.getdoc(getattr(ckast, name)) or ""
        for block in re.findall(r"Raises:\n((?:    .*\n?)+)", doc):
            raised |= {n for line in block.splitlines() if not line.startswith("        ")
                       for n in re.findall(r"\b([A-Z]\w+)\b", line.split(":")[0])}
    assert raised and raised <= set(ckast.__all__), raised - set(ckast.__all__)


ENVIRONMENT = {"OutputError", "ToolchainError", "JitUnavailable", "MissingPackage", "ApiMismatch"}


def test_input_errors_are_value_errors_and_environment_errors_are_not():
    errors = [getattr(ckast, n) for n in ckast.__all__
              if isinstance(getattr(ckast, n), type) and issubclass(getattr(ckast, n), BaseException)]
    assert len(errors) > 15 and all(issubclass(e, ckast.CkastError) for e in errors)
    for error in errors:
        assert issubclass(error, ValueError) == (error.__name__ not in {*ENVIRONMENT, "CkastError"}), error


def test_checks_and_timings_refuse_what_they_cannot_work_on(tmp_path):
    """A header that is not a file, an unknown arch, no timing table: refused up front (a header used to be
    compiled and fail in clang, an arch to fail per header in clang, no table to say `: no usable run`)."""
    from ckast.cli import main

    header = tmp_path / "h.hpp"
    header.write_text("")
    with pytest.raises(ckast.InputFileError, match=rf"^{re.escape(str(tmp_path / 'no.hpp'))}: not a file"):
        ckast.compile_check([header, tmp_path / "no.hpp"])
    with pytest.raises(ckast.ArgumentError, match=r"^arch: unknown arch 'gfx000'; known: gfx908, "):
        ckast.compile_check(header, arch="gfx000")
    with pytest.raises(ckast.ArgumentError, match=r"^data: no timing table given$"):
        ckast.read_timings([], P)
    cli = CliRunner().invoke(main, ["check", "--compile", str(tmp_path)])
    assert (cli.exit_code, cli.stderr) == (2, f"{tmp_path}: not a file; give an emitted header\n")
