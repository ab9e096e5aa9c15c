"""The webhook with its inventory cache: verdicts follow namespace labels held by the API server.

The REAL `kubernetes` client talks HTTP to our own aiohttp fake API server on 127.0.0.1
(`fake_apiserver.py`, via the fixtures in `conftest.py`); the webhook app is driven through
Starlette's TestClient. Nothing on the request path calls the API server: the labels arrive through
list+watch into the cache.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from starlette.testclient import TestClient

from stockade.admission.app import WebhookState, create_app
from stockade.admission.inventory import InventoryCache
from stockade.policies.config.settings import Config

ROOT_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "nb"},
    "spec": {"containers": [{"name": "lab", "image": "x", "securityContext": {"runAsUser": 0}}]},
}


def review(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": namespace,
            "name": "nb",
            "operation": "CREATE",
            "object": ROOT_POD,
        },
    }


def wait_until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def rules_denied(client: TestClient, namespace: str) -> str:
    resp = client.post("/validate", json=review(namespace)).json()["response"]
    return str(resp.get("status", {}).get("message", ""))


def test_readiness_and_verdicts_follow_the_cached_namespace_labels(
    fake_apiserver: Any, api_client: Any
) -> None:
    level = "pod-security.kubernetes.io/enforce"
    fake_apiserver.put("namespaces", {"metadata": {"name": "notebooks", "labels": {level: "baseline"}}})
    fake_apiserver.hold_lists()
    cache = InventoryCache(api_client, backoff_initial_seconds=0.05, backoff_max_seconds=0.4)
    cache.start()
    state = WebhookState(
        config=Config(), facts=cache, ready=lambda: cache.synced, cache_age=cache.age_seconds
    )
    state.on_shutdown.append(cache.stop)
    with TestClient(create_app(state)) as client:
        assert client.get("/readyz").status_code == 503  # not synced: the API server holds the lists
        fake_apiserver.release_lists()
        wait_until(lambda: client.get("/readyz").status_code == 200)
        # runAsUser 0 breaks only the restricted profile: the baseline namespace does not report it,
        # a namespace the cluster does not label gets the configured default (restricted).
        assert "STK-POD-104" not in rules_denied(client, "notebooks")
        assert "STK-POD-104" in rules_denied(client, "unlabelled")
        fake_apiserver.put("namespaces", {"metadata": {"name": "notebooks", "labels": {level: "restricted"}}})
        wait_until(lambda: "STK-POD-104" in rules_denied(client, "notebooks"))
        assert "stockade_inventory_age_seconds" in client.get("/metrics").text
