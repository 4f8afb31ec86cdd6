"""`ckast select emit`: the emitted selector ranks as `ckast select` does, bit for bit (JIT'd and compiled on the
host), picks through CK's dispatcher hooks under the host model, and refuses bad input with exit 2."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import attrs
import pytest
from click.testing import CliRunner

from ckast import nodes as n
from ckast.cli import main as cli
from ckast.hostmodel.jit import session
from ckast.library.selection import Selection
from ckast.select.models.analytic import AnalyticPredictor
from ckast.select.serving.applicability import KERNEL_ONLY, LAYERS
from ckast.select.cxx.problem_struct import problem_struct
from ckast.select.cxx.selector import write_selector
from ckast.select.serving.library import load_library
from ckast.select.models.lightgbm_model import load_model
from ckast.select.problem import ConvProblem, GemmProblem
from ckast.select.serving.problem_read import gemm_problem

from .select_helpers import (
    ROOT,
    bits,
    conv_entries,
    entries,
    gemm_entries,
    python_ranking,
    synth_module,
    write_library,
)

PROFILE = "ck-2026.06"
CLANG = shutil.which("clang++-19")


def _conv_problem(rng: random.Random, direction: str) -> ConvProblem:
    size, filt = rng.choice([7, 14, 28, 56]), rng.choice([1, 3])
    return ConvProblem(direction=direction, G=rng.choice([1, 2, 4]), N=rng.choice([1, 2, 8, 32]),
                       C=rng.choice([3, 8, 16, 64, 128]), K=rng.choice([5, 8, 16, 64, 256]), input=(size, size),
                       filter=(filt, filt), stride=(rng.choice([1, 2]),) * 2, dilation=(1, 1),
                       left_pad=(filt // 2,) * 2, right_pad=(filt // 2,) * 2,
                       k_batch=rng.choice([1, 1, 2]) if direction == "bwd_weight" else 1)


def _gemm_problem(rng: random.Random) -> GemmProblem:
    return GemmProblem(M=rng.choice([1, 7, 64, 500, 4096]), N=rng.choice([16, 128, 1000, 8192]),
                       K=rng.choice([8, 64, 100, 4096]), k_batch=rng.choice([1, 1, 4]))


def _struct(ns, problem):
    struct = problem_struct(problem.kind)
    value = getattr(ns, struct.name)()
    for field, v in zip(struct.fields, struct.values(problem)):
        setattr(value, field, v)
    return value


def _jit(selector_dir):
    return session().compile([selector_dir / "ckast_selector.cpp"], PROFILE).lookup("ckast_selector")


@pytest.fixture(scope="module")
def conv(tmp_path_factory):
    """The full fp16 2-D forward and bwd_weight kernels (1,877), a 40-tree model of the forward part, and
    the library's selector with that model (bwd_weight: analytic)."""
    root = tmp_path_factory.mktemp("conv")
    lib = write_library(root / "lib", conv_entries("forward", "bwd_weight"))
    synth = synth_module()
    synth.write(synth.synthesize(lib, "forward", 25, 60, 1, 0.02, 0.08), root / "train.csv")
    result = CliRunner().invoke(cli, ["select", "train", "--data", str(root / "train.csv"), "--library", str(lib),
                                      "-o", str(root / "model"), "--trees", "40", "--folds", "0",
                                      "--predictor", "lightgbm"])
    assert result.exit_code == 0, result.output
    counts = write_selector(lib, [root / "model"], root / "selector")
    assert (counts["parts"], counts["forests"]) == (2, 1)
    return {"lib": lib, "model": root / "model", "selector": root / "selector", "ns": _jit(root / "selector")}


def test_conv_ranking_is_pythons_bit_for_bit(conv):
    library, model, ns = load_library(conv["lib"]), load_model(conv["model"]), conv["ns"]
    rng = random.Random(5)
    ranked = 0
    for _ in range(30):
        direction = rng.choice(["forward", "bwd_weight"])
        problem = _conv_problem(rng, direction)
        expected = python_ranking(library, problem, model if direction == "forward" else AnalyticPredictor())
        got = [(str(c.kernel), c.tflops) for c in ns.rank(_struct(ns, problem), "fp16")]
        assert bits(got) == bits(expected), problem
        assert list(ns.select(_struct(ns, problem))) == [name for name, _ in expected]
        ranked += len(expected)
    assert ranked > 1000  # the problems are not all refused


def _widened(model, out):
    """A copy of a model directory whose spec's domain holds every problem and kernel (its trees always count)."""
    shutil.copytree(model, out)
    spec = json.loads((out / "feature_spec.json").read_text())
    spec["domain"] = {"problems": {}, "kernels": {}}
    (out / "feature_spec.json").write_text(json.dumps(spec))
    return out


@pytest.fixture(scope="module")
def residual(tmp_path_factory):
    """The fp16 2-D forward kernels (655), a 30-tree residual model (select train's default) trained on runs of their
    compv3 kernels only, the same model with a domain that holds everything (`wide`) and with one that holds every
    kernel, its problems the trained model's (`kernels`), and a selector of each."""
    root = tmp_path_factory.mktemp("residual")
    lib = write_library(root / "lib", conv_entries("forward"))
    synth = synth_module()
    rows = [r for r in synth.synthesize(lib, "forward", 30, 200, 1, 0.02, 0.08) if "_compv3_" in r["kernel"]]
    synth.write(rows, root / "train.csv")
    result = CliRunner().invoke(cli, ["select", "train", "--data", str(root / "train.csv"), "--library", str(lib),
                                      "-o", str(root / "model"), "--trees", "30", "--folds", "0"])
    assert result.exit_code == 0, result.output
    wide = _widened(root / "model", root / "wide")
    shutil.copytree(root / "model", root / "kernels")
    spec = json.loads((root / "kernels" / "feature_spec.json").read_text())
    spec["domain"]["kernels"] = {}
    (root / "kernels" / "feature_spec.json").write_text(json.dumps(spec))
    out = {"lib": lib, "model": root / "model", "wide": wide, "kernels": root / "kernels"}
    for name in ("model", "wide", "kernels"):
        assert write_selector(lib, [out[name]], root / f"selector_{name}")["forests"] == 1
        out[f"selector_{name}"] = root / f"selector_{name}"
        out[f"ns_{name}"] = _jit(root / f"selector_{name}")
    return out


def test_residual_ranking_is_pythons_bit_for_bit(residual):
    """Among kernels inside the domain (the widened model; and the model whose domain holds every kernel, for problems
    outside its problems too) the trees correct the analytic model, among kernels outside it (most problems of the
    trained model: it saw few kernels) the analytic model ranks alone; C++ and Python agree bit for bit either
    way."""
    library = load_library(residual["lib"])
    rng = random.Random(7)
    corrected = alone = outside = 0
    for _ in range(20):
        problem = _conv_problem(rng, "forward")
        analytic = python_ranking(library, problem, AnalyticPredictor())
        for name in ("model", "wide", "kernels"):
            model, ns = load_model(residual[name]), residual[f"ns_{name}"]
            expected = python_ranking(library, problem, model)
            got = [(str(c.kernel), c.tflops) for c in ns.rank(_struct(ns, problem), "fp16")]
            assert bits(got) == bits(expected), (name, problem)
            if name == "wide" and expected:
                corrected += bits(expected) != bits(analytic)
            if name == "model":
                alone += bits(expected) == bits(analytic)
            if name == "kernels" and expected and model.domain.problems_outside(problem):
                outside += bits(expected) == bits(python_ranking(library, problem, load_model(residual["wide"])))
    assert corrected >= 10 and alone >= 10 and outside >= 5


def test_a_library_whose_every_kernel_refuses_the_problem_ranks_nothing(tmp_path):
    """Forward kernels that read 2 or more channels per vector: an odd C is refused by all of them."""
    kernels = [k for k in entries(Selection("tiny", "gfx942", PROFILE, ("fp16",), (2,), ("forward",), None, ()))
               if k["config"]["vector_size_a"] % 2 == 0]
    lib = write_library(tmp_path / "lib", kernels)
    write_selector(lib, [], tmp_path / "selector")
    ns = _jit(tmp_path / "selector")
    refused = ConvProblem(direction="forward", G=1, N=1, C=3, K=8, input=(7, 7), filter=(1, 1), stride=(1, 1),
                          dilation=(1, 1), left_pad=(0, 0), right_pad=(0, 0))
    library = load_library(lib)
    assert len(library.part(refused)) == len(kernels) >= 1
    assert python_ranking(library, refused, AnalyticPredictor()) == []
    assert len(ns.rank(_struct(ns, refused))) == 0 and len(ns.select(_struct(ns, refused))) == 0
    accepted = attrs.evolve(refused, C=16)
    expected = [k for k, _ in python_ranking(library, accepted, AnalyticPredictor())]
    assert [c.kernel for c in ns.rank(_struct(ns, accepted))] == expected != []
    import cppyy

    with pytest.raises(cppyy.gbl.std.invalid_argument, match=r"datatype bf16 is not among the library's grouped_conv "
                                                              r"forward 2-D kernels' datatypes \(fp16\)"):
        ns.rank(_struct(ns, accepted), "bf16")
    assert ns.invalid(ns.ConvProblem()) == ""  # null: a default-initialized problem is valid


def test_gemm_parts_by_datatype_and_the_name_it_needs(tmp_path):
    lib = write_library(tmp_path / "lib", gemm_entries(tmp_path, ("fp16", "bf16")))
    write_selector(lib, [], tmp_path / "selector")
    ns, library = _jit(tmp_path / "selector"), load_library(lib)
    rng = random.Random(3)
    for _ in range(20):
        problem = _gemm_problem(rng)
        for datatype in ("fp16", "bf16"):
            expected = python_ranking(library, problem, AnalyticPredictor(), datatype)
            got = [(str(c.kernel), c.tflops) for c in ns.rank(_struct(ns, problem), datatype)]
            assert bits(got) == bits(expected)
    import cppyy

    with pytest.raises(cppyy.gbl.std.invalid_argument, match="the library's gemm kernels have datatypes bf16, fp16; "
                                                              "name one"):
        ns.rank(_struct(ns, GemmProblem(M=64, N=64, K=64)))
    # a datatype or layout the library does not hold is refused as a missing one is, not answered with nothing
    with pytest.raises(cppyy.gbl.std.invalid_argument, match=r"datatype fp8 is not among the library's gemm "
                                                              r"kernels' datatypes \(bf16, fp16\)"):
        ns.rank(_struct(ns, GemmProblem(M=64, N=64, K=64)), "fp8")
    with pytest.raises(cppyy.gbl.std.invalid_argument, match=r"layout ccr is not among .* layouts \(rcr\)"):
        ns.rank(_struct(ns, GemmProblem(M=64, N=64, K=64)), "fp16", "ccr")
    # a problem that sets only its sizes: every other field defaults to a valid value (k_batch 1, standard)
    assert ns.invalid(ns.GemmProblem()) == ""  # null: valid
    problem = ns.GemmProblem()
    problem.M, problem.N, problem.K = 500, 1000, 4096
    assert ns.invalid(problem) == ""
    expected = python_ranking(library, GemmProblem(M=500, N=1000, K=4096), AnalyticPredictor(), "bf16")
    assert [str(c.kernel) for c in ns.rank(problem, "bf16")] == [name for name, _ in expected] != []


def test_problem_structs_default_to_a_valid_problem():
    """A default-initialized struct is the problem of sizes 1, k_batch 1, stride and dilation 1, pads 0: a standard
    GEMM, a 2-D forward convolution; each is valid, so a struct that sets only the sizes it needs ranks."""
    from ckast.select.serving.validity import check

    gemm = GemmProblem(M=1, N=1, K=1)
    conv = ConvProblem(direction="forward", G=1, N=1, C=1, K=1, input=(1, 1), filter=(1, 1), stride=(1, 1),
                       dilation=(1, 1), left_pad=(0, 0), right_pad=(0, 0))
    for problem in (gemm, conv):
        struct = problem_struct(problem.kind)
        check(problem, "default")
        assert tuple(struct.defaults[f] for f in struct.fields) == struct.values(problem)
        assert "std::int64_t k_batch = 1;" in n.to_source(n.File([struct.decl()]))


def test_gemm_selector_applies_ck_s_dispatcher_and_the_problem_s_variant(tmp_path):
    """CK's 32 unpadded sweep kernels and a kernel of each variant: M=257 ranks nothing (CK's dispatcher declines
    it) but in a selector emitted with the kernel layer only; a problem ranks the kernels of its variant only."""
    paths = (ROOT / "examples" / "ck-real" / "gemm_fp16_rcr_gfx942_sweep.json",
             *(ROOT / "examples" / f"gemm_{v}.json" for v in ("standard", "preshuffle", "multi_d")))
    lib = write_library(tmp_path / "lib", entries(Selection("", "", PROFILE, (), (), (), None, paths)))
    library = load_library(lib)
    problems = [gemm_problem(f) for f in ({"M": 257, "N": 1024, "K": 512}, {"M": 1024, "N": 1024, "K": 1024},
                                          {"M": 512, "N": 512, "K": 512, "variant": "preshuffle"},
                                          {"M": 512, "N": 512, "K": 512, "variant": "multi_d"})]
    counts = []
    for layers in (LAYERS, KERNEL_ONLY):
        write_selector(lib, [], tmp_path / layers[-1], layers)
        ns = _jit(tmp_path / layers[-1])
        for problem in problems:
            expected = python_ranking(library, problem, AnalyticPredictor(), "fp16", "rcr", layers)
            got = [(str(c.kernel), c.tflops) for c in ns.rank(_struct(ns, problem), "fp16", "rcr")]
            assert bits(got) == bits(expected), (layers, problem)
            counts.append(len(got))
    assert counts == [0, 33, 1, 1, 33, 33, 1, 1]  # 32 sweep kernels and examples/gemm_standard.json's fp16 rcr one


@pytest.mark.skipif(CLANG is None, reason="clang++-19 not installed")
@pytest.mark.parametrize("which", ["conv", "residual"])
def test_selector_compiled_on_the_host_ranks_as_python(which, request, tmp_path):
    """The selector built with clang++-19 -O2 (FMA contraction on, its default), driven by a small program that
    prints each problem's ranking as kernel and bit pattern: a plain model's and the analytic model's parts, and a
    residual model's (its domain widened, so its trees count)."""
    conv = request.getfixturevalue(which)
    if which == "residual":
        conv = {"lib": conv["lib"], "model": conv["wide"], "selector": conv["selector_wide"]}
    rng = random.Random(11)
    directions = ["forward", "bwd_weight"] if which == "conv" else ["forward"]
    problems = [_conv_problem(rng, rng.choice(directions)) for _ in range(12)]
    struct = problem_struct("grouped_conv")
    values = [v for p in problems for v in struct.values(p)]
    ns = ("ckast_selector",)
    i, c = n.ident("i"), n.ident("c")
    reader = struct.reader("read")
    body = [
        n.VarDecl(n.Array(n.Const(n.TypeName(n.Name(("std", "int64_t")))), None), "values",
                  n.BraceInit(None, [n.IntLit(v) for v in values]), static=True, constexpr=True),
        n.For(n.VarDecl(n.Builtin("int"), "i", n.IntLit(0)), n.BinOp("<", i, n.IntLit(len(problems))),
              n.UnOp("++", i), [
            n.VarDecl(n.Const(n.Builtin("auto")), "ranked", n.call("ckast_selector::rank", n.call(
                "ckast_selector::read", n.BinOp("+", n.ident("values"), n.BinOp("*", i, n.IntLit(len(struct.fields))))))),
            n.For(n.VarDecl(n.TypeName(n.Name(("std", "size_t"))), "c", n.IntLit(0)),
                  n.BinOp("<", c, n.call(n.Member(n.ident("ranked"), "size"))), n.UnOp("++", c), [
                n.ExprStmt(n.call("std::printf", n.StrLit("%d %s %a\n"), i,
                                  n.Member(n.Index(n.ident("ranked"), c), "kernel"),
                                  n.Member(n.Index(n.ident("ranked"), c), "tflops"))),
            ]),
        ]),
        n.Return(n.IntLit(0)),
    ]
    driver = n.File([n.Namespace(ns[0], [reader]), n.FunctionDef("main", n.Builtin("int"), [], body)],
                    includes=[n.Header("cstdio", system=True), n.Header("ckast_selector.hpp")], pragma_once=False)
    (tmp_path / "driver.cpp").write_text(n.to_source(driver))
    exe = tmp_path / "driver"
    subprocess.run([CLANG, "-O2", "-std=c++17", f"-I{conv['selector']}", str(conv["selector"] / "ckast_selector.cpp"),
                    str(tmp_path / "driver.cpp"), "-o", str(exe)], check=True, capture_output=True)
    lines = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
    got: dict[int, list[tuple[str, float]]] = {}
    for line in lines:
        index, name, value = line.split()
        got.setdefault(int(index), []).append((name, float.fromhex(value)))
    library, model = load_library(conv["lib"]), load_model(conv["model"])
    for index, problem in enumerate(problems):
        predictor = model if problem.direction == "forward" else AnalyticPredictor()
        assert bits(got.get(index, [])) == bits(python_ranking(library, problem, predictor))


# --- through CK's dispatcher hooks (host model) ------------------------------------------------------------------


def _generate(args, out):
    result = CliRunner().invoke(cli, [*args, "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_conv_dispatcher_picks_the_selectors_first_kernel(tmp_path):
    from ckast import testing

    lib = _generate(["generate", "--rule-set", "tiny", "--arch", "gfx942", "--ck-api", PROFILE, "--ndim", "2",
                     "--datatype", "fp16", "--datatype", "bf16"], tmp_path / "lib")  # the problems' part of tiny
    write_selector(lib, [], tmp_path / "selector")
    sources = sorted((lib / "dispatcher_wrappers").glob("register_*.cpp"))
    unit = testing.jit_files([*sources, tmp_path / "selector" / "ckast_selector.cpp",
                              tmp_path / "selector" / "ckast_selector_dispatcher.hpp"], PROFILE, lib)
    library = load_library(lib)
    d = ("ck_tile", "dispatcher")
    registry = n.Call(n.ident(*d, "GroupedConvRegistry", "instance"), [])
    direction, datatype = n.ident("direction"), n.ident("datatype")
    param = n.ident("param")
    problem_t = n.TypeName(n.Name((*d, "GroupedConvProblem")))
    pick = unit.function(n.TypeName(n.Name(("std", "string"))), [
        n.FuncParam(n.LRef(n.Const(n.TypeName(n.Name(("ck_tile", "conv", "ConvParam"))))), "param"),
        n.FuncParam(n.TypeName(n.Name(("std", "int64_t"))), "direction"),
        n.FuncParam(n.Ptr(n.Const(n.Builtin("char"))), "datatype")], [
        n.ExprStmt(n.call(n.Member(registry, "clear"))),
        n.ExprStmt(n.call("ckast_selector::register_library", registry, n.StrLit("gfx942"))),
        n.VarDecl(n.TypeName(n.Name((*d, "GroupedConvDispatcher"))), "dispatcher", n.UnOp("&", registry), brace=True),
        n.ExprStmt(n.call("ckast_selector::use_selector", n.ident("dispatcher"), direction, datatype)),
        n.VarDecl(problem_t, "problem", n.BraceInit(None, [param, n.NullPtr(), n.NullPtr(), n.NullPtr(), n.IntLit(1)]),
                  brace=False),
        n.VarDecl(n.Const(n.Builtin("auto")), "kernel",
                  n.call(n.Member(n.ident("dispatcher"), "select_kernel"), n.ident("problem"))),
        n.Return(n.Cond(n.BinOp("==", n.ident("kernel"), n.NullPtr()), n.StrLit(""),
                        n.call(n.Member(n.ident("kernel"), "name", arrow=True)))),
    ])
    import cppyy

    checked = 0
    for direction_name in ("forward", "bwd_weight"):
        for c in (16, 64):
            problem = ConvProblem(direction=direction_name, G=1, N=2, C=c, K=c, input=(14, 14), filter=(1, 1),
                                  stride=(1, 1), dilation=(1, 1), left_pad=(0, 0), right_pad=(0, 0))
            for datatype in ("fp16", "bf16"):
                expected = python_ranking(library, problem, AnalyticPredictor(), datatype)
                if not expected:
                    continue
                param_v = cppyy.gbl.ckjit_ck_2026_06.ck_tile.conv.ConvParam(
                    2, 1, 2, c, c, [1, 1], [14, 14], [1, 1], [1, 1], [0, 0], [0, 0])
                code = {"forward": 0, "bwd_data": 1, "bwd_weight": 2}[direction_name]
                assert str(pick(param_v, code, datatype)) == expected[0][0]
                checked += 1
    assert checked >= 3


def test_gemm_dispatcher_picks_the_selectors_first_kernel_by_its_identifier(tmp_path):
    from ckast import testing

    lib = _generate(["emit", "--config", str(ROOT / "examples" / "gemm_standard.json")], tmp_path / "lib")
    write_selector(lib, [], tmp_path / "selector")
    unit = testing.jit_files([lib / "dispatcher_wrappers" / "register_all_kernels.hpp",
                              tmp_path / "selector" / "ckast_selector.cpp",
                              tmp_path / "selector" / "ckast_selector_dispatcher.hpp"], None, lib)
    d = ("ck_tile", "dispatcher")
    registry = n.Call(n.ident(*d, "Registry", "instance"), [])
    problem_t = n.TypeName(n.Name((*d, "Problem")))
    int64 = n.TypeName(n.Name(("std", "int64_t")))
    chars = n.Ptr(n.Const(n.Builtin("char")))
    problem = n.ident("problem")
    pick = unit.function(n.TypeName(n.Name(("std", "string"))), [
        n.FuncParam(int64, "m"), n.FuncParam(int64, "nn"), n.FuncParam(int64, "k"), n.FuncParam(chars, "layout")], [
        n.ExprStmt(n.call(n.Member(registry, "clear"))),
        n.ExprStmt(n.call("ckast_selector::register_library", n.StrLit("gfx942"))),
        n.VarDecl(n.TypeName(n.Name((*d, "Dispatcher"))), "dispatcher", n.UnOp("&", registry), brace=True),
        n.ExprStmt(n.call("ckast_selector::use_selector", n.ident("dispatcher"), registry, n.NullPtr(),
                          n.ident("layout"))),
        n.VarDecl(problem_t, "problem"),
        *(n.ExprStmt(n.BinOp("=", n.Member(problem, f), n.ident(v))) for f, v in (("M", "m"), ("N", "nn"), ("K", "k"))),
        n.VarDecl(n.Const(n.Builtin("auto")), "kernel",
                  n.call(n.Member(n.ident("dispatcher"), "select_kernel"), problem)),
        n.Return(n.Cond(n.BinOp("==", n.ident("kernel"), n.NullPtr()), n.StrLit(""),
                        n.call(n.Member(n.ident("kernel"), "get_name", arrow=True)))),
    ])
    library = load_library(lib)
    # Where the selector ranks no kernel, CK's dispatcher falls back to its first fit: the first registered kernel
    # whose supports() holds, of any layout (its problem has none): here the one padding M, N and K (rrr).
    (padded,) = [name for name, c in zip(library.names, library.configs) if c["pad_m"] and c["pad_n"] and c["pad_k"]]
    fell_back = 0
    for m, nn, k in ((512, 512, 512), (4096, 1024, 100), (1, 8192, 64)):
        for layout in ("rcr", "rrr"):
            expected = python_ranking(library, GemmProblem(M=m, N=nn, K=k), AnalyticPredictor(), None, layout)
            assert str(pick(m, nn, k, layout)) == (expected[0][0] if expected else padded)
            fell_back += not expected
    assert fell_back >= 2


# --- the command ---------------------------------------------------------------------------------------------------


def test_emit_command_writes_once_and_refuses_bad_input(tmp_path):
    lib = write_library(tmp_path / "lib", gemm_entries(tmp_path))
    runner = CliRunner()
    first = runner.invoke(cli, ["select", "emit", "--library", str(lib), "-o", str(tmp_path / "sel")])
    assert first.exit_code == 0 and "5 files written" in first.output
    again = runner.invoke(cli, ["select", "emit", "--library", str(lib), "-o", str(tmp_path / "sel")])
    assert again.exit_code == 0 and "0 files written, 5 unchanged" in again.output
    for args, message in (
        (["--library", str(lib), "-o", str(lib)], "the library's own directory"),
        (["--library", str(tmp_path / "nowhere"), "-o", str(tmp_path / "x")], "manifest"),
        (["--library", str(lib), "--model", str(tmp_path / "nomodel"), "-o", str(tmp_path / "y")], "not a model"),
        (["-o", str(tmp_path / "z")], "--library: missing"),
    ):
        result = runner.invoke(cli, ["select", "emit", *args])
        assert result.exit_code == 2 and message in result.stderr, (args, result.output)
        assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists() and not (tmp_path / "z").exists()
    assert sorted(p.name for p in lib.iterdir()) == ["manifest.json"]


def test_a_model_for_another_part_is_refused(conv, tmp_path):
    lib = write_library(tmp_path / "lib", gemm_entries(tmp_path))
    result = CliRunner().invoke(cli, ["select", "emit", "--library", str(lib), "--model", str(conv["model"]),
                                      "-o", str(tmp_path / "sel")])
    assert result.exit_code == 2 and "fits no part of the library" in result.stderr
    assert not (tmp_path / "sel").exists()


@pytest.mark.ck_compile
def test_selector_and_its_ck_adapters_compile_against_ck_tile(tmp_path):
    """The selector and its adapters of CK Tile's ConvParam and GemmHostArgs, with CK Tile's own headers (the
    wheel's tree has no dispatcher: the hooks are checked under the host model above)."""
    from ckast.check import Toolchain
    from ckast.check.runner import compile_one

    entries_ = [*conv_entries("forward"), *gemm_entries(tmp_path)]
    lib = write_library(tmp_path / "lib", entries_)
    write_selector(lib, [], tmp_path / "selector")
    param = n.ident("param")
    ck = ("ck_tile",)
    use = n.FunctionDef("use_adapters", n.Builtin("int"), [
        n.FuncParam(n.LRef(n.Const(n.TypeName(n.Name((*ck, "conv", "ConvParam"))))), "param"),
        n.FuncParam(n.LRef(n.Const(n.TypeName(n.Name((*ck, "GemmHostArgs"))))), "args")], [
        n.VarDecl(n.Const(n.Builtin("auto")), "convs",
                  n.call("ckast_selector::select", n.call("ckast_selector::conv_problem", param,
                                                          n.ident("ckast_selector", "forward")))),
        n.VarDecl(n.Const(n.Builtin("auto")), "gemms",
                  n.call("ckast_selector::rank", n.call("ckast_selector::gemm_problem", n.ident("args")),
                         n.StrLit("fp16"))),
        n.Return(n.StaticCast(n.Builtin("int"), n.BinOp("+", n.call(n.Member(n.ident("convs"), "size")),
                                                        n.call(n.Member(n.ident("gemms"), "size"))))),
    ])
    tu = tmp_path / "selector" / "check.cpp"
    tu.write_text(n.to_source(n.File([use], includes=[n.Header("ckast_selector_ck.hpp"), n.Header("ckast_selector.cpp")],
                                     pragma_once=False)))
    result = compile_one(tu, Toolchain.discover(), include_dirs=[tmp_path / "selector"])
    print(result.line())
    assert result.passed, result.log


@pytest.mark.skipif(CLANG is None or shutil.which("cmake") is None, reason="needs clang++-19 and cmake")
def test_a_program_linking_the_cmake_target_ranks(tmp_path):
    """`include(ckast_selector.cmake)` and `ckast_add_selector(<target>)`: a program linking the target ranks a
    problem that sets only its sizes (the other fields' defaults are valid), as `ckast select` does."""
    lib = write_library(tmp_path / "lib", gemm_entries(tmp_path))
    write_selector(lib, [], tmp_path / "sel")
    names, i = n.ident("names"), n.ident("i")
    problem = n.ident("problem")
    body = [
        n.VarDecl(n.TypeName(n.Name(("ckast_selector", "GemmProblem"))), "problem"),
        *(n.ExprStmt(n.BinOp("=", n.Member(problem, f), n.IntLit(v)))
          for f, v in (("M", 500), ("N", 1000), ("K", 4096))),
        n.VarDecl(n.Const(n.Builtin("auto")), "names", n.call("ckast_selector::select", problem, n.StrLit("fp16"))),
        n.For(n.VarDecl(n.TypeName(n.Name(("std", "size_t"))), "i", n.IntLit(0)),
              n.BinOp("<", i, n.call(n.Member(names, "size"))), n.UnOp("++", i), [
            n.ExprStmt(n.call("std::printf", n.StrLit("%s\n"), n.call(n.Member(n.Index(names, i), "c_str"))))]),
        n.Return(n.IntLit(0)),
    ]
    program = n.File([n.FunctionDef("main", n.Builtin("int"), [], body)],
                     includes=[n.Header("cstdio", system=True), n.Header("ckast_selector.hpp")], pragma_once=False)
    app = tmp_path / "app"
    app.mkdir()
    (app / "app.cpp").write_text(n.to_source(program))
    (app / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\nproject(app LANGUAGES CXX)\n"
        f'include("{tmp_path / "sel" / "ckast_selector.cmake"}")\nckast_add_selector(selector)\n'
        "add_executable(app app.cpp)\ntarget_link_libraries(app PRIVATE selector)\n")
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(app), "-B", str(build), f"-DCMAKE_CXX_COMPILER={CLANG}",
                    *(["-G", "Ninja"] if shutil.which("ninja") else [])], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    ranked = subprocess.run([str(build / "app")], check=True, capture_output=True, text=True).stdout.split()
    expected = python_ranking(load_library(lib), GemmProblem(M=500, N=1000, K=4096), AnalyticPredictor())
    assert ranked == [name for name, _ in expected] != []


def test_gemm_datatype_and_layout_held_apart_are_refused_together(tmp_path):
    """fp16 rcr and bf16 rrr kernels: each name is held, fp16 with rrr is not; a null layout is rcr where the datatype
    has rcr kernels, else refused."""
    configs = tmp_path / "two.json"
    configs.write_text(json.dumps([{"kind": "gemm", "datatype": dt, "layout": layout, "arch": "gfx942",
                                    "ck_api": PROFILE, "pad_m": True, "pad_n": True, "pad_k": True}
                                   for dt, layout in (("fp16", "rcr"), ("bf16", "rrr"))]))
    lib = write_library(tmp_path / "lib", entries(Selection("", "", PROFILE, (), (), (), None, (configs,))))
    write_selector(lib, [], tmp_path / "selector")
    ns = _jit(tmp_path / "selector")
    import cppyy

    problem = _struct(ns, GemmProblem(M=256, N=256, K=256))
    with pytest.raises(cppyy.gbl.std.invalid_argument, match=r"the library has no gemm kernels of the datatype and "
                                                              r"layout named \(it has bf16 rrr, fp16 rcr\)"):
        ns.rank(problem, "fp16", "rrr")
    # a null layout is rcr (the library's DEFAULT_GEMM_LAYOUT) where the datatype has rcr kernels, else refused
    assert [str(c.kernel) for c in ns.rank(problem, "fp16")] == [str(c.kernel) for c in ns.rank(problem, "fp16", "rcr")]
    assert len(ns.rank(problem, "fp16")) == 1
    with pytest.raises(cppyy.gbl.std.invalid_argument, match="gemm kernels have layouts rcr, rrr; name one"):
        ns.rank(problem, "bf16")
    assert len(ns.rank(problem, "bf16", "rrr")) == 1


def test_a_gemm_problem_naming_no_layout_is_rcr_among_several(tmp_path):
    """fp16 kernels of layouts rcr and rrr: a problem that names no layout ranks the rcr kernels (CK's default GEMM
    layout), in Python and in the C++ selector alike; a named layout is kept."""
    configs = tmp_path / "two.json"
    configs.write_text(json.dumps([{"kind": "gemm", "datatype": "fp16", "layout": layout, "arch": "gfx942",
                                    "ck_api": PROFILE, "pad_m": True, "pad_n": True, "pad_k": True}
                                   for layout in ("rcr", "rrr")]))
    lib = write_library(tmp_path / "lib", entries(Selection("", "", PROFILE, (), (), (), None, (configs,))))
    library, problem = load_library(lib), GemmProblem(M=256, N=256, K=256)
    python = python_ranking(library, problem, AnalyticPredictor())
    assert [name for name, _ in python] == [name for name, _ in python_ranking(library, problem, AnalyticPredictor(),
                                                                               "fp16", "rcr")]
    assert "_rcr_" in python[0][0] and "_rrr_" in python_ranking(library, problem, AnalyticPredictor(), None, "rrr")[0][0]
    write_selector(lib, [], tmp_path / "selector")
    ns = _jit(tmp_path / "selector")
    assert [str(c.kernel) for c in ns.rank(_struct(ns, problem))] == [name for name, _ in python]
