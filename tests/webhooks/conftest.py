"""Fixtures for the deployment tests: the fake apply server on 127.0.0.1 and a real client for it.

The tests folders have no `__init__.py` (pytest runs with `--import-mode=importlib`), so the fake
server's module is loaded from its path. `api_client` is the admission tests' fixture (the official
client with a bearer token, for whatever `fake_apiserver` is), here pointed at the apply server.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def _load() -> Any:
    name = "stockade_tests_fake_apply_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("fake_apply_server.py"))
        assert spec is not None and spec.loader is not None
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


api_client = _load().admission_conftest.api_client


@pytest.fixture
def fake_apply_module() -> Any:
    return _load()


@pytest.fixture
def fake_apiserver(fake_apply_module: Any) -> Iterator[Any]:
    """A started FakeApplyServer (what `api_client` connects to)."""
    server = fake_apply_module.FakeApplyServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def apply_server(fake_apiserver: Any) -> Any:
    return fake_apiserver
