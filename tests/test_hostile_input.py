"""Hostile input through the real command line: malformed or malicious config files (ckast's and CK's
formats) are refused with exit status 2, one short printable line per problem naming its JSON path and
its rule (or the allowed values), and nothing written."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.config import KNOBS, as_dict, resolve_kernel
from ckast.config.ck_formats import MAX_KERNELS
from ckast.config.errors import MAX_REPORTED, shown
from ckast.config.json_file import MAX_DEPTH
from ckast.config.kernel import knobs_for
from ckast.config.knobs import KINDS, VARIANTS

from .conftest import EXAMPLES

LINE_MAX = 300
"""Longest line a refusal may print after the file's name, whatever the size of the value (CK's formats:
CK_LINE_MAX, as a product element's path shows the values it takes)."""
CK_LINE_MAX = 500
HUGE = 1 << 20

_LOOKALIKES = str.maketrans("aceiopsxy", "\u0430\u0441\u0435\u0456\u043e\u0440\u0455\u0445\u0443")
"""Latin letters -> Cyrillic homoglyphs."""


def _homoglyph(value: str) -> str:
    swapped = value.translate(_LOOKALIKES)
    return swapped if swapped != value else value + "\u0430"


PAYLOADS = {  # a valid value -> a hostile one
    "quote": lambda v: v + '"',
    "backslash": lambda v: v + "\\",
    "newline": lambda v: v + "\nint evil;",
    "comment_end": lambda v: v + " */ int evil; /*",
    "include": lambda v: "#include <x>",
    "scope": lambda v: "::ck_tile::" + v,
    "template": lambda v: v + "<int>",
    "homoglyph": _homoglyph,
    "zero_width": lambda v: v[:1] + "\u200b" + v[1:],
    "bidi_override": lambda v: "\u202e" + v,
    "nul": lambda v: v + "\x00",
    "padded": lambda v: f" {v} ",
    "empty": lambda v: "",
    "very_long": lambda v: v + "x" * HUGE,
}


def _string_knobs() -> list[tuple[str, str, str]]:
    """(kind, variant, knob) for every string knob of every kind, with a variant it applies to."""
    cases = []
    for kind in KINDS:
        for knob in KNOBS:
            variants = [v for v in VARIANTS[kind] if knob in knobs_for(kind, v)]
            if knob.type is str and variants:
                cases.append((kind, variants[0], knob.name))
    return cases


STRING_KNOBS = _string_knobs()


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def write(tmp_path: Path, content: str | bytes | object, name: str = "cfg.json") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def assert_refused(result, cfg: Path, out: Path, paths: list[str], explains: tuple[str, ...] = ("[rule ", "allowed: "),
                   line_max: int = LINE_MAX):
    """Exit 2 without a traceback, nothing on stdout, nothing written; one line per expected JSON path
    (in order), each naming the file, printable ASCII, short, and explaining itself."""
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output[:2000]
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert [line.split(": ", 2)[1] for line in lines] == paths, lines
    for line in lines:
        assert line.startswith(f"{cfg}: ") and len(line) - len(f"{cfg}: ") <= line_max, line
        assert line.isascii() and line.isprintable(), line
        assert any(word in line for word in explains), line
    assert not out.exists()


# -- every string knob with every hostile payload ---------------------------------------------------------


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize(("kind", "variant", "knob"), STRING_KNOBS)
def test_hostile_string_knob_values_are_refused(tmp_path, kind, variant, knob, payload):
    valid = as_dict(resolve_kernel({"kind": kind, "variant": variant}, "").config)[knob]
    bad = PAYLOADS[payload](valid)
    cfg = write(tmp_path, {"kernels": [{"kind": kind}, {"kind": kind, "variant": variant, knob: bad}]})
    out = tmp_path / "out"
    assert_refused(run("emit", "--config", str(cfg), "-o", str(out)), cfg, out, [f"kernels[1].{knob}"])


@pytest.mark.parametrize("payload", PAYLOADS)
def test_hostile_keys_are_refused_with_a_quoted_path(tmp_path, payload):
    key = PAYLOADS[payload]("pipeline")
    cfg = write(tmp_path, [{"kind": "gemm", key: "compv3"}])
    out = tmp_path / "out"
    result = run("emit", "--config", str(cfg), "-o", str(out))
    assert_refused(result, cfg, out, [f"[0][{shown(key)}]"], explains=("unknown knob",))


@pytest.mark.parametrize("payload", ["newline", "homoglyph", "very_long"])
def test_library_commands_list_hostile_values_as_refusals(tmp_path, payload):
    """`list`/`generate --config` count knob refusals instead of failing: the refusals `list --rejected` prints
    are as bounded as emit's; `generate` refuses a file whose every candidate is refused as emit does."""
    cfg = write(tmp_path, [{"kind": "gemm", "pipeline": PAYLOADS[payload]("compv3")}])
    listed = run("list", "--config", str(cfg), "--rejected")
    assert listed.exit_code == 0 and "is not allowed; allowed: " in listed.output
    assert all(len(line) <= LINE_MAX and line.isascii() and line.isprintable() for line in listed.output.splitlines())
    out = tmp_path / "lib"
    generated = run("generate", "--config", str(cfg), "-o", str(out), "-j", "1")
    assert generated.exit_code == 2 and generated.stderr.count("\n") == 1  # every config refused: bad input
    assert "pipeline: " in generated.stderr and "is not allowed; allowed: " in generated.stderr
    assert not out.exists()


@pytest.mark.parametrize("value", [[0] * 200_000, {f"k{i}": i for i in range(50_000)}, "\u200b" * 100_000, -2**63],
                         ids=["long_list", "large_object", "zero_widths", "int64_min"])
def test_large_values_of_any_type_are_shortened(tmp_path, value):
    cfg = write(tmp_path, {"kind": "gemm", "pipeline": value})
    out = tmp_path / "out"
    assert_refused(run("emit", "--config", str(cfg), "-o", str(out)), cfg, out, ["pipeline"],
                   ("is not a string", "allowed: "))


# -- the file itself: encoding, JSON dialect, size, nesting -----------------------------------------------

DEEP = 100_000
FILES = {  # name -> (content, JSON paths of the problems, rule)
    "nan": ('{"kind": "gemm", "tile_m": NaN}', ["tile_m"], "json.constant"),
    "infinity": ('[{"kind": "gemm", "tile_m": Infinity, "tile_n": -Infinity}]', ["[0].tile_m", "[0].tile_n"],
                 "json.constant"),
    "nan_root": ("NaN", ["<root>"], "json.constant"),
    "duplicate_key": ('{"kind": "gemm", "pipeline": "compv3", "pipeline": "compv3"}', ["pipeline"],
                      "json.duplicate_key"),
    "duplicate_nested": ('{"kernels": [{"kind": "gemm"}, {"kind": "gemm", "tile_m": 64, "tile_m": 128, "tile_m": 256}]}',
                         ["kernels[1].tile_m"], "json.duplicate_key"),
    "duplicate_odd_key": ('{"kind": "gemm", "a\\nb": 1, "a\\nb": 2}', ['["a\\nb"]'], "json.duplicate_key"),
    "duplicate_top": ('{"kernels": [], "kernels": [{"kind": "gemm"}]}', ["kernels"], "json.duplicate_key"),
    "bom": (b'\xef\xbb\xbf{"kind": "gemm"}', ["<root>"], "json.encoding"),
    "latin1": ('{"kind": "gemm", "pipeline": "compv3\xe9"}'.encode("latin-1"), ["<root>"], "json.encoding"),
    "invalid_byte": (b'{"kind": "gemm",\n "pipeline": "\xff"}', ["<root>"], "json.encoding"),
    "utf16": ('{"kind": "gemm"}'.encode("utf-16"), ["<root>"], "json.encoding"),
    "encoded_surrogate": (b'{"kind": "gemm", "pipeline": "\xed\xa0\x80"}', ["<root>"], "json.encoding"),
    "overlong": (b'{"kind": "gemm", "pipeline": "\xc0\xaf"}', ["<root>"], "json.encoding"),
    "empty": ("", ["<root>"], "json.syntax"),
    "blank": (" \n\t\n", ["<root>"], "json.syntax"),
    "trailing_comma": ('{"kind": "gemm",}', ["<root>"], "json.syntax"),
    "comment": ('{"kind": "gemm"} // a kernel', ["<root>"], "json.syntax"),
    "single_quotes": ("{'kind': 'gemm'}", ["<root>"], "json.syntax"),
    "raw_control_char": ('{"kind": "gemm", "pipeline": "comp\x01v3"}', ["<root>"], "json.syntax"),
    "deep_arrays": ("[" * DEEP + "]" * DEEP, ["<root>"], "json.depth"),
    "deep_objects": ('{"a": ' * DEEP + "1" + "}" * DEEP, ["<root>"], "json.depth"),
    "deep_value": ('{"kind": "gemm", "tile_m": ' + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "}",
                   ["tile_m" + "[0]" * (MAX_DEPTH - 1)], "json.depth"),
    "long_integer": ('{"kind": "gemm", "tile_m": ' + "9" * 4000 + "}", ["tile_m"], "json.number"),
    "huge_integer": ('{"kind": "gemm", "tile_m": ' + "9" * 100_000 + "}", ["<root>"], "json.number"),
    "integer_over_64_bits": ('{"kind": "gemm", "tile_m": -18446744073709551616}', ["tile_m"], "json.number"),
    "too_many_kernels": ("[" + ",".join(['{"kind": "gemm"}'] * (MAX_KERNELS + 1)) + "]", ["<root>"],
                         "config.max_kernels"),
}


def _file(tmp_path: Path, name: str) -> tuple[Path, list[str], str]:
    content, paths, rule = FILES[name]
    return write(tmp_path, content), paths, rule


@pytest.mark.parametrize("name", FILES)
def test_hostile_files_are_refused_by_emit(tmp_path, name):
    cfg, paths, rule = _file(tmp_path, name)
    out = tmp_path / "out"
    assert_refused(run("emit", "--config", str(cfg), "-o", str(out)), cfg, out, paths, (f"[rule {rule}]",))


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("command", ["generate", "list"])
def test_hostile_files_are_refused_by_library_commands(tmp_path, command, name):
    cfg, paths, rule = _file(tmp_path, name)
    out = tmp_path / "out"
    args = ("-o", str(out), "-j", "1") if command == "generate" else ()
    assert_refused(run(command, "--config", str(cfg), *args), cfg, out, paths, (f"[rule {rule}]",))


@pytest.mark.parametrize("command", ["emit", "generate", "list"])
@pytest.mark.parametrize(("name", "strerror"), [("missing", "No such file or directory"), ("dir", "a directory, not a regular file")])
def test_unreadable_config_files_are_refused(tmp_path, command, name, strerror):
    cfg = tmp_path / name
    if name == "dir":
        cfg.mkdir()
    out = tmp_path / "out"
    args = ("-o", str(out)) if command != "list" else ()
    result = run(command, "--config", str(cfg), *args)
    assert_refused(result, cfg, out, ["<root>"], ("[rule file.read]",))
    assert strerror in result.stderr


def test_many_problems_are_listed_up_to_a_limit(tmp_path):
    count = 10 * MAX_REPORTED
    cfg = write(tmp_path, [{"kind": "gemm", "pipeline": "x" * HUGE}] + [{"kind": "gemm", "pipeline": "compv9"}] * count)
    result = run("emit", "--config", str(cfg), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2 and not (tmp_path / "out").exists()
    *problems, summary = result.stderr.splitlines()
    assert [line.split(": ", 2)[1] for line in problems] == [f"[{i}].pipeline" for i in range(MAX_REPORTED)]
    assert all(len(line) - len(f"{cfg}: ") <= LINE_MAX for line in problems)
    assert summary == f"{cfg}: ... and {count + 1 - MAX_REPORTED} more problems (only the first {MAX_REPORTED} are listed)"


def snapshot(directory: Path) -> dict[Path, tuple[int, bytes]]:
    return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in directory.rglob("*") if p.is_file()}


def test_refusal_leaves_an_earlier_output_untouched(tmp_path):
    good = write(tmp_path, {"kind": "gemm"}, "good.json")
    bad, _, _ = _file(tmp_path, "duplicate_key")
    for command in (("emit",), ("generate", "-j", "1")):
        out = tmp_path / command[0]
        assert run(*command, "--config", str(good), "-o", str(out)).exit_code == 0
        before = snapshot(out)
        result = run(*command, "--config", str(bad), "-o", str(out))
        assert result.exit_code == 2 and "[rule json.duplicate_key]" in result.stderr
        assert snapshot(out) == before
    result = run("emit", "--config", str(good), str(bad), "-o", str(tmp_path / "both"))
    assert result.exit_code == 2 and result.stderr.startswith(f"{bad}: pipeline: ") and not (tmp_path / "both").exists()


# -- CK's formats ---------------------------------------------------------------------------------------

GEMM_SET = {
    "kernel_set_name": "hostile", "datatype": {"a": "fp16", "b": "fp16", "c": "fp16", "acc": "fp32"},
    "layout": "rcr", "variant": "standard", "gpu_targets": ["gfx942"],
    "tile_config": {"tile_k": {"values": [64]}},
    "trait_config": {"pipeline": {"values": ["compv3"]}, "scheduler": {"values": ["intrawave"]},
                     "epilogue": {"values": ["cshuffle"]}},
}
GENERATOR = json.loads((EXAMPLES / "ck" / "gemm_default_config.json").read_text())
CONV_SET = {k: v for k, v in json.loads((EXAMPLES / "ck" / "conv_loader.json").read_text()).items()
            if k != "occupancy_config"}
CK_FIELDS = [  # (format, JSON path of a string, a list of values there?, the knob its refusal names)
    (GEMM_SET, "trait_config.pipeline.values", True, "pipeline"),
    (GEMM_SET, "trait_config.scheduler.values", True, "scheduler"),
    (GEMM_SET, "trait_config.epilogue.values", True, "epilogue"),
    (GEMM_SET, "gpu_targets", True, "arch"),
    (GEMM_SET, "variant", False, "variant"),
    (GEMM_SET, "layout", False, "layout"),
    (GEMM_SET, "datatype.a", False, "datatype"),
    (GENERATOR, "variants", True, "variant"),
    (GENERATOR, "multi_d_config.elementwise_ops", True, "elementwise_op"),
    (GENERATOR, "trait_config.scheduler", True, "scheduler"),
    (GENERATOR, "gpu_target", False, "arch"),
    (GENERATOR, "datatype", False, "datatype"),
    (GENERATOR, "layout", False, "layout"),
    (CONV_SET, "trait_config.pipeline.values", True, "pipeline"),
    (CONV_SET, "variant", False, "variant"),
    (CONV_SET, "layout", False, "layout"),
    (CONV_SET, "datatype.input", False, "datatype"),
]


def _with(data: dict, dotted: str, change) -> dict:
    data = copy.deepcopy(data)
    *parents, last = dotted.split(".")
    node = data
    for key in parents:
        node = node[key]
    node[last] = change(node.get(last))
    return data


@pytest.mark.parametrize("payload", ["quote", "newline", "comment_end", "include", "scope", "homoglyph",
                                     "zero_width", "nul", "very_long"])
@pytest.mark.parametrize(("fmt", "field", "is_list", "knob"), CK_FIELDS,
                         ids=[f"{'gemm_set generator conv_set'.split()[[GEMM_SET, GENERATOR, CONV_SET].index(f)]}-{p}"
                              for f, p, _, _ in CK_FIELDS])
def test_hostile_strings_in_ck_formats_are_refused(tmp_path, fmt, field, is_list, knob, payload):
    """A list gets the hostile value as a second value (shown, shortened, in the product element's path)."""
    hostile = PAYLOADS[payload]
    data = _with(fmt, field, lambda old: [old[0], hostile(old[0])] if is_list else hostile(old))
    cfg = write(tmp_path, data)
    out = tmp_path / "out"
    result = run("emit", "--config", str(cfg), "-o", str(out))
    paths = [line.split(": ", 2)[1] for line in result.stderr.splitlines()]
    assert paths and all(p == knob or p.startswith("product[") and p.endswith(f".{knob}") for p in paths), paths
    assert_refused(result, cfg, out, paths, ("[rule ", "allowed: ", "ckast's: "), CK_LINE_MAX)


@pytest.mark.parametrize(("change", "path"), [
    (lambda d: {**d, "a\n#include <x>": 1}, '["a\\n#include <x>"]'),
    (lambda d: _with(d, "tile_config", lambda t: {**t, "tile_m */": [1]}), 'tile_config["tile_m */"]'),
    (lambda d: _with(d, "datatype", lambda t: {**t, "\u0430": "fp16"}), 'datatype["\\u0430"]'),
])
def test_hostile_keys_in_ck_formats_are_refused(tmp_path, change, path):
    cfg = write(tmp_path, change(GEMM_SET))
    out = tmp_path / "out"
    assert_refused(run("emit", "--config", str(cfg), "-o", str(out)), cfg, out, [path])
