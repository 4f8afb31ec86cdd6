"""The kernel IR graph: typed constructs of one launcher struct and the "uses" edges between them.

A construct is one C++ entity declared once in the launcher struct: a type alias (tile shape,
partitioner, traits, problem, pipeline, epilogue, kernel, ...) or a function (`run`, `launch`).
Lowering is: build the graph -> `validate` -> `order` (topological, ties broken by insertion
order, so output is stable) -> `lower` to AST declarations.

Compile-time dispatch parameters (hot loop, tail number, memory operation on profiles that bind
them at compile time) flow along the edges: a construct is a template over the parameters it
introduces plus those of everything it uses, minus those it binds itself (the dispatch point).
So `Kernel<HasHotLoop, TailNum, MemOp>` follows from `Pipeline<HasHotLoop, TailNum>` and
`Epilogue<MemOp>` without any builder spelling it out.

Variants patch a shared graph (`replace`, `add`) instead of copying a builder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import importlib
from typing import TYPE_CHECKING

import attrs

from ckast import nodes as n

if TYPE_CHECKING:
    import networkx as nx

ROLES = (
    "config", "host_args", "data_type", "layout", "tile_shape", "partitioner", "traits", "pipeline_problem", "base_pipeline",
    "universal_problem", "pipeline", "epilogue_problem", "epilogue", "kernel", "launcher",
)


class GraphError(ValueError):
    """The kernel graph is malformed (a builder bug, never a config problem)."""


@attrs.frozen
class Scope:
    """What an emit function may reference while lowering one construct."""

    graph: KernelGraph
    construct: Construct

    def ref(self, name: str, **bound: n.Expr) -> n.Type:
        """A reference to construct `name`, its parameters bound to `bound` or to our own same-named ones."""
        if name not in self.construct.uses:
            raise GraphError(f"{self.construct.name} references {name} without a 'uses' edge")
        return n.type_of(self.graph.template_id(name, bound))

    def member(self, name: str, *path: str) -> n.Name:
        """`name::path...`: a nested type or constant of construct `name` (which takes no parameters)."""
        if name not in self.construct.uses:
            raise GraphError(f"{self.construct.name} references {name} without a 'uses' edge")
        if self.graph.params_of(name):
            raise GraphError(f"{self.construct.name} names a member of the template {name}")
        return n.Name((self.graph.construct(name).cxx_name, *path))

    def call_target(self, name: str, **bound: n.Expr) -> n.Expr:
        """`name` or `name<...>` as a callee (for function constructs such as `run`)."""
        if name not in self.construct.uses:
            raise GraphError(f"{self.construct.name} calls {name} without a 'uses' edge")
        return n.Id(n.Name((self.graph.template_id(name, bound),)))


Emit = Callable[[Scope], "n.Type | n.Decl | list[n.Decl]"]


@attrs.frozen
class Construct:
    """One node of the graph.

    `emit` returns the target type of an alias named `name`, or the declaration itself (a function
    named `symbol`), or a block of declarations (the config constants, which take no parameters).
    `params` are dispatch parameters introduced here; `binds` names those resolved here.
    """

    name: str
    role: str = attrs.field(validator=attrs.validators.in_(ROLES))
    emit: Emit
    uses: tuple[str, ...] = ()
    params: tuple[n.Param, ...] = ()
    binds: tuple[str, ...] = ()
    symbol: str | None = None
    """C++ name when it differs from the graph name (overloads: `launch` and `launch_plain`)."""
    entry_args: str | None = None
    """For a public entry point: its argument type, a construct name or a catalog type key."""

    @property
    def cxx_name(self) -> str:
        return self.symbol or self.name


class KernelGraph:
    """Constructs of one launcher struct keyed by name, with "uses" edges (networkx DiGraph)."""

    def __init__(self) -> None:
        self.g: nx.DiGraph = _nx().DiGraph()
        self._index: dict[str, int] = {}
        self._params: dict[str, tuple[n.Param, ...]] = {}
        self._functions: set[str] = set()

    def add(self, construct: Construct) -> None:
        if construct.name in self.g:
            raise GraphError(f"construct {construct.name} is already in the graph")
        self._index[construct.name] = len(self._index)
        self.g.add_node(construct.name, construct=construct)

    def replace(self, construct: Construct) -> None:
        """Swap the construct of the same name (a variant patch); edges follow the new `uses`."""
        if construct.name not in self.g:
            raise GraphError(f"cannot replace {construct.name}: not in the graph")
        self.g.nodes[construct.name]["construct"] = construct

    def construct(self, name: str) -> Construct:
        return self.g.nodes[name]["construct"]

    def names(self) -> list[str]:
        return list(self.g.nodes)

    def validate(self) -> None:
        """Every use names a construct, the graph is acyclic, and names are valid C++ identifiers."""
        self.g.remove_edges_from(list(self.g.edges))
        for name in self.g.nodes:
            n.names.identifier(name)
            for used in self.construct(name).uses:
                if used not in self.g:
                    raise GraphError(f"{name} uses {used}, which is not in the graph")
                self.g.add_edge(used, name)
        if not _nx().is_directed_acyclic_graph(self.g):
            raise GraphError(f"cycle among constructs: {_nx().find_cycle(self.g)}")

    def order(self) -> list[str]:
        """Topological order, ties broken by insertion order (stable across runs and hash seeds)."""
        return list(_nx().lexicographical_topological_sort(self.g, key=self._index.__getitem__))

    def params_of(self, name: str) -> tuple[n.Param, ...]:
        return self._params[name]

    def template_id(self, name: str, bound: Mapping[str, n.Expr]) -> n.TemplateId | str:
        """`name`, or `name<...>` with unbound parameters forwarding the caller's same-named ones."""
        params = self._params[name]
        if not params:
            return name
        args = {p.name: bound.get(p.name, n.ident(p.name)) for p in params}
        cxx = self.construct(name).cxx_name
        return n.Signature(cxx, (cxx,), "function" if name in self._functions else "alias", params)(**args)

    def lower(self) -> list[n.Decl]:
        """Validate, order and emit every construct as struct members."""
        self.validate()
        out: list[n.Decl] = []
        self._params, self._functions = {}, set()
        for name in self.order():
            c = self.construct(name)
            params = _merge([c.params, *(self._params[u] for u in c.uses)], drop=c.binds)
            self._params[name] = params
            made = c.emit(Scope(self, c))
            if isinstance(made, list):
                if params:
                    raise GraphError(f"{name}: a block of declarations cannot take template parameters")
                out += made
                continue
            if isinstance(made, n.FunctionDef):
                self._functions.add(name)
            decl: n.Decl = made if isinstance(made, n.Decl) else n.UsingAlias(c.cxx_name, made)
            out.append(n.TemplateDecl(params, decl) if params else decl)
        return out


def _nx():
    """networkx, imported with the first graph (a run that only fills templates never builds one)."""
    return importlib.import_module("networkx")


def _merge(groups: Iterable[tuple[n.Param, ...]], drop: tuple[str, ...]) -> tuple[n.Param, ...]:
    seen: dict[str, n.Param] = {}
    for group in groups:
        for p in group:
            if p.name in drop:
                continue
            if p.name in seen and seen[p.name] != p:
                raise GraphError(f"dispatch parameter {p.name} has two different declarations")
            seen.setdefault(p.name, p)
    return tuple(seen.values())
