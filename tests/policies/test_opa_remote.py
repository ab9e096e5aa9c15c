"""`--engine opa --opa-url URL`: the remote engine against an OPA Data API on 127.0.0.1.

Contract test. The server here is our own (stdlib `http.server`), implementing the part of OPA's
REST API that RemoteOpaEngine uses, as OPA documents it:

- `POST /v1/data/<path>` with `{"input": …}` answers `{"result": <document>}`, or `{}` when the
  document is undefined;
- `GET /health` answers 200.

Behind it is OPA's own Go engine (opa-golib-python-bindings), loaded from the bundle that
`stockade policy bundle` writes, so the answers are real OPA's. When an `opa` binary is on PATH, the
same scan also runs against `opa run --server` serving that bundle.
"""

from __future__ import annotations

import importlib.util
import io
import json
import shutil
import socket
import subprocess
import tarfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stockade.cli.main import app
from tests.reviews import admission_review

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("opa_bindings") is None,
    reason="opa-golib-python-bindings is not installed (make install adds it)",
)

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "examples" / "stockade.yaml"
MANIFESTS = ROOT / "examples" / "manifests"

NO_LATEST = """\
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata: {name: nolatest}
spec:
  crd: {spec: {names: {kind: NoLatest}}}
  targets:
    - target: admission.k8s.gatekeeper.sh
      rego: |
        package nolatest

        import rego.v1

        violation contains {"msg": sprintf("container %s uses %s", [c.name, c.image])} if {
          some c in input.review.object.spec.containers
          endswith(c.image, ":latest")
        }
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: NoLatest
metadata: {name: pods}
spec:
  match:
    kinds: [{apiGroups: [""], kinds: [Pod]}]
"""


class _DataApi(BaseHTTPRequestHandler):
    engine: Any = None
    requests: list[str] = []

    def log_message(self, *_: Any) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(200, {}) if self.path == "/health" else self._send(404, {"code": "not_found"})

    def do_POST(self) -> None:
        from opa_bindings.engine import OpaUndefinedError

        if not self.path.startswith("/v1/data/"):
            self._send(404, {"code": "not_found"})
            return
        self.requests.append(self.path)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        path = self.path.removeprefix("/v1/data/").split("?")[0].replace("/", ".")
        try:
            self._send(200, {"result": self.engine.eval_document(path, body.get("input"))})
        except OpaUndefinedError:
            self._send(200, {})


def _engine_from_bundle(bundle: bytes) -> Any:
    from opa_bindings.engine import OpaEngine

    engine = OpaEngine()
    with tarfile.open(fileobj=io.BytesIO(bundle), mode="r:gz") as tar:
        for member in tar.getmembers():
            content = tar.extractfile(member)
            assert content is not None
            text = content.read().decode()
            if member.name.endswith(".rego"):
                engine.add_policy(member.name, text)
            elif member.name.endswith("data.json"):
                engine.add_data(json.loads(text), member.name.rsplit("/", 1)[0].replace("/", "."))
    return engine


def _bundle(tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "bundle.tar.gz"
    args = ["policy", "bundle", "-o", str(out), "--config", str(CONFIG)]
    for d in extra:
        args += ["--policy-dir", d]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def opa_server(tmp_path: Path) -> Iterator[tuple[str, type[_DataApi], Path]]:
    policy_dir = tmp_path / "gk"
    policy_dir.mkdir()
    (policy_dir / "nolatest.yaml").write_text(NO_LATEST)
    bundle = _bundle(tmp_path, str(policy_dir))
    handler = type(
        "Handler", (_DataApi,), {"engine": _engine_from_bundle(bundle.read_bytes()), "requests": []}
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler, policy_dir
    finally:
        server.shutdown()
        server.server_close()


def _findings(args: list[str]) -> tuple[int, set[tuple[str, str, str, str]]]:
    result = CliRunner().invoke(app, ["scan", *args, "-f", "json"])
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(result.stdout)
    return result.exit_code, {
        (f["rule"]["id"], f"{f['resource']['kind']}/{f['resource']['name']}", f["message"], f["action"])
        for f in doc["findings"]
    }


def test_remote_engine_gives_the_embedded_verdicts(
    opa_server: tuple[str, type[_DataApi], Path], tmp_path: Path
) -> None:
    url, handler, policy_dir = opa_server
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
        "spec: {containers: [{name: c, image: 'nginx:latest'}]}\n"
    )
    common = [
        str(MANIFESTS),
        str(pod),
        "--exclude",
        "broken",
        "--config",
        str(CONFIG),
        "--policy-dir",
        str(policy_dir),
    ]
    code_local, local = _findings(common)
    code_remote, remote = _findings([*common, "--engine", "opa", "--opa-url", url])
    assert code_local == code_remote == 1
    assert local == remote and len(local) > 50
    assert ("GK-NoLatest-pods", "Pod/p", "container c uses nginx:latest", "deny") in remote
    assert any(p.startswith("/v1/data/stockade_agg/") for p in handler.requests)
    assert "/v1/data/nolatest/violation" in [p.split("?")[0] for p in handler.requests]
    # a builtin's error is the query's error on OPA too, as on the embedded engine (issue 36)
    assert all(p.endswith("?strict-builtin-errors=true") for p in handler.requests)


def test_unreachable_server_is_an_input_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    url = f"http://127.0.0.1:{port}"
    result = CliRunner().invoke(
        app, ["scan", str(MANIFESTS / "compliant"), "--engine", "opa", "--opa-url", url, "-f", "json"]
    )
    assert result.exit_code == 2
    errors = [e["message"] for e in json.loads(result.stdout)["errors"]]
    assert errors and all(f"OPA at {url}: POST /v1/data/stockade_agg/" in e for e in errors)
    assert all(e.endswith(": cannot connect") for e in errors)
    result = CliRunner().invoke(app, ["scan", str(MANIFESTS), "--engine", "opa"])
    assert result.exit_code == 2 and "--engine opa needs --opa-url" in result.stderr


@pytest.mark.skipif(shutil.which("opa") is None, reason="no opa binary on PATH")
def test_against_a_real_opa_server(tmp_path: Path) -> None:  # pragma: no cover - needs the binary
    bundle = _bundle(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(["opa", "run", "--server", f"--addr=127.0.0.1:{port}", "--bundle", str(bundle)])
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.1)
        common = [str(MANIFESTS), "--exclude", "broken", "--config", str(CONFIG)]
        assert _findings(common) == _findings(
            [*common, "--engine", "opa", "--opa-url", f"http://127.0.0.1:{port}"]
        )
    finally:
        proc.terminate()
        proc.wait(10)


def test_webhook_on_the_remote_engine(opa_server: tuple[str, type[_DataApi], Path]) -> None:
    """The webhook's decision through OPA equals its embedded decision for a violating pod."""
    from starlette.testclient import TestClient

    from stockade.admission.app import WebhookState, create_app
    from stockade.policies.config.settings import load_config

    url, handler, policy_dir = opa_server
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"hostNetwork": True, "containers": [{"name": "c", "image": "nginx:latest"}]},
    }
    review = admission_review(pod, "default")
    answers = []
    for opa_url in (None, url):
        state = WebhookState(config=load_config(CONFIG), policy_dirs=(policy_dir,), opa_url=opa_url)
        with TestClient(create_app(state)) as client:
            answers.append(client.post("/validate", json=review).json()["response"])
    assert answers[0] == answers[1] and answers[0]["allowed"] is False
    assert "GK-NoLatest-pods" in answers[1]["status"]["message"]
    assert any(p.startswith("/v1/data/stockade_agg/k_Pod") for p in handler.requests)
