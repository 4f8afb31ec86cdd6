"""Test emitted CK Tile kernels in-process: JIT-compile them with cppyy against ckast's host model of
CK Tile, run their launchers on small problems and read what the launch did.

    from ckast import nodes as n, testing

    unit = testing.jit_header("out/grouped_conv_fp16_..._bwd_weight_....hpp")  # profile from the manifest
    events = unit.launch_conv(testing.ConvProblem(G=2, N=4, K=16, C=16, filter=(3, 3), input=(8, 8)), k_batch=2)
    assert [e.kind for e in events] == ["timed", "memset", "launch"]
    unit.static_assert(n.BinOp("==", unit.member("TileK"), n.IntLit(64)))

The model runs no device code: every launch, memset and allocation is logged with its sizes, and a
launch with the compile-time choices of the instantiation that ran (hot loop, tail number, memory
operation). Assertions about types and constants are C++ `static_assert`s built as ckast nodes.
Compilation errors raise `JitError` (with the compiler's diagnostics), C++ exceptions thrown by a
launch raise `LaunchError`.
"""

from __future__ import annotations

import array
import itertools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from ckast import nodes as n
from ckast.catalog import DEFAULT_PROFILE, load_profile, profile_names
from ckast.errors import CkastError
from ckast.output import MANIFEST
from ckast.hostmodel.conformance import IS_SAME
from ckast.hostmodel.jit import JitError, JitUnavailable, Unit as _Unit, session
from ckast.hostmodel.model import tag

__all__ = ["ConvProblem", "Event", "JitError", "JitUnavailable", "LaunchError", "Unit", "clear_log", "jit_files",
           "jit_header", "log", "profile_of", "recorded_includes", "same", "tag"]

_LAUNCHER = re.compile(r"namespace\s+(\w+)\s*\{\s*struct\s+Launcher\b")
_counter = itertools.count()


class LaunchError(CkastError, RuntimeError):
    """A C++ exception thrown while a launcher ran (e.g. `arguments not supported`)."""


@attrs.frozen
class Event:
    """One log line: `kind key=value ...`; values are ints, tuples of ints (`4,1,2`) or strings."""

    kind: str
    fields: Mapping[str, object]

    def __getitem__(self, key: str) -> object:
        return self.fields[key]


def _value(text: str) -> object:
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"\d+(,\d+)+", text):
        return tuple(int(x) for x in text.split(","))
    return text


def parse_log(text: str) -> list[Event]:
    events = []
    for line in text.splitlines():
        kind, *pairs = line.split(" ")
        events.append(Event(kind, dict((k, _value(v)) for k, v in (p.split("=", 1) for p in pairs))))
    return events


def log() -> list[Event]:
    """Everything the model logged since the last `clear_log()`."""
    return parse_log(session().log_text())


def clear_log() -> None:
    session().clear_log()


@attrs.frozen
class ConvProblem:
    """A small grouped convolution: G groups of N images, C input and K output channels per group.

    Strides and dilations default to 1, pads to 0; the spatial rank is `len(filter)`.
    """

    G: int
    N: int
    K: int
    C: int
    filter: tuple[int, ...] = attrs.field(converter=tuple)
    input: tuple[int, ...] = attrs.field(converter=tuple)
    stride: tuple[int, ...] | None = attrs.field(default=None, converter=attrs.converters.optional(tuple))
    dilation: tuple[int, ...] | None = attrs.field(default=None, converter=attrs.converters.optional(tuple))
    left_pad: tuple[int, ...] | None = attrs.field(default=None, converter=attrs.converters.optional(tuple))
    right_pad: tuple[int, ...] | None = attrs.field(default=None, converter=attrs.converters.optional(tuple))

    def _spatial(self, value: tuple[int, ...] | None, default: int) -> tuple[int, ...]:
        return value if value is not None else (default,) * len(self.filter)

    @property
    def output(self) -> tuple[int, ...]:
        """Output lengths, as ConvParam computes them."""
        return tuple(
            (i + lp + rp - (d * (f - 1) + 1)) // s + 1
            for i, f, s, d, lp, rp in zip(self.input, self.filter, self._spatial(self.stride, 1),
                                          self._spatial(self.dilation, 1), self._spatial(self.left_pad, 0),
                                          self._spatial(self.right_pad, 0)))

    def scalars(self) -> tuple[int, ...]:
        """ndim, G, N, K, C."""
        return (len(self.filter), self.G, self.N, self.K, self.C)

    def spatial(self) -> array.array:
        """Filter, input, stride, dilation, left and right pads, `ndim` entries each (C `int`s)."""
        rows = [self.filter, self.input, self._spatial(self.stride, 1), self._spatial(self.dilation, 1),
                self._spatial(self.left_pad, 0), self._spatial(self.right_pad, 0)]
        return array.array("i", [v for row in rows for v in row])


def same(a: n.Type, b: n.Type) -> n.Expr:
    """`std::is_same_v<a, b>`."""
    return n.Id(n.Name((IS_SAME(A=a, B=b),)))


def _testing(name: str) -> n.Signature:
    """A `ckast_model::testing` function template taking the launcher type."""
    return n.Signature(name, ("ckast_model", "testing", name), "function", [n.Param("L", "type")])


_INT, _BOOL = n.Builtin("int"), n.Builtin("bool")
_CONV_PARAMS = (*(n.FuncParam(_INT, x) for x in ("ndim", "G", "N", "K", "C")),
                n.FuncParam(n.Ptr(n.Const(_INT)), "spatial"))
_GEMM_PARAMS = tuple(n.FuncParam(_INT, x) for x in ("m", "n", "k", "k_batch"))
_CONV_PARAM_OF = n.call("ckast_model::testing::conv_param", *(n.ident(p.name) for p in _CONV_PARAMS))


class Unit:
    """A JIT-compiled unit: its launchers (`ckast::<kernel>::Launcher`), assertions and drivers."""

    def __init__(self, unit: _Unit) -> None:
        self._unit = unit
        self._drivers: dict[tuple[str, str | None], object] = {}
        self.profile = unit.profile
        self.kernels = tuple(k for f in unit.files for k in _LAUNCHER.findall(f.read_text()))
        """Names of the kernels whose launchers the unit's files define, in file order."""

    def __repr__(self) -> str:
        return f"<testing.Unit {'::'.join(self._unit.namespace)} {self.profile} kernels={list(self.kernels)}>"

    def launcher(self, kernel: str | None = None) -> n.Type:
        """`ckast::<kernel>::Launcher` (the unit's only kernel by default)."""
        if kernel is None:
            if len(self.kernels) != 1:
                raise ValueError(f"the unit defines {len(self.kernels)} launchers; name the kernel")
            kernel = self.kernels[0]
        return n.type_of("ckast", kernel, "Launcher")

    def member(self, *parts: str, kernel: str | None = None) -> n.Id:
        """`ckast::<kernel>::Launcher::<parts>` as an expression."""
        return n.Id(n.Name((*self.launcher(kernel).name.parts, *parts)))

    def define(self, decls: Sequence[n.Decl]) -> None:
        """Compile declarations inside the unit's namespace (they see the unit's names and its profile's model)."""
        self._unit.define(decls)

    def static_assert(self, *conditions: n.Expr) -> None:
        """`static_assert` each condition in the unit's namespace; a false one raises JitError."""
        self.define([n.StaticAssert(c) for c in conditions])

    def function(self, returns: n.Type, params: Sequence[n.FuncParam], body: Sequence[n.Stmt]):
        """Compile a function in the unit's namespace; returns a Python callable for it (C++ exceptions
        raise LaunchError)."""
        name = f"ckjit_fn_{next(_counter)}"
        self.define([n.FunctionDef(name, returns, params, body)])
        compiled = self._unit.lookup(name)

        def call(*args):
            import cppyy

            try:
                return compiled(*args)
            except cppyy.gbl.std.exception as exc:
                raise LaunchError(str(exc.what())) from None

        return call

    def _driver(self, name: str, kernel: str | None, returns: n.Type, params: Sequence[n.FuncParam],
                args: Sequence[n.Expr]):
        """`ckast_model::testing::<name><Launcher>(args)` behind a function of `params`, compiled once."""
        key = (name, kernel)
        if key not in self._drivers:
            target = n.Id(n.Name((_testing(name)(L=self.launcher(kernel)),)))
            self._drivers[key] = self.function(returns, params, [n.Return(n.Call(target, args))])
        return self._drivers[key]

    def launch_conv(self, problem: ConvProblem, k_batch: int = 1, *, time_kernel: bool = False,
                    kernel: str | None = None) -> list[Event]:
        """`Launcher::launch` on `problem` (buffers `in`, `wei`, `out`); the events it logged."""
        params = (*_CONV_PARAMS, n.FuncParam(_INT, "k_batch"), n.FuncParam(_BOOL, "time_kernel"))
        driver = self._driver("launch_conv", kernel, n.Builtin("float"), params,
                              [_CONV_PARAM_OF, n.ident("k_batch"), n.ident("time_kernel")])
        clear_log()
        driver(*problem.scalars(), problem.spatial(), k_batch, time_kernel)
        return log()

    def conv_is_supported(self, problem: ConvProblem, k_batch: int = 1, *, kernel: str | None = None) -> bool:
        """`Launcher::is_supported(conv_param, k_batch)`."""
        params = (*_CONV_PARAMS, n.FuncParam(_INT, "k_batch"))
        driver = self._driver("conv_is_supported", kernel, _BOOL, params, [_CONV_PARAM_OF, n.ident("k_batch")])
        return bool(driver(*problem.scalars(), problem.spatial(), k_batch))

    def launch_gemm(self, m: int, n_: int, k: int, k_batch: int = 1, *, plain: bool = False,
                    time_kernel: bool = False, kernel: str | None = None) -> list[Event]:
        """`Launcher::launch` on an M x N x K GEMM (buffers `a`, `b`, `e`, multi-D `d0`, ...); `plain`
        calls the overload taking plain `GemmHostArgs`. The events it logged."""
        params = (*_GEMM_PARAMS, n.FuncParam(_BOOL, "time_kernel"))
        driver = self._driver("launch_gemm_plain" if plain else "launch_gemm", kernel, n.Builtin("float"), params,
                              [n.ident(p.name) for p in params])
        clear_log()
        driver(m, n_, k, k_batch, time_kernel)
        return log()

    def launch_gemm_batched(self, m: int, n_: int, k: int, batch_count: int, k_batch: int = 1, *, pad: int = 0,
                            time_kernel: bool = False, kernel: str | None = None) -> list[Event]:
        """A batched launcher's `launch` on `batch_count` M x N x K GEMMs (buffers `a`, `b`, `e`), each batch
        `pad` elements further from the next than a packed one. The events it logged."""
        params = (*_GEMM_PARAMS, n.FuncParam(_INT, "batch_count"), n.FuncParam(_INT, "pad"),
                  n.FuncParam(_BOOL, "time_kernel"))
        driver = self._driver("launch_gemm_batched", kernel, n.Builtin("float"), params,
                              [n.ident(p.name) for p in params])
        clear_log()
        driver(m, n_, k, k_batch, batch_count, pad, time_kernel)
        return log()

    def launch_gemm_grouped(self, shapes: Sequence[tuple[int, int, int]], k_batch: int | Sequence[int] = 1, *,
                            time_kernel: bool = False, kernel: str | None = None) -> list[Event]:
        """A grouped launcher's `launch` on one group per (M, N, K) of `shapes` (buffers `a<i>`, `b<i>`, `e<i>`),
        with `k_batch` for every group or one per group. The events it logged."""
        splits = [k_batch] * len(shapes) if isinstance(k_batch, int) else list(k_batch)
        if len(splits) != len(shapes):
            raise ValueError(f"{len(shapes)} groups but {len(splits)} k_batch values")
        params = (n.FuncParam(_INT, "group_count"), n.FuncParam(n.Ptr(n.Const(_INT)), "shapes"),
                  n.FuncParam(_BOOL, "time_kernel"))
        driver = self._driver("launch_gemm_grouped", kernel, n.Builtin("float"), params,
                              [n.ident(p.name) for p in params])
        clear_log()
        values = [v for shape, s in zip(shapes, splits) for v in (*shape, s)] or [0]  # cppyy takes no empty buffer
        driver(len(shapes), array.array("i", values), time_kernel)
        return log()

    def instance_string(self, kernel: str | None = None) -> str:
        """`Launcher::get_instance_string()` (the model defines CK_EXPERIMENTAL_BUILDER)."""
        return str(self._driver("instance_string", kernel, load_profile(self.profile).type("string"), [], [])())


def _run_root(path: Path) -> Path:
    """The directory holding the run's manifest (the header's or its parent's), else the header's directory."""
    for candidate in (path.parent, path.parent.parent):
        if (candidate / MANIFEST).is_file():
            return candidate
    return path.parent


def profile_of(path: Path | str, include: Sequence[Path | str] = ()) -> str:
    """The API profile a file was emitted for: a `_<profile>.hpp` suffix, its manifest entry, the
    manifest's only profile, the only profile of the libraries in the folders `include` (when the file's
    manifest lists no kernel, as a selector's or benchmark driver's does), or the default profile.
    RecordError when the file's manifest or one of `include` is malformed."""
    path = Path(path)
    for name in profile_names():
        if path.stem.endswith(f"_{name}"):
            return name
    from ckast.select.cxx.record import kernel_profile, library_profiles, run_manifest

    root = _run_root(path)
    manifest = run_manifest(root)
    kernels = (manifest.kernels or ()) if manifest is not None else ()
    relative = path.resolve().relative_to(root.resolve()).as_posix() if path.is_file() else path.name
    for i, kernel in enumerate(kernels):
        if relative == kernel.header or relative in kernel.files:
            return kernel_profile(manifest, i)
    apis = {kernel_profile(manifest, i) for i in range(len(kernels))}
    if not kernels:
        apis = {api for folder in include for api in library_profiles(Path(folder))}
    return apis.pop() if len(apis) == 1 else DEFAULT_PROFILE


def recorded_includes(path: Path | str) -> tuple[Path, ...]:
    """The include folders a file's run records: the library a selector or benchmark driver was emitted for (its
    manifest's `selector.library` or `bench.library`), or none. RecordError when that record is malformed or
    its folder is gone."""
    from ckast.select.cxx.record import recorded_library

    library = recorded_library(_run_root(Path(path)))
    return () if library is None else (library,)


def jit_files(paths: Sequence[Path | str], profile: str | None = None, root: Path | str | None = None,
              include: Sequence[Path | str] | None = None) -> Unit:
    """JIT files (and what they include) as one unit. Quoted includes resolve next to the includer, in the
    folders `include` (default: `recorded_includes` of the first file), to the model's headers, then under
    `root` (default: the run's manifest directory, or the first file's directory)."""
    paths = [Path(p) for p in paths]
    include = [Path(d) for d in (recorded_includes(paths[0]) if include is None else include)]
    profile = profile or profile_of(paths[0], include)
    return Unit(session().compile(paths, profile, Path(root) if root is not None else _run_root(paths[0]), include))


def jit_header(path: Path | str, profile: str | None = None, include: Sequence[Path | str] | None = None) -> Unit:
    """JIT one emitted header (kernel, wrapper or registration) as a unit of its own."""
    return jit_files([path], profile, include=include)
