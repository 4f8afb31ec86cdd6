"""The files selection reads: problems files (`select --problems`, `bench emit --problems`), timing tables
(`--data`) and CK's kernel tables (`--kernels`) are read strictly, one line naming the file and the row or
column and exit 2 for a loose table or a file that is not a regular one; `select` ranks and prints a problems
file one problem at a time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.select.ranking import batch
from ckast.select.serving.applicability import LAYERS
from ckast.select.ranking.batch import BATCH_ENTRIES
from ckast.select.tables.csv_table import CsvError, read_csv
from ckast.select.serving.library import load_library
from ckast.select.problem import ProblemError
from ckast.select.serving.problem_read import gemm_problem
from ckast.select.reports.report import json_chunks, selection
from ckast.select.tables.timings import TimingError, read_timings

from .select_helpers import gemm_entries, write_library

ROOT = Path(__file__).resolve().parents[1]
GOOD = "M,N,K\n256,256,256\n512,512,512\n"


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lib")
    return write_library(root / "gemm", gemm_entries(root)[:6])


@contextmanager
def deadline(seconds: float = 20) -> Iterator[None]:
    """Fail instead of hanging: a read that blocks or never ends is interrupted after `seconds`."""
    def expire(*_):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def cli(*args) -> tuple[int, str, str]:
    with deadline():
        result = CliRunner().invoke(main, [str(a) for a in args])
    assert not isinstance(result.exception, TimeoutError), "the command hung"
    return result.exit_code, result.stdout, result.stderr


LOOSE = [  # file bytes, what the refusal says after the file's name
    (b"M,N,K,M\n1,2,3,4\n", 'column 4: "M" repeats column 1; each column is named once'),
    (b"M, N ,N\n1,2,3\n", 'column 3: "N" repeats column 2; each column is named once'),
    (b"M,N,K\n64,64,64\n64,64,64,64\n", "row 2: 4 fields, but the header has 3 columns"),
    (b"M,N,K\n64,64\n", "row 1: 2 fields, but the header has 3 columns"),
    (b"M,N,K,\n64,64,64,\n", "column 4: blank name in the header row (every column needs a name)"),
    (b'"M\nX",N,K\n1,2,3\n', 'column 1: "M\\nX" holds a character that is not printable'),
    ("M,N\u200b,K\n1,2,3\n".encode(), 'column 2: "N\\u200b" holds a character that is not printable'),
    (b"\xef\xbb\xbfM,N,K\n64,64,64\n", "starts with a UTF-8 byte order mark; save the file without it"),
    (b"", "empty; expected a header row, then one problem per row"),
    (b"\n \n", "empty; expected a header row, then one problem per row"),
    (b"M,N,K\n", "no problem given: the file holds a header row only"),
    (b"M,N,K\n\n\n", "no problem given: the file holds a header row only"),
    (b'M,N,K\n"64,64,64\n', "line 2: not CSV: unexpected end of data"),
    (b'M,N,K\n"64"4,64,64\n', "line 2: not CSV: ',' expected after '\"'"),
    (b"M,N,K\n6\xff4,64,64\n", "line 2: not UTF-8: byte 0xff at column 2"),
]


@pytest.mark.parametrize(("content", "message"), LOOSE)
def test_loose_problems_csv_is_refused_by_select_and_bench_emit(lib, tmp_path, content, message):
    path = tmp_path / "p.csv"
    path.write_bytes(content)
    code, out, err = cli("select", "--library", lib, "--problems", path)
    assert (code, out, err) == (2, "", f"--problems: {path}: {message}\n")
    code, out, err = cli("bench", "emit", "--library", lib, "--problems", path, "-o", tmp_path / "bench")
    assert (code, out, err) == (2, "", f"--problems: {path}: {message}\n")
    assert not (tmp_path / "bench").exists()


def test_blank_lines_are_skipped_and_names_stripped(tmp_path):
    (tmp_path / "t.csv").write_text("\n M , N,K\r\n\r\n1,2,3\r\n\n4,5,6")
    table = read_csv(tmp_path / "t.csv", "problem")
    assert table.columns == ("M", "N", "K")
    assert list(table) == [(1, {"M": "1", "N": "2", "K": "3"}), (2, {"M": "4", "N": "5", "K": "6"})]


def test_an_empty_json_problems_list_is_refused(lib, tmp_path):
    for data in ([], {"problems": []}):
        (tmp_path / "p.json").write_text(json.dumps(data))
        code, out, err = cli("select", "--library", lib, "--problems", tmp_path / "p.json")
        assert (code, out, err) == (2, "", f"{tmp_path / 'p.json'}: problems: no problem given: the list is empty\n")


def test_loose_timing_and_kernel_tables_are_refused(lib, tmp_path):
    name = load_library(lib).names[0]
    data = tmp_path / "t.csv"
    data.write_text(f"kernel,M,N,K,tflops,M\n{name},8,8,8,1,9\n")
    code, out, err = cli("select", "eval", "--library", lib, "--data", data)
    assert (code, err) == (2, f'{data}: column 6: "M" repeats column 2; each column is named once\n')
    data.write_text(f"kernel,M,N,K,tflops\n{name},8,8,8,1,\n")
    with pytest.raises(TimingError, match=r"t.csv: row 1: 6 fields, but the header has 5 columns$"):
        read_timings([data], load_library(lib))
    data.write_text("kernel,M,N,K,tflops\n")
    with pytest.raises(TimingError, match=r"t.csv: no run given: the file holds a header row only$"):
        read_timings([data], load_library(lib))
    kernels = tmp_path / "k.csv"
    kernels.write_bytes(b"\xef\xbb\xbfcsv_kernel_name,built_tile\n")
    code, out, err = cli("select", "eval", "--library", lib, "--data", data, "--kernels", kernels)
    assert (code, err) == (2, f"{kernels}: starts with a UTF-8 byte order mark; save the file without it\n")
    kernels.write_text("csv_kernel_name,built_tile\n")
    code, out, err = cli("select", "eval", "--library", lib, "--data", data, "--kernels", kernels)
    assert (code, err) == (2, f"{kernels}: no kernel given: the file holds a header row only\n")


SPECIAL = {"fifo": (os.mkfifo, "a FIFO"), "zero": (lambda p: p.symlink_to("/dev/zero"), "a character device")}


@pytest.mark.parametrize("special", SPECIAL)
@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_special_problems_files_are_refused_without_waiting(lib, tmp_path, special, suffix):
    make, kind = SPECIAL[special]
    path = tmp_path / f"problems{suffix}"
    make(path)
    for args in (("select", "--library", lib, "--problems", path),
                 ("bench", "emit", "--library", lib, "--problems", path, "-o", tmp_path / "bench")):
        code, out, err = cli(*args)
        assert (code, out, err) == (2, "", f"--problems: {path}: {kind}, not a regular file; give a file\n")


@pytest.mark.parametrize("special", SPECIAL)
def test_special_timing_and_kernel_tables_are_refused_without_waiting(lib, tmp_path, special):
    make, kind = SPECIAL[special]
    good = tmp_path / "t.csv"
    good.write_text(f"kernel,M,N,K,tflops\n{load_library(lib).names[0]},8,8,8,1\n")
    for suffix in (".csv", ".json", ".parquet"):
        path = tmp_path / f"data{suffix}"
        make(path)
        code, _, err = cli("select", "eval", "--library", lib, "--data", path)
        assert code == 2 and err.startswith(f"{path}: ") and f"{kind}, not a regular file" in err
        assert len(err.splitlines()) == 1
    kernels = tmp_path / "kernels.csv"
    make(kernels)
    code, _, err = cli("select", "eval", "--library", lib, "--data", good, "--kernels", kernels)
    assert (code, err) == (2, f"{kernels}: {kind}, not a regular file; give a file\n")


def test_a_fifo_as_problems_is_refused_by_the_process(lib, tmp_path):
    """The command as a user runs it: no process waits for a writer that never comes."""
    os.mkfifo(tmp_path / "p.csv")
    run = subprocess.run([sys.executable, "-m", "ckast", "select", "--library", str(lib), "--problems",
                          str(tmp_path / "p.csv")], capture_output=True, text=True, timeout=20,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == f"--problems: {tmp_path / 'p.csv'}: a FIFO, not a regular file; give a file\n"


def _select(lib: Path, path: Path):
    return selection(lib, (), path, None, 2, None, None, False, (), LAYERS)


@pytest.mark.parametrize("entries", [BATCH_ENTRIES, 12])  # 12 entries: the 6-kernel part's problems two by two
def test_select_ranks_a_problems_file_batch_by_batch(lib, tmp_path, monkeypatch, entries):
    """The table is checked when it is read; its rows are parsed and ranked in batches as the rankings are
    taken, and a bad row stops them once every row before it is out."""
    monkeypatch.setattr(batch, "BATCH_ENTRIES", entries)
    path = tmp_path / "p.csv"
    path.write_text(GOOD + "64,64,64\n0,512,512\n")
    head, problems = _select(lib, path)
    assert head["library"] == str(lib) and head["layers"] == list(LAYERS)
    first = next(problems)
    assert (first["problem"], first["fields"]["M"], len(first["top"])) == (f"{path}: row 1", 256, 2)
    assert [next(problems)["fields"]["M"] for _ in range(2)] == [512, 64]
    with pytest.raises(ProblemError, match=r"p.csv: row 4: M: 0 is out of range"):
        next(problems)
    code, out, err = cli("select", "--library", lib, "--problems", path)
    assert code == 2 and err == f"{path}: row 4: M: 0 is out of range [1, 2147483647]\n"
    assert [line.split(" (")[0] for line in out.splitlines() if not line.startswith(" ")] == [
        f"{path}: row {n}" for n in (1, 2, 3)]


@pytest.mark.parametrize("entries", [BATCH_ENTRIES, 12])
@pytest.mark.parametrize("variant", ["", "preshuffle"])  # preshuffle: the library holds no kernel for it either
def test_a_row_breaking_a_rule_is_refused_once_the_rows_before_it_are_out(lib, tmp_path, monkeypatch, entries, variant):
    """A batch's rows are checked together: the rows before the first that breaks a rule the reader does not
    decide (here C = M x N beyond index_t) are ranked and printed, then it is refused as reading it alone refuses
    it, before the library's refusal of a problem it holds no kernel for."""
    monkeypatch.setattr(batch, "BATCH_ENTRIES", entries)
    path = tmp_path / "p.csv"
    path.write_text(f"M,N,K,variant\n256,256,256,\n512,512,512,\n64,64,64,\n65536,65536,64,{variant}\n64,64,64,\n")
    with pytest.raises(ProblemError) as alone:
        gemm_problem({"M": "65536", "N": "65536", "K": "64"}, f"{path}: row 4")
    assert "the C tensor (M x N, all batches, as each D tensor) must have at most" in str(alone.value)
    _, problems = _select(lib, path)
    assert [next(problems)["problem"] for _ in range(3)] == [f"{path}: row {n}" for n in (1, 2, 3)]
    with pytest.raises(ProblemError) as streamed:
        next(problems)
    assert str(streamed.value) == str(alone.value)
    code, out, err = cli("select", "--library", lib, "--problems", path)
    assert code == 2 and err == f"{alone.value}\n"
    assert [line.split(" (")[0] for line in out.splitlines() if not line.startswith(" ")] == [
        f"{path}: row {n}" for n in (1, 2, 3)]


def test_streamed_json_is_the_document_json_dumps_writes(lib, tmp_path):
    path = tmp_path / "p.csv"
    path.write_text(GOOD + "64,64,64\n")
    head, problems = _select(lib, path)
    problems = list(problems)
    for shown in ([], problems[:1], problems):
        streamed = "".join(json_chunks(head, iter(shown)))
        assert streamed == json.dumps({**head, "problems": shown}, indent=2)
    code, out, _ = cli("select", "--library", lib, "--problems", path, "-k", "2", "--json")
    assert code == 0 and out == json.dumps({**head, "problems": problems}, indent=2) + "\n"


def test_csv_error_is_one_line_naming_the_file(tmp_path):
    (tmp_path / "t.csv").write_bytes(b"a,b\n1,2\n3\n")
    with pytest.raises(CsvError) as caught:
        read_csv(tmp_path / "t.csv", "row")
    assert str(caught.value) == f"{tmp_path / 't.csv'}: row 2: 1 field, but the header has 2 columns"
    assert caught.value.message == "row 2: 1 field, but the header has 2 columns"


def test_datatype_and_layout_columns_are_read_by_select_bench_emit_and_problem(lib, tmp_path):
    """One reader: a row's datatype and layout are checked and choose the part wherever problems are read."""
    path = tmp_path / "p.csv"
    path.write_text("M,N,K,datatype,layout,weight\n256,256,256,fp16,rcr,2\n512,512,512,,,\n")
    code, out, err = cli("select", "--library", lib, "--problems", path, "-k", "1")
    assert code == 0 and out.count("; GEMM, fp16, gfx942): ") == 2, err
    code, out, err = cli("bench", "emit", "--library", lib, "--problems", path, "-o", tmp_path / "bench")
    assert code == 0 and ", 2 problems, 1 timing table " in out, err
    code, out, err = cli("select", "--library", lib, "--problem", "M=256,N=256,K=256,datatype=fp16,layout=rcr")
    assert code == 0 and out.startswith("M=256,N=256,K=256,datatype=fp16,layout=rcr (M=256,N=256,K=256; GEMM, "), err
    refusals = [("datatype,layout\n256,256,256,bf61,rcr", "row 1: datatype: 'bf61' is not one of fp16, bf16, fp32, "
                 "fp8, bf8, int8"), ("datatype,layout\n256,256,256,fp16,rrc", "row 1: layout: 'rrc' is not one of "
                 "rcr, rrr, crr, ccr")]
    for text, message in refusals:
        path.write_text(f"M,N,K,{text}\n")
        for args in (("select", "--library", lib, "--problems", path),
                     ("bench", "emit", "--library", lib, "--problems", path, "-o", tmp_path / "other")):
            assert cli(*args) == (2, "", f"{path}: {message}\n")
        assert not (tmp_path / "other").exists()
    path.write_text("M,N,K,datatype\n256,256,256,bf16\n")  # a datatype the library does not hold: named by its row
    assert cli("select", "--library", lib, "--problems", path) == (
        2, "", f"{path}: row 1: datatype: 'bf16' is not among the GEMM kernels' datatypes (fp16)\n")
    assert cli("select", "--library", lib, "--problem", "M=64,N=64,K=64,datatype=bf16")[2] == (
        "--problem: datatype: 'bf16' is not among the GEMM kernels' datatypes (fp16)\n")


def test_select_labels_a_file_row_with_its_problem(lib, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"M": 256, "N": 256, "K": 256, "k_batch": 2}, {"m": 64, "n": 64, "k": 64}]))
    code, out, err = cli("select", "--library", lib, "--problems", path, "-k", "1")
    heads = [line for line in out.splitlines() if not line.startswith(" ")]
    assert code == 0 and [h.split(" GEMM, ")[0] for h in heads] == [
        f"{path}: row 1 (M=256,N=256,K=256,k_batch=2;", f"{path}: row 2 (M=64,N=64,K=64;"], err
    code, out, _ = cli("select", "--library", lib, "--problems", path, "--json")
    assert [p["shape"] for p in json.loads(out)["problems"]] == ["M=256,N=256,K=256,k_batch=2", "M=64,N=64,K=64"]


def test_select_counts_problems_without_an_applicable_kernel_last_and_exits_3(lib, tmp_path):
    args = ("select", "--library", lib, "--problem", "M=256,N=256,K=256", "--problem", "M=1,N=1,K=1", "-k", "1")
    code, out, err = cli(*args)
    assert (code, err) == (3, "") and "no kernel applicable" in out
    assert out.splitlines()[-1] == "1 of 2 problems not served by any kernel"
    assert cli(*args, "--allow-unserved") == (0, out, "")
    code, out, err = cli(*args, "--json")
    assert (code, err) == (3, "1 of 2 problems not served by any kernel\n") and len(json.loads(out)["problems"]) == 2
    assert cli(*args[:-4], "-k", "1")[0] == 0


def test_a_json_problems_file_is_read_up_to_its_limit(lib, tmp_path, monkeypatch):
    from ckast.select.reports import report

    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"M": 256, "N": 256, "K": 256}] * 40))
    monkeypatch.setattr(report, "JSON_LIMIT", 1000)
    size = path.stat().st_size
    assert cli("select", "--library", lib, "--problems", path) == (
        2, "", f"--problems: {path}: {size:,} bytes, more than the 1,000 read; a JSON problems file is read whole: "
               "give this many problems as CSV, which is read row by row\n")
    monkeypatch.setattr(report, "JSON_LIMIT", size)
    assert cli("select", "--library", lib, "--problems", path, "-k", "1")[0] == 0


@pytest.mark.parametrize(("column", "text", "message"), [
    ("M", "1_0", "'1_0' is not an integer (ASCII digits 0-9, optionally after '-')"),
    ("M", "\u0661\u0662\u0668", "'\u0661\u0662\u0668' is not an integer (ASCII digits 0-9"),
    ("M", "\u00b2", "'\u00b2' is not an integer (ASCII digits 0-9"),
    ("M", "9" * 5000, "is out of range [1, 2147483647]"),
    ("weight", "1_0", "'1_0' is not a positive number"),
    ("weight", "\u0661", "'\u0661' is not a positive number"),
])
def test_problem_numbers_are_ascii_decimals(lib, tmp_path, column, text, message):
    """Python's int() and float() read `1_0` and other scripts' digits; a problem's numbers are ASCII digits."""
    path = tmp_path / "p.csv"
    path.write_text(f"M,N,K,weight\n{text if column == 'M' else 64},64,64,{text if column != 'M' else 1}\n",
                    encoding="utf-8")
    code, out, err = cli("select", "--library", lib, "--problems", path)
    assert (code, out, len(err.splitlines())) == (2, "", 1), err
    assert err.startswith(f"{path}: row 1: {column}: ") and message in err, err
