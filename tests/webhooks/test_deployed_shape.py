"""The rendered container, run as the cluster would run it, answers as the API server expects.

`stockade webhook certs` makes the certificates, the Deployment's own command line (its `/tls` and
`/config` mounts pointed at temporary copies of the Secret's and ConfigMap's files, loopback only,
`--no-inventory` since there is no cluster) starts the server, and a client verifies the server the
way the API server does: against the caBundle of the rendered ValidatingWebhookConfiguration, for the
Service name in its clientConfig. A privileged Pod sent as an AdmissionReview must be denied.
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stockade.policies.engines.library import load_library
from stockade.webhooks.certs import ensure_certs
from stockade.webhooks.manifests import Options, covered_kinds, render


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(port: int, ca: bytes, host: str, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
    context = ssl.create_default_context(cadata=ca.decode())
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname=host) as tls,
    ):
        head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        tls.sendall(f"{head}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        data = b""
        while chunk := tls.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@pytest.fixture
def deployed(tmp_path: Path) -> Iterator[tuple[int, bytes, str]]:
    certs = tmp_path / "tls"
    options = Options()
    ensure_certs(certs, options.dns_names)
    objects = render(Options(ca_bundle=(certs / "ca.crt").read_bytes()), covered_kinds(load_library()))
    config_map = next(o for o in objects if o["kind"] == "ConfigMap")
    (tmp_path / "config").mkdir()
    for key, text in config_map["data"].items():
        (tmp_path / "config" / key).write_text(text)
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    args = [
        a.replace("/tls/", f"{certs}/").replace("/config/", f"{tmp_path}/config/") for a in container["args"]
    ]
    port = _free_port()
    stockade = str(Path(sys.executable).parent / container["command"][0])
    cmd = [stockade, *args, "--no-inventory", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    hook = next(o for o in objects if o["kind"] == "ValidatingWebhookConfiguration")["webhooks"][0]
    service = hook["clientConfig"]["service"]
    host = f"{service['name']}.{service['namespace']}.svc"  # what the API server dials and verifies
    ca = base64.b64decode(hook["clientConfig"]["caBundle"])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if _request(port, ca, host, "GET", "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None, "the server exited"
            assert time.monotonic() < deadline, "the server did not become ready"
            time.sleep(0.1)
        yield port, ca, host
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # never left behind (tests/leftovers.py would fail the run)
            proc.kill()
            proc.wait(timeout=60)


def test_the_rendered_container_serves_what_the_api_server_expects(deployed: tuple[int, bytes, str]) -> None:
    port, ca, host = deployed
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "team-a"},
        "spec": {"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": True}}]},
    }
    uid = str(uuid.uuid4())
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "name": "p",
            "namespace": "team-a",
            "operation": "CREATE",
            "userInfo": {"username": "alice"},
            "object": pod,
            "dryRun": False,
        },
    }
    status, body = _request(port, ca, host, "POST", "/validate", json.dumps(review).encode())
    assert status == 200
    response = json.loads(body)["response"]
    assert response["uid"] == uid and response["allowed"] is False
    assert "STK-POD-003" in response["status"]["message"]  # privileged
