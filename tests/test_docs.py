"""The documentation's examples, run as a reader runs them, and the site's strict build.

Every ```console, ```sh and ```python block of README.md and docs/*.md runs:

- ```console: `$ ` starts a command (a line ending in `\\` continues it); the lines up to the next command are
  its output, compared with what it prints (stdout and stderr together). A line `...` (indented or not)
  stands for any lines, and a duration (`1.7 s`, `46 ms`) for any duration. A command shown without output
  may print anything.
- ```sh: each line (with its `\\` continuations) is a command; comment lines are skipped.
- ```python: the block is run as a script.

Each command must exit 0, except the last of a block preceded by `<!-- status: N -->`, which must exit N.
`<!-- not run: REASON -->` before a block leaves it out (it needs an AMD GPU, a long compile, an install);
`<!-- slow -->` runs it only with `-m slow`; `<!-- needs: TOOL... -->` runs it only where each TOOL is on PATH (a
compiler, cmake). The blocks of one page run in order, in one new directory
holding a copy of `examples/` (a git repository when the page uses git, as a checkout is) and a link to
`tools/`, with `ckast` and `python` running this checkout.

`CKAST_DOCS_REGEN=1 python -m pytest tests/test_docs.py` writes what each command printed into its block
(blocks that use `...` are left as they are), for a reviewed change of the shown output.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
RUN = ("console", "sh", "python")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*(not run|slow|status|needs)\b:?\s*(.*?)\s*-->\s*$")
DURATION = re.compile(r"\b\d+(?:\.\d+)? ?(?:s|ms|us)\b")
STATUS = "@@ckast-docs-status"
REGEN = os.environ.get("CKAST_DOCS_REGEN") == "1"
MIN_EXAMPLES = 30
"""At least this many blocks run by default: a parser that finds none fails here."""


@attrs.frozen
class Command:
    text: str
    shown: tuple[str, ...] | None
    """The output the page shows (None: not shown, not compared)."""
    lines: tuple[int, int] = (0, 0)
    """The page's line range of the shown output (0-based, end exclusive)."""


@attrs.frozen
class Block:
    page: Path
    line: int
    """The 1-based line of the opening fence (so the 0-based index of the body's first line)."""
    lang: str
    body: tuple[str, ...]
    markers: dict[str, str]

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.lang in RUN and "not run" not in self.markers

    @property
    def slow(self) -> bool:
        return "slow" in self.markers

    @property
    def missing(self) -> list[str]:
        """The tools of `<!-- needs: ... -->` that are not on PATH."""
        return [tool for tool in self.markers.get("needs", "").split() if shutil.which(tool) is None]

    def commands(self) -> list[Command]:
        """The block's shell commands with the output shown for each (console) or none (sh)."""
        out: list[Command] = []
        i = 0
        while i < len(self.body):
            line = self.body[i]
            if self.lang == "console" and not line.startswith("$ "):
                raise AssertionError(f"{self.where}: console output before any command: {line!r}")
            if self.lang == "sh" and (not line.strip() or line.lstrip().startswith("#")):
                i += 1
                continue
            text = line[2:] if self.lang == "console" else line
            while text.endswith("\\") and i + 1 < len(self.body):
                i += 1
                text += "\n" + self.body[i]
            i += 1
            start = i
            while self.lang == "console" and i < len(self.body) and not self.body[i].startswith("$ "):
                i += 1
            shown = tuple(self.body[start:i]) if self.lang == "console" and i > start else None
            out.append(Command(text, shown, (self.line + start, self.line + i)))
        return out


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of `page`, with the markers on the lines right above each."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        markers: dict[str, str] = {}
        j = i - 1
        while j >= 0 and (mm := MARKER.match(lines[j])):
            markers[mm.group(1)] = mm.group(2)
            j -= 1
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        body = tuple(line[len(indent):] if line.startswith(indent) else line for line in lines[i + 1:end])
        found.append(Block(page, i + 1, lang, body, markers))
        i = end + 1
    return found


def all_blocks() -> list[Block]:
    return [b for page in PAGES for b in blocks(page)]


def matches(shown: list[str], actual: list[str]) -> bool:
    """`actual` against `shown`, where a line `...` is any lines and durations are any duration."""
    def norm(line: str) -> str:
        return DURATION.sub("<duration>", line.rstrip())

    want = [norm(s) for s in shown]
    got = [norm(a) for a in actual]
    while want and not want[-1]:
        want.pop()
    while got and not got[-1]:
        got.pop()

    def at(i: int, j: int) -> bool:
        if i == len(want):
            return j == len(got)
        if want[i].strip() == "...":
            return any(at(i + 1, k) for k in range(j, len(got) + 1))
        return j < len(got) and want[i] == got[j] and at(i + 1, j + 1)

    return at(0, 0)


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a reader with this checkout installed: `ckast` and `python` on PATH."""
    bin_dir = tmp_path_factory.mktemp("bin")
    scripts = {
        # as pip writes the console script, so click names the command `ckast` (help, completion)
        "ckast": f"#!{sys.executable}\nimport sys\nfrom ckast.__main__ import run\nsys.exit(run())\n",
        "python": f'#!/bin/sh\nexec "{sys.executable}" "$@"\n',
        "python3": f'#!/bin/sh\nexec "{sys.executable}" "$@"\n',
    }
    for name, script in scripts.items():
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
           "CKAST_CACHE_DIR": str(tmp_path_factory.mktemp("cache")), "PYTHONUNBUFFERED": "1",
           "GIT_AUTHOR_NAME": "docs", "GIT_AUTHOR_EMAIL": "docs@example.com",
           "GIT_COMMITTER_NAME": "docs", "GIT_COMMITTER_EMAIL": "docs@example.com"}
    return env


def checkout(work: Path, env: dict[str, str], git: bool) -> None:
    """What the examples find in a checkout: `examples/` (under git when the page uses it) and `tools/`."""
    shutil.copytree(ROOT / "examples", work / "examples")
    (work / "tools").symlink_to(ROOT / "tools")
    if git:
        for args in (["init", "-q"], ["add", "examples"], ["commit", "-q", "-m", "examples"]):
            subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True)


def run_shell(block: Block, work: Path, env: dict[str, str]) -> list[tuple[Command, int, list[str]]]:
    """Run the block's commands in one shell; each command's exit status and output."""
    commands = block.commands()
    script = "exec 2>&1\n" + "".join(f"{c.text}\nprintf '%s %d@@\\n' '{STATUS}' $?\n" for c in commands)
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-c", script], cwd=work, env=env,
                          stdout=subprocess.PIPE, text=True, timeout=900)
    parts = re.split(rf"{STATUS} (\d+)@@\n", proc.stdout)
    assert len(parts) == 2 * len(commands) + 1, f"{block.where}: the shell stopped early:\n{proc.stdout}"
    return [(c, int(parts[2 * k + 1]), parts[2 * k].splitlines()) for k, c in enumerate(commands)]


def run_block(block: Block, work: Path, env: dict[str, str], regen: dict[tuple[int, int], list[str]]) -> None:
    want = int(block.markers.get("status", "0") or 0)
    if block.lang == "python":
        proc = subprocess.run([sys.executable, "-c", "\n".join(block.body)], cwd=work, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
        assert proc.returncode == want, f"{block.where}: exit status {proc.returncode}:\n{proc.stdout}"
        return
    results = run_shell(block, work, env)
    for k, (command, status, output) in enumerate(results):
        expected = want if k == len(results) - 1 else 0
        shown = "\n".join(output)
        assert status == expected, f"{block.where}: `{command.text}` exited {status}, not {expected}:\n{shown}"
        if command.shown is None or matches(list(command.shown), output):
            continue
        if REGEN and not any(line.strip() == "..." for line in command.shown):
            regen[command.lines] = output
            continue
        raise AssertionError(f"{block.where}: `{command.text}` printed\n{shown}\n--- the page shows\n"
                             + "\n".join(command.shown))


def run_page(page: Path, tmp_path: Path, env: dict[str, str], slow: bool) -> None:
    """Run the page's blocks (the slow ones too when `slow`) in order, in one new checkout-like directory."""
    chosen = [b for b in blocks(page) if b.runs and (slow or not b.slow) and not b.missing]
    checkout(tmp_path, env, git=any("git " in line for b in chosen for line in b.body))
    regen: dict[tuple[int, int], list[str]] = {}
    try:
        for block in chosen:
            run_block(block, tmp_path, env, regen)
    finally:
        if regen:
            lines = page.read_text(encoding="utf-8").splitlines()
            for (start, end), output in sorted(regen.items(), reverse=True):
                lines[start:end] = output
            page.write_text("\n".join(lines) + "\n", encoding="utf-8")


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.runs and not b.slow for b in blocks(p))], ids=page_id)
def test_page_examples(page: Path, tmp_path: Path, reader: dict[str, str]) -> None:
    run_page(page, tmp_path, reader, slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if any(b.runs and b.slow for b in blocks(p))], ids=page_id)
def test_page_examples_slow(page: Path, tmp_path: Path, reader: dict[str, str]) -> None:
    run_page(page, tmp_path, reader, slow=True)


def test_examples_are_found() -> None:
    """The parser finds the pages' examples; every left-out block says why; no command hides in an output block."""
    found = all_blocks()
    assert sum(b.runs and not b.slow for b in found) >= MIN_EXAMPLES
    readme = [b for b in found if b.page.name == "README.md" and b.runs]
    assert sum(c.shown is not None for b in readme if b.lang == "console" for c in b.commands()) >= 5
    for b in found:
        assert "not run" not in b.markers or b.markers["not run"], f"{b.where}: `not run` needs a reason"
        if b.lang not in (*RUN, "", "text", "cmake", "cpp", "json", "toml", "yaml", "csv"):
            raise AssertionError(f"{b.where}: unknown block language {b.lang!r}")
        if b.lang in ("", "text"):
            bad = [line for line in b.body if line.startswith(("$ ", "ckast "))]
            assert not bad, f"{b.where}: commands belong in a console or sh block: {bad[0]!r}"


def test_matches() -> None:
    assert matches(["a", "...", "d in 1.7 s"], ["a", "b", "c", "d in 0.2 s"])
    assert matches(["a", "..."], ["a"])
    assert not matches(["a", "b"], ["a", "c"])
    assert not matches(["a"], ["a", "b"])


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ckast_docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_knob_reference_covers_the_tables() -> None:
    from ckast.arch import RULES
    from ckast.config.knobs import KNOBS

    hooks = _hooks()
    knobs_md, rules_md = hooks.knob_reference(), hooks.rule_reference()
    for knob in KNOBS:
        assert f"### `{knob.name}` {{#{knob.name}}}" in knobs_md
    for rule in RULES:
        assert f"`{rule.id}`" in rules_md
    pages = "".join(p.read_text(encoding="utf-8") for p in PAGES)
    for marker in hooks.MARKERS:
        assert marker in pages, f"no page shows {marker}"


@pytest.mark.slow  # .ci/run builds the site too; this run also checks the generated knob reference
def test_site_builds_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[docs]')")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed (pip install -e '.[docs]')")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr
    knobs_html = (tmp_path / "site" / "knobs" / "index.html").read_text(encoding="utf-8")
    assert 'id="lds_policy"' in knobs_html and "ckast:knobs" not in knobs_html


def test_a_block_that_needs_a_missing_tool_is_left_out(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- slow -->\n<!-- needs: sh ckast-no-such-tool -->\n```sh\ntrue\n```\n", encoding="utf-8")
    [block] = blocks(page)
    assert block.slow and block.runs and block.missing == ["ckast-no-such-tool"]
