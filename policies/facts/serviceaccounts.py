"""The ServiceAccount a workload's pods run as, and whether they get its token.

Kubernetes mounts the token when the pod's `automountServiceAccountToken` is true, else when it is
unset and the ServiceAccount's is not false. Rules need the ServiceAccount's setting, which lives in
another object, so it is computed here:

    input.facts.serviceAccount = {
        "name": "trainer",            # spec.serviceAccountName, else "default"; the name an operator
                                      # sets (input.pod.account), "" when it generates one or when
                                      # the pod spec does not decide ("inherited")
        "source": "pod",              # input.pod.account.source: "pod", "inherited", "operator"
        "known": true,                # the ServiceAccount object was seen
        "exists": true | false | null,  # null: not seen in an incomplete inventory
        "automountServiceAccountToken": true | false | null,   # the ServiceAccount's own setting
        "annotations": {...},         # the ServiceAccount's annotations (workload identity)
        "tokenMounted": true | false, # the effective answer for the pods (false when "inherited":
                                      # the object that uses this pod spec is judged for it)
        "legacyTokens": [             # legacy token Secrets the pods read (a volume, a projected
            {"path": [...], "secret": "s", "serviceAccount": "sa"},   # source, an env var), when
        ],                            # the inventory holds the Secret
    }
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from stockade.policies.facts.inventory import Inventory
from stockade.policies.kinds.workloads import pod_template


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts.serviceAccount` for one pod spec of a workload (``input.pod``, by default its
    first); {} for other objects."""
    pod = pod_template(obj) if pod is None else pod
    if pod is None:
        return {}
    spec = pod["spec"]
    account = pod.get("account") or {}
    source = str(account.get("source") or "pod")
    md = obj.get("metadata") or {}
    namespace = md.get("namespace")
    legacy = _legacy_tokens(spec, str(namespace or "default"), inventory)
    if source == "inherited":
        # the pod spec names no account: the object that uses it (an InferenceService) decides
        return {
            "serviceAccount": {
                "name": "",
                "source": source,
                "by": account.get("by", ""),
                "known": False,
                "exists": None,
                "automountServiceAccountToken": None,
                "annotations": {},
                "tokenMounted": False,
                "legacyTokens": legacy,
            }
        }
    if source == "operator":
        name = str(account.get("name") or "")
    else:
        name = str(spec.get("serviceAccountName") or spec.get("serviceAccount") or "default")
    sa = inventory.get("ServiceAccount", namespace, name) if name else None
    sa_setting = sa.get("automountServiceAccountToken") if sa is not None else None
    pod_setting = spec.get("automountServiceAccountToken")
    mounted = pod_setting if isinstance(pod_setting, bool) else sa_setting is not False
    sa_md = (sa or {}).get("metadata") or {}
    # an account the operator creates (the pod spec names none) exists once it runs
    created = source == "operator" and not spec.get("serviceAccountName")
    exists = True if sa is not None else (False if inventory.complete and not created else None)
    out: dict[str, Any] = {
        "name": name,
        "source": source,
        "known": sa is not None,
        "exists": exists,
        "automountServiceAccountToken": sa_setting if isinstance(sa_setting, bool) else None,
        "annotations": dict(sa_md.get("annotations") or {}),
        "tokenMounted": mounted,
        "legacyTokens": legacy,
    }
    if source == "operator":
        out["by"] = account.get("by", "")
    return {"serviceAccount": out}


def _legacy_tokens(spec: Mapping[str, Any], namespace: str, inventory: Inventory) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if not inventory.holds_token_secrets():  # nothing to find: the pod's Secret references are not walked
        return out
    for path, secret in secret_references(spec):
        account = inventory.token_account(namespace, secret)
        if account is not None:
            out.append({"path": path, "secret": secret, "serviceAccount": account})
    return out


def secret_references(spec: Any) -> Iterator[tuple[list[Any], str]]:
    """(path in the pod spec, Secret name) of every Secret a pod reads: secret volumes, projected
    secret sources, and environment variables from Secrets (a legacy token Secret's `token` key)."""
    if not isinstance(spec, Mapping):
        return
    for i, vol in enumerate(spec.get("volumes") or ()):
        if not isinstance(vol, Mapping):
            continue
        secret = vol.get("secret")
        if isinstance(secret, Mapping) and isinstance(secret.get("secretName"), str):
            yield ["volumes", i, "secret", "secretName"], secret["secretName"]
        projected = vol.get("projected")
        for j, source in enumerate(projected.get("sources") or () if isinstance(projected, Mapping) else ()):
            ref = source.get("secret") if isinstance(source, Mapping) else None
            if isinstance(ref, Mapping) and isinstance(ref.get("name"), str):
                yield ["volumes", i, "projected", "sources", j, "secret", "name"], ref["name"]
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for c, container in enumerate(spec.get(group) or ()):
            if not isinstance(container, Mapping):
                continue
            for e, env in enumerate(container.get("env") or ()):
                value_from = env.get("valueFrom") if isinstance(env, Mapping) else None
                ref = value_from.get("secretKeyRef") if isinstance(value_from, Mapping) else None
                if isinstance(ref, Mapping) and isinstance(ref.get("name"), str):
                    yield [group, c, "env", e, "valueFrom", "secretKeyRef", "name"], ref["name"]
            for e, source in enumerate(container.get("envFrom") or ()):
                ref = source.get("secretRef") if isinstance(source, Mapping) else None
                if isinstance(ref, Mapping) and isinstance(ref.get("name"), str):
                    yield [group, c, "envFrom", e, "secretRef", "name"], ref["name"]
