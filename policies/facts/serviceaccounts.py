"""The ServiceAccount a workload's pods run as, and whether they get its token.

Kubernetes mounts the token when the pod's `automountServiceAccountToken` is true, else when it is
unset and the ServiceAccount's is not false. Rules need the ServiceAccount's setting, which lives in
another object, so it is computed here:

    input.facts.serviceAccount = {
        "name": "trainer",            # spec.serviceAccountName, else "default"
        "known": true,                # the ServiceAccount object was seen
        "exists": true | false | null,  # null: not seen in an incomplete inventory
        "automountServiceAccountToken": true | false | null,   # the ServiceAccount's own setting
        "annotations": {...},         # the ServiceAccount's annotations (workload identity)
        "tokenMounted": true | false, # the effective answer for the pods
    }
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stockade.policies.facts.inventory import Inventory
from stockade.policies.facts.workloads import pod_template


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts.serviceAccount` for one pod spec of a workload (``input.pod``, by default its
    first); {} for other objects."""
    pod = pod_template(obj) if pod is None else pod
    if pod is None:
        return {}
    spec = pod["spec"]
    name = str(spec.get("serviceAccountName") or spec.get("serviceAccount") or "default")
    md = obj.get("metadata") or {}
    namespace = md.get("namespace")
    sa = inventory.get("ServiceAccount", namespace, name)
    sa_setting = sa.get("automountServiceAccountToken") if sa is not None else None
    pod_setting = spec.get("automountServiceAccountToken")
    mounted = pod_setting if isinstance(pod_setting, bool) else sa_setting is not False
    sa_md = (sa or {}).get("metadata") or {}
    return {
        "serviceAccount": {
            "name": name,
            "known": sa is not None,
            "exists": True if sa is not None else (False if inventory.complete else None),
            "automountServiceAccountToken": sa_setting if isinstance(sa_setting, bool) else None,
            "annotations": dict(sa_md.get("annotations") or {}),
            "tokenMounted": mounted,
        }
    }
