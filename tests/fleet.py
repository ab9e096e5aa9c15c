"""The fake API server of ``examples/fleet/apiserver.py`` (it lives with the fleet it serves: `make demo`
runs it without the test extras), and the real ``kubernetes`` client pointed at it on loopback."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stockade.policies.evaluate import Evaluator
from stockade.scanner.audit import Target, run_audit
from stockade.scanner.result import Result
from stockade.scanner.sources.cluster import ClusterReader

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "fleet"))
fake: Any = importlib.import_module("apiserver")


def reader(url: str, name: str = "c", **options: Any) -> ClusterReader:
    """A ClusterReader on the real client, with the fake's bearer token and no client-side retries
    (as ClusterReader.from_kubeconfig does: every retry is the reader's own)."""
    from kubernetes import client as k8s_client

    cfg = k8s_client.Configuration()
    cfg.host = url
    cfg.api_key = {"authorization": fake.TOKEN}
    cfg.api_key_prefix = {"authorization": "Bearer"}
    cfg.retries = False
    options.setdefault("sleep", lambda s: None)
    return ClusterReader(k8s_client.ApiClient(cfg), name, **options)


def audit_objects(
    objects: Iterable[dict[str, Any]], evaluator: Evaluator, *, cluster: str = "gpu-1", simulate: bool = False
) -> Result:
    """One audit of a fake cluster holding `objects` (``simulate``: pods for its workloads)."""
    served_cluster = fake.FakeCluster.from_objects(cluster, list(objects), nodes=1, simulate=simulate)
    with fake.ServedCluster(served_cluster) as served:
        return run_audit([Target(cluster, lambda: reader(served.url, cluster))], evaluator, version="t")
