"""The webhook's inventory cache against a fake API server.

The REAL `kubernetes` client talks HTTP to a fake Kubernetes API server on 127.0.0.1 (our own small
aiohttp app, `fake_apiserver.py`, loaded by `conftest.py`): paginated LISTs, streamed WATCH events
the tests push (ADDED / MODIFIED / DELETED / BOOKMARK, ERROR 410), HTTP 410 for a compacted
resourceVersion, and injected 500s. Nothing leaves the loopback interface; every wait is bounded.
"""

from __future__ import annotations

import itertools
import logging
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s_client
from kubernetes.config import incluster_config

from stockade.admission.inventory import DEFAULT_KINDS, WATCHABLE, InventoryCache, WatchedKind
from stockade.policies.facts import inventory as inventory_module
from stockade.policies.facts.inventory import INDEXED_KINDS, WATCHED_KINDS

TOKEN = "stockade-test-token-7f3c9a"  # the token conftest's api_client sends


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {predicate}")
        time.sleep(0.01)


def namespace(name: str, **labels: str) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "labels": labels}
    md["managedFields"] = [{"manager": "kubectl", "operation": "Apply"}]
    return {"metadata": md}


def service_account(ns: str, name: str, automount: bool | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": name, "namespace": ns}}
    if automount is not None:
        obj["automountServiceAccountToken"] = automount
    return obj


def pod(ns: str, sa: str) -> dict[str, Any]:
    spec = {"serviceAccountName": sa, "containers": [{"name": "c", "image": "example.com/app:1"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": ns}, "spec": spec}


@pytest.fixture
def make_cache(api_client: Any) -> Iterator[Callable[..., InventoryCache]]:
    """Caches on the fake server with fast backoff; stopped at the end of the test whatever happens."""
    made: list[InventoryCache] = []

    def make(**options: Any) -> InventoryCache:
        options.setdefault("backoff_initial_seconds", 0.05)
        options.setdefault("backoff_max_seconds", 0.4)
        options.setdefault("watch_timeout_seconds", 30)
        cache = InventoryCache(options.pop("api", api_client), **options)
        made.append(cache)
        return cache

    yield make
    for cache in made:
        cache.stop()


@pytest.fixture
def cluster(fake_apiserver: Any) -> Any:
    """Two namespaces; 1,200 ServiceAccounts (three pages of 500)."""
    fake_apiserver.put("namespaces", namespace("team-a", tier="gpu"))
    fake_apiserver.put("namespaces", namespace("team-b"))
    fake_apiserver.put("serviceaccounts", service_account("team-a", "trainer", automount=False))
    for i in range(1199):
        fake_apiserver.put("serviceaccounts", service_account("team-b", f"sa-{i:04d}"))
    return fake_apiserver


def test_default_kinds_are_the_indexed_kinds() -> None:
    assert {k.kind for k in DEFAULT_KINDS} == WATCHED_KINDS == INDEXED_KINDS | {"Pod"}
    assert set(WATCHABLE) >= WATCHED_KINDS, "each indexed kind needs a WATCHABLE entry, or it is never filled"
    assert WatchedKind("", "v1", "namespaces", "Namespace", False) in DEFAULT_KINDS


def test_kinds_the_inventory_does_not_index_are_refused(api_client: Any) -> None:
    with pytest.raises(ValueError, match="does not index Ingress"):
        InventoryCache(api_client, [WATCHABLE["Ingress"]])
    with pytest.raises(ValueError, match="twice"):
        InventoryCache(api_client, [DEFAULT_KINDS[0], DEFAULT_KINDS[0]])


def test_initial_sync_is_paginated_and_gates_readiness(cluster: Any, make_cache: Any) -> None:
    cache = make_cache()
    cluster.hold_lists()
    cache.start()
    assert not cache.synced
    assert not cache.wait_synced(0.2)
    assert len(cache.inventory) == 0 and not cache.inventory.complete
    # Cold cache: the ServiceAccount is "not seen", not "missing" (nothing denied for being cold).
    assert cache.facts(pod("team-a", "trainer"))["serviceAccount"]["exists"] is None
    cluster.release_lists()
    assert cache.wait_synced(30)
    assert cache.synced and cache.inventory.complete
    assert len(cache.inventory) == 2 + 1200

    lists = cluster.seen("serviceaccounts", watch=False)
    assert [r.query.get("limit") for r in lists] == ["500", "500", "500"]
    assert [r.query.get("continue") is not None for r in lists] == [False, True, True]
    assert all(r.authorized for r in cluster.requests)
    assert all(r.query["limit"] == "500" for r in cluster.seen("namespaces", watch=False))

    assert cache.namespace("team-a") == {
        "name": "team-a",
        "labels": {"tier": "gpu"},
        "annotations": {},
        "known": True,
    }
    assert cache.namespace("nope")["known"] is False
    assert cache.namespace(None)["known"] is False
    sa = cache.facts(pod("team-a", "trainer"))["serviceAccount"]
    assert sa["known"] and sa["automountServiceAccountToken"] is False and not sa["tokenMounted"]
    assert cache.facts(pod("team-a", "ghost"))["serviceAccount"]["exists"] is False  # complete now
    stored = cache.inventory.get("Namespace", None, "team-a")
    assert stored is not None and stored["kind"] == "Namespace" and stored["apiVersion"] == "v1"
    assert "managedFields" not in stored["metadata"]

    # Then it watches from the list's resourceVersion, with bookmarks.
    wait_until(lambda: cluster.watching("namespaces") and cluster.watching("serviceaccounts"))
    (watch,) = cluster.seen("namespaces", watch=True)
    assert "resourceVersion" not in cluster.seen("namespaces", watch=False)[-1].query  # a consistent read
    assert watch.query["allowWatchBookmarks"] == "true" and int(watch.query["resourceVersion"]) > 100
    assert 0 <= cache.age_seconds() < 60  # fresh (no sync is infinitely old); 60 s: a loaded machine


def test_watch_events_are_applied(cluster: Any, make_cache: Any) -> None:
    cache = make_cache()
    cache.start()
    assert cache.wait_synced(30)
    wait_until(lambda: cluster.watching("namespaces") and cluster.watching("serviceaccounts"))

    cluster.put("namespaces", namespace("team-a", tier="cpu", owner="ml"))
    wait_until(lambda: cache.namespace("team-a")["labels"] == {"tier": "cpu", "owner": "ml"})
    cluster.put("namespaces", namespace("team-c"))
    wait_until(lambda: cache.namespace("team-c")["known"])
    cluster.delete("namespaces", None, "team-b")
    wait_until(lambda: not cache.namespace("team-b")["known"])

    cluster.put("serviceaccounts", service_account("team-c", "builder", automount=True))
    wait_until(lambda: cache.facts(pod("team-c", "builder"))["serviceAccount"]["known"])
    cluster.delete("serviceaccounts", "team-a", "trainer")
    wait_until(lambda: cache.facts(pod("team-a", "trainer"))["serviceAccount"]["exists"] is False)
    assert len(cache.inventory) == 3 + 1200 - 1

    # A BOOKMARK moves the resourceVersion on: the next watch resumes from it (no relist).
    rv = cluster.bookmark("namespaces")
    time.sleep(0.1)
    cluster.end_watches("namespaces")
    wait_until(lambda: len(cluster.seen("namespaces", watch=True)) == 2)
    assert cluster.seen("namespaces", watch=True)[-1].query["resourceVersion"] == str(rv)
    assert len(cluster.seen("namespaces", watch=False)) == 1


def test_expired_watch_event_relists_with_new_data(cluster: Any, make_cache: Any) -> None:
    cache = make_cache()
    cache.start()
    assert cache.wait_synced(30)
    wait_until(lambda: cluster.watching("namespaces"))
    # Changes the cache misses (history compacted before it saw them), then an ERROR 410 event.
    cluster.put("namespaces", namespace("team-a", tier="h100"), notify=False)
    cluster.delete("namespaces", None, "team-b", notify=False)
    cluster.put("namespaces", namespace("team-d"), notify=False)
    cluster.expire("namespaces")
    wait_until(lambda: cache.namespace("team-d")["known"])
    assert cache.namespace("team-a")["labels"] == {"tier": "h100"}
    assert not cache.namespace("team-b")["known"]
    assert len(cluster.seen("namespaces", watch=False)) == 2
    assert cache.synced
    # and it watches again, from the new list's resourceVersion
    wait_until(lambda: cluster.watching("namespaces"))
    cluster.put("namespaces", namespace("team-e"))
    wait_until(lambda: cache.namespace("team-e")["known"])


def test_expired_resource_version_on_rewatch_relists(cluster: Any, make_cache: Any) -> None:
    cache = make_cache()
    cache.start()
    assert cache.wait_synced(30)
    wait_until(lambda: cluster.watching("serviceaccounts"))
    cluster.delete("serviceaccounts", "team-a", "trainer", notify=False)
    cluster.expire("serviceaccounts", notify=False)
    cluster.end_watches("serviceaccounts")  # re-watch from the old resourceVersion: HTTP 410
    wait_until(lambda: cache.facts(pod("team-a", "trainer"))["serviceAccount"]["exists"] is False)
    assert [r.status for r in cluster.seen("serviceaccounts", watch=True)][:2] == [200, 410]
    assert len(cluster.seen("serviceaccounts", watch=False)) == 3 + 3  # two full paginated lists


def test_relists_never_hide_objects_from_concurrent_readers(cluster: Any, make_cache: Any) -> None:
    """The request path reads while relists swap a kind's objects: a namespace that exists throughout
    is never reported unknown, and readers never see a dict change size under them."""
    cache = make_cache()
    cache.start()
    assert cache.wait_synced(30)
    stop, seen, errors = threading.Event(), [0], []

    def read() -> None:
        while not stop.is_set():
            try:
                assert cache.namespace("team-a")["known"]
                assert cache.facts(pod("team-a", "trainer"))["serviceAccount"]["known"]
                seen[0] += 1
            except Exception as exc:  # reported below
                errors.append(exc)
                return

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(5):
            lists = len(cluster.seen("serviceaccounts", watch=False))
            wait_until(lambda: cluster.watching("namespaces") and cluster.watching("serviceaccounts"))
            cluster.put("namespaces", namespace(f"extra-{i}"), notify=False)
            cluster.expire("namespaces")
            cluster.expire("serviceaccounts")
            wait_until(lambda i=i: cache.namespace(f"extra-{i}")["known"])
            wait_until(lambda n=lists: len(cluster.seen("serviceaccounts", watch=False)) >= n + 3)
    finally:
        stop.set()
        reader.join(5)
    assert not errors and seen[0] > 0


def test_transient_errors_back_off_then_sync(
    cluster: Any, make_cache: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="stockade.admission.inventory")
    cluster.fail_next("namespaces", 500, 500, 503)
    cache = make_cache()
    cache.start()
    assert cache.wait_synced(30)
    lists = cluster.seen("namespaces", watch=False)
    assert [r.status for r in lists] == [500, 500, 503, 200]
    gaps = [b.at - a.at for a, b in itertools.pairwise(lists)]
    assert gaps[0] >= 0.05 * 0.8 and gaps[1] >= 0.1 * 0.8 and gaps[2] >= 0.2 * 0.8  # exponential
    failures = [r for r in caplog.records if r.getMessage() == "inventory request failed, retrying"]
    assert len(failures) == 3 and getattr(failures[0], "error", "").startswith("HTTP 500")

    # A failing re-watch is retried from the same resourceVersion, without a relist.
    wait_until(lambda: cluster.watching("namespaces"))
    cluster.fail_next("namespaces", 500)
    cluster.end_watches("namespaces")
    wait_until(lambda: cluster.watching("namespaces") and len(cluster.seen("namespaces", watch=True)) == 3)
    cluster.put("namespaces", namespace("team-z"))
    wait_until(lambda: cache.namespace("team-z")["known"])
    assert len(cluster.seen("namespaces", watch=False)) == 4
    assert TOKEN not in caplog.text
    assert all(TOKEN not in str(r.__dict__) for r in caplog.records)


def test_stop_is_prompt_with_open_watches(cluster: Any, make_cache: Any) -> None:
    cache = make_cache(watch_timeout_seconds=300)
    cache.start()
    assert cache.wait_synced(30)
    wait_until(lambda: cluster.watching("namespaces") and cluster.watching("serviceaccounts"))
    cache.stop(timeout=60)  # the open watches (300 s) are cut: the threads end within the stop
    assert not any(t.is_alive() for t in _threads(cache))
    wait_until(lambda: not cluster.watching("namespaces") and not cluster.watching("serviceaccounts"))


def test_stop_is_prompt_over_tls(
    fake_apiserver_module: Any, tls: tuple[ssl.SSLContext, Path], make_cache: Any
) -> None:
    """API servers speak TLS: stop() must also cut a read blocked inside the TLS layer."""
    context, ca_file = tls
    server = fake_apiserver_module.FakeApiServer(ssl_context=context).start()
    try:
        server.put("namespaces", namespace("team-a", tier="gpu"))
        configuration = k8s_client.Configuration(host=server.url)
        configuration.ssl_ca_cert = str(ca_file)
        api = k8s_client.ApiClient(configuration)
        cache = make_cache(api=api, watch_timeout_seconds=300)
        cache.start()
        assert cache.wait_synced(30)
        assert server.url.startswith("https://") and cache.namespace("team-a")["labels"] == {"tier": "gpu"}
        wait_until(lambda: server.watching("namespaces") and server.watching("serviceaccounts"))
        server.put("namespaces", namespace("team-a", tier="cpu"))
        wait_until(lambda: cache.namespace("team-a")["labels"] == {"tier": "cpu"})
        cache.stop(timeout=60)  # the read blocked in TLS (a 300 s watch) is cut
        assert not any(t.is_alive() for t in _threads(cache))
        api.close()
    finally:
        server.stop()


def test_stop_is_prompt_while_backing_off(fake_apiserver: Any, make_cache: Any) -> None:
    fake_apiserver.fail_next("namespaces", *[500] * 50)
    cache = make_cache(backoff_initial_seconds=300, backoff_max_seconds=600)
    cache.start()
    wait_until(lambda: fake_apiserver.seen("namespaces"))
    cache.stop(timeout=60)  # the back-off wait (300 s) is woken: the threads end within the stop
    assert not any(t.is_alive() for t in _threads(cache))
    assert not cache.synced


def test_age_grows_while_the_api_server_is_unreachable(fake_apiserver: Any, make_cache: Any) -> None:
    fake_apiserver.fail_next("namespaces", *[500] * 50)
    cache = make_cache()
    cache.start()
    time.sleep(0.3)
    assert cache.age_seconds() >= 0.25 and not cache.synced


def test_non_core_kinds_are_listed_through_their_group(
    fake_apiserver_module: Any, monkeypatch: pytest.MonkeyPatch, make_cache: Any
) -> None:
    """Later issues watch NetworkPolicies, RuntimeClasses, RBAC...: /apis/{group}/{version}/{plural}."""
    indexed = INDEXED_KINDS | {"RuntimeClass"}
    monkeypatch.setattr(inventory_module, "INDEXED_KINDS", indexed)
    monkeypatch.setattr("stockade.admission.inventory.WATCHED_KINDS", WATCHED_KINDS | indexed)
    kinds = {"runtimeclasses": ("RuntimeClass", "node.k8s.io/v1")}
    server = fake_apiserver_module.FakeApiServer(kinds).start()
    try:
        server.put("runtimeclasses", {"metadata": {"name": "gvisor"}, "handler": "runsc"})
        api = k8s_client.ApiClient(k8s_client.Configuration(host=server.url))
        cache = make_cache(api=api, kinds=[WATCHABLE["RuntimeClass"]])
        cache.start()
        assert cache.wait_synced(30)
        assert not cache.inventory.complete  # Namespaces and ServiceAccounts are not watched
        stored = cache.inventory.get("RuntimeClass", None, "gvisor")
        assert stored is not None and stored["handler"] == "runsc"
        assert stored["apiVersion"] == "node.k8s.io/v1"
        wait_until(lambda: server.watching("runtimeclasses"))
        server.put("runtimeclasses", {"metadata": {"name": "kata"}, "handler": "kata-qemu"})
        wait_until(lambda: cache.inventory.get("RuntimeClass", None, "kata") is not None)
        cache.stop()
        api.close()
    finally:
        server.stop()


def test_from_kubeconfig_context(fake_apiserver: Any, tmp_path: Path) -> None:
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "fake", "cluster": {"server": fake_apiserver.url}}],
        "users": [{"name": "u", "user": {"token": TOKEN}}],
        "contexts": [
            {"name": "other", "context": {"cluster": "fake", "user": "nobody"}},
            {"name": "fake", "context": {"cluster": "fake", "user": "u"}},
        ],
        "current-context": "other",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig))
    before = path.read_text()
    fake_apiserver.put("namespaces", namespace("team-a"))
    with InventoryCache.from_kubeconfig(str(path), "fake", backoff_initial_seconds=0.05) as cache:
        assert cache.wait_synced(30)
        assert cache.namespace("team-a")["known"]
    assert all(r.authorized for r in fake_apiserver.requests)
    assert path.read_text() == before


def test_in_cluster_configuration(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text(TOKEN)
    ca.write_text("not read until a request is made")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(ca))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    default_host = k8s_client.Configuration.get_default_copy().host
    cache = InventoryCache.in_cluster()
    configuration = cache.api_client.configuration
    assert configuration.host == "https://10.0.0.1:443"
    assert configuration.get_api_key_with_prefix("BearerToken").endswith(TOKEN)
    assert k8s_client.Configuration.get_default_copy().host == default_host  # process default untouched
    cache.stop()  # never started: returns at once


def _threads(cache: InventoryCache) -> list[Any]:
    return [s.thread for s in cache._states if s.thread is not None]


def test_custom_kinds_not_installed_are_synced_and_empty(cluster: Any, make_cache: Any) -> None:
    """Cilium and Calico CRDs absent (the fake answers 404): the cache is still ready and complete,
    since nothing of those kinds can exist, and it keeps looking for the CRDs."""
    cache = make_cache(not_installed_recheck_seconds=0.1)
    cache.start()
    assert cache.wait_synced(30) and cache.inventory.complete
    wait_until(lambda: len(cluster.seen("ciliumnetworkpolicies", watch=False)) >= 2)
    assert {s.status for s in cluster.seen("ciliumnetworkpolicies")} == {404}


def test_a_crd_installed_later_is_picked_up(fake_apiserver_module: Any, make_cache: Any) -> None:
    """A cluster gets Cilium after the webhook started: the first LIST is a 404 (not installed), the
    recheck finds the CRD, and the workload its policy selects becomes isolated for egress."""
    kinds = {
        **fake_apiserver_module.CORE_KINDS,
        "ciliumnetworkpolicies": ("CiliumNetworkPolicy", "cilium.io/v2"),
    }
    server = fake_apiserver_module.FakeApiServer(kinds).start()
    try:
        server.put("namespaces", namespace("ml"))
        server.fail_next("ciliumnetworkpolicies", 404)
        api = k8s_client.ApiClient(k8s_client.Configuration(host=server.url))
        cache = make_cache(api=api, not_installed_recheck_seconds=0.2)
        cache.start()
        assert cache.wait_synced(30) and cache.inventory.complete
        workload = {
            **pod("ml", "default"),
            "metadata": {"name": "w", "namespace": "ml", "labels": {"app": "w"}},
        }
        assert cache.facts(workload)["egress"]["isolated"] is False
        server.put(
            "ciliumnetworkpolicies",
            {
                "metadata": {"name": "deny", "namespace": "ml"},
                "spec": {"endpointSelector": {}, "egress": [{"toEndpoints": [{}]}]},
            },
        )
        wait_until(lambda: cache.facts(workload)["egress"]["isolated"] is True)
        assert cache.facts(workload)["egress"]["policies"] == ["ml/deny"]
        cache.stop()
        api.close()
    finally:
        server.stop()
