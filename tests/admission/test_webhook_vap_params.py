"""The webhook decides VAPs with params held by the API server: its inventory cache lists and watches
each bound policy's paramKind (a ConfigMap; a CRD kind found by discovery), and a change of the params
object changes the verdict without a restart.

The REAL `kubernetes` client talks HTTP to our own aiohttp fake API server on 127.0.0.1
(`fake_apiserver.py`, which also answers discovery); the webhook app is driven through Starlette's
TestClient.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s_client
from starlette.testclient import TestClient

from stockade.admission.app import WebhookState, create_app
from stockade.admission.inventory import InventoryCache
from stockade.policies.config.settings import Config
from stockade.policies.engines.library import load_library
from tests.reviews import admission_review

POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas-limit}
spec:
  paramKind: {apiVersion: rules.example.com/v1, kind: ReplicaLimit}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: "object.spec.replicas <= params.maxReplicas"
    messageExpression: "'replicas ' + string(object.spec.replicas) + ' exceed ' + string(params.maxReplicas)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas-limit}
spec:
  policyName: replicas-limit
  validationActions: [Deny]
  paramRef: {name: limits, namespace: policy-params, parameterNotFoundAction: Deny}
"""


def _review(replicas: int) -> dict[str, Any]:
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ml"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    }
    return admission_review(obj, "ml", user="alice", uid=str(uuid.uuid4()))


def _wait(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


@pytest.fixture
def server(fake_apiserver_module: Any) -> Iterator[Any]:
    kinds = {**fake_apiserver_module.CORE_KINDS, "replicalimits": ("ReplicaLimit", "rules.example.com/v1")}
    srv = fake_apiserver_module.FakeApiServer(kinds).start()
    try:
        yield srv
    finally:
        srv.stop()


def test_params_from_the_cluster_decide_and_follow_changes(server: Any, tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "vap.yaml").write_text(POLICY)
    params = load_library([policies]).vap.param_kinds()
    assert params == {("rules.example.com/v1", "ReplicaLimit")}

    configuration = k8s_client.Configuration(host=server.url)
    configuration.api_key["authorization"] = "Bearer stockade-test-token-7f3c9a"
    cache = InventoryCache(
        k8s_client.ApiClient(configuration),
        params=params,
        backoff_initial_seconds=0.05,
        backoff_max_seconds=0.4,
    )
    limits = {"metadata": {"name": "limits", "namespace": "policy-params"}, "maxReplicas": 4}
    server.put("replicalimits", limits)
    cache.start()
    state = WebhookState(
        config=Config(),
        policy_dirs=(policies,),
        facts=cache,
        ready=lambda: cache.synced,
        cache_age=cache.age_seconds,
    )
    state.on_shutdown.append(cache.stop)

    def answer(replicas: int) -> tuple[bool, str]:
        """(the VAP passes, the webhook's message): the library's own rules deny this bare Deployment too."""
        resp = client.post("/validate", json=_review(replicas)).json()["response"]
        message = str((resp.get("status") or {}).get("message") or "")
        assert resp["allowed"] is False  # STK-POD-*, STK-IMG-*: never silent
        return "VAP-replicas-limit-0" not in message, message

    with TestClient(create_app(state)) as client:
        _wait(lambda: client.get("/readyz").status_code == 200)  # the param kind is listed too
        assert [s.plural for s in server.requests if s.plural.startswith("discovery:")] == [
            "discovery:rules.example.com/v1"
        ]
        assert answer(3)[0] is True
        allowed, message = answer(7)
        assert allowed is False and "replicas 7 exceed 4" in message
        server.put("replicalimits", {**limits, "maxReplicas": 8})  # a watch event: no restart
        _wait(lambda: answer(7)[0] is True)
        server.delete("replicalimits", "policy-params", "limits")
        _wait(lambda: "no params object found" in answer(3)[1])  # Deny: the params are gone


def test_secret_params_are_kept_as_key_names_only() -> None:
    """A VAP whose paramKind is Secret makes the cache list Secrets: it keeps their key names, never
    a value (as the audit lists Secrets), so no value sits in the webhook's memory."""
    from stockade.policies.kinds.api import KINDS

    secret = {
        "metadata": {
            "name": "limits",
            "namespace": "policy-params",
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"token":"c2VjcmV0"}}'
            },
        },
        "type": "Opaque",
        "data": {"token": "c2VjcmV0"},
    }
    kept = InventoryCache._normalize(KINDS["Secret"], secret)
    assert kept["dataKeys"] == ["token"] and "data" not in kept
    assert "c2VjcmV0" not in repr(kept)
