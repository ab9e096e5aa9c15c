"""What the benchmarks share about generated workloads: the registry and how to break a pod spec.

The benchmarks are run as scripts (`python bench/scan.py`), so this sibling module is importable.
"""

from __future__ import annotations

import random
from typing import Any

REGISTRY = "myregistry.azurecr.io"


def violate(rng: random.Random, spec: dict[str, Any], violation: str) -> None:
    """Break one control in a generated pod spec (each benchmark picks from its own list)."""
    c = rng.choice(spec["containers"])
    sc = c["securityContext"]
    if violation == "privileged":
        sc["privileged"] = True
        del sc["allowPrivilegeEscalation"]
    elif violation in ("host_path_socket", "host_path_gpu"):
        gpu = violation == "host_path_gpu"
        path = "/dev/nvidia0" if gpu else "/var/run/containerd/containerd.sock"
        name = "nvidia0" if gpu else "containerd-sock"
        spec["volumes"].append(
            {"name": name, "hostPath": {"path": path, "type": "CharDevice" if gpu else "Socket"}}
        )
        c["volumeMounts"].append({"name": name, "mountPath": path})
    elif violation == "host_network":
        spec["hostNetwork"] = True
    elif violation == "net_admin":
        sc["capabilities"]["add"] = ["NET_ADMIN", "SYS_ADMIN"]
    elif violation == "no_run_as_non_root":
        spec["securityContext"].pop("runAsNonRoot", None)
    elif violation == "run_as_root":
        sc["runAsUser"] = 0
    elif violation == "latest_image":
        c["image"] = c["image"].split("@")[0] + ":latest"
    elif violation == "privilege_escalation":
        sc["allowPrivilegeEscalation"] = True
    elif violation == "unconfined_seccomp":
        sc["seccompProfile"] = {"type": "Unconfined"}
    elif violation == "unsafe_sysctl":
        spec["securityContext"]["sysctls"] = [{"name": "kernel.shmmax", "value": "68719476736"}]
    elif violation == "host_port":
        c["ports"][0]["hostPort"] = c["ports"][0]["containerPort"]
    elif violation == "nfs_volume":
        spec["volumes"].append({"name": "datasets", "nfs": {"server": "10.240.4.10", "path": "/exports"}})
    else:
        raise ValueError(f"unknown violation {violation!r}")
