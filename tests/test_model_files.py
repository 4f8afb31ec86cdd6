"""Hostile model directories: every mutation of a small trained model's file (sizes, header fields, decision types,
children, cycles, NaNs, categorical bitsets, gzip bombs) and of its spec is refused in one line naming the file, the
tree and the field, quickly; `select` predicts through ckast's own evaluator (LightGBM never reads the model, nor
needs to be installed), ranking as LightGBM would; `select train` refuses runs no model can learn from, and writes
its model directory in one step."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import signal
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

from ckast.cli.select import select
from ckast.select.models import forest as forest_module
from ckast.select.features import feature_set
from ckast.select.models.forest import MAX_DEPTH, ModelError, parse_model
from ckast.select.serving.library import load_library
from ckast.select.models.lightgbm_model import load_model
from ckast.select.serving.problem_read import gemm_problem
from ckast.select.ranking.rank import rank

from .select_helpers import gemm_entries, random_features, synth_module, write_library

lgb = pytest.importorskip("lightgbm")
MODEL, SPEC = "model_tflops.lgbm", "feature_spec.json"
PROBLEMS = ({"M": 1024, "N": 512, "K": 256}, {"M": 7, "N": 4096, "K": 320}, {"M": 3000, "N": 3000, "K": 64})


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    root = tmp_path_factory.mktemp("lib")
    return write_library(root / "gemm", gemm_entries(root))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A 20-tree model of ckast's GEMM features with categorical splits (pipeline), its booster and its files."""
    features = feature_set("gemm")
    names = list(features.names)
    x = random_features(features, 400, 100)
    y = np.log1p(np.abs(x[:, 0]) + 300 * np.isin(x[:, names.index("pipeline")], (1, 3, 5)) + 1)
    categorical = [n for n in names if n in features.categorical]
    booster = lgb.train({"verbose": -1, "num_leaves": 7, "seed": 0, "deterministic": True, "num_threads": 1,
                         "min_data_per_group": 5, "cat_smooth": 1},
                        lgb.Dataset(x, y, feature_name=names, categorical_feature=categorical), 20)
    directory = tmp_path_factory.mktemp("model") / "model"
    directory.mkdir()
    (directory / MODEL).write_text(booster.model_to_string())
    spec = {"op_type": "gemm_universal", "dtype": "fp16", "arch": "gfx942", "feature_names": names,
            "categorical_features": categorical, "log_targets": ["tflops"]}
    (directory / SPEC).write_text(json.dumps(spec))
    return {"dir": directory, "booster": booster, "text": booster.model_to_string(), "spec": spec}


def _tree(text: str, number: int) -> tuple[int, int]:
    """Where tree `number`'s text starts and ends."""
    start = text.index(f"Tree={number}\n")
    return start, text.index("\n\n", start)


def _field(text: str, number: int, key: str, change) -> str:
    """`text` with field `key` of tree `number` replaced by `change(values)` (values: its tokens)."""
    start, end = _tree(text, number)
    line = re.search(rf"^{key}=(.*)$", text[start:end], re.M)
    assert line is not None, key
    values = change if isinstance(change, str) else change(line.group(1).split(" "))
    a, b = start + line.start(1), start + line.end(1)
    return text[:a] + (" ".join(values) if isinstance(values, list) else values) + text[b:]


def _first(value: str):
    return lambda values: [value, *values[1:]]


def _header(key: str, value: str):
    return lambda text: re.sub(rf"^{key}=.*$", f"{key}={value}", text, count=1, flags=re.M)


def _categorical_tree(text: str) -> int:
    return next(n for n in range(20) if re.search(r"^num_cat=[1-9]", text[slice(*_tree(text, n))], re.M))


def _leaf_child(text: str) -> str:
    """Tree 3 with its first leaf child pointing past its leaves."""
    return _field(text, 3, "left_child", lambda v: [("-99" if int(c) < 0 and i == min(
        j for j, d in enumerate(v) if int(d) < 0) else c) for i, c in enumerate(v)])


def _drop_bitsets(text: str) -> str:
    number = _categorical_tree(text)
    start, end = _tree(text, number)
    block = re.sub(r"^cat_(boundaries|threshold)=.*\n", "", text[start:end], flags=re.M)
    return text[:start] + block + text[end:]


def _numeric_as_categorical(text: str) -> str:
    """Tree 3's first numeric split marked categorical (decision_type bit 0), with no bitset of its own."""
    return _field(text, 3, "decision_type", lambda v: [str(int(k) | 1) if i == next(
        j for j, d in enumerate(v) if not int(d) & 1) else k for i, k in enumerate(v)])


def _second_parent(text: str) -> str:
    """Tree 3's right child of node 0 is also the left child of another node."""
    start, end = _tree(text, 3)
    left = re.search(r"^left_child=(.*)$", text[start:end], re.M).group(1).split(" ")
    right = re.search(r"^right_child=(.*)$", text[start:end], re.M).group(1).split(" ")
    shared = next(c for c in right if int(c) > 0)
    node = next(i for i, c in enumerate(left) if int(c) < 0 and str(i) != shared and i > 0)
    return _field(text, 3, "left_child", lambda v: [shared if i == node else c for i, c in enumerate(v)])


def _longer_threshold(text: str) -> str:
    """A digit more in a numeric threshold of tree 3 (a number still, another one)."""
    start, end = _tree(text, 3)
    kinds = re.search(r"^decision_type=(.*)$", text[start:end], re.M).group(1).split(" ")
    node = next(i for i, kind in enumerate(kinds) if not int(kind) & 1)
    return _field(text, 3, "threshold", lambda v: [t + ("1" if "e" not in t and "." in t else ".5") if i == node else t
                                                   for i, t in enumerate(v)])


def _resized(text: str) -> str:
    """`text` with its tree_sizes those of its trees' text now."""
    first, end = text.index("\nTree=0\n") + 1, text.index("\nend of trees") + 1
    blocks = re.split(r"(?=^Tree=)", text[first:end], flags=re.M)[1:]
    return _header("tree_sizes", " ".join(str(len(b.encode())) for b in blocks))(text)


MUTATIONS = {
    # header
    "tree_sizes one digit off": (_longer_threshold, "Tree=3: tree_sizes: says"),
    "tree_sizes=x": (_header("tree_sizes", "x"), "tree_sizes: 'x' is not an integer"),
    "tree_sizes=99999999999": (_header("tree_sizes", "99999999999"), "tree_sizes: 1 size for the 20 trees"),
    "first tree size 99999999999": (lambda t: re.sub(r"^tree_sizes=\d+", "tree_sizes=99999999999", t, flags=re.M),
                                    "Tree=0: tree_sizes: says 99999999999 bytes"),
    "objective empty": (_header("objective", ""), "objective: empty"),
    "objective unknown": (_header("objective", "lambdarank"), "objective: 'lambdarank' has an output transform"),
    "num_class=x": (_header("num_class", "x"), "num_class: 'x' is not an integer"),
    "num_class=3": (_header("num_class", "3"), "num_class: 3: ckast evaluates single-output"),
    "num_tree_per_iteration=abc": (_header("num_tree_per_iteration", "abc"),
                                   "num_tree_per_iteration: 'abc' is not an integer"),
    "max_feature_idx huge": (_header("max_feature_idx", "99999999999999999999999"),
                             "max_feature_idx: '99999999999999999999999' is out of range"),
    "version unknown": (_header("version", "v9"), "version: 'v9' is not a version ckast reads"),
    "feature name twice": (lambda t: t.replace("feature_names=M N K ", "feature_names=M N M ", 1),
                           "feature_names: 'M' is named twice"),
    "header key twice": (lambda t: t.replace("num_class=1\n", "num_class=1\nnum_class=1\n", 1),
                         "num_class: given twice"),
    "carriage returns": (lambda t: t.replace("num_class=1\n", "num_class=1\r\n"), "line 3: a carriage return"),
    "truncated": (lambda t: t[:len(t) // 2], "no 'end of trees' (truncated?)"),
    # a tree's text
    "tree numbered out of order": (lambda t: t.replace("Tree=3\n", "Tree=7\n", 1), "Tree=3: starts 'Tree=7'"),
    "unknown tree field": (lambda t: t.replace("Tree=3\n", "Tree=3\nwarp=1\n", 1),
                           "Tree=3: 'warp': not a field of a LightGBM tree"),
    "text after a tree": (lambda t: t.replace("\n\n\nTree=4\n", "\n\nwarp\n\nTree=4\n", 1),
                          "Tree=3: 'warp' after the tree's blank line"),
    "num_leaves=x": (lambda t: _field(t, 3, "num_leaves", "x"), "Tree=3: num_leaves: 'x' is not an integer"),
    "num_leaves=0": (lambda t: _field(t, 3, "num_leaves", "0"), "Tree=3: num_leaves: 0 is below 1"),
    "a leaf value missing": (lambda t: _field(t, 3, "leaf_value", lambda v: v[:-1]),
                             "Tree=3: leaf_value: 6 values, not 7 (num_leaves)"),
    "a split gain missing": (lambda t: _field(t, 3, "split_gain", lambda v: v[:-1]), "Tree=3: split_gain: 5 values"),
    "linear tree": (lambda t: _field(t, 3, "is_linear", "1"), "Tree=3: is_linear: linear trees are not supported"),
    "shrinkage nan": (lambda t: _field(t, 3, "shrinkage", "nan"), "Tree=3: shrinkage: 'nan' is not a finite number"),
    # values
    "split_feature out of range": (lambda t: _field(t, 3, "split_feature", _first("72")),
                                   "Tree=3: split_feature: node 0 splits on feature 72; the model has features 0..71"),
    "decision_type=300": (lambda t: _field(t, 3, "decision_type", _first("300")),
                          "Tree=3: decision_type: 300 at node 0 is not a decision type"),
    "decision_type missing type 3": (lambda t: _field(t, 3, "decision_type", _first("12")),
                                     "Tree=3: decision_type: 12 at node 0"),
    "NaN threshold": (lambda t: _field(t, 3, "threshold", _first("nan")), "Tree=3: threshold: nan at node 0"),
    "threshold not a number": (lambda t: _field(t, 3, "threshold", _first("1_5")),
                               "Tree=3: threshold: '1_5' is not a number"),
    "NaN leaf": (lambda t: _field(t, 3, "leaf_value", _first("nan")), "Tree=3: leaf_value: nan at leaf 0"),
    "infinite leaf": (lambda t: _field(t, 3, "leaf_value", _first("-inf")), "Tree=3: leaf_value: -inf at leaf 0"),
    # children
    "child out of range": (lambda t: _field(t, 3, "right_child", _first("999")),
                           "Tree=3: right_child: node 0 points to node 999; the tree has nodes 0..5"),
    "left_child=0 self-cycle": (lambda t: _field(t, 3, "left_child", _first("0")),
                                "Tree=3: left_child: node 0 reaches itself (a tree has no cycles)"),
    "back to the root": (lambda t: _field(t, 3, "right_child", lambda v: [*v[:-1], "0"]),
                         "Tree=3: right_child: node 5 reaches node 0, the root (a tree has no cycles)"),
    "leaf index out of range": (_leaf_child, re.compile(
        r"Tree=3: left_child: node \d+ points to leaf 98 \(~98 = -99\); the tree has leaves 0\.\.6$")),
    "two parents": (_second_parent, re.compile(
        r"Tree=3: (left|right)_child: node \d+ is the child of nodes \d+ and \d+ \(a tree reaches each node once\)$")),
    # categorical splits
    "categorical split without bitset": (_drop_bitsets, "cat_boundaries: missing"),
    "numeric split made categorical": (_numeric_as_categorical, re.compile(
        r"Tree=3: num_cat: (\d+), but the tree has \d+ categorical splits \(decision_type bit 0\)$")),
}


def _mutated(trained, tmp_path, text: str):
    directory = tmp_path / "model"
    shutil.copytree(trained["dir"], directory)
    (directory / MODEL).write_text(text)
    return directory


def _refusal(directory) -> str:
    with pytest.raises(ModelError) as info:
        load_model(directory)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("how", sorted(MUTATIONS))
def test_mutated_model_is_one_line_naming_file_tree_and_field(trained, tmp_path, how):
    mutate, expected = MUTATIONS[how]
    text = mutate(trained["text"])
    assert text != trained["text"]
    message = _refusal(_mutated(trained, tmp_path, text))
    assert message.startswith(f"{tmp_path / 'model' / MODEL}: ")
    assert expected.search(message) if isinstance(expected, re.Pattern) else expected in message, message


def test_no_mutation_takes_a_second(trained, tmp_path):
    """Every mutation is refused well within a second (a hang or a spin would trip the alarm)."""

    def alarm(signum, frame):
        raise TimeoutError

    previous = signal.signal(signal.SIGALRM, alarm)
    try:
        for n, (how, (mutate, _)) in enumerate(sorted(MUTATIONS.items())):
            directory = _mutated(trained, tmp_path / str(n), mutate(trained["text"]))
            start = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, 1.0)
            try:
                with pytest.raises(ModelError):
                    load_model(directory)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            assert time.perf_counter() - start < 1.0, how
    finally:
        signal.signal(signal.SIGALRM, previous)


def _chain(leaves: int) -> str:
    """A one-feature model of one tree, each split's right child the next split: `leaves - 1` levels deep."""
    nodes = leaves - 1
    right = [str(i + 1) for i in range(nodes - 1)] + [str(~(leaves - 1))]
    tree = (f"Tree=0\nnum_leaves={leaves}\nnum_cat=0\nsplit_feature={' '.join(['0'] * nodes)}\n"
            f"threshold={' '.join(str(i) for i in range(nodes))}\ndecision_type={' '.join(['2'] * nodes)}\n"
            f"left_child={' '.join(str(~i) for i in range(nodes))}\nright_child={' '.join(right)}\n"
            f"leaf_value={' '.join(str(i) for i in range(leaves))}\nis_linear=0\nshrinkage=1\n\n\n")
    return ("tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\nmax_feature_idx=0\n"
            f"objective=regression\nfeature_names=a\nfeature_infos=none\ntree_sizes={len(tree)}\n\n{tree}"
            "end of trees\n")


def test_trees_deeper_than_max_depth_are_refused():
    """The deepest tree read is one the emitter lowers (recursively) and the evaluator walks; one level more is
    refused."""
    from ckast.select.cxx.lower_forest import lower_arrays

    forest = parse_model(_chain(MAX_DEPTH + 1))
    assert list(forest.predict(np.array([[-1.0], [0.5], [MAX_DEPTH + 5.0]]))) == [0.0, 1.0, MAX_DEPTH]
    assert lower_arrays(forest, np.zeros((2, 1)), np.zeros((2, 1), dtype=bool)).internal == MAX_DEPTH
    with pytest.raises(ModelError, match=f"Tree=0: left_child/right_child: node {MAX_DEPTH} lies deeper than "
                                         f"{MAX_DEPTH} levels"):
        parse_model(_chain(MAX_DEPTH + 2))


def test_more_trees_than_max_trees_are_refused(monkeypatch):
    monkeypatch.setattr(forest_module, "MAX_TREES", 1)
    head, tree, end = re.fullmatch(r"(.*?)(Tree=0\n.*?\n\n\n)(end of trees\n)", _chain(3), re.S).groups()
    with pytest.raises(ModelError, match="^holds 2 trees, more than the 1 ckast reads$"):
        parse_model(head.replace(f"tree_sizes={len(tree)}", f"tree_sizes={len(tree)} {len(tree)}") + tree
                    + tree.replace("Tree=0", "Tree=1") + end)


@pytest.mark.parametrize("leaves", [2**31 - 1, 10**15])
def test_num_leaves_is_checked_against_the_tree_before_arrays_are_sized_by_it(leaves):
    """`num_leaves=2147483647` in a small model allocated 16 GiB before its leaves were counted."""
    import tracemalloc

    text = _chain(4).replace("num_leaves=4\n", f"num_leaves={leaves}\n")
    text = re.sub(r"tree_sizes=\d+", f"tree_sizes={len(text[text.index('Tree=0'):text.index('end of trees')])}", text)
    tracemalloc.start()
    try:
        with pytest.raises(ModelError) as info:
            parse_model(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(info.value) == (f"Tree=0: num_leaves: {leaves:,}, but leaf_value has room for 4 values at most (its "
                               "text is 7 characters)")
    assert peak < 1 << 20


def test_a_cycle_away_from_the_root_is_refused():
    text = _chain(5)  # nodes 0 -> 1 -> 2 -> 3; make 2 and 3 each other's right child, 1's right a leaf
    text = text.replace("left_child=-1 -2 -3 -4\nright_child=1 2 3 -5", "left_child=-1 -2 -3 -4\nright_child=1 -5 3 2")
    with pytest.raises(ModelError, match=re.escape("Tree=0: left_child/right_child: nodes 2, 3 are not reached from "
                                                   "the root: they lead to each other")):
        parse_model(text)


def test_gzip_bomb_stops_at_the_limit(trained, tmp_path, monkeypatch):
    directory = _mutated(trained, tmp_path, trained["text"])
    (directory / MODEL).unlink()
    member = gzip.compress(b"\0" * (1 << 20))
    (directory / (MODEL + ".gz")).write_bytes(member * 64)  # 64 MiB of zeros in 64 KiB
    monkeypatch.setattr(forest_module, "MODEL_LIMIT", 4 << 20)
    start = time.perf_counter()
    message = _refusal(directory)
    assert message == (f"{directory / (MODEL + '.gz')}: its gzip data unpacks to more than 4,194,304 bytes "
                       "(the most read)")
    assert time.perf_counter() - start < 1.0
    (directory / (MODEL + ".gz")).write_bytes(gzip.compress(trained["text"].encode()) + b"junk")
    assert _refusal(directory).endswith("not a complete gzip file (data after its end)")


SPEC_MUTATIONS = {
    "hardware": ("mi300", 'hardware: expected an object, not "mi300"'),
    "arch": (942, "arch: expected a string, not 942"),
    "feature_names": ("log2_M", 'feature_names: expected a list of names, not "log2_M"'),
    "log_targets": ([1], "log_targets: expected a list of names, not [1]"),
    "categorical_encodings": ({"pipeline": ["compv3"]}, 'categorical_encodings.pipeline: expected {value: integer '
                                                        'code}, not ["compv3"]'),
    "params": ([], "params: expected an object, not []"),
    "op_type": (["gemm"], 'op_type: ["gemm"] is not one of gemm_universal, gemm, grouped_conv'),
}


@pytest.mark.parametrize("field", sorted(SPEC_MUTATIONS))
def test_spec_field_of_the_wrong_type_is_one_line(trained, tmp_path, field):
    value, expected = SPEC_MUTATIONS[field]
    directory = _mutated(trained, tmp_path, trained["text"])
    (directory / SPEC).write_text(json.dumps({**trained["spec"], field: value}))
    assert _refusal(directory) == f"{directory / SPEC}: {expected}"


@pytest.mark.parametrize("content, expected", [
    ('{"op_type": "gemm", "op_type": "gemm"}', "op_type: appears more than once in its object"),
    ('{"op_type": NaN}', "op_type: NaN is not JSON"),
    ("\ufeff{}", "starts with a UTF-8 byte order mark"),
    ('{"hardware": {"num_cus": true}, "op_type": "gemm", "feature_names": ["M"]}',
     "hardware.num_cus: expected a whole number in 0..2^31-1, not true"),
    ('{"hardware": {"num_cus": 1e300}, "op_type": "gemm", "feature_names": ["M"]}',
     "hardware.num_cus: expected a whole number in 0..2^31-1, not 1e+300"),
])
def test_spec_is_strict_json(trained, tmp_path, content, expected):
    directory = _mutated(trained, tmp_path, trained["text"])
    (directory / SPEC).write_text(content)
    assert _refusal(directory).startswith(f"{directory / SPEC}: {expected}")


@pytest.mark.parametrize("emit", [False, True])
def test_select_with_a_bad_model_exits_2_with_one_line(trained, lib, tmp_path, emit):
    """`select` spun on this model, `select emit` died of a RecursionError."""
    directory = _mutated(trained, tmp_path, _field(trained["text"], 3, "left_child", _first("0")))
    args = ["--library", str(lib), "--model", str(directory)]
    args = ["emit", *args, "-o", str(tmp_path / "selector")] if emit else [*args, "--problem", "M=1024,N=512,K=256"]
    result = CliRunner().invoke(select, args)
    assert result.exit_code == 2 and result.stdout == "" and not (tmp_path / "selector").exists()
    assert result.stderr == (f"{directory / MODEL}: Tree=3: left_child: node 0 reaches itself (a tree has no "
                             "cycles)\n")


def test_leaves_whose_sum_overflows_are_refused_at_prediction(trained, lib, tmp_path):
    text = trained["text"]
    for number in range(2):
        text = _field(text, number, "leaf_value", lambda v: ["1e308"] * len(v))
    directory = _mutated(trained, tmp_path, _resized(text))
    result = CliRunner().invoke(select, ["--library", str(lib), "--problem", "M=1024,N=512,K=256", "--model",
                                         str(directory), "--json"])
    assert result.exit_code == 2 and result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert result.stderr == (f"{directory / MODEL}: leaf_value: the trees' leaves add up to inf TFLOPS for "
                             "M=1024,N=512,K=256; a model's predictions are finite\n")


def test_leaves_whose_sum_overflows_are_refused_for_the_same_problem_in_a_batch(trained, lib, tmp_path):
    """`predict_many` names the problem `predict_tflops` of the problems one by one stops at: the first with a
    kernel scored (the first problem here has none)."""
    text = trained["text"]
    for number in range(2):
        text = _field(text, number, "leaf_value", lambda v: ["1e308"] * len(v))
    predictor = load_model(_mutated(trained, tmp_path, _resized(text)))
    problems = [gemm_problem({"M": 64, "N": 64, "K": 64}), gemm_problem({"M": 1000, "N": 512, "K": 256})]
    part = load_library(lib).part(problems[0])
    mask = np.ones((2, len(part)), dtype=bool)
    mask[0] = False
    with pytest.raises(ModelError) as alone:
        predictor.predict_tflops(problems[1], part, None, np.arange(len(part)))
    with pytest.raises(ModelError) as together:
        predictor.predict_many(problems, part, None, mask)
    assert str(together.value) == str(alone.value) and "for M=1000,N=512,K=256;" in str(alone.value)


def test_rows_walked_in_chunks_add_up_the_same(trained, monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(50, 72)) * 100
    whole = parse_model(trained["text"]).raw(x)
    monkeypatch.setattr(forest_module, "_PAIRS", 7 * 3)  # 3 trees of 7 rows at a time
    monkeypatch.setattr(forest_module, "_ROWS", 7)  # 7 rows at a time
    assert whole.view(np.int64).tolist() == parse_model(trained["text"]).raw(x).view(np.int64).tolist()
    monkeypatch.setattr(forest_module, "_ROWS", 1000)
    monkeypatch.setattr(forest_module, "_CHUNK", 5 * 20)  # 5 rows of the 20 trees at a time
    assert whole.view(np.int64).tolist() == parse_model(trained["text"]).raw(x).view(np.int64).tolist()
    with pytest.raises(ModelError, match="rows of 71 features for a model of 72"):
        parse_model(trained["text"]).raw(x[:, 1:])
    assert np.array_equal(whole, trained["booster"].predict(x, raw_score=True))


def test_views_of_each_tree_hold_its_text(trained):
    """`Forest.trees` (what the emitter lowers) are each tree's own arrays, renumbered from 0."""
    text, forest = trained["text"], parse_model(trained["text"])
    seen_categorical = False
    for number, tree in enumerate(forest.trees):
        block = text[slice(*_tree(text, number))]

        def values(key, dtype=np.int64, block=block):
            found = re.search(rf"^{key}=(.*)$", block, re.M)
            return np.array(found.group(1).split(), dtype=dtype) if found and found.group(1) else np.zeros(0, dtype)

        for key, mine in (("left_child", tree.left), ("right_child", tree.right), ("split_feature", tree.split_feature),
                          ("decision_type", tree.decision_type), ("cat_boundaries", tree.cat_boundaries),
                          ("cat_threshold", tree.cat_threshold)):
            assert np.array_equal(mine, values(key)), (number, key)
        assert np.array_equal(tree.threshold, values("threshold", np.float64))
        assert np.array_equal(tree.leaf_value, values("leaf_value", np.float64))
        seen_categorical |= bool(tree.categorical.any())
    assert seen_categorical and len(forest.trees) == 20


def test_rankings_equal_lightgbms_without_lightgbm(trained, lib, monkeypatch):
    """`select` ranks as LightGBM's predictions would, with lightgbm not importable."""
    library = load_library(lib)
    expected = []
    for fields in PROBLEMS:
        problem = gemm_problem(fields)
        part = library.part(problem)
        predictor = load_model(trained["dir"])
        x = feature_set("gemm").matrix(problem, part.table, predictor.hw)
        tflops = predictor.transform(trained["booster"].predict(x))  # the C library's expm1, as CK's C++
        ranking = rank(problem, part, predictor, None)
        assert np.array_equal(ranking.tflops[ranking.order], tflops[ranking.order])
        order = ranking.order[np.lexsort((part.name_order[ranking.order], -tflops[ranking.order]))]
        assert list(order) == list(ranking.order)
        expected.append([part.names[i] for i in ranking.order[:5]])
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    args = ["--library", str(lib), "--model", str(trained["dir"]), "--json"]
    for fields in PROBLEMS:
        args += ["--problem", ",".join(f"{k}={v}" for k, v in fields.items())]
    result = CliRunner().invoke(select, args)
    assert result.exit_code == 0, result.stderr
    shown = [[entry["name"] for entry in p["top"]] for p in json.loads(result.stdout)["problems"]]
    assert shown == expected


# select train: runs no model learns from, and the model directory written in one step


@pytest.fixture(scope="module")
def table(lib, tmp_path_factory):
    root = tmp_path_factory.mktemp("table")
    rows = synth_module().synthesize(lib, "gemm", 4, 10, 1, 0.02, 0.08)
    synth_module().write(rows, root / "train.csv")
    return {"path": root / "train.csv", "rows": rows}


def _train(lib, data, out, *flags):
    return CliRunner().invoke(select, ["train", "--data", str(data), "--library", str(lib), "-o", str(out),
                                       "--trees", "3", *flags])


@pytest.mark.parametrize("rows, flags, expected", [
    (1, (), "the runs make 1 (problem, kernel) pair, of"),
    (500, ("--folds", "0"), "the runs make 1 (problem, kernel) pair, of"),
    ("flat", ("--folds", "0"), "(problem, kernel) pairs, all of 100 TFLOPS: a model learns from runs of different "
                               "speeds"),
    ("fold", ("--folds", "2"), "--folds 2: fold 1 would train on 1 (problem, kernel) pairs of one speed"),
])
def test_train_refuses_runs_no_model_learns_from(lib, table, tmp_path, rows, flags, expected):
    first = table["rows"][0]
    if rows == "flat":
        data = [dict(r, tflops=100.0) for r in table["rows"]]
    elif rows == "fold":  # two problems, one of one run, one of two runs of one speed
        other = next(r for r in table["rows"] if (r["M"], r["N"], r["K"]) != (first["M"], first["N"], first["K"]))
        second = next(r for r in table["rows"] if r["M"] == other["M"] and r["N"] == other["N"] and r["K"] == other["K"]
                      and r["kernel"] != other["kernel"])
        data = [first, other, dict(second, tflops=other["tflops"])]
    else:
        data = [first] * rows
    synth_module().write(data, tmp_path / "t.csv")
    result = _train(lib, tmp_path / "t.csv", tmp_path / "m", *flags)
    assert result.exit_code == 2 and result.stdout == "" and len(result.stderr.splitlines()) == 1, result.output
    assert expected in result.stderr
    assert not (tmp_path / "m").exists()


def test_train_writes_the_model_directory_in_one_step(lib, table, tmp_path):
    out = tmp_path / "model"
    assert _train(lib, table["path"], out, "--folds", "2", "--predictor", "lightgbm").exit_code == 0
    (out / "notes.txt").write_text("mine")
    (out / (MODEL + ".gz")).write_bytes(b"an older model")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # cv_metrics.json turned into a directory: the run fails after fitting, with the old directory as it was
    (out / "cv_metrics.json").unlink()
    (out / "cv_metrics.json").mkdir()
    (out / "cv_metrics.json" / "x").write_text("")
    result = _train(lib, table["path"], out, "--folds", "2", "--seed", "7", "--predictor", "lightgbm")
    assert result.exit_code == 1 and "cannot write the model" in result.stderr and len(result.stderr.splitlines()) == 1
    assert {p.name for p in out.iterdir()} == set(before)
    assert all(out.joinpath(name).read_bytes() == data for name, data in before.items() if name != "cv_metrics.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    # once it can be written: the model files replaced, the older gzip'd model gone, the user's file kept
    shutil.rmtree(out / "cv_metrics.json")
    result = _train(lib, table["path"], out, "--folds", "2", "--seed", "7", "--predictor", "lightgbm")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["cv_metrics.json", SPEC, MODEL, "notes.txt"]
    assert (out / "notes.txt").read_text() == "mine" and (out / MODEL).read_bytes() != before[MODEL]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    load_model(out)
    # an analytic model written over it: the forest goes, the user's file stays, and the directory reads as the
    # analytic model
    result = _train(lib, table["path"], out, "--folds", "2", "--predictor", "analytic")
    assert result.exit_code == 0 and "model: analytic, as --predictor asks" in result.stdout, result.output
    assert sorted(p.name for p in out.iterdir()) == ["cv_metrics.json", SPEC, "notes.txt"]
    assert load_model(out).name == "analytic"
