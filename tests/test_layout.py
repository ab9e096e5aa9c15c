"""The repository shows the architecture: dependency direction between the stockade packages.

`cli -> {scanner, admission, webhooks} -> policies`; nothing imports `cli`, and `policies` imports
no other stockade package (ARCHITECTURE.md, "Layout").
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {
    "policies": {"policies"},
    "scanner": {"policies", "scanner"},
    "admission": {"policies", "scanner", "admission"},
    "webhooks": {"policies", "admission", "webhooks"},
    "cli": {"policies", "scanner", "admission", "webhooks", "cli"},
}


def stockade_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "stockade" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_dependency_direction(package: str) -> None:
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = stockade_imports(path) - ALLOWED[package]
        assert not bad, f"{path.relative_to(ROOT)} imports stockade.{', stockade.'.join(sorted(bad))}"


def test_no_stockade_folder() -> None:
    assert not (ROOT / "stockade").exists(), "packages are mapped folders; there is no stockade/ folder"
