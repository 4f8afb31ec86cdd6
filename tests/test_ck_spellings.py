"""CK's spellings in a plain kernel object (ckast/config/ck_spellings.py): every entry of the table is read as
its ckast spelling (same config, same kernel name) or refused by rule ck.spelling naming what to write."""

from __future__ import annotations

import json
import warnings

import pytest
from click.testing import CliRunner

from ckast.cli import main
from ckast.config import ConfigError, load_data, resolve_kernel
from ckast.config.ck_spellings import (CONV_PADS, KEYS, MULTI_D_LAYOUTS, ROLES, VALUES, CKFormatWarning,
                                       tensor_types)
from ckast.config.knobs import CONV, DATATYPES, GEMM, PIPELINES
from ckast.lower.identity import kernel_name

API = {"ck_api": "ck-2026.06"}  # every kernel below exists in this profile


def context(knob: str, value: str, kind: str = CONV) -> dict:
    """A kernel object in which `value` of `knob` (ckast's spelling) is meaningful (the stream-K reduction: of
    `kind`, whose kernels CK spells it for)."""
    conv = {"kind": CONV, **API}
    if knob == "variant":
        return {**conv, "variant": value}
    if knob == "layout":
        if value == "ngchw":
            return {**conv, "variant": "forward_depthwise", "layout": value}
        return {**conv, "ndim_spatial": len(value) - 3, "layout": value}
    if knob == "pipeline" and value not in PIPELINES[CONV]:
        return {"kind": GEMM, "variant": "preshuffle", "pipeline": value, **API}
    if knob == "scheduler" and value == "default":
        return {"kind": GEMM, "variant": "preshuffle", "scheduler": value, **API}
    if knob == "streamk_reduction" and kind == GEMM:
        return {"kind": GEMM, "variant": "stream_k", knob: value, **API}
    if knob == "streamk_reduction":
        return {**conv, "variant": "bwd_weight", "streamk_enabled": True, knob: value}
    if knob in ("pipeline", "specialization"):
        return {**conv, knob: value}
    fits = {"fp32": {"warp_tile_k": 8}, "interwave": {"pipeline": "mem"}}.get(value, {})  # a kernel CK builds
    return {"kind": GEMM, knob: value, **fits, **API}


def resolved_pair(ckast: dict, ck: dict):
    """(ckast-spelled, CK-spelled) resolutions; both must resolve to a config."""
    a, b = resolve_kernel(ckast, "k"), resolve_kernel(ck, "k")
    assert a.config is not None and b.config is not None, (a.issues, b.issues)
    return a, b


def same_kernel(ckast: dict, ck: dict) -> None:
    a, b = resolved_pair(ckast, ck)
    assert b.config == a.config and kernel_name(b.config) == kernel_name(a.config)
    assert b.issues == a.issues


def refused(obj: dict, path: str, *writes: str) -> str:
    """The one ck.spelling refusal of `obj` at `path`, which names every spelling in `writes`."""
    r = resolve_kernel(obj, "k")
    assert r.config is None
    lines = [i for i in r.issues if i.path == f"k.{path}"]
    assert len(lines) == 1 and lines[0].rule == "ck.spelling", r.issues
    assert all(f'"{w}"' in lines[0].message for w in writes), lines[0].message
    return lines[0].message


ACCEPTED = [(knob, ck, s.ckast[0]) for knob, table in VALUES.items() for ck, s in table.items() if s.accepted]
KINDS = {(knob, ck): s.kinds[0] for knob, table in VALUES.items() for ck, s in table.items()}
"""The first kind each CK spelling is for."""
REFUSED = [(knob, ck, s) for knob, table in VALUES.items() for ck, s in table.items() if not s.accepted]


@pytest.mark.parametrize(("knob", "ck", "ckast"), ACCEPTED, ids=[f"{k}={c}" for k, c, _ in ACCEPTED])
def test_accepted_value_is_its_ckast_spelling(knob, ck, ckast):
    base = context(knob, ckast, KINDS[knob, ck])
    same_kernel(base, {**base, knob: ck})


@pytest.mark.parametrize(("knob", "ck", "spelling"), REFUSED, ids=[f"{k}={c}" for k, c, _ in REFUSED])
def test_ambiguous_or_lossy_value_is_refused_naming_ckast_spellings(knob, ck, spelling):
    base = context(knob, spelling.ckast[0])
    message = refused({**base, knob: ck}, knob, *spelling.ckast)
    assert message.startswith(f'"{ck}" is CK\'s ')
    assert len(spelling.ckast) > 1 or spelling.lossy  # nothing is refused without a reason


def test_refused_kind_or_variant_ends_the_check():
    r = resolve_kernel({"kind": CONV, "variant": "fwd", "tile_h": 4, "pipeline": "BASIC_V1"}, "k")
    assert [i.path for i in r.issues] == ["k.variant"]


@pytest.mark.parametrize("ck", sorted(KEYS))
def test_every_ck_key(ck):
    spelling = KEYS[ck]
    kind = spelling.kinds[0]
    value = {"arch": "gfx90a", "ndim_spatial": 3, "elementwise_op": "MultiDMultiply",
             "streamk_reduction": "linear"}.get(spelling.ckast[0] if spelling.ckast else "", 2)
    base = {"kind": CONV, "variant": "bwd_weight", "streamk_enabled": True, **API} if kind == CONV else {
        "kind": GEMM, "variant": "stream_k" if spelling.accepted == "streamk_reduction" else "multi_d", **API}
    if spelling.accepted:
        knob = spelling.accepted
        same_kernel({**base, knob: value}, {**base, ck: value})
        assert "which the kernel also gives" in refused({**base, knob: value, ck: value}, ck)
        r = resolve_kernel({**base, ck: "bogus"}, "k")  # a bad value is reported at the key as written
        assert any(i.path == f"k.{ck}" for i in r.issues), r.issues
    elif spelling.ckast:
        refused({**base, ck: [value]}, ck, *spelling.ckast)
    else:  # read and not used, with a warning saying why
        with pytest.warns(CKFormatWarning, match=rf"k\.{ck}: not used; ckast derives"):
            _, b = resolved_pair(base, {**base, ck: value})
        assert b.config == resolve_kernel(base, "k").config


@pytest.mark.parametrize("ck", sorted(MULTI_D_LAYOUTS))
def test_four_letter_layout(ck):
    abc, d = MULTI_D_LAYOUTS[ck]
    multi_d = {"kind": GEMM, "variant": "multi_d"}
    same_kernel({**multi_d, "layout": abc, "d_layout": d}, {**multi_d, "layout": ck})
    same_kernel({**multi_d, "layout": abc, "d_layout": d}, {**multi_d, "layout": ck, "d_layout": d})
    other = "c" if d == "r" else "r"
    assert "but d_layout is" in refused({**multi_d, "layout": ck, "d_layout": other}, "layout", abc)
    for variant in ("standard", "preshuffle"):
        message = refused({"kind": GEMM, "variant": variant, "layout": ck}, "layout", abc)
        assert f'layout "{abc}" with d_layout "{d}"; a {variant} kernel has no D tensors' in message


@pytest.mark.parametrize("kind", [GEMM, CONV])
def test_datatype_objects_of_every_datatype(kind):
    for name in DATATYPES[kind]:
        types = dict(zip(ROLES[kind], tensor_types(kind, name)))
        same_kernel({"kind": kind, "datatype": name}, {"kind": kind, "datatype": types})
    # CK Tile's type names inside the object, an omitted accumulator (CK's fp32)
    a, b, c, _ = ROLES[kind]
    same_kernel({"kind": kind, "datatype": "bf16"}, {"kind": kind, "datatype": {a: "bf16_t", b: "bf16", c: "bf16"}})


def test_datatype_object_refusals():
    message = refused({"kind": GEMM, "datatype": {"a": "fp16", "b": "fp16", "c": "fp32"}}, "datatype")
    assert message.startswith("fp16/fp16/fp32/fp32 (a/b/c/acc) is no ckast datatype; ckast's: fp16 = fp16/fp16/fp16")
    r = resolve_kernel({"kind": CONV, "datatype": {"a": "fp16"}}, "k")
    assert [i.line() for i in r.issues] == ["k.datatype.a: unknown key; allowed: input, weight, output, acc"]


@pytest.mark.parametrize("pad", CONV_PADS)
def test_conv_pads(pad):
    for variant in ("forward", "bwd_data", "bwd_weight"):
        same_kernel({"kind": CONV, "variant": variant}, {"kind": CONV, "variant": variant, pad: True})
        assert "CK's conv traits fix kPadM/N/K = true" in refused({"kind": CONV, "variant": variant, pad: False}, pad)
    r = resolve_kernel({"kind": CONV, "variant": "forward_depthwise", pad: True}, "k")  # no implicit-GEMM pads
    assert [i.path for i in r.issues] == [f"k.{pad}"] and "does not apply" in r.issues[0].message


def test_objects_without_ck_spellings_keep_their_problems():
    r = resolve_kernel({"kind": GEMM, "pipeline": "compv9", "ndim": 2}, "k")  # ndim is CK's for conv only
    assert [i.line() for i in r.issues] == ["k.ndim: unknown knob",
                                            'k.pipeline: "compv9" is not allowed; allowed: mem, compv3, compv4, '
                                            "compv5, preshufflev2"]


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_emit_names_ck_spelled_kernels_as_ckast_spelled_ones(tmp_path):
    pairs = [(context(knob, ckast, KINDS[knob, ck]), knob, ck) for knob, ck, ckast in ACCEPTED]
    pairs.append(({"kind": GEMM, "variant": "multi_d", "layout": "rrr", "d_layout": "r"}, "layout", "rrrr"))
    names = {}
    for spelled in ("ckast", "ck"):
        kernels = [base if spelled == "ckast" else {**base, knob: ck} for base, knob, ck in pairs]
        if spelled == "ck":
            kernels.append({"kind": CONV, "ndim": 3, "pad_m": True, "pipeline": "COMPUTE_V3", "datatype": {
                "input": "bf16", "weight": "bf16", "output": "bf16"}})
        else:
            kernels.append({"kind": CONV, "ndim_spatial": 3, "pipeline": "compv3", "datatype": "bf16"})
        cfg = tmp_path / f"{spelled}.json"
        cfg.write_text(json.dumps(kernels))
        result = run("emit", "--config", str(cfg), "-o", str(tmp_path / spelled))
        assert result.exit_code == 0, result.output
        manifest = json.loads((tmp_path / spelled / "manifest.json").read_text())
        names[spelled] = [k["name"] for k in manifest["kernels"]]
    assert names["ck"] == names["ckast"]


def test_emit_refuses_every_ambiguous_or_lossy_spelling(tmp_path):
    kernels = [{**context(knob, s.ckast[0]), knob: ck} for knob, ck, s in REFUSED]
    kernels += [{"kind": GEMM, "layout": "rcrr"}, {"kind": GEMM, "gpu_targets": ["gfx942"]},
                {"kind": CONV, "pad_k": False}]
    cfg = tmp_path / "bad.json"
    cfg.write_text(json.dumps({"kernels": kernels}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing here is merely ignored
        result = run("emit", "--config", str(cfg), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2 and not (tmp_path / "out").exists()
    lines = result.output.strip().splitlines()
    assert len(lines) == len(kernels)
    assert all(line.startswith(f"{cfg}: kernels[{i}].") and line.endswith("[rule ck.spelling]")
               for i, line in enumerate(lines))
    assert 'kernels[0].variant: "fwd" is CK\'s short name of the forward direction' in lines[0]
    assert lines[-3].endswith('a standard kernel has no D tensors: write layout "rcr" [rule ck.spelling]')


def test_load_data_reports_ck_spellings_with_the_file_paths():
    with pytest.raises(ConfigError) as caught:
        load_data({"kernels": [{"kind": GEMM, "pipeline": "CompV1"}]})
    assert caught.value.issues[0].line() == (
        'kernels[0].pipeline: "CompV1" is CK\'s dispatcher Pipeline enumerator for ckast\'s basic_v1 and compv1 '
        'alike: write "basic_v1" or "compv1" [rule ck.spelling]')
    [loaded] = load_data([{"kind": GEMM, "pipeline": "CompV4", "scheduler": "Intrawave", "epilogue": "CShuffle"}])
    assert (loaded.path, loaded.config.pipeline, loaded.config.scheduler, loaded.config.epilogue) == (
        "[0]", "compv4", "intrawave", "cshuffle")


# --- CK's dispatcher Python KernelConfig ---------------------------------------------------------------------------

CK_KERNEL_CONFIG = {  # ctypes_utils.KernelConfig's fields, as dataclasses.asdict gives them (bf16, 256x128x32)
    "dtype_a": "bf16", "dtype_b": "bf16", "dtype_c": "bf16", "dtype_acc": "fp32", "layout_a": "row",
    "layout_b": "col", "layout_c": "row", "tile_m": 256, "tile_n": 128, "tile_k": 32, "wave_m": 2, "wave_n": 2,
    "wave_k": 1, "warp_m": 32, "warp_n": 32, "warp_k": 16, "block_size": 256, "pipeline": "compv4",
    "scheduler": "intrawave", "epilogue": "cshuffle", "pad_m": True, "pad_n": True, "pad_k": True,
    "gfx_arch": "gfx942", "variant": "standard"}
CKAST_SPELLING = {"kind": "gemm", "datatype": "bf16", "layout": "rcr", "tile_m": 256, "tile_n": 128, "tile_k": 32,
                  "warp_m": 2, "warp_n": 2, "warp_k": 1, "warp_tile_m": 32, "warp_tile_n": 32, "warp_tile_k": 16,
                  "pipeline": "compv4", "scheduler": "intrawave", "epilogue": "cshuffle", "pad_m": True,
                  "pad_n": True, "pad_k": True, "arch": "gfx942", "variant": "standard"}


def test_ck_kernel_config_fields_are_read_as_ckast_knobs():
    """CK's wave_m is ckast's warp_m (waves), CK's warp_m ckast's warp_tile_m; dtype_*, layout_*, gfx_arch and a
    block_size that matches the waves are read; the kernel is the one ckast's spelling gives."""
    import ckast

    ck, ours = ckast.kernel(**CK_KERNEL_CONFIG, **API), ckast.kernel(**CKAST_SPELLING, **API)
    assert ck == ours and kernel_name(ck) == kernel_name(ours)
    newer = {k: v for k, v in CK_KERNEL_CONFIG.items() if not k.startswith("warp_")}  # GemmKernelConfig's spelling
    assert ckast.kernel(**newer, warp_tile_m=32, warp_tile_n=32, warp_tile_k=16, **API) == ours
    (loaded,) = load_data([{**CK_KERNEL_CONFIG, **API}])  # a config file's kernel object alike
    assert loaded.config == ours


@pytest.mark.parametrize(("change", "expected"), [
    ({"datatype": "bf16"}, "<root>: mixes CK's KernelConfig fields (block_size, dtype_a"),
    ({"warp_tile_m": 32}, "ckast's knobs (warp_tile_m): write one or the other (CK's wave_m is ckast's warp_m, "
                          "CK's warp_m ckast's warp_tile_m"),
    ({"block_size": 128}, "block_size: 128: a kernel of 2x2x1 waves on gfx942 (64 lanes each) runs 256 threads"),
    ({"layout_b": "column"}, 'layout_b: "column" is not a layout of CK\'s KernelConfig; allowed: row, col'),
    ({"dtype_c": "fp32"}, "dtype_a: bf16/bf16/fp32/fp32 (a/b/c/acc) is no ckast datatype"),
    ({"kind": "grouped_conv"}, 'kind: "grouped_conv": CK\'s KernelConfig fields'),
])
def test_ck_kernel_config_mixed_or_bent_is_refused_in_one_line(change, expected):
    import ckast

    with pytest.raises(ckast.ConfigError) as info:
        ckast.kernel(**{**CK_KERNEL_CONFIG, **change}, **API)
    assert len(info.value.lines()) == 1 and expected in info.value.lines()[0]
    assert info.value.lines()[0].endswith("[rule ck.spelling]")


def test_ckast_warp_given_a_warp_tile_says_what_it_is():
    """A CK user writing warp_m=32 in ckast's spelling (where warp_m counts waves) is told about warp_tile_m."""
    import ckast

    with pytest.raises(ckast.ConfigError) as info:
        ckast.kernel(kind="gemm", warp_m=32, **API)
    assert ("warp_m: ckast's warp_m counts waves per block (CK's KernelConfig wave_m); a warp tile of 32 (CK's "
            "KernelConfig warp_m) is ckast's warp_tile_m [rule ck.spelling]") in info.value.lines()
    with pytest.raises(ckast.ConfigError) as info:
        ckast.kernel(kind="gemm", warp_m=3, **API)  # a wrong number of waves is not a warp tile
    assert not any("warp tile" in line for line in info.value.lines())
