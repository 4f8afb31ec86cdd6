"""`read_input`: regular files only, of bounded size; everything else is refused before it is read."""

from __future__ import annotations

import os
import socket

import pytest

from ckast.input_file import InputFileError, read_input


def test_a_regular_file_and_a_link_to_one_are_read(tmp_path):
    (tmp_path / "a.csv").write_bytes(b"M,N,K\n1,2,3\n")
    (tmp_path / "link.csv").symlink_to(tmp_path / "a.csv")
    assert read_input(tmp_path / "a.csv") == read_input(tmp_path / "link.csv") == b"M,N,K\n1,2,3\n"


@pytest.mark.parametrize(("make", "kind"), [
    (lambda p: os.mkfifo(p), "a FIFO"),
    (lambda p: p.symlink_to("/dev/zero"), "a character device"),
    (lambda p: p.mkdir(), "a directory"),
    (lambda p: socket.socket(socket.AF_UNIX).bind(str(p)), "a socket"),
])
def test_special_files_are_refused_without_reading_or_waiting(tmp_path, make, kind):
    path = tmp_path / "problems.csv"
    make(path)
    with pytest.raises(InputFileError, match=f"^{path}: {kind}, not a regular file; give a file$"):
        read_input(path)


def test_a_file_larger_than_the_limit_is_refused_by_its_size(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 101)
    assert read_input(tmp_path / "big", limit=101) == b"x" * 101
    with pytest.raises(InputFileError, match="101 bytes, more than the 100 read"):
        read_input(tmp_path / "big", limit=100)


def test_a_missing_file_says_so(tmp_path):
    with pytest.raises(InputFileError, match="missing.csv: cannot read: No such file or directory"):
        read_input(tmp_path / "missing.csv")
