"""The webhook end to end: a real uvicorn HTTPS server on 127.0.0.1 with a throwaway CA, a real
HTTPS client (httpx) sending AdmissionReview v1 bodies built from the examples.

Also: the admission path decides exactly what `stockade scan` decides for every example object, and
no request body, however malformed, produces a 500 or an unhandled exception (hypothesis).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import ssl
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from stockade.admission.app import BadRequest, WebhookState, create_app, parse_review
from stockade.admission.decide import evaluate
from stockade.admission.review import AdmissionReview
from stockade.admission.server import bind
from stockade.policies.config.settings import load_config, parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.model import Resource
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.files import FileSource
from tests.tls_webhook import CA, Server

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


PRIVILEGED_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "bad"},
    "spec": {"containers": [{"name": "app", "image": "x", "securityContext": {"privileged": True}}]},
}


def review(obj: dict[str, Any] | None, operation: str = "CREATE", **extra: Any) -> dict[str, Any]:
    kind = (obj or {}).get("kind", "Pod")
    request = {
        "uid": str(uuid.uuid4()),
        "kind": {"group": "", "version": "v1", "kind": kind},
        "resource": {"group": "", "version": "v1", "resource": kind.lower() + "s"},
        "namespace": "ml",
        "name": (obj or {}).get("metadata", {}).get("name", ""),
        "operation": operation,
        "userInfo": {"username": "alice", "groups": ["dev"]},
        "object": obj,
        **extra,
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


@pytest.fixture
def pki(tmp_path: Path) -> tuple[CA, Path, Path, Path]:
    ca = CA()
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    ca.issue(cert, key)
    return ca, ca.write_ca(tmp_path / "ca.crt"), cert, key


@pytest.fixture
def server(pki: tuple[CA, Path, Path, Path], tmp_path: Path) -> Iterator[tuple[Server, httpx.Client]]:
    _, ca_file, cert, key = pki
    config_path = tmp_path / "stockade.yaml"
    config_path.write_text("rules:\n  STK-IMG-002: {action: warn}\n  STK-RES-001: {action: audit}\n")
    cfg = load_config(config_path)
    state = WebhookState(config=cfg, config_path=config_path)
    srv = Server(state, cert, key)
    client = httpx.Client(
        base_url=f"https://127.0.0.1:{srv.port}", verify=ssl.create_default_context(cafile=str(ca_file))
    )
    try:
        yield srv, client
    finally:
        client.close()
        srv.stop()


def test_privileged_pod_is_denied_with_every_rule_listed(server: tuple[Server, httpx.Client]) -> None:
    _, client = server
    body = review(PRIVILEGED_POD)
    r = client.post("/validate", json=body)
    assert r.status_code == 200
    out = r.json()
    assert out["apiVersion"] == "admission.k8s.io/v1" and out["kind"] == "AdmissionReview"
    resp = out["response"]
    assert resp["uid"] == body["request"]["uid"]
    assert resp["allowed"] is False and resp["status"]["code"] == 403
    message = resp["status"]["message"]
    # the restricted-profile gaps of the privileged container are named in its line (one per problem)
    assert re.search(
        r'STK-POD-003: container "app" is privileged '
        r"\(also fails STK-POD-102, [^)]*folded into this finding\) "
        r"\(spec\.containers\[0\]\.securityContext\.privileged\)",
        message,
    )
    assert len(set(re.findall(r"STK-[A-Z]+-\d+", message))) >= 2  # every denying rule, not just the first
    assert any(w.startswith("STK-IMG-002: ") for w in resp["warnings"])  # warn -> warnings
    assert "stk-res-001" in resp["auditAnnotations"]  # audit -> audit annotations


def test_delete_connect_and_status_subresource_are_allowed(server: tuple[Server, httpx.Client]) -> None:
    _, client = server
    for body in (
        review(None, "DELETE", oldObject=PRIVILEGED_POD),
        review(None, "CONNECT"),
        review(PRIVILEGED_POD, "UPDATE", subResource="status"),
    ):
        resp = client.post("/validate", json=body).json()["response"]
        assert resp == {"uid": body["request"]["uid"], "allowed": True}


def test_ephemeral_container_update_is_judged(server: tuple[Server, httpx.Client]) -> None:
    _, client = server
    resp = client.post("/validate", json=review(PRIVILEGED_POD, "UPDATE", subResource="ephemeralcontainers"))
    assert resp.json()["response"]["allowed"] is False


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"{not json", "invalid JSON"),
        (b"[]", "expected an AdmissionReview object"),
        (
            json.dumps({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview"}).encode(),
            "apiVersion",
        ),
        (json.dumps(review(PRIVILEGED_POD, "PATCH")).encode(), "request.operation"),
    ],
)
def test_malformed_bodies_get_400(server: tuple[Server, httpx.Client], body: bytes, expected: str) -> None:
    _, client = server
    r = client.post("/validate", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert expected in r.json()["error"]


def test_oversized_body_gets_400(server: tuple[Server, httpx.Client]) -> None:
    _, client = server
    big = review({**PRIVILEGED_POD, "metadata": {"name": "x", "annotations": {"a": "x" * (4 * 1024 * 1024)}}})
    r = client.post("/validate", json=big)
    assert r.status_code == 400 and "exceeds the limit" in r.json()["error"]


def test_health_ready_metrics(server: tuple[Server, httpx.Client]) -> None:
    _, client = server
    client.post("/validate", json=review(PRIVILEGED_POD))
    assert client.get("/healthz").text == "ok"
    assert client.get("/readyz").status_code == 200
    metrics = client.get("/metrics").text
    assert 'stockade_admission_requests_total{decision="denied",kind="Pod",operation="CREATE"} 1.0' in metrics
    assert "stockade_rule_evaluation_seconds_count 1.0" in metrics


def test_tls_below_1_2_is_refused(
    server: tuple[Server, httpx.Client], pki: tuple[CA, Path, Path, Path]
) -> None:
    srv, _ = server
    ctx = ssl.create_default_context(cafile=str(pki[1]))
    ctx.minimum_version = ssl.TLSVersion.TLSv1
    ctx.maximum_version = ssl.TLSVersion.TLSv1_1
    with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as raw, pytest.raises(ssl.SSLError):
        ctx.wrap_socket(raw, server_hostname="127.0.0.1")


def _served_serial(port: int, ca_file: Path) -> int:
    ctx = ssl.create_default_context(cafile=str(ca_file))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


def test_certificate_rotation_without_restart(
    server: tuple[Server, httpx.Client], pki: tuple[CA, Path, Path, Path]
) -> None:
    srv, client = server
    ca, ca_file, cert, key = pki
    before = _served_serial(srv.port, ca_file)
    time.sleep(0.05)
    new_serial = ca.issue(cert, key)
    deadline = time.monotonic() + 10
    while _served_serial(srv.port, ca_file) != new_serial:
        assert time.monotonic() < deadline, "rotated certificate was not picked up"
        time.sleep(0.1)
    assert new_serial != before
    assert client.post("/validate", json=review(PRIVILEGED_POD)).status_code == 200


def test_config_hot_reload_rejects_broken_config(server: tuple[Server, httpx.Client], tmp_path: Path) -> None:
    _, client = server
    config_path = tmp_path / "stockade.yaml"
    # Broken: rejected, the old config stays. The watcher's first look at the file is its starting
    # point (a loaded machine may run it late), so the file is written again until a rejection counts.
    deadline = time.monotonic() + 60
    while rejected_reloads(client) < 1:
        assert time.monotonic() < deadline, "the broken config was not rejected"
        config_path.write_text("rules: [this is: not valid\n")
        time.sleep(1)
    resp = client.post("/validate", json=review(PRIVILEGED_POD)).json()["response"]
    assert any(w.startswith("STK-IMG-002") for w in resp["warnings"])
    config_path.write_text("rules:\n  STK-POD-003: {action: warn}\n")
    while True:
        resp = client.post("/validate", json=review(PRIVILEGED_POD)).json()["response"]
        if any(w.startswith("STK-POD-003") for w in resp.get("warnings", [])):
            break
        assert time.monotonic() < deadline, "new config was not applied"
        time.sleep(0.1)
    assert rejected_reloads(client) >= 1


def rejected_reloads(client: Any) -> float:
    """stockade_config_reloads_total{result="rejected"} (0 before the first)."""
    found = re.search(
        r'^stockade_config_reloads_total\{result="rejected"\} (\S+)$', client.get("/metrics").text, re.M
    )
    return float(found.group(1)) if found else 0.0


def test_internal_error_fails_closed_or_open(tmp_path: Path) -> None:
    class Broken:
        def namespace(self, name: str | None) -> dict[str, Any]:
            raise RuntimeError("cache exploded")

        def facts(self, obj: Any) -> dict[str, Any]:
            return {}

    for mode, allowed in (("closed", False), ("open", True)):
        cfg = parse_config(f"admission: {{failure_mode: {mode}}}\n")
        state = WebhookState(config=cfg, facts=Broken())
        with TestClient(create_app(state)) as client:
            resp = client.post("/validate", json=review(PRIVILEGED_POD)).json()["response"]
        assert resp["allowed"] is allowed
        text = resp["status"]["message"] if not allowed else resp["warnings"][0]
        # the exception's type, never its message (messages can quote the object's values)
        assert "internal error: RuntimeError" in text and "exploded" not in text


def test_evaluation_timeout_fails_closed() -> None:
    cfg = parse_config("admission: {evaluation_timeout_seconds: 0.05}\n")
    state = WebhookState(config=cfg)
    with TestClient(create_app(state)) as client:
        state.executor.submit(time.sleep, 0.5)  # the engine thread is busy
        resp = client.post("/validate", json=review(PRIVILEGED_POD)).json()["response"]
    assert resp["allowed"] is False and "exceeded 0.05 s" in resp["status"]["message"]


@pytest.mark.parametrize("isolated", [False, True], ids=["in-process", "engine-process"])
def test_admission_decides_exactly_what_scan_decides(isolated: bool) -> None:
    """Every example object: the same findings (rule, action, waived) through both gates, with the
    engine in this process and in the child process `webhook serve` uses."""
    config = load_config(EXAMPLES / "stockade.yaml")
    files = FileSource([str(EXAMPLES / "manifests")], exclude=["broken"])
    scanned = run_scan(files, [], Evaluator.default(config), ScanOptions(config), version="t")
    by_object: dict[tuple[str, str | None, str], set[tuple[str, str, bool]]] = defaultdict(set)
    for f in scanned.findings:
        by_object[(f.resource.kind, f.resource.namespace, f.resource.name)].add(
            (f.rule.id, f.action.value, f.waived)
        )
    resources = [
        r for r in FileSource([str(EXAMPLES / "manifests")], exclude=["broken"]) if isinstance(r, Resource)
    ]
    facts = InventoryFacts(inventory_of(r.obj for r in resources))
    # no evaluation deadline at play (the default 2 s can pass on a loaded machine)
    admission = config.admission.model_copy(update={"evaluation_timeout_seconds": 60.0})
    evaluator = Evaluator.default(config.model_copy(update={"admission": admission}), isolated=isolated)
    compared = 0
    for r in resources:
        body = review(r.obj)
        body["request"]["namespace"] = r.namespace or ""
        got = {
            (f.rule.id, f.action.value, f.waived)
            for f in evaluate(AdmissionReview.model_validate(body).request, evaluator, facts)
        }
        assert got == by_object.get((r.kind, r.namespace, r.name), set()), (r.kind, r.namespace, r.name)
        compared += 1
    assert compared == scanned.resources
    if isolated:
        evaluator.engine.close()  # type: ignore[attr-defined]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


def _mutations() -> st.SearchStrategy[Any]:
    base = review(PRIVILEGED_POD)
    keys = st.sampled_from(["apiVersion", "kind", "request"])
    req_keys = st.sampled_from(
        ["uid", "kind", "resource", "operation", "object", "oldObject", "userInfo", "dryRun", "subResource"]
    )
    return st.one_of(
        json_values,
        st.builds(lambda k, v: {**base, k: v}, keys, json_values),
        st.builds(lambda k, v: {**base, "request": {**base["request"], k: v}}, req_keys, json_values),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200) | _mutations().map(lambda v: json.dumps(v).encode()))
def test_parser_never_raises_anything_but_bad_request(body: bytes) -> None:
    with contextlib.suppress(BadRequest):
        parse_review(body)


@pytest.fixture(scope="module")
def fuzz_client() -> Iterator[TestClient]:
    with TestClient(
        create_app(WebhookState(config=load_config(None))), raise_server_exceptions=True
    ) as client:
        yield client


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(body=_mutations().map(lambda v: json.dumps(v).encode()))
def test_no_body_produces_a_500(fuzz_client: TestClient, body: bytes) -> None:
    r = fuzz_client.post("/validate", content=body, headers={"content-type": "application/json"})
    assert r.status_code in (200, 400)
    if r.status_code == 200:
        assert isinstance(r.json()["response"]["allowed"], bool)


def test_structured_log_line_per_request(caplog: pytest.LogCaptureFixture) -> None:
    """With INFO logging on (as `webhook serve` runs), every request logs one JSON line with its uid."""
    import logging

    from stockade.admission.app import JSONLogFormatter

    caplog.set_level(logging.INFO, logger="stockade.admission")
    body = review(PRIVILEGED_POD)
    with TestClient(create_app(WebhookState(config=load_config(None)))) as client:
        assert client.post("/validate", json=body).status_code == 200
    (record,) = [r for r in caplog.records if r.getMessage() == "admission"]
    line = json.loads(JSONLogFormatter().format(record))
    assert line["uid"] == body["request"]["uid"] and line["allowed"] is False and line["object_name"] == "bad"


def test_the_request_line_written_directly_is_the_formatters() -> None:
    """`webhook serve` hands the app its JSON handler, and each request's line is written to it
    directly (RequestLog): the same line, field for field, as the handler's formatter writes for the
    record `logging` would make; nothing when INFO is off; a failing stream never fails the request."""
    import io
    import logging

    from stockade.admission.app import JSONLogFormatter, RequestLog

    logger = logging.getLogger("stockade.test.requestlog")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JSONLogFormatter())
    logger.handlers[:] = [handler]
    fields = {"uid": "u-1", "kind": "Pod", "namespace": None, "allowed": False, "ms": 1.5, "path": Path("/x")}
    try:
        RequestLog(logger, handler).info("admission", fields)  # direct
        RequestLog(logger, None).info("admission", fields)  # through logging
        direct, through = (json.loads(line) for line in out.getvalue().splitlines())
        assert list(direct) == list(through)  # the same fields in the same order
        assert {k: v for k, v in direct.items() if k != "time"} == {
            k: v for k, v in through.items() if k != "time"
        }
        assert direct["path"] == "/x" and direct["process"] == os.getpid() and direct["level"] == "info"

        logger.setLevel(logging.WARNING)
        RequestLog(logger, handler).info("admission", fields)
        assert len(out.getvalue().splitlines()) == 2

        logger.setLevel(logging.INFO)
        out.close()  # a write now raises ValueError: logging's handleError reports it, nothing raises
        raised = logging.raiseExceptions
        logging.raiseExceptions = False
        try:
            RequestLog(logger, handler).info("admission", fields)
        finally:
            logging.raiseExceptions = raised
    finally:
        logger.handlers.clear()


def test_policy_dir_hot_reload(tmp_path: Path) -> None:
    """A new rule dropped into --policy-dir is enforced without a restart; a broken one is rejected."""
    rule = tmp_path / "rules" / "no_bad_name.rego"
    rule.parent.mkdir()
    state = WebhookState(config=load_config(None), policy_dirs=(rule.parent,))
    with TestClient(create_app(state, reload_interval=0.1)) as client:

        def message() -> str:
            resp = client.post("/validate", json=review(PRIVILEGED_POD)).json()["response"]
            return str(resp.get("status", {}).get("message", ""))

        assert "STK-TST-001" not in message()
        # The watcher's first look is its starting point (a loaded machine may run it late): the
        # rule is written again (a new mtime) until it is enforced.
        deadline = time.monotonic() + 60
        while "STK-TST-001: name bad" not in message():
            assert time.monotonic() < deadline, "new rule not loaded"
            rule.write_text(
                "# METADATA\n# title: t\n# custom:\n#   id: STK-TST-001\n#   severity: low\n"
                "#   kinds: [Pod]\npackage custom.no_bad_name\nimport rego.v1\n"
                'deny contains {"msg": "name bad"} if input.object.metadata.name == "bad"\n'
            )
            time.sleep(0.5)
        rule.write_text("package custom.no_bad_name\ndeny contains 1 if {\n")  # syntax error: rejected
        while rejected_reloads(client) < 1:  # the watcher is running: one write is seen
            assert time.monotonic() < deadline, "the broken rule was not rejected"
            time.sleep(0.05)
        assert "STK-TST-001: name bad" in message()
        assert rejected_reloads(client) == 1


def test_cli_serves_with_two_workers_and_stops_gracefully(pki: tuple[CA, Path, Path, Path]) -> None:
    """`stockade webhook serve --workers 2`: both processes answer; SIGTERM stops all of them cleanly."""
    import signal
    import subprocess
    import sys

    _, ca_file, cert, key = pki
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    stockade = Path(sys.executable).parent / "stockade"
    cmd = [str(stockade), "webhook", "serve", "--tls-cert", str(cert), "--tls-key", str(key)]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--workers", "2", "--no-inventory"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        verify = ssl.create_default_context(cafile=str(ca_file))
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"https://127.0.0.1:{port}/healthz", verify=verify, timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
                time.sleep(0.2)
        # Fresh connections spread over the workers sharing the socket. A loaded machine may start the
        # second worker late, so keep sending (bounded) until both have answered, reading the JSON
        # request logs as they come.
        assert proc.stderr is not None
        log: list[str] = []
        reader = threading.Thread(target=lambda: log.extend(iter(proc.stderr.readline, "")), daemon=True)  # type: ignore[union-attr]
        reader.start()

        def served_by() -> set[Any]:
            lines = [json.loads(ln) for ln in list(log) if ln.startswith("{") and '"msg":"admission"' in ln]
            return {ln["process"] for ln in lines}

        sent = 0
        deadline = time.monotonic() + 60
        while sent < 40 or (len(served_by()) < 2 and time.monotonic() < deadline and sent < 2000):
            with httpx.Client(verify=verify) as client:
                r = client.post(f"https://127.0.0.1:{port}/validate", json=review(PRIVILEGED_POD))
            assert r.status_code == 200 and r.json()["response"]["allowed"] is False
            sent += 1
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    reader.join(timeout=10)
    err = "".join(log)
    assert proc.returncode == 0, err[-2000:]
    lines = [json.loads(ln) for ln in err.splitlines() if ln.startswith("{") and '"msg":"admission"' in ln]
    assert len(lines) == sent
    assert len({ln["process"] for ln in lines}) == 2, "both worker processes served requests"


def test_accepted_connections_use_tcp_nodelay() -> None:
    """Without TCP_NODELAY, responses can wait ~40 ms on delayed ACKs (found by bench/webhook.py)."""
    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP  # asyncio only sets TCP_NODELAY for IPPROTO_TCP sockets
    finally:
        sock.close()


def test_an_update_that_changes_nothing_judged_is_allowed(server: tuple[Server, httpx.Client]) -> None:
    """Argo Workflows' controller writes a Workflow's status through the Workflow itself at every step
    (its CRD has no status subresource): each write was a full evaluation, and a workflow that violates
    a deny rule (created before the webhook was installed) could never progress. An UPDATE whose
    object differs from the old one only in status and the metadata the API server maintains is
    allowed without evaluation; one that changes anything else (an annotation, the spec) is judged."""
    _, client = server
    old = {
        **PRIVILEGED_POD,
        "metadata": {"name": "bad", "resourceVersion": "1", "generation": 1, "managedFields": []},
        "status": {"phase": "Pending"},
    }
    new = {
        **PRIVILEGED_POD,
        "metadata": {
            "name": "bad",
            "resourceVersion": "2",
            "generation": 2,
            "managedFields": [{"manager": "x"}],
        },
        "status": {"phase": "Running"},
    }
    body = review(new, "UPDATE", oldObject=old)
    assert client.post("/validate", json=body).json()["response"] == {
        "uid": body["request"]["uid"],
        "allowed": True,
    }
    annotated = {**new, "metadata": {**new["metadata"], "annotations": {"note": "x"}}}
    assert (
        client.post("/validate", json=review(annotated, "UPDATE", oldObject=old)).json()["response"][
            "allowed"
        ]
        is False
    )
    # a CREATE and an UPDATE without its old object are judged whatever they hold
    assert client.post("/validate", json=review(new)).json()["response"]["allowed"] is False
    assert client.post("/validate", json=review(new, "UPDATE")).json()["response"]["allowed"] is False
