"""`stockade audit --in-cluster NAME` (the audit CronJob) and its Prometheus counts.

The cluster is examples/fleet/apiserver.py's fake API server, served here over TLS on 127.0.0.1 with a
throwaway CA (a real API server speaks only HTTPS, and the in-cluster configuration requires it); the
real `kubernetes` client reads it through its own in-cluster loader, pointed by the environment and its
token and CA file locations at the fake, as a pod's mounted ServiceAccount would. The Pushgateway is a
plain HTTP server on loopback that records what is pushed (PUT, the text exposition format).
"""

from __future__ import annotations

import http.server
import json
import ssl
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes.config import incluster_config
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from stockade.cli.main import app
from tests.fleet import fake
from tests.tls_webhook import CA

CLUSTER = "gpu-east"
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "trainer", "namespace": "ml"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "trainer"}},
        "template": {
            "metadata": {"labels": {"app": "trainer"}},
            "spec": {
                "containers": [
                    {"name": "t", "image": "trainer:latest", "securityContext": {"privileged": True}}
                ]
            },
        },
    },
}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}


class _Gateway(http.server.BaseHTTPRequestHandler):
    pushed: list[tuple[str, str, str]]

    def do_PUT(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        type(self).pushed.append((self.command, self.path, body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture()
def gateway() -> Iterator[tuple[str, list[tuple[str, str, str]]]]:
    handler = type("Gateway", (_Gateway,), {"pushed": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.pushed
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def in_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The fake cluster over TLS, and the environment and files a pod's ServiceAccount gives."""
    ca = CA()
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    ca.issue(cert, key)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    served = fake.ServedCluster(fake.FakeCluster.from_objects(CLUSTER, [NAMESPACE, DEPLOYMENT], nodes=1))
    served.httpd.socket = context.wrap_socket(served.httpd.socket, server_side=True)
    token = tmp_path / "token"
    token.write_text(fake.TOKEN)
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(ca.write_ca(tmp_path / "ca.crt")))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(served.httpd.server_address[1]))
    with served:
        yield


def _samples(text: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                out[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def test_in_cluster_audit_pushes_and_writes_its_counts(
    in_pod: None, gateway: tuple[str, list[tuple[str, str, str]]], tmp_path: Path
) -> None:
    url, pushed = gateway
    textfile = tmp_path / "stockade.prom"
    result = CliRunner().invoke(
        app,
        [
            "audit", "--in-cluster", CLUSTER, "--format", "json", "--fail-on", "never",
            "--push-metrics", url, "--metrics-file", str(textfile),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [c["name"] for c in report["clusters"]] == [CLUSTER]
    expected = Counter(
        (f["rule"]["id"], f["rule"]["severity"], f["action"])
        for f in report["findings"]
        if not f.get("exception")
    )
    assert expected, "the privileged trainer gives findings"

    ((method, path, body),) = pushed
    assert method == "PUT" and path == f"/metrics/job/stockade_audit/cluster/{CLUSTER}"
    for text in (body, textfile.read_text()):
        counts = _samples(text, "stockade_audit_findings")
        assert counts == {
            (("action", a), ("cluster", CLUSTER), ("rule", r), ("severity", s)): float(n)
            for (r, s, a), n in expected.items()
        }
        assert _samples(text, "stockade_audit_coverage_gaps") == {(("cluster", CLUSTER),): 0.0}
        assert _samples(text, "stockade_audit_reachable") == {(("cluster", CLUSTER),): 1.0}
        assert len(_samples(text, "stockade_audit_last_success_timestamp_seconds")) == 1
        assert fake.TOKEN not in text and "trainer" not in text  # no credentials, no object names


def test_outside_a_pod_the_cluster_is_not_audited(
    gateway: tuple[str, list[tuple[str, str, str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    url, pushed = gateway
    result = CliRunner().invoke(app, ["audit", "--in-cluster", CLUSTER, "--push-metrics", url])
    assert result.exit_code == 2
    assert "cluster not audited" in result.output and "Traceback" not in result.output
    # the failed audit is pushed too: reachable 0, and no success timestamp to refresh an alert's clock
    ((_, _, body),) = pushed
    assert _samples(body, "stockade_audit_reachable") == {(("cluster", CLUSTER),): 0.0}
    assert _samples(body, "stockade_audit_last_success_timestamp_seconds") == {}


def test_an_unreachable_gateway_is_one_line_and_the_verdict_stands(in_pod: None) -> None:
    result = CliRunner().invoke(
        app, ["audit", "--in-cluster", CLUSTER, "--fail-on", "never", "--push-metrics", "http://127.0.0.1:9"]
    )
    assert result.exit_code == 0, result.output
    assert f"stockade: {CLUSTER}: metrics not pushed:" in result.output


def test_in_cluster_excludes_kubeconfig_options() -> None:
    result = CliRunner().invoke(app, ["audit", "--in-cluster", CLUSTER, "--all-contexts"])
    assert result.exit_code == 2 and "--in-cluster audits this cluster only" in result.output
