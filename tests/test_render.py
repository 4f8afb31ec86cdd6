"""The template fast path (ckast.render) gives exactly the bytes of the full render."""

from __future__ import annotations

import pytest

from ckast import nodes as n
from ckast.catalog import load_profile
from ckast.library import Selection, build
from ckast.nodes import marks
from ckast.render import Renderer, render_kernel
from ckast.render.slots import SlotEscape, SlotInt, SlottedConfig
from ckast.render.templates import record


def library_kernels(rule_set, api, datatypes=(), ndims=(), every=1):
    library = build(Selection(rule_set, "gfx942", api, datatypes, ndims, (), None, ()))
    return [k.config for k in library.kernels()][::every]


SAMPLES = [
    ("default", "ck-2025.11", (), (), 1),
    ("default", "ck-2026.06", (), (), 1),
    ("full", "ck-2025.11", ("fp16", "bf16"), (1, 2, 3), 9),
    ("full", "ck-2026.06", ("fp32",), (2, 3), 7),
    ("full", "ck-2026.06", ("fp16",), (2,), 8),
    ("fp16_rcr_all", "ck-2025.11", (), (), 1),
    ("gemm-default", "ck-2026.06", ("fp16",), (), 61),
]


@pytest.mark.parametrize("rule_set, api, datatypes, ndims, every", SAMPLES)
def test_filled_templates_equal_the_full_render(rule_set, api, datatypes, ndims, every):
    """Every kernel of the sample is rendered both ways (verify mode) and must match byte for byte."""
    configs = library_kernels(rule_set, api, datatypes, ndims, every)
    renderer = Renderer(verify=True)
    texts = [renderer.render(c, load_profile(c.ck_api)) for c in configs]
    assert renderer.filled > 0 and renderer.recorded > 0, "the sample exercises templates"
    assert not any(marks.OPEN in text for t in texts for _, text in t.files)


def test_a_template_does_not_apply_where_a_line_break_would_change():
    """A slot value wide enough to push a line over the limit needs another template."""
    config = library_kernels("default", "ck-2026.06", ("fp16",), (2,))[0]
    long_name = "k" * 120  # breaks lines the sample's name keeps whole
    profile = load_profile(config.ck_api)
    template = record(config, profile, ["tile_m"], "kernel_a")
    assert any(isinstance(g, marks.WidthGuard) for g in template.guards)
    assert template.fill(config, "kernel_b") is not None
    assert template.fill(config, long_name) is None


def test_sorted_includes_are_guarded():
    with marks.recording() as rec:
        name = rec.slot(("name",), "b")
        text = n.to_source(n.File([], includes=[n.Header(f"{name}.hpp"), n.Header("c.hpp")], pragma_once=False))
    assert text.index(f'"{name}.hpp"') < text.index('"c.hpp"')
    (guard,) = [g for g in rec.guards if isinstance(g, marks.OrderGuard)]
    assert guard.holds(["a"]) and not guard.holds(["d"])


def test_slot_values_refuse_every_use_but_printing_and_arithmetic():
    x = SlotInt(4, ("knob", "warp_m"))
    for use in (lambda: x == 4, lambda: x < 5, lambda: hash(x), lambda: bool(x), lambda: [1, 2][x],
                lambda: int(x), lambda: f"{x:03}", lambda: str(x)):
        with pytest.raises(SlotEscape) as caught:
            use()
        assert caught.value.knobs == {"warp_m"}
    with marks.recording() as rec:
        product = x * 64 + 1
        assert (product.sample, f"{product}") == (257, marks.mark(0, "257"))
    assert rec.slots == [("op", "+", ("op", "*", ("knob", "warp_m"), 64), 1)]


def test_a_knob_used_for_more_than_printing_becomes_structural():
    configs = library_kernels("default", "ck-2026.06", ("fp16",), (2, 3))
    renderer = Renderer(verify=True)
    for c in configs:
        renderer.render(c, load_profile(c.ck_api))
    assert "ndim_spatial" in renderer._structural[("grouped_conv", "forward")]  # picks the tensor layouts
    with marks.recording() as rec:
        view = SlottedConfig(configs[0], ["ndim_spatial"], "k", rec)
        with pytest.raises(SlotEscape):
            record(configs[0], load_profile(configs[0].ck_api), ["ndim_spatial"], "k")
    assert view.symbolic_name == marks.mark(0, "k")


def test_marks_never_print_outside_a_recording():
    marked = marks.mark(0, "abc")
    with pytest.raises(marks.MarkError):
        n.identifier(marked + "x")
    with pytest.raises(marks.MarkError):
        marks.fits(0, marked, 100)
    assert n.c_string("a\x02b") == '"a\\002b"'
    config = library_kernels("default", "ck-2026.06", ("fp16",), (2,))[0]
    assert marks.OPEN not in "".join(t for _, t in render_kernel(config, load_profile(config.ck_api)).files)


def test_templates_kept_between_runs_fill_without_recording(tmp_path):
    configs = library_kernels("default", "ck-2026.06", ("fp16",), (2, 3))
    path = tmp_path / "templates"
    first = Renderer(cache_path=path)
    texts = [first.render(c, load_profile(c.ck_api)) for c in configs]
    first.save()
    second = Renderer(cache_path=path, verify=True)
    assert [second.render(c, load_profile(c.ck_api)) for c in configs] == texts
    assert second.recorded == 0 and second.filled == len(configs)
    for shape in path.iterdir():
        shape.write_text("{not json")
    third = Renderer(cache_path=path)
    assert [third.render(c, load_profile(c.ck_api)) for c in configs] == texts and third.recorded == first.recorded


def test_what_workers_record_is_learned_and_saved_once(tmp_path):
    configs = library_kernels("default", "ck-2026.06", ("fp16",), (2,))
    worker, parent = Renderer(), Renderer(cache_path=tmp_path / "t")
    for c in configs:
        worker.render(c, load_profile(c.ck_api))
    parent.learn(*worker.take_new())
    assert worker.take_new()[0] == {}
    parent.save()
    reloaded = Renderer(cache_path=tmp_path / "t")
    for c in configs:
        reloaded.render(c, load_profile(c.ck_api))
    assert reloaded.recorded == 0


def test_repeated_prints_as_one_statement_per_name():
    """The filled body equals the body printed for each name, also where a long name breaks the line."""
    body = n.ExprStmt(n.call(n.Member(n.ident("registry"), "register_kernel"), n.call("ckast::K::dispatcher_key"),
                             n.call("ckast::K::make_instance")))
    names = ["short_a", "k" * 80, "short_b"]
    repeated = n.to_source(n.If(n.ident("on"), [n.Repeated(body, "K", names)]))
    explicit = n.to_source(n.If(n.ident("on"), [n.Repeated(body, "K", [x]).with_name(x) for x in names]))
    assert repeated == explicit and repeated.count("\n") > len(names) + 2  # the long name's line broke
    with pytest.raises(n.NameError_):
        n.Repeated(body, "K", ["not an identifier"])
