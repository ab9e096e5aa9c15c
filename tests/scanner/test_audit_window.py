"""A fleet audit holds at most `--parallel` clusters at once and reports in the order given.

Three fake API servers (examples/fleet/apiserver.py) on loopback, read through the real `kubernetes`
client (tests/fleet.reader); the progress callbacks record when each cluster's listing starts and
when its evaluation is finished.
"""

from __future__ import annotations

import threading
from typing import Any

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator
from stockade.scanner.audit import QuietProgress, Target, run_audit
from tests.fleet import fake, reader

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ml"},
    "spec": {
        "containers": [{"name": "c", "image": "reg.example/x:1", "securityContext": {"privileged": True}}]
    },
}


class Events(QuietProgress):
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.lock = threading.Lock()
        self.done: dict[str, threading.Event] = {n: threading.Event() for n in ("a", "b", "c")}

    def listed(self, cluster: str, kind: str, objects: int) -> None:
        with self.lock:
            if not any(line == f"list {cluster}" for line in self.lines):
                self.lines.append(f"list {cluster}")

    def finished(self, cluster: str, ok: bool, message: str) -> None:
        with self.lock:
            self.lines.append(f"done {cluster}")
        self.done[cluster].set()


def _audit(parallel: int, last: str | None = None, on_snapshot: Any = None) -> tuple[Any, Events]:
    names = ["a", "b", "c"]
    clusters = [fake.FakeCluster.from_objects(n, [POD], nodes=1) for n in names]
    events = Events()

    def open_reader(url: str, name: str) -> Any:
        if name == last:  # its lists start once every other cluster is evaluated (an ordering)
            for other in names:
                if other != name:
                    assert events.done[other].wait(120)
        return reader(url, name)

    with (
        fake.ServedCluster(clusters[0]) as sa,
        fake.ServedCluster(clusters[1]) as sb,
        fake.ServedCluster(clusters[2]) as sc,
    ):
        urls = dict(zip(names, (sa.url, sb.url, sc.url), strict=True))
        targets = [Target(n, lambda n=n: open_reader(urls[n], n)) for n in names]
        result = run_audit(
            targets,
            Evaluator.default(parse_config("")),
            version="t",
            progress=events,
            max_parallel=parallel,
            on_snapshot=on_snapshot,
        )
    return result, events


def test_one_at_a_time_lists_a_cluster_only_after_the_previous_one_is_evaluated() -> None:
    result, events = _audit(parallel=1)
    assert events.lines == ["list a", "done a", "list b", "done b", "list c", "done c"]
    assert [c.name for c in result.clusters] == ["a", "b", "c"]


def test_reports_keep_the_order_given_when_a_cluster_completes_last() -> None:
    result, events = _audit(parallel=3, last="a")
    assert events.lines[-1] == "done a"  # a completed after b and c ...
    assert [c.name for c in result.clusters] == ["a", "b", "c"]  # ... and is still reported first
    clusters = [f.resource.cluster for f in result.findings]
    assert clusters == sorted(clusters) and set(clusters) == {"a", "b", "c"}


def test_earlier_clusters_findings_wait_on_disk_while_later_clusters_are_evaluated() -> None:
    """When a cluster is evaluated, the findings held are its own (the earlier clusters' are in the
    FindingSpool's file); the report has them all, in the order given, as they were found."""
    held: dict[str, set[str | None]] = {}

    def seen(snap: Any, result: Any) -> None:
        held[snap.name] = {f.resource.cluster for f in result.findings}

    result, _ = _audit(parallel=1, on_snapshot=seen)
    assert held == {"a": {"a"}, "b": {"b"}, "c": {"c"}}
    by_cluster = [(f.resource.cluster, f.rule.id) for f in result.findings]
    assert [c for c, _ in by_cluster] == sorted(c for c, _ in by_cluster)
    assert {r for c, r in by_cluster if c == "a"} == {r for c, r in by_cluster if c == "c"} >= {"STK-POD-003"}
