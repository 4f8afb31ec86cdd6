"""CK's quant GEMM goldens (tests/data/ck_quant_goldens/, see its README) and the check a test runs on them.

    from tests.ck_goldens import compare_case, load_goldens
    from tests.ck_trees import ProfileDifference
    case = load_goldens().cases["gemm_bquant_utils::default_fp8_config::gfx942"]
    # case.config is CK's codegen-config dict, case.arch its arch; build ckast's kernel for it:
    header = lower_kernel(config, profile).header                # a ckast.nodes.File
    result = compare_case(case, header, profile=profile, allowed=[ProfileDifference(
        "name", "why ckast differs here, documented", "ck_tile::QuantGemmKernel/2/*", ck=..., ckast=...)])
    assert result.ok, result.report()

`compare_case` reads ckast's tree from the AST (tests/ck_trees.py has the tree format and the comparison);
`python -m tests.ck_goldens CASE_ID [HEADER]` prints CK's tree of a case or a header's differences from it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .ck_trees import Comparison, ProfileDifference, Tree, compare, tree_of_ast, tree_of_header

DATA = Path(__file__).parent / "data" / "ck_quant_goldens"


@dataclass(frozen=True)
class Case:
    """One case of CK's golden manifest: `module::factory::arch` and CK's exact codegen-config dict."""

    case_id: str
    module: str
    factory: str
    arch: str
    config_name: str
    config: dict


@dataclass(frozen=True)
class Goldens:
    source: dict
    cases: dict[str, Case]
    trees: dict[str, Tree]
    """config_name -> the kernel type CK's golden header instantiates."""

    def cases_of(self, module: str) -> list[Case]:
        return [c for c in self.cases.values() if c.module == module]


@functools.lru_cache(maxsize=4)
def load_goldens(root: Path = DATA) -> Goldens:
    """CK's 140 quant GEMM cases and the expected trees of their 109 kernels (tests/data/ck_quant_goldens)."""
    manifest = json.loads((root / "cases.json").read_text())
    trees = json.loads((root / "trees.json").read_text())
    cases = {cid: Case(cid, c["module"], c["factory"], c["arch"], c["config_name"], c["config"])
             for cid, c in manifest["cases"].items()}
    return Goldens(manifest["source"], cases, trees["trees"])


def field_values(goldens: Goldens) -> dict[str, dict[str, list]]:
    """module -> config field (dotted, `[]` for list items) -> the values CK's cases give it, sorted."""
    out: dict[str, dict[str, set[str]]] = {}

    def walk(prefix: str, value: object, fields: dict[str, set[str]]) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else k, v, fields)
        elif isinstance(value, list):
            for v in value:
                walk(f"{prefix}[]", v, fields)
        else:
            fields.setdefault(prefix, set()).add(json.dumps(value))

    for case in goldens.cases.values():
        walk("", case.config, out.setdefault(case.module, {}))
    return {m: {f: [json.loads(v) for v in sorted(vs, key=lambda v: (len(v), v))] for f, vs in sorted(fields.items())}
            for m, fields in sorted(out.items())}


def field_table(goldens: Goldens) -> str:
    """`field_values` as the markdown table of tests/data/ck_quant_goldens/README.md."""
    rows = ["| module | field | values |", "| --- | --- | --- |"]
    for module, fields in field_values(goldens).items():
        for name, values in fields.items():
            rows.append(f"| {module} | `{name}` | {', '.join(json.dumps(v) for v in values)} |")
    return "\n".join(rows)


def compare_case(case: str | Case, ckast: object, allowed: Iterable[ProfileDifference] = (), profile: object = None,
                 kernel: str = "Kernel") -> Comparison:
    """CK's kernel of `case` (a case id or Case) against ckast's: a `ckast.nodes.File`, header text or a tree."""
    goldens = load_goldens()
    if isinstance(case, str):
        case = goldens.cases[case]
    if isinstance(ckast, str):
        ours = tree_of_header(ckast, kernel)
    elif isinstance(ckast, (dict, int, bool)):
        ours = ckast
    else:
        ours = tree_of_ast(ckast, kernel)
    return compare(goldens.trees[case.config_name], ours, allowed, profile)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m tests.ck_goldens CASE_ID [HEADER] [--profile P]`: CK's tree of a case, or its differences
    from the kernel of HEADER (any generated header text)."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m tests.ck_goldens", description=main.__doc__)
    ap.add_argument("case", help="module::factory::arch, as in tests/data/ck_quant_goldens/cases.json")
    ap.add_argument("header", nargs="?", type=Path)
    ap.add_argument("--profile", help="CK API profile whose catalog spells omitted defaults")
    ap.add_argument("--kernel", default="Kernel", help="the alias naming the kernel in HEADER")
    args = ap.parse_args(argv)
    goldens = load_goldens()
    if args.case not in goldens.cases:
        print(f"no case {args.case!r}; cases are module::factory::arch (see {DATA / 'cases.json'})")
        return 2
    if args.header is None:
        print(json.dumps(goldens.trees[goldens.cases[args.case].config_name], indent=1))
        return 0
    profile = None
    if args.profile:
        from ckast.catalog import load_profile

        profile = load_profile(args.profile)
    result = compare_case(args.case, args.header.read_text(), profile=profile, kernel=args.kernel)
    print(result.report())
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
