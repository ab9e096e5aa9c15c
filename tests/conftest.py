"""Fixtures for every test directory, and the end-of-run check that no process the tests started is
left behind (tests/leftovers.py)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from tests.leftovers import pytest_configure, pytest_sessionfinish, pytest_terminal_summary

__all__ = ["pytest_configure", "pytest_sessionfinish", "pytest_terminal_summary"]

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str, relative: str) -> ModuleType:
    """Import a helper that is not in a package (bench/…, tests/…/fake_*.py) once, by path."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / relative)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def load_module() -> Callable[[str, str], ModuleType]:
    return _load
