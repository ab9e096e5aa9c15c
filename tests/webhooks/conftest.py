"""Fixtures for the deployment tests: the fake apply server on 127.0.0.1 and a real client for it.

The tests folders have no `__init__.py` (pytest runs with `--import-mode=importlib`), so the fake
server's module is loaded from its path, as tests/admission/conftest.py does for its parent.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s_client

TOKEN = "stockade-deploy-test-token-41b7"


def _load() -> Any:
    name = "stockade_tests_fake_apply_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("fake_apply_server.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture
def fake_apply_module() -> Any:
    return _load()


@pytest.fixture
def apply_server(fake_apply_module: Any) -> Iterator[Any]:
    server = fake_apply_module.FakeApplyServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def api_client(apply_server: Any) -> Iterator[Any]:
    """The official client, configured for the fake server over plain HTTP, with a bearer token."""
    configuration = k8s_client.Configuration(host=apply_server.url)
    configuration.api_key["authorization"] = f"Bearer {TOKEN}"
    api = k8s_client.ApiClient(configuration)
    try:
        yield api
    finally:
        api.close()
