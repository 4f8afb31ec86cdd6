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


def explanation(config: Any, issues: tuple[ConfigIssue, ...] = (), origin: str = "") -> dict[str, Any]:
    """The kernel, its knobs, every rule covering it (status pass/fail/skipped, the reason and what failed;
    `issues` adds run-level refusals such as registry.key_unique), the rules that refuse it, and its IR
    graph (constructs in emission order with their uses; None when the profile cannot build it), as JSON."""
    outcomes = [o for o in evaluate(config) if o.status != "n/a"]
    seen = {o.rule.id for o in outcomes}
    rules = [{"id": o.rule.id, "status": o.status, "reason": o.rule.reason,
              "findings": [{"field": field, "detail": detail} for field, detail in o.findings]} for o in outcomes]
    rules += [{"id": i.rule, "status": "fail", "reason": i.message, "findings": []}
              for i in issues if i.rule and i.rule not in seen]
    graph = build_graph(config)
    return {
        "kernel": kernel_name(config), "origin": origin, "config": as_dict(config), "rules": rules,
        "refused_by": list(dict.fromkeys(r["id"] for r in rules if r["status"] == "fail")),
        "graph": None if graph is None else [
            {"construct": name, "role": graph.construct(name).role, "uses": list(graph.construct(name).uses)}
            for name in graph.order()],
    }


def verdict(explained: dict[str, Any]) -> str:
    """One line: the kernel is accepted, or which rules refuse it."""
    refused = explained["refused_by"]
    if not refused:
        return f"accepted: {explained['kernel']} passes every rule"
    return f"refused: {explained['kernel']} fails rule{'s' * (len(refused) > 1)} {', '.join(refused)}"


def lines(explained: dict[str, Any]) -> list[str]:
    """An `explanation` as text: the kernel, its knobs, every rule (PASS/FAIL/SKIP with the reason and what
    failed), its IR graph, and for an accepted kernel the verdict (a refused one's is the command's error)."""
    origin = explained["origin"]
    out = [f"kernel {explained['kernel']}" + (f"  (from {origin})" if origin else ""), "config:"]
    out += [f"  {k} = {json.dumps(v)}" for k, v in explained["config"].items()]
    out.append("rules:")
    for rule in explained["rules"]:
        out.append(f"  {MARK[rule['status']]} {rule['id']}: {rule['reason']}")
        out += [f"       {f['field']}: {f['detail']}" for f in rule["findings"]]
    if explained["graph"] is None:
        out.append("graph: none (the config is refused)")
    else:
        out.append("graph (construct [role] <- uses):")
        out += [f"  {c['construct']} [{c['role']}]" + (f" <- {', '.join(c['uses'])}" if c["uses"] else "")
                for c in explained["graph"]]
    if not explained["refused_by"]:
        out.append(verdict(explained))
    return out


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
