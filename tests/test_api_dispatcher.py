"""`ckast api check` on CK's dispatcher declarations, and the emitted code's binding to them.

CK's real dispatcher headers are not kept in the repository (they were read once, at the commits the
profile's comments and SOURCES.md name). The tests render a small dispatcher tree from the catalog's
own facts (every dispatcher entry declared as the catalog records it, plus the few helpers it names:
`KernelInstance`, `BaseRegistry`, the key hash), check that it matches, then alter it one way per test
(a field renamed, a type changed, a constructor parameter added, a function missing, ...) and check
that the check names the entity, the member and what differs. Each parse takes about a second.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

from ckast import api as a
from ckast.api.compare import Row
from ckast.api.diff import diff
from ckast.api.entries import Catalog, Entry
from ckast.api.model import CallInfo, EnumInfo, NameInfo, ParamInfo, TemplateInfo
from ckast.api.tree import dispatcher_root
from ckast.catalog import CatalogError, load_profile
from ckast.cli import main
from ckast.config.load import load_file
from ckast.variants import conv_wrapper, gemm_wrapper

from .conftest import ROOT
from .test_api import needs_parser, only

PROFILE = "ck-2026.06"
SUPPORT = "ck_tile/dispatcher/test_support.hpp"
SUPPORT_TEXT = """\
namespace ck_tile { namespace dispatcher {
class KernelInstance { public: virtual ~KernelInstance() = default; };
struct GroupedConvKernelKeyHash;
template <typename Derived, typename KeyType, typename InstanceType, typename KeyHash = std::hash<KeyType>>
class BaseRegistry {
  public:
    using InstancePtr = std::shared_ptr<InstanceType>;
    bool register_kernel(const KeyType& key, InstancePtr instance, Priority priority = Priority::Normal);
};
} }
"""
"""What the dispatcher entries name but the catalog does not record (declared after `Priority`)."""
SUPPORT_NAMES = ("ck_tile::dispatcher::KernelInstance", "ck_tile::dispatcher::GroupedConvKernelKeyHash",
                 "ck_tile::dispatcher::BaseRegistry")
STD = "".join(f"#include <{h}>\n" for h in ("array", "cstdint", "functional", "memory", "string", "vector"))


def dispatcher_catalog(profile: str = PROFILE) -> Catalog:
    """The profile's catalog without its CK Tile entries (the rendered tree has only a dispatcher)."""
    catalog = a.load_catalog(profile)
    return attrs.evolve(catalog, entries={k: e for k, e in catalog.entries.items() if e.part != "tile"})


# --------------------------------------------------------------------------- rendering the catalog as headers


def _arg(p: ParamInfo) -> str:
    return f"{p.ctype} {p.name}" + (f" = {p.default}" if p.default is not None else "")


def _args(call: CallInfo) -> str:
    return ", ".join(map(_arg, call.args))


def _fields(fields: tuple[ParamInfo, ...], prefix: str = "") -> Iterator[str]:
    """Members at one level: a field whose type is a nested struct carries its own members."""
    for f in fields:
        name = f.name[len(prefix):]
        if "." in name:
            continue
        inner = tuple(g for g in fields if g.name.startswith(f"{f.name}."))
        if inner:
            yield f"struct {f.ctype.split('::')[-1]} {{ {' '.join(_fields(inner, f'{f.name}.'))} }} {name};"
        else:
            yield _arg(attrs.evolve(f, name=name)) + ";"


def _record(e: Entry, head: str) -> str:
    r = e.record
    name = e.info.qualname.split("::")[-1]
    body = [f"using {p.name} = {p.ctype};" for p in r.aliases] if r else []
    nested = {m.group(1) for c in (r.methods if r else ()) for p in c[1].args
              for m in re.finditer(rf"{re.escape(e.info.qualname)}::(\w+)", p.ctype)} - {p.name for p in r.aliases}
    body += [f"enum class {x} {{ First }};" for x in sorted(nested)]
    if r:
        body += list(_fields(r.fields))
        body += [f"{name}({_args(c)});" for c in r.constructors]
        body += [("static " if c.static else "") + f"{c.result} {m}({_args(c)});" for m, c in r.methods if not c.owner]
    bases = f" : public {', public '.join(r.bases)}" if r and r.bases else ""
    return f"{head}struct {name}{bases} {{ public: {' '.join(body)} }};"


def _declaration(e: Entry) -> str:
    info = e.info
    name = info.qualname.split("::")[-1]
    if isinstance(info, EnumInfo):
        return f"enum {'class ' if info.scoped else ''}{name} {{ {', '.join(info.values)} }};"
    if isinstance(info, TemplateInfo):
        head = "template <" + ", ".join(f"typename {p.name}" if p.kind == "type" else f"{p.ctype} {p.name}"
                                        for p in info.params) + "> "
        if info.kind != "function":
            return _record(e, head)
        text = f"{head}{info.call.result} {name}();"
        return f"#ifdef {e.guard}\n{text}\n#endif\n" if e.guard else text
    assert isinstance(info, NameInfo)
    if info.spelled:
        return f"using {name} = {info.spelled};"
    if e.calls:
        return " ".join(f"{c.result} {name}({_args(c)});" for c in e.calls)
    return _record(e, "")


def _mentions(text: str, qualnames: dict[str, str]) -> set[str]:
    return {q for q in qualnames if re.search(rf"(?<![\w:]){re.escape(q)}(?!\w)", text)}


def render(catalog: Catalog, root: Path) -> None:
    """Write every dispatcher entry of `catalog` into its `source` under `root`, and its `include`
    umbrella; each file includes the files that declare what it names."""
    entries = [e for e in catalog.entries.values() if e.part == "dispatcher"]
    texts = {e.key: _declaration(e) for e in entries}
    where = {e.info.qualname: e.source for e in entries} | dict.fromkeys(SUPPORT_NAMES, SUPPORT)
    files: dict[str, list[Entry]] = {}
    for e in entries:
        files.setdefault(e.source, []).append(e)
    includes: dict[str, set[str]] = {SUPPORT: {"ck_tile/dispatcher/base_registry.hpp"}}
    for e in entries:
        named = _mentions(texts[e.key], where) - {e.info.qualname}
        includes.setdefault(e.source, set()).update(where[q] for q in named)
        if e.include != e.source:
            includes.setdefault(e.include, set()).add(e.source)
    bodies = {SUPPORT: SUPPORT_TEXT}
    for file, mine in files.items():
        ordered: list[Entry] = []
        while len(ordered) < len(mine):  # each entry after the entries of its file it names
            ready = next(e for e in mine if e not in ordered and all(
                d in ordered for d in mine if d is not e and d.info.qualname in _mentions(texts[e.key], where)))
            ordered.append(ready)
        decls = []
        for e in ordered:
            inner = texts[e.key]
            for part in reversed(e.info.qualname.split("::")[:-1]):
                inner = f"namespace {part} {{\n{inner}\n}}"
            decls.append(inner)
        bodies[file] = "\n".join(decls) + "\n"
    for file in {*bodies, *includes}:
        own = sorted(includes.get(file, set()) - {file})
        path = root / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#pragma once\n" + STD + "".join(f'#include "{i}"\n' for i in own) + bodies.get(file, ""))


def ck_root(root: Path) -> Path:
    """`root` made a CK include root (it holds `ck_tile/core.hpp`, here empty)."""
    (root / "ck_tile").mkdir(parents=True, exist_ok=True)
    (root / "ck_tile" / "core.hpp").write_text("#pragma once\n")
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "include"
    render(dispatcher_catalog(), root)
    return ck_root(root)


def edit(root: Path, header: str, old: str, new: str) -> None:
    path = root / header
    text = path.read_text()
    assert old in text, (header, old)
    path.write_text(text.replace(old, new, 1))


def rows(root: Path, catalog: Catalog | None = None) -> list[Row]:
    catalog = catalog or dispatcher_catalog()
    return a.report(catalog, a.declarations(root, [catalog]).declarations).rows


KEY = "ck_tile/dispatcher/kernel_key.hpp"
REGISTRY = "ck_tile/dispatcher/grouped_conv_registry.hpp"
BACKEND = "ck_tile/dispatcher/backends/generated_conv_backend.hpp"


# --------------------------------------------------------------------------- the check


@needs_parser
def test_the_catalog_matches_the_tree_rendered_from_it(tree):
    parsed = a.declarations(tree, [dispatcher_catalog()]).declarations
    assert parsed.dispatcher and parsed.errors == ()
    found = a.report(dispatcher_catalog(), parsed)
    assert found.rows == []
    assert (found.tile, found.dispatcher, found.unchecked) == (0, 31, 0)
    # Members were read, not just names: the key's nested fields and the instance's constructor.
    key = parsed.records["ck_tile::dispatcher::KernelKey"]
    assert [f.name for f in key.fields][:3] == ["signature", "signature.dtype_a", "signature.dtype_b"]
    ctor, = parsed.records["ck_tile::dispatcher::GroupedConvKernelInstance"].constructors
    assert [p.name for p in ctor.args] == ["key", "name", "run_fn", "is_supported_fn", "instance_string"]


ALTERATIONS = [
    # (file, old, new): one alteration per entity or member, all in one tree (one parse).
    (KEY, "std::uint8_t split_k;", "std::uint8_t k_batch;"),
    (KEY, "std::uint16_t block_size;", "int block_size;"),
    (KEY, "std::string encode_identifier();", "int encode_identifier();"),
    (KEY, "PreShuffleV2, Wavelet", "PreShuffleV2"),
    (REGISTRY, 'std::string arch = "gfx942";', 'std::string arch = "gfx942"; std::string name;'),
    (REGISTRY, 'std::string pipeline = "compv3";', 'std::string pipeline = "compv4";'),
    (REGISTRY, 'const std::string& instance_string = "");', 'const std::string& instance_string = "", int priority = 0);'),
    (REGISTRY, "using RunFn = std::function<float(const ck_tile::dispatcher::GroupedConvProblem&,void*)>",
     "using RunFn = std::function<float(const ck_tile::dispatcher::GroupedConvProblem&)>"),
    (SUPPORT, "bool register_kernel(", "bool add_kernel("),
    ("ck_tile/dispatcher/registry.hpp", "static ck_tile::dispatcher::Registry& instance();",
     "ck_tile::dispatcher::Registry& instance();"),
    (BACKEND, "make_conv_bwd_weight_is_supported_fn", "make_conv_bwd_weight_supported_fn"),
    (BACKEND, "ck_tile::dispatcher::GroupedConvKernelInstance::RunFn make_conv_fwd_run_fn",
     "ck_tile::dispatcher::GroupedConvKernelInstance::IsSupportedFn make_conv_fwd_run_fn"),
    (BACKEND, "#ifdef CK_EXPERIMENTAL_BUILDER", "#ifdef CK_OTHER_MACRO"),
    ("ck_tile/dispatcher/register_all_grouped_conv_kernels.hpp",
     "void register_all_grouped_conv_fwd_kernels(const std::string& arch);",
     "void register_all_grouped_conv_fwd_kernels(const std::string& gpu);"),
    ("ck_tile/dispatcher/kernel_instance.hpp", "std::shared_ptr<", "std::unique_ptr<"),
    ("ck_tile/dispatcher/backends/generated_kernel_backend.hpp", " : public ck_tile::dispatcher::KernelInstance", ""),
    # Not a difference: Registry's own `using Priority = ck_tile::dispatcher::Priority` names the catalog's type.
    ("ck_tile/dispatcher/registry.hpp", "public: ", "public: using Priority = ck_tile::dispatcher::Priority; "),
    ("ck_tile/dispatcher/registry.hpp", "ck_tile::dispatcher::Priority priority", "Priority priority"),
]
D = "ck_tile::dispatcher::"
FOUND = {
    (f"{D}KernelKey", "signature.split_k #12", "field name", "signature.split_k", "signature.k_batch"),
    (f"{D}KernelKey", "algorithm.block_size #32", "field type", "std::uint16_t", "int"),
    (f"{D}KernelKey", "encode_identifier()", "result", "std::string", "int"),
    (f"{D}Pipeline", "Wavelet #10", "enumerator", "Wavelet", "-"),
    (f"{D}GroupedConvKernelKey", "", "field count", "30", "31"),
    (f"{D}GroupedConvKernelKey", "name #31", "field", "-", "std::string"),
    (f"{D}GroupedConvKernelKey", "pipeline #16", "field default", '"compv3"', '"compv4"'),
    (f"{D}GroupedConvKernelInstance", "constructor(key, name, run_fn, is_supported_fn, instance_string)",
     "argument count", "5", "6"),
    (f"{D}GroupedConvKernelInstance", "constructor(key, name, run_fn, is_supported_fn, instance_string) priority #6",
     "argument", "-", "int = 0"),
    (f"{D}GroupedConvKernelInstance", "RunFn", "alias type", f"std::function<float(const {D}GroupedConvProblem&,void*)>",
     f"std::function<float(const {D}GroupedConvProblem&)>"),
    (f"{D}GroupedConvRegistry", "register_kernel()", "missing", "register_kernel()", f"not declared in {D}BaseRegistry"),
    (f"{D}Registry", "instance()", "static", "true", "false"),
    (f"{D}backends::make_conv_bwd_weight_is_supported_fn", "", "missing", "function template in "
     "ck_tile/dispatcher/backends/generated_conv_backend.hpp", "not declared"),
    (f"{D}backends::make_conv_fwd_run_fn", "", "result", f"{D}GroupedConvKernelInstance::RunFn",
     f"{D}GroupedConvKernelInstance::IsSupportedFn"),
    (f"{D}backends::get_instance_string", "", "missing", "function template in "
     "ck_tile/dispatcher/backends/generated_conv_backend.hpp", "not declared"),
    (f"{D}register_all_grouped_conv_fwd_kernels", "(arch) arch #1", "argument name", "arch", "gpu"),
    (f"{D}KernelInstancePtr", "", "aliased type", f"std::shared_ptr<{D}KernelInstance>",
     f"std::unique_ptr<{D}KernelInstance>"),
    (f"{D}backends::GeneratedKernelInstance", "", "bases", f"{D}KernelInstance", "-"),
}


@needs_parser
def test_each_alteration_is_found_naming_the_entity_and_member(tree):
    """The rows are exactly one per alteration (get_instance_string is declared only under
    CK_EXPERIMENTAL_BUILDER, which the parse defines: under another macro it is missing)."""
    for file, old, new in ALTERATIONS:
        edit(tree, file, old, new)
    found = rows(tree)
    assert {(r.entity, r.item, r.what, r.a, r.b) for r in found} == FOUND and len(found) == len(FOUND)
    row = only(found, entity=f"{D}KernelKey", what="field name")
    assert row.note.startswith(f"{KEY}:")
    # The command prints the same rows in its table and exits 1 (the parse is cached).
    run = CliRunner().invoke(main, ["api", "check", "--ck-include", str(tree), "--ck-api", PROFILE])
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    assert lines[0].startswith(f"{PROFILE} against {tree}: ") and "CK Tile, 31 dispatcher;" in lines[0]
    assert any(line.split()[:6] == [PROFILE, f"{D}KernelKey", "signature.split_k", "#12", "field", "name"]
               for line in lines)
    # A draft for this tree keeps the differing dispatcher entries as they are and lists them for review.
    catalog = dispatcher_catalog()
    drafted = a.draft("ck-next", catalog, a.declarations(tree, [catalog]).declarations, tree)
    assert drafted.written == {} and drafted.absent == catalog.absent
    assert drafted.kept["types.KernelKey"] == ("signature.split_k #12 field name, algorithm.block_size #32 field type, "
                                              "encode_identifier() result")
    assert len(drafted.kept) == len({entity for entity, *_ in FOUND}) and drafted.inherited == len(catalog.entries)


@needs_parser
def test_a_ck_source_checkout_and_a_tree_without_dispatcher(tmp_path):
    """`--ck-include ck/include` finds `ck/dispatcher/include`; a tree without it leaves the dispatcher
    entries unchecked and says how many."""
    checkout = tmp_path / "ck"
    render(dispatcher_catalog(), checkout / "dispatcher" / "include")
    ck_root(checkout / "include")
    assert dispatcher_root(checkout / "include") == checkout / "dispatcher" / "include"
    assert rows(checkout / "include") == []
    shutil.rmtree(checkout / "dispatcher")
    found = a.report(dispatcher_catalog(), a.declarations(checkout / "include", [dispatcher_catalog()]).declarations)
    assert (found.rows, found.dispatcher, found.unchecked) == ([], 0, 31)
    assert "31 dispatcher entries not checked (no ck_tile/dispatcher/)" in found.summary(checkout / "include")


def test_diff_compares_members_and_signatures():
    base = dispatcher_catalog()
    key, factory = base.entries["KernelKey"], base.entries["make_conv_fwd_run_fn"]
    fields = tuple(f for f in key.record.fields if f.name != "gfx_arch")
    call = attrs.evolve(factory.info.call, result="int")
    changed = attrs.evolve(base, name="changed", entries={
        **base.entries, "KernelKey": attrs.evolve(key, record=attrs.evolve(key.record, fields=fields)),
        "make_conv_fwd_run_fn": attrs.evolve(factory, info=attrs.evolve(factory.info, call=call))})
    assert [(r.entity, r.item, r.what, r.a, r.b) for r in diff(base, changed)] == [
        ("KernelKey", "", "field count", "44", "43"),
        ("KernelKey", "gfx_arch #44", "field", "std::string", "-"),
        ("make_conv_fwd_run_fn", "", "result", f"{D}GroupedConvKernelInstance::RunFn", "int"),
    ]


# --------------------------------------------------------------------------- the emitted code binds to the catalog


def configs(name: str) -> list:
    return [c.config for c in load_file(ROOT / "examples" / name)]


@pytest.mark.parametrize("profile", ["ck-2025.11", PROFILE])
def test_wrappers_fill_every_catalog_key_field_they_name(profile):
    p = load_profile(profile)
    fields = p.record("KernelKey").fields
    gemm_fields = [f.name for f in fields]
    for config in configs("gemm_standard.json") + configs("gemm_multi_d.json") + configs("gemm_streamk.json"):
        set_ = list(gemm_wrapper.gemm_key(attrs.evolve(config, ck_api=profile)))
        assert set(set_) <= set(gemm_fields)
        # Every leaf field is set, itself or through the nested struct that holds it (a Stream-K kernel's key
        # every field; the others' all but the Stream-K fields, whose defaults say "not Stream-K").
        leaves = [f.name for f in fields if not any(g.startswith(f"{f.name}.") for g in gemm_fields)
                  and (config.variant == "stream_k" or not f.name.startswith(("algorithm.streamk",
                                                                                "algorithm.reduction_strategy",
                                                                                "algorithm.workspace")))]
        assert all(any(f == s or f.startswith(f"{s}.") for s in set_) for f in leaves)
    conv_fields = {f.name: f for f in p.record("GroupedConvKernelKey").fields}
    for config in configs("conv_directions.json") + (configs("conv_ck2026.json") if profile == PROFILE else []):
        set_ = conv_wrapper.conv_key(config)
        assert set(set_) <= set(conv_fields)
        assert all(f.default is not None for name, f in conv_fields.items() if name not in set_)


def test_a_field_or_argument_the_catalog_lacks_is_refused():
    p = load_profile(PROFILE)
    config = configs("gemm_standard.json")[0]
    key = p.record("KernelKey")
    dropped = attrs.evolve(key, fields=tuple(f for f in key.fields if f.name != "signature.split_k"))
    with pytest.raises(CatalogError, match="KernelKey has no field 'signature.split_k'"):
        gemm_wrapper.wrapper_header(config, attrs.evolve(p, records={**p.records, "KernelKey": dropped}), "k.hpp")
    instance = p.record("GroupedConvKernelInstance")
    ctor = instance.constructors[0]
    renamed = attrs.evolve(ctor, args=tuple(attrs.evolve(x, name="fn") if x.name == "run_fn" else x for x in ctor.args))
    with pytest.raises(CatalogError, match="no parameter 'run_fn'"):
        conv_wrapper.wrapper_header(configs("conv_directions.json")[0],
                                    attrs.evolve(p, records={**p.records, "GroupedConvKernelInstance":
                                                             attrs.evolve(instance, constructors=(renamed,))}), "k.hpp")


def test_host_model_keys_hold_the_fields_the_wrappers_fill():
    """The host model's hand-written keys encode exactly the fields the wrappers set, in the wrappers'
    order (so its registry tells kernels apart as CK's does by these fields)."""
    from ckast import testing
    from ckast.hostmodel.jit import session
    from ckast.hostmodel.model import profile_namespace

    try:
        s = session()
        s.load(PROFILE)
    except testing.JitUnavailable as exc:
        pytest.skip(str(exc))
    import cppyy

    space = getattr(cppyy.gbl, profile_namespace(PROFILE)).ck_tile.dispatcher
    config = configs("gemm_standard.json")[0]
    names = [pair.split("=")[0] for pair in str(space.KernelKey().encode()).split(";")]
    assert names == list(gemm_wrapper.gemm_key(config))
    names = [pair.split("=")[0] for pair in str(space.GroupedConvKernelKey().encode()).split(";")]
    assert names == [f.name for f in load_profile(PROFILE).record("GroupedConvKernelKey").fields]
