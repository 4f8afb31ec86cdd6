"""Start-up: `ckast --version` is answered without importing the command line (click) or
`importlib.metadata`, with the line the command line prints; the version is the installed distribution's."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys

from click.testing import CliRunner

from ckast.cli import main
from ckast.version import version, version_line

from .conftest import ROOT

PROBE = """
import sys
sys.argv = ["ckast", "--version"]
from ckast.__main__ import run
run()
print(sorted(m for m in ("click", "importlib.metadata", "ckast.cli", "ckast.output", "attr") if m in sys.modules))
"""


def test_version_is_answered_before_the_command_line_is_imported():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.splitlines() == [version_line(), "[]"]
    assert CliRunner().invoke(main, ["--version"]).output == version_line() + "\n"  # the same line through click


def test_the_version_is_the_installed_distributions():
    try:
        installed = importlib.metadata.version("ckast")
    except importlib.metadata.PackageNotFoundError:
        installed = "0.0.0"
    assert version() == installed


def test_the_version_is_read_from_the_first_dist_info_on_the_path(monkeypatch, tmp_path):
    (tmp_path / "a" / "ckast-9.1.dist-info").mkdir(parents=True)
    (tmp_path / "b" / "ckast-9.2.dist-info").mkdir(parents=True)
    (tmp_path / "a" / "ckast_other-1.0.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path / "a"), str(tmp_path / "b")])
    assert version() == "9.1"
