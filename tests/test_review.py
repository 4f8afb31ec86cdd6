"""`ckast diff`: pairing, grouping by config change and by way, the report forms, exit statuses, sides."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.library.selection import Selection
from ckast.review import Kernel, Request, Side, compare, read_tree, render_selection

GEMM = {"kind": "gemm", "variant": "standard", "datatype": "fp16", "layout": "rcr", "pipeline": "compv3"}


def _kernel(**knobs) -> dict:
    return {**GEMM, **knobs}


OLD = [_kernel(tile_m=128, tile_n=128, tile_k=64),                                   # unchanged
       _kernel(layout="rrr", tile_m=128, tile_n=128, tile_k=32, pipeline="mem"),     # removed
       _kernel(tile_m=256, tile_n=128, tile_k=64, ck_api="ck-2025.11"),              # ck_api changes (2 alike)
       _kernel(tile_m=128, tile_n=256, tile_k=64, ck_api="ck-2025.11"),
       _kernel(tile_m=128, tile_n=64, tile_k=64, persistent=True)]                  # persistent changes
NEW = [OLD[0],
       _kernel(tile_m=256, tile_n=128, tile_k=64, ck_api="ck-2026.06"),
       _kernel(tile_m=128, tile_n=256, tile_k=64, ck_api="ck-2026.06"),
       _kernel(tile_m=128, tile_n=64, tile_k=64, persistent=False),
       _kernel(tile_m=64, tile_n=64, tile_k=64)]                                     # added


def _config(path: Path, kernels: list[dict]) -> Path:
    path.write_text(json.dumps({"kernels": kernels}))
    return path


def _diff(*args: str):
    return CliRunner().invoke(main, ["diff", "-j", "1", *args])


@pytest.fixture(scope="module")
def configs(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("review")
    return _config(root / "old.json", OLD), _config(root / "new.json", NEW)


@pytest.fixture(scope="module")
def result(configs):
    old, new = configs
    sides = (render_selection(Request(Selection("", "", "", configs=(path,))), label) for path, label in
             ((old, "old"), (new, "new")))
    return compare(*sides)


def test_pairs_and_groups(result):
    counts = result.counts()
    assert counts == {"old": 5, "new": 5, "unchanged": 1, "changed": 3, "renamed": 0, "added": 1, "removed": 1}
    groups = {tuple(k for k, _, _ in g.knobs): g for g in result.changed}
    assert set(groups) == {("ck_api",), ("persistent",)}
    api = groups[("ck_api",)]
    assert api.knobs == (("ck_api", "ck-2025.11", "ck-2026.06"),)
    # The two kernels of other tile sizes changed the same way: one diff to review.
    assert len(api.ways) == 1 and len(api.ways[0].pairs) == 2
    assert groups[("persistent",)].knobs == (("persistent", True, False),)
    assert [n.split("_")[3] for n in result.removed] == ["standard"] and "rrr" in result.removed[0]
    assert "64x64x64" in result.added[0]


def test_text_report_shows_one_diff_per_way(configs):
    out = _diff(*map(str, configs))
    assert out.exit_code == 1, out.output
    text = out.output
    assert '== changed: ck_api: "ck-2025.11" -> "ck-2026.06": 2 kernels, 1 way' in text
    assert "-- way 1 of 1: 2 kernels changed as" in text
    ways = text.split("\n-- way ")[1:]  # the ck_api way and the persistent way, each with its diff
    assert len(ways) == 2 and all("\n--- a/" in way for way in ways)
    assert "== added: 1 kernel\n" in text and "== removed: 1 kernel\n" in text
    # The kernel's own name is written <name> inside a diff: only real changes show.
    hunks = [line for line in text.splitlines()
             if line[:1] in ("+", "-") and not line.startswith(("---", "+++", "-- way"))]
    assert hunks and not any("gemm_fp16_" in line for line in hunks)


def test_stat_and_json(configs):
    stat = _diff("--stat", *map(str, configs))
    assert stat.exit_code == 1 and "--- a/" not in stat.output
    assert 'changed      2  ck_api: "ck-2025.11" -> "ck-2026.06"  (1 way)' in stat.output
    data = json.loads(_diff("--json", *map(str, configs)).output)
    assert data["same"] is False and data["counts"]["changed"] == 3
    way = data["changed"][0]["ways"][0]
    assert len(way["kernels"]) == 2 and way["diff"].startswith("--- a/")
    assert data["changed"][0]["knobs"] == [{"knob": "ck_api", "old": "ck-2025.11", "new": "ck-2026.06"}]


def test_same_library_exits_0_and_tree_equals_its_selection(configs, tmp_path):
    old, _ = configs
    out = tmp_path / "lib"
    assert CliRunner().invoke(main, ["generate", "--config", str(old), "-o", str(out), "-j", "1"]).exit_code == 0
    # The tree as written and the selection rendered in memory are the same library, run files included.
    same = _diff(str(out), str(old))
    assert same.exit_code == 0, same.output
    assert "5 unchanged, 0 changed" in same.output and "run files: 0 changed, 0 added, 0 removed" in same.output
    (out / "ckast_kernels.cmake").write_text("# edited\n")
    edited = _diff(str(out), str(old), "--json")
    assert edited.exit_code == 1 and json.loads(edited.output)["run_files"]["changed"] == ["ckast_kernels.cmake"]


def test_selection_overrides(tmp_path):
    """`key=value` sides change the shared selection options: the same configs at two profiles."""
    config = _config(tmp_path / "c.json", [GEMM])
    out = _diff("--config", str(config), "ck-api=ck-2025.11", "ck-api=ck-2026.06", "--json")
    data = json.loads(out.output)
    assert out.exit_code == 1 and data["old"] == "ck-api=ck-2025.11"
    assert data["counts"]["changed"] == 1 and data["changed"][0]["knobs"][0]["knob"] == "ck_api"


def test_config_at_git_revision(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True)
    _config(repo / "cfg.json", OLD[:2])
    subprocess.run([*git, "add", "cfg.json"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    _config(repo / "cfg.json", OLD[:1])
    monkeypatch.chdir(repo)
    out = _diff("HEAD:cfg.json", "cfg.json")
    assert out.exit_code == 1, out.output
    assert out.output.startswith("old: HEAD:cfg.json (2 kernels)\nnew: cfg.json (1 kernel)")
    assert "1 unchanged, 0 changed, 0 renamed (identical code), 0 added, 1 removed" in out.output
    missing = _diff("HEAD:nope.json", "cfg.json")
    assert missing.exit_code == 2 and "HEAD:nope.json" in missing.output


@pytest.mark.parametrize("side, message", [
    ("no/such/thing", "not a directory, a config file, REV:FILE or key=value selection"),
    ("colour=blue", "is not key=value with a key of"),
    ("ndim=two", "ndim='two' is not an integer"),
    ("ndim=\u00b2", "ndim='\u00b2' is not an integer"),  # str.isdigit() holds, int() raised
    ("ndim=1_0", "ndim='1_0' is not an integer"),
    ("rule-set=full", "a selection needs a rule set and an arch"),
])
def test_trouble_exits_2(tmp_path, side, message):
    out = _diff(side, str(tmp_path))
    assert out.exit_code == 2 and message in out.output, out.output


def test_directory_without_manifest_is_trouble(tmp_path):
    out = _diff(str(tmp_path), str(tmp_path))
    assert out.exit_code == 2 and "manifest.json: <root>: missing (not a tree ckast generated)" in out.output


def _side(label: str, *kernels: Kernel, run: dict | None = None) -> Side:
    return Side(label, {k.name: k for k in kernels}, run or {})


def _synthetic(name: str, body: str, **config) -> Kernel:
    return Kernel(name, config, {f"{name}.hpp": f"// {name}\n{body}\n", f"{name}.cpp": f'#include "{name}.hpp"\n'})


def test_renamed_identical_code_and_ways():
    """Pairing without real configs: a renamed kernel whose code is the same up to its name, and changed
    kernels whose files changed the same way (up to name and their own knob values) as one way."""
    old = _side("a", _synthetic("k_old", "x", v=1),
                _synthetic("t1", "TileM = 16;\nuse A;", tile_m=16, mode="x"),
                _synthetic("t2", "TileM = 32;\nuse A;", tile_m=32, mode="x"),
                _synthetic("t3", "TileM = 64;\nuse A;", tile_m=64, mode="x"))
    new = _side("b", _synthetic("k_new", "x", v=2),
                _synthetic("u1", "TileM = 16;\nuse B;", tile_m=16, mode="y"),
                _synthetic("u2", "TileM = 32;\nuse B;", tile_m=32, mode="y"),
                _synthetic("u3", "TileM = 64;\nuse C;", tile_m=64, mode="y"))
    diff = compare(old, new)
    assert [(g.knobs, [w.pairs for w in g.ways]) for g in diff.renamed] == [((("v", 1, 2),), [(("k_old", "k_new"),)])]
    [group] = diff.changed
    assert group.knobs == (("mode", "x", "y"),)
    assert [w.pairs for w in group.ways] == [(("t1", "u1"), ("t2", "u2")), (("t3", "u3"),)]
    assert not diff.added and not diff.removed and not diff.same


def test_trees_read_from_their_manifest(tmp_path):
    lib = tmp_path / "lib"
    assert CliRunner().invoke(main, ["emit", "--config", "examples/gemm_standard.json", "-o", str(lib)]).exit_code == 0
    side = read_tree(lib)
    assert len(side.kernels) == 2
    kernel = next(iter(side.kernels.values()))
    assert set(kernel.files) == {f"{kernel.name}.hpp", f"{kernel.name}.cpp",
                                 f"dispatcher_wrappers/dispatcher_wrapper_{kernel.name}.hpp"}
    assert "ckast_kernels.cmake" in side.run_files and "manifest.json" not in side.run_files


def test_refused_configs_are_counted(tmp_path):
    refused = _kernel(tile_m=256, tile_n=128, tile_k=64, pipeline="compv4")  # over compv4's LDS budget
    config = _config(tmp_path / "c.json", [GEMM, refused])
    out = _diff(str(config), str(config), "--json")
    assert out.exit_code == 0 and json.loads(out.output)["refused"] == {"old": 1, "new": 1}
    assert "(1 kernel, 1 config refused)" in _diff(str(config), str(config)).output
