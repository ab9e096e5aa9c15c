"""What the benchmarks share about generated workloads: the registry and how to break a pod spec.

The benchmarks are run as scripts (`python bench/scan.py`), so this sibling module is importable.
"""

from __future__ import annotations

import random
from typing import Any

REGISTRY = "myregistry.azurecr.io"
#: Release tags of the organisation's images. Most real workloads pull by tag, the rest pin a digest:
#: generated containers name one or the other, half each (a tag costs the image rules more than a
#: digest: its words are looked up among the floating tags).
VERSION_TAGS = ("2.4.1", "v0.6.3", "24.08-py3", "1.2.0-cuda12.1", "v2.14.0", "0.9.2")


def image_reference(repository: str, digest: str, key: str) -> str:
    """An image of the organisation's registry, by ``digest`` or by a release tag, half each. Chosen
    by ``key`` (something else the container drew), not by drawing from the workload's generator: every
    other field is the one the benchmarks generated before images were tagged."""
    choice = random.Random(key)
    if choice.random() < 0.5:
        return f"{REGISTRY}/{repository}@{digest}"
    return f"{REGISTRY}/{repository}:{choice.choice(VERSION_TAGS)}"


def _untagged(image: str) -> str:
    """The image's repository: without its digest and its tag."""
    name = image.split("@")[0]
    head, _, last = name.rpartition("/")
    return f"{head}/{last.split(':')[0]}" if head else last.split(":")[0]


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
        c["image"] = _untagged(c["image"]) + ":latest"
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
