"""`ckast explain`: for one config, every rule with its verdict, and the kernel's IR graph."""

from __future__ import annotations

import json
from typing import Any

from ckast.arch.rules import evaluate
from ckast.catalog import load_profile
from ckast.config import ConfigIssue, as_dict
from ckast.lower.graph import KernelGraph
from ckast.lower.identity import kernel_name
from ckast.variants import kernel_graph

MARK = {"pass": "PASS", "fail": "FAIL", "skipped": "SKIP"}


def report(config: Any, issues: tuple[ConfigIssue, ...] = (), origin: str = "") -> list[str]:
    """Lines: the kernel, its knobs, every rule covering it (PASS/FAIL/SKIP with the reason and what
    failed; `issues` adds run-level refusals such as registry.key_unique), and its IR graph
    (constructs in emission order with their uses)."""
    lines = [f"kernel {kernel_name(config)}" + (f"  (from {origin})" if origin else ""), "config:"]
    lines += [f"  {k} = {json.dumps(v)}" for k, v in as_dict(config).items()]
    lines.append("rules:")
    outcomes = evaluate(config)
    seen = {o.rule.id for o in outcomes}
    for o in outcomes:
        if o.status == "n/a":
            continue
        lines.append(f"  {MARK[o.status]} {o.rule.id}: {o.rule.reason}")
        lines += [f"       {field}: {detail}" for field, detail in o.findings]
    lines += [f"  FAIL {i.rule}: {i.message}" for i in issues if i.rule and i.rule not in seen]
    graph = build_graph(config)
    if graph is None:
        lines.append("graph: none (the config is refused)")
        return lines
    lines.append("graph (construct [role] <- uses):")
    for name in graph.order():
        c = graph.construct(name)
        lines.append(f"  {name} [{c.role}]" + (f" <- {', '.join(c.uses)}" if c.uses else ""))
    return lines


def build_graph(config: Any) -> KernelGraph | None:
    """The kernel's validated IR graph, or None when the profile cannot build it."""
    try:
        _, graph = kernel_graph(config, load_profile(config.ck_api))
        graph.validate()
    except ValueError:
        return None
    return graph


def dot(graph: KernelGraph, name: str) -> str:
    """The graph in Graphviz DOT: one box per construct labelled with its role, edges = uses."""
    def q(text: str) -> str:
        return json.dumps(text)

    lines = [f"digraph {q(name)} {{", "  rankdir=LR;", "  node [shape=box, fontname=monospace];"]
    for node in graph.order():
        label = q(node + "\n[" + graph.construct(node).role + "]")
        lines.append(f"  {q(node)} [label={label}];")
    for node in graph.order():
        lines += [f"  {q(used)} -> {q(node)};" for used in graph.construct(node).uses]
    lines.append("}")
    return "\n".join(lines) + "\n"
