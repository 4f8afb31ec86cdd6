"""Extract the data of CK's quant GEMM golden test into tests/data/ck_quant_goldens/ (one-off fetch-and-extract).

CK freezes its eight block-scale quant GEMM generators' output in ROCm/rocm-libraries
`projects/composablekernel/dispatcher/tests/golden/codegen/` (`manifest.json`: 140 cases, each with CK's
codegen-config dict, config_name and the sha256 of its header; `hpp/<config_name>.hpp.golden`: 109 unique
kernels; `tripwire/`: non-quant generators). Given a local copy of that directory, this keeps only what
ckast's tests need: the cases (without the headers) and, per kernel, the tree of the kernel type its
header instantiates (`tests.ck_trees.tree_of_header`; tests read both through `tests.ck_goldens`). Each
header is checked against the manifest's sha256 first, so a damaged or edited copy is refused.

    python tools/ck_quant_goldens.py CK_GOLDEN_DIR [--commit SHA] [--tripwire NAME ...] [--out tests/data/ck_quant_goldens]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.ck_trees import TreeError, tree_of_header  # noqa: E402

REPO = "ROCm/rocm-libraries"
PATH = "projects/composablekernel/dispatcher/tests/golden/codegen"
COMMIT = "ea607ecdb59e970dc748d4848363b800334ba5c6"
KERNEL_ALIASES = ("Kernel", "GemmKernel")
"""The alias naming the launched kernel: the quant generators say `Kernel`, CK's GEMM generator `GemmKernel`."""


def kernel_tree(text: str) -> object:
    errors = []
    for alias in KERNEL_ALIASES:
        try:
            return tree_of_header(text, alias)
        except TreeError as e:
            errors.append(f"{alias}: {e}")
    raise TreeError("; ".join(errors))


def read_kernels(hpp: Path, shas: dict[str, str], names: list[str]) -> tuple[dict, list[str]]:
    """The kernel tree of each named header whose bytes hash to the manifest's sha256."""
    trees, problems = {}, []
    for name in names:
        path = hpp / f"{name}.hpp.golden"
        if not path.exists():
            problems.append(f"{name}: no {path.name}")
            continue
        data = path.read_bytes()
        if name not in shas or hashlib.sha256(data).hexdigest() != shas[name]:
            problems.append(f"{name}: sha256 differs from the manifest (or the manifest lacks it)")
            continue
        try:
            trees[name] = kernel_tree(data.decode())
        except TreeError as e:
            problems.append(f"{name}: {e}")
    return trees, problems


def trees_json(source: dict, trees: dict, tripwire: dict) -> str:
    """JSON with one kernel per line (reviewable diffs, a fraction of the indented size)."""
    def block(table: dict) -> str:
        rows = [f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True, separators=(',', ':'))}" for k, v in sorted(table.items())]
        return "{\n" + ",\n".join(rows) + "\n }" if rows else "{}"

    return (f'{{"source": {json.dumps(source, sort_keys=True)},\n"kernel_count": {len(trees)},\n'
            f'"trees": {block(trees)},\n"tripwire": {block(tripwire)}}}\n')


def write_if_changed(path: Path, text: str) -> None:
    """Replace `path` atomically, and only when its content changes."""
    if path.exists() and path.read_text() == text:
        return
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("golden_dir", type=Path, help=f"a copy of {REPO} {PATH}")
    ap.add_argument("--commit", default=COMMIT)
    ap.add_argument("--tripwire", nargs="*", default=(), help="tripwire kernels (their emitted_hpp names) to keep too")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "tests/data/ck_quant_goldens")
    args = ap.parse_args(argv)
    try:
        manifest = json.loads((args.golden_dir / "manifest.json").read_text())
        shas = {c["config_name"]: c["sha256"] for c in manifest["cases"].values()}
        tw_shas = {}
        if args.tripwire:
            tw_manifest = json.loads((args.golden_dir / "tripwire" / "manifest.json").read_text())
            tw_shas = {c["emitted_hpp"]: c["sha256"] for c in tw_manifest["cases"].values()}
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"{args.golden_dir}: not a copy of CK's golden directory ({e})")
        return 2
    names = sorted(shas)
    trees, problems = read_kernels(args.golden_dir / "hpp", shas, names)
    tripwire, tw_problems = read_kernels(args.golden_dir / "tripwire" / "hpp", tw_shas, list(args.tripwire))
    if problems or tw_problems:
        for p in problems + tw_problems:
            print(f"{args.golden_dir}: {p}")
        print("nothing written")
        return 2
    source = {"repo": REPO, "path": PATH, "commit": args.commit,
              "note": "CK's cases and the kernel types of its golden headers; the headers themselves are not kept"}
    cases = {cid: {k: c[k] for k in ("module", "factory", "arch", "config_name", "sha256", "config")}
             for cid, c in sorted(manifest["cases"].items())}
    args.out.mkdir(parents=True, exist_ok=True)
    write_if_changed(args.out / "cases.json", json.dumps(
        {"source": source, "arches": manifest["arches"], "modules": manifest["modules"], "case_count": len(cases),
         "cases": cases}, indent=1, sort_keys=True) + "\n")
    write_if_changed(args.out / "trees.json", trees_json(source, trees, tripwire))
    print(f"{len(cases)} cases, {len(trees)}/{len(names)} kernels, {len(tripwire)} tripwire kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
