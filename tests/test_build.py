"""Building a generated library with stock CMake + Ninja (examples/cmake), locally and through distcc.

Marked ck_compile: each kernel is a real device compile against CK Tile (about 30 s). Two kernels of
the `tiny` library (ck-2025.11) are built; a second build does nothing; a regenerate that replaces one
kernel rebuilds exactly that one; the same build through CMAKE_CXX_COMPILER_LAUNCHER=distcc compiles
on a distccd this test starts on 127.0.0.1, as its log shows.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ckast.check import Toolchain, ToolchainError

pytestmark = pytest.mark.ck_compile

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "examples" / "cmake"
OCKL = Path("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ockl.bc")


@pytest.fixture(scope="module")
def ck_include() -> Path:
    missing = [tool for tool in ("cmake", "ninja") if shutil.which(tool) is None]
    if missing or not OCKL.is_file():
        pytest.skip(f"needs cmake, ninja and rocm-device-libs (missing: {', '.join(missing) or OCKL})")
    try:
        return Toolchain.discover().ck_include
    except ToolchainError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> list[dict]:
    """Configs of three `tiny` kernels of different variants or datatypes (the first two are built)."""
    out = tmp_path_factory.mktemp("tiny")
    ckast("generate", "--rule-set", "tiny", "--arch", "gfx942", "--ck-api", "ck-2025.11", "-o", out)
    kernels = json.loads((out / "manifest.json").read_text())["kernels"]
    chosen: dict[str, dict] = {}
    for k in kernels:
        chosen.setdefault((k["config"]["variant"], k["config"]["datatype"]), k["config"])
    assert len(chosen) >= 3
    return list(chosen.values())[:3]


def ckast(*args) -> str:
    result = subprocess.run([sys.executable, "-m", "ckast", *map(str, args)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def generate(configs: list[dict], out: Path) -> None:
    cfg = out.parent / f"{out.name}.json"
    cfg.write_text(json.dumps({"kernels": configs}))
    ckast("generate", "--config", cfg, "-o", out, "-j", "1")


def configure(lib: Path, build: Path, ck_include: Path, *extra: str) -> None:
    subprocess.run(["cmake", "-S", PROJECT, "-B", build, "-G", "Ninja", "-DCMAKE_CXX_COMPILER=clang++-19",
                    f"-DCKAST_OUTPUT={lib}", f"-DCK_INCLUDE={ck_include}", *extra], check=True, capture_output=True)


def build(build_dir: Path, env: dict | None = None) -> tuple[list[str], str]:
    """Build; the sources Ninja compiled, and its output."""
    start = time.perf_counter()
    result = subprocess.run(["cmake", "--build", build_dir, "-j", "2"], capture_output=True, text=True,
                            env={**os.environ, **(env or {})})
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    compiled = [line.rsplit("/", 1)[-1].removesuffix(".o") for line in result.stdout.splitlines()
                if "Building CXX object" in line]
    print(f"built {len(compiled)} kernels in {time.perf_counter() - start:.0f} s")
    return compiled, result.stdout


def objects(build_dir: Path) -> list[Path]:
    return sorted(build_dir.rglob("*.cpp.o"))


def test_cmake_ninja_builds_only_what_changed(tmp_path, ck_include, tiny):
    lib, build_dir = tmp_path / "lib", tmp_path / "build"
    generate(tiny[:2], lib)
    configure(lib, build_dir, ck_include)
    compiled, _ = build(build_dir)
    names = sorted(k["header"].removesuffix(".hpp") for k in json.loads((lib / "manifest.json").read_text())["kernels"])
    assert sorted(compiled) == [f"{n}.cpp" for n in names]
    for obj in objects(build_dir):
        assert obj.read_bytes()[:4] == b"\x7fELF" and obj.stat().st_size > 10_000  # an AMDGPU code object
    again, output = build(build_dir)
    assert again == [] and "no work to do" in output
    generate(tiny[:2], lib)  # an identical regenerate touches nothing
    assert build(build_dir)[0] == []
    generate([tiny[0], tiny[2]], lib)  # one kernel replaced by another
    changed, _ = build(build_dir)
    new = {k["header"].removesuffix(".hpp") for k in json.loads((lib / "manifest.json").read_text())["kernels"]}
    assert changed == [f"{n}.cpp" for n in sorted(new - set(names))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _served(log: Path, jobs: int, seconds: float = 20) -> str:
    """The server's log once it records `jobs` job summaries (a job's server process writes its summary after
    the client has its object file), or after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        text = log.read_text()
        if text.count("COMPILE_OK") >= jobs or time.monotonic() > deadline:
            return text
        time.sleep(0.1)


def test_distcc_compiles_on_the_server(tmp_path, ck_include, tiny):
    if shutil.which("distcc") is None or shutil.which("distccd") is None:
        pytest.skip("needs distcc (apt-get install distcc)")
    logs = Path(tempfile.mkdtemp(prefix="ckast-distcc-"))  # pytest's tmp_path is private to root, and
    logs.chmod(0o777)  # distccd started as root runs as the user distcc
    port = _free_port()
    server = subprocess.Popen(["distccd", "--no-detach", "--daemon", "--allow", "127.0.0.1", "--listen", "127.0.0.1",
                               "--port", str(port), "--log-file", str(logs / "distccd.log"), "--log-level", "info",
                               "--enable-tcp-insecure"])
    try:
        time.sleep(1)
        lib, build_dir = tmp_path / "lib", tmp_path / "build"
        generate(tiny[:2], lib)
        configure(lib, build_dir, ck_include, "-DCMAKE_CXX_COMPILER_LAUNCHER=distcc")
        compiled, _ = build(build_dir, env={
            "DISTCC_HOSTS": f"127.0.0.1:{port}/2", "DISTCC_FALLBACK": "0", "DISTCC_BACKOFF_PERIOD": "0",
            "DISTCC_VERBOSE": "1", "DISTCC_LOG": str(logs / "client.log")})
        client = (logs / "client.log").read_text()
        served = _served(logs / "distccd.log", jobs=2)
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(logs, ignore_errors=True)
    assert len(compiled) == 2
    assert client.count(f"exec on 127.0.0.1:{port}") == 2 and "running locally" not in client
    assert len([line for line in served.splitlines() if "COMPILE_OK" in line]) == 2, served[-2000:]
