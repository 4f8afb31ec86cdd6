"""ckast.library's rule-set table stays light and outside the build's import circle: `rulesets` (read for the
command line's --rule-set choices) imports nothing of `build`, which imports `rulesets`."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import ckast.library

LIBRARY = Path(ckast.library.__file__).parent


def imported(module: str) -> set[str]:
    """Every module `module` (a file of ckast.library) names in an import, at any depth, relative ones by name."""
    tree = ast.parse((LIBRARY / f"{module}.py").read_text())
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names |= {base} if base else {alias.name for alias in node.names}
    return {n.removeprefix("ckast.library.") for n in names}


def test_rulesets_and_build_import_in_one_direction():
    assert "rulesets" in imported("build")
    assert "build" not in imported("rulesets")


def test_importing_rulesets_loads_no_validation():
    code = ("import sys, ckast.library.rulesets; "
            "print(sorted(m for m in sys.modules if m.startswith(('ckast.library.build', 'ckast.config', "
            "'ckast.variants'))))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"
