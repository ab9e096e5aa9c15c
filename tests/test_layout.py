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


PROBE = """
import importlib, sys, traceback
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "stockade" or m.startswith("stockade.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception:
        failed.append(name + ": " + traceback.format_exc().strip().splitlines()[-1])
print("FAILED", failed)
"""


def test_every_module_imports_first() -> None:
    """Each module imports in an interpreter where no other stockade module is loaded yet: an import
    cycle only shows when its modules are entered in a certain order (importing the file reader first
    once failed on shape -> facts -> egress -> netpol -> shape)."""
    import subprocess
    import sys

    names = []
    for package in sorted(ALLOWED):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            if "tests" in rel.parts or any(p.startswith(".") for p in rel.parts):
                continue
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            if rel.name == "__main__":
                continue
            names.append(".".join(("stockade", *parts)))
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *names], capture_output=True, text=True, timeout=600, check=False
    )
    assert "FAILED []" in done.stdout, done.stdout[-4000:] + done.stderr[-4000:]
