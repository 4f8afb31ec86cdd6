"""`ckast check --ninja`: the checks as a Ninja build (a stand-in compiler here; tests/test_build.py
runs the real one), incremental through clang's depfiles, each compile through the launcher."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ckast.check import Toolchain
from ckast.check.ninja import write_ninja
from ckast.lower.identity import EntryPoint

pytestmark = pytest.mark.skipif(shutil.which("ninja") is None, reason="needs ninja")

FAKE_CLANG = r"""#!/bin/sh
# Stand-in for clang: writes the depfile (-MF) naming the TU and the header it includes, logs the call.
while [ $# -gt 0 ]; do
    case "$1" in -MF) dep=$2; shift ;; *.cpp) tu=$1 ;; esac
    shift
done
header=$(sed -n 's/#include "\(.*\)"/\1/p' "$tu")
echo "${dep%.d}: $tu $HEADERS/$header" > "$dep"
echo "$tu" >> "$LOG"
"""


def test_ninja_runs_each_check_once_and_again_only_when_its_header_changes(tmp_path, monkeypatch):
    headers = tmp_path / "lib"
    headers.mkdir()
    for name in ("a", "b"):
        (headers / f"{name}.hpp").write_text(f"// {name}\n")
    clang = tmp_path / "clang"
    clang.write_text(FAKE_CLANG)
    clang.chmod(0o755)
    log = tmp_path / "calls.log"
    launcher = tmp_path / "launcher"
    launcher.write_text(f'#!/bin/sh\necho launched >> {tmp_path}/launcher.log\nexec "$@"\n')
    launcher.chmod(0o755)
    toolchain = Toolchain(clang, tmp_path, tmp_path)
    entry = (EntryPoint("ckast::a::Launcher::launch", "ckast::a::HostArgs"),)
    ninja_file = tmp_path / "check.ninja"
    outputs = write_ninja(sorted(headers.glob("*.hpp")), toolchain, lambda h: entry, ninja_file, launcher=str(launcher))
    env = {"PATH": "/usr/bin:/bin", "LOG": str(log), "HEADERS": str(headers)}

    def ninja() -> list[str]:
        log.write_text("")
        subprocess.run(["ninja", "-f", str(ninja_file)], check=True, env=env, capture_output=True)
        return log.read_text().split()

    assert len(ninja()) == 2 and all(o.is_file() for o in outputs)
    assert (tmp_path / "launcher.log").read_text().count("launched") == 2
    assert ninja() == []
    (headers / "b.hpp").write_text("// b, changed\n")
    assert [Path(p).name for p in ninja()] == ["1-b.cpp"]
    assert (tmp_path / "check.ninja.tus" / ".ninja_log").is_file() and not Path(".ninja_log").exists()
    assert 'ckast::a::Launcher::launch(args, stream)' in (tmp_path / "check.ninja.tus" / "0-a.cpp").read_text()
