"""AdmissionReview v1 request bodies for tests that call the webhook's decision path."""

from __future__ import annotations

from typing import Any


def admission_review(
    obj: dict[str, Any],
    namespace: str = "",
    operation: str = "CREATE",
    *,
    user: str = "u",
    groups: tuple[str, ...] = (),
    uid: str = "u",
) -> dict[str, Any]:
    """A review of `obj` as the API server sends it (uid, kind, resource, namespace, name, user)."""
    api = str(obj.get("apiVersion") or "v1")
    group, _, version = api.rpartition("/")
    kind = str(obj.get("kind") or "")
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": kind.lower() + "s"},
            "namespace": namespace,
            "name": str((obj.get("metadata") or {}).get("name") or ""),
            "operation": operation,
            "userInfo": {"username": user, **({"groups": list(groups)} if groups else {})},
            "object": obj,
        },
    }
