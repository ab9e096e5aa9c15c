"""The repository shows the architecture: dependency direction between the stockade packages.

`cli -> {scanner, admission, webhooks} -> policies`; nothing imports `cli`, and `policies` imports
no other stockade package; inside `policies`, each sub-package imports only the layers below it, and no
module takes part in an import cycle, imports inside functions included (docs/architecture.md, "Layout").
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


PACKAGE_ROOTS = {name: f"stockade.{name}" for name in ALLOWED}


def _modules() -> dict[str, Path]:
    mods = {}
    for folder, package in PACKAGE_ROOTS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            mods[".".join((package, *parts))] = path
    return mods


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    return skip


def import_graph() -> dict[str, set[str]]:
    """module -> the stockade modules it imports, wherever the import statement is (module level or
    inside a function), and the analyzers the facts registry imports by name; ``if TYPE_CHECKING:``
    imports aside. ``from package import name`` is an edge to
    the submodule when ``name`` is one, else to the package."""
    mods = _modules()
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        skip = _type_checking_nodes(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*up, *([base] if base else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            graph[name].update(t for t in targets if t in mods and t != name)
    # the analyzers are imported by name when first used (facts.ANALYZERS): edges all the same
    from stockade.policies.facts import ANALYZERS

    graph["stockade.policies.facts"].update(f"stockade.policies.facts.{a.module}" for a in ANALYZERS)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    """The check below can fail: two modules that import each other, one of them inside a function."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


#: Inside stockade.policies: what each part may import (its docstring says the same). The layers,
#: from the bottom: the vocabulary, the kinds table, reading manifests, configuration, the languages'
#: runtimes, the analyzers, the policy frameworks, the engines, and the pipeline that joins them.
POLICY_LAYERS: dict[str, set[str]] = {
    "model": set(),
    "folding": {"model"},
    "kinds": {"model"},
    "decoding": {"model", "kinds"},
    "config": {"model", "kinds", "decoding"},
    "runtimes": {"model"},
    "facts": {"model", "kinds", "decoding", "config"},
    "frameworks": {"model", "kinds", "decoding", "runtimes", "facts"},
    "engines": {"model", "kinds", "decoding", "config", "runtimes", "frameworks"},
    "evaluate": {"model", "kinds", "decoding", "config", "facts", "engines"},
    "compliance": {"model", "engines", "evaluate"},
}


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[1] == "policies" and len(parts) > 2 else None


def test_policies_parts_import_only_the_layers_below() -> None:
    graph = import_graph()
    bad = []
    for module, targets in graph.items():
        part = _part(module)
        if part is None:
            continue
        assert part in POLICY_LAYERS, f"{module}: a part of stockade.policies missing from POLICY_LAYERS"
        for target in targets:
            other = _part(target)
            if other is not None and other != part and other not in POLICY_LAYERS[part]:
                bad.append(f"{module} imports {target}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("part", sorted(p for p in POLICY_LAYERS if (ROOT / "policies" / p).is_dir()))
def test_each_part_says_what_it_owns_and_may_import(part: str) -> None:
    doc = ast.get_docstring(ast.parse((ROOT / "policies" / part / "__init__.py").read_text())) or ""
    assert "Owns:" in doc and "May import:" in doc, f"policies/{part}/__init__.py docstring"
    said = doc.split("May import:", 1)[1]
    for allowed in POLICY_LAYERS[part]:
        assert f"stockade.policies.{allowed}" in said, f"policies/{part}: the docstring omits {allowed}"
