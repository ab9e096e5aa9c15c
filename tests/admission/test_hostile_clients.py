"""The webhook under hostile clients: a real uvicorn HTTPS server on 127.0.0.1 (tests/tls_webhook.py)
with small limits, raw TLS sockets that stall, and the embedded engine in its child process.

Every test is bounded by its own deadlines (no test can hang): a stalled client must be closed by
the server, and a normal request sent beside the hostile ones must be answered. No test measures how
long anything took: each asserts the outcome (closed, 408, denied with the bound's message, the
engine replaced), and the deadlines are generous (a loaded 2-core machine), far shorter than what a
wrong answer would take (the server's own timeouts in those tests are minutes long).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from stockade.admission.app import WebhookState
from stockade.admission.server import Limits
from stockade.policies.config.settings import parse_config
from stockade.policies.model import Action
from tests.reviews import admission_review
from tests.tls_webhook import Server, pki_files

LIMITS = Limits(header_timeout=0.5, handshake_timeout=0.5, max_connections=16)

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "ok", "namespace": "ml"},
    "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1"}]},
}


def privileged_pod(containers: int) -> dict[str, Any]:
    cs = [
        {"name": f"c{i}", "image": "registry.example.com/app:1", "securityContext": {"privileged": True}}
        for i in range(containers)
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big", "namespace": "ml"},
        "spec": {"containers": cs},
    }


@pytest.fixture
def pki(tmp_path: Path) -> tuple[Path, Path, Path]:
    return pki_files(tmp_path)


@contextlib.contextmanager
def webhook(
    pki: tuple[Path, Path, Path], config: str = "", **state: Any
) -> Iterator[tuple[Server, httpx.Client]]:
    ca_file, cert, key = pki
    text = config or "admission: {body_timeout_seconds: 0.5}\n"
    srv = Server(WebhookState(config=parse_config(text), **state), cert, key, LIMITS)
    client = httpx.Client(
        base_url=f"https://127.0.0.1:{srv.port}",
        verify=ssl.create_default_context(cafile=str(ca_file)),
        timeout=60,
    )
    try:
        yield srv, client
    finally:
        client.close()
        srv.stop()


def tls_socket(port: int, ca_file: Path) -> ssl.SSLSocket:
    ctx = ssl.create_default_context(cafile=str(ca_file))
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    return ctx.wrap_socket(raw, server_hostname="127.0.0.1")


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes the connection (reads give EOF or a reset); fails past `seconds`."""
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except (ConnectionResetError, ssl.SSLError, OSError) as exc:
        if isinstance(exc, TimeoutError | socket.timeout):
            pytest.fail(f"the server kept a stalled connection open for {seconds} s")
    return True


def eventually(decide: Any, seconds: float = 60) -> Any:
    """The first truthy result of `decide()`, retried (bounded) while it is falsy or raises an
    AssertionError: for a request that needs a replacement engine process, which a loaded machine
    may take a few seconds to start."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if result := decide():
                return result
            why = "falsy"
        except AssertionError as exc:
            why = str(exc)
        assert time.monotonic() < deadline, f"not within {seconds} s: {why}"
        time.sleep(0.2)


def is_open(sock: ssl.SSLSocket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""
    except ssl.SSLWantReadError:
        return True
    except OSError:
        return False


def answered(client: httpx.Client, obj: dict[str, Any] = POD) -> dict[str, Any]:
    """The webhook's decision on a normal request (the example Pod is denied for missing resource
    limits and the like; what matters is that it is decided)."""
    r = client.post("/validate", content=orjson.dumps(admission_review(obj, "ml")))
    assert r.status_code == 200, r.text
    response: dict[str, Any] = r.json()["response"]
    assert "could not evaluate" not in str(response)
    return response


def allowed(client: httpx.Client, obj: dict[str, Any]) -> bool:
    return bool(answered(client, obj)["allowed"])


def test_half_a_request_line_is_closed_after_the_header_timeout(pki: tuple[Path, Path, Path]) -> None:
    with webhook(pki) as (srv, client):
        s = tls_socket(srv.port, pki[0])
        s.sendall(b"POST /vali")
        assert closed_within(s, 30)  # header timeout 0.5 s
        silent = tls_socket(srv.port, pki[0])  # connected, sends nothing at all
        assert closed_within(silent, 30)
        assert answered(client)


def test_a_tls_handshake_that_never_starts_is_closed(pki: tuple[Path, Path, Path]) -> None:
    with webhook(pki) as (srv, _):
        raw = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        assert closed_within(raw, 30)  # handshake timeout 0.5 s


def test_headers_without_the_body_get_408_and_close(pki: tuple[Path, Path, Path]) -> None:
    with webhook(pki) as (srv, client):
        s = tls_socket(srv.port, pki[0])
        head = (
            f"POST /validate HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
        )
        s.sendall(head.encode() + b'{"apiVersion": ')
        s.settimeout(30)  # body timeout 0.5 s
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := s.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 408") and b"connection: close" in answer.lower()
        assert answered(client)


def test_a_request_head_past_16_kib_is_answered_400_and_closed(pki: tuple[Path, Path, Path]) -> None:
    """llhttp keeps every header it is sent: the protocol bounds an incomplete head itself (h11's
    16 KiB), whether it comes in one write or header by header; a head within it is served."""
    with webhook(pki) as (srv, client):
        for chunks in (1, 40):
            s = tls_socket(srv.port, pki[0])
            s.sendall(f"POST /validate HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n".encode())
            header = b"X-Filler: " + b"a" * 500 + b"\r\n"
            for _ in range(chunks):
                s.sendall(header * (40 // chunks))  # 20 KiB of headers, never the blank line
            s.settimeout(30)
            answer = b""
            with contextlib.suppress(OSError):
                while chunk := s.recv(65536):
                    answer += chunk
            assert answer.startswith(b"HTTP/1.1 400") and b"connection: close" in answer.lower()
        s = tls_socket(srv.port, pki[0])
        body = orjson.dumps(admission_review(POD, "ml"))
        head = f"POST /validate HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nContent-Type: application/json\r\n"
        head += "X-Filler: " + "a" * 8000 + f"\r\nContent-Length: {len(body)}\r\n\r\n"
        s.sendall(head.encode()[:100])
        s.sendall(head.encode()[100:] + body)
        s.settimeout(30)
        assert s.recv(65536).startswith(b"HTTP/1.1 200")
        assert answered(client)


def test_stalled_connections_cannot_keep_a_prompt_client_out(pki: tuple[Path, Path, Path]) -> None:
    """More stalled connections than the cap: each new one evicts the oldest stalled one, so the
    webhook keeps answering prompt clients at once instead of after the stalled ones time out (10
    minutes here: a client held behind them times out after 60 s and fails the test)."""
    config = "admission: {body_timeout_seconds: 0.5, header_timeout_seconds: 600}\n"
    slow = Limits(header_timeout=600, handshake_timeout=5, max_connections=16)
    ca_file, cert, key = pki
    srv = Server(WebhookState(config=parse_config(config)), cert, key, slow)
    stalled = []
    try:
        for _ in range(3 * slow.max_connections):
            s = tls_socket(srv.port, ca_file)
            s.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\n")  # never finishes its headers
            stalled.append(s)
        with httpx.Client(
            base_url=f"https://127.0.0.1:{srv.port}",
            verify=ssl.create_default_context(cafile=str(ca_file)),
            timeout=60,
        ) as client:
            for _ in range(5):
                assert answered(client)
        # the oldest stalled connections were closed by the server; at most the cap stay open
        assert sum(is_open(s) for s in stalled) <= slow.max_connections
    finally:
        for s in stalled:
            s.close()
        srv.stop()


@pytest.mark.parametrize("mode", ["closed", "open"])
def test_a_pod_with_20000_containers_is_denied_at_once_in_either_failure_mode(
    pki: tuple[Path, Path, Path], mode: str
) -> None:
    """The issue's 0.64 MiB pod (10 s of evaluation before): denied by the structural bound, even
    with failure_mode open, and a normal request beside it is not held up."""
    config = f"admission: {{failure_mode: {mode}, body_timeout_seconds: 5, evaluation_timeout_seconds: 60}}\n"
    with webhook(pki, config, isolated=True) as (_, client):
        r = client.post("/validate", content=orjson.dumps(admission_review(privileged_pod(20_000), "ml")))
        resp = r.json()["response"]
        # the structural bound's denial, before any evaluation (no evaluation timeout is involved)
        assert resp["allowed"] is False and resp["status"]["code"] == 403
        assert "does not evaluate objects this large" in resp["status"]["message"]
        # fewer JSON values but more containers than the limit (128)
        r = client.post("/validate", content=orjson.dumps(admission_review(privileged_pod(200), "ml")))
        resp = r.json()["response"]
        assert resp["allowed"] is False and "200 containers" in resp["status"]["message"]
        assert "admission.max_containers" in resp["status"]["message"]
        assert answered(client)


def test_a_malformed_custom_resource_is_denied_naming_the_field_not_the_value(
    pki: tuple[Path, Path, Path],
) -> None:
    secret = "AZURE_CLIENT_SECRET=s3cr3t-value"
    ray = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "r", "namespace": "ml"},
        "spec": {
            "headGroupSpec": {
                "template": {
                    "spec": {"containers": [secret, {"name": "h", "image": "registry.example.com/ray:1"}]}
                }
            }
        },
    }
    with webhook(pki, "admission: {failure_mode: open}\n") as (_, client):
        r = client.post("/validate", content=orjson.dumps(admission_review(ray, "ml")))
        assert secret not in r.text and "s3cr3t" not in r.text
        resp = r.json()["response"]
        assert resp["allowed"] is False
        assert "spec.headGroupSpec.template.spec.containers[0]" in resp["status"]["message"]


def test_a_custom_resource_named_like_a_pod_is_walked_for_field_types(
    pki: tuple[Path, Path, Path],
) -> None:
    """The webhook does not walk a built-in kind's field types (the API server decoded it into its Go
    types), but a custom resource that shares a built-in kind's name is stored as written: a
    string ``privileged`` in an ``example.com/v1`` Pod is denied, as in a RayCluster."""
    pod = {
        "apiVersion": "example.com/v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {"containers": [{"name": "c", "image": "i", "securityContext": {"privileged": "true"}}]},
    }
    with webhook(pki, "admission: {failure_mode: open}\n") as (_, client):
        resp = client.post("/validate", content=orjson.dumps(admission_review(pod, "ml"))).json()["response"]
        assert resp["allowed"] is False
        assert (
            "spec.containers[0].securityContext.privileged: expected a boolean" in resp["status"]["message"]
        )


SLOW_RULE = """# METADATA
# title: Slow on purpose
# custom:
#   id: TST-SLOW-001
#   severity: low
#   action: deny
#   kinds: [ConfigMap]
package stockade.test.slow

import rego.v1

deny contains {"msg": "slow", "path": []} if {
    input.object.metadata.labels.slow == "yes"
    n := count([x | some x in numbers.range(1, 30000); some y in numbers.range(1, 3000); x == y + 1])
    n < 0
}
"""


def configmap(name: str, slow: bool = False) -> dict[str, Any]:
    labels = {"slow": "yes"} if slow else {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ml", "labels": labels},
    }


@pytest.mark.parametrize("mode", ["closed", "open"])
def test_an_evaluation_past_its_timeout_is_killed_denied_and_the_engine_replaced(
    pki: tuple[Path, Path, Path], tmp_path: Path, mode: str
) -> None:
    """The slow rule runs for minutes (90 million steps); the deadline, 10 s, leaves ordinary
    objects room to be evaluated on a loaded machine (a first evaluation there took over 2 s)."""
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "slow.rego").write_text(SLOW_RULE)
    config = f"admission: {{failure_mode: {mode}, evaluation_timeout_seconds: 10}}\n"
    with webhook(pki, config, policy_dirs=(policies,), isolated=True) as (_, client):
        assert allowed(client, configmap("first"))
        r = client.post("/validate", content=orjson.dumps(admission_review(configmap("slow", True), "ml")))
        resp = r.json()["response"]
        # an object that costs this much is denied in either mode, not allowed because expensive
        assert resp["allowed"] is False and "exceeded 10 s" in resp["status"]["message"], resp
        assert "could not evaluate" not in str(resp)  # the engine's deadline, not the webhook's backstop
        # A fresh engine process answers. It starts after the kill; until it is ready (seconds on a
        # loaded machine) a request can meet the webhook's backstop (the timeout plus 1 s), so the
        # next decision is awaited, bounded.
        assert eventually(lambda: allowed(client, configmap("after")))
        metrics = client.get("/metrics").text
        assert "stockade_engine_restarts_total 1.0" in metrics


def test_the_engine_process_dying_fails_closed_and_is_replaced(pki: tuple[Path, Path, Path]) -> None:
    config = "admission: {failure_mode: closed, evaluation_timeout_seconds: 60}\n"  # no deadline at play
    state = WebhookState(config=parse_config(config), isolated=True)
    ca_file, cert, key = pki
    srv = Server(state, cert, key, LIMITS)
    try:
        with httpx.Client(
            base_url=f"https://127.0.0.1:{srv.port}", verify=ssl.create_default_context(cafile=str(ca_file))
        ) as client:
            assert answered(client)
            assert state.evaluator is not None
            state.evaluator.engine.judge_here = False  # type: ignore[attr-defined] # the child judges
            pid = state.evaluator.engine.pid  # type: ignore[attr-defined]
            os.kill(pid, signal.SIGKILL)
            r = client.post("/validate", content=orjson.dumps(admission_review(POD, "ml"))).json()["response"]
            assert r["allowed"] is False and "engine process failed" in r["status"]["message"]
            # replaced: the new process may take seconds to start on a loaded machine, and a request
            # meanwhile can meet the webhook's backstop; the next decision is awaited, bounded
            assert eventually(lambda: answered(client))
            assert state.evaluator.engine.pid != pid  # type: ignore[attr-defined]
    finally:
        srv.stop()


def test_the_config_watcher_survives_any_exception_and_readyz_reports_a_dead_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unexpected exception while reloading is logged and counted; the next valid config still
    applies (issue 20: a ValueError used to end the watcher silently). A watcher that stopped all
    the same makes /readyz fail."""
    from starlette.testclient import TestClient

    from stockade.admission import app as app_module
    from stockade.admission.app import create_app
    from stockade.policies.config.settings import load_config

    config_path = tmp_path / "stockade.yaml"
    config_path.write_text("rules: {}\n")
    real = app_module.load_config
    calls = {"n": 0}

    def flaky(path: Path | None) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ValueError("day is out of range for month")
        return real(path)

    monkeypatch.setattr(app_module, "load_config", flaky)
    state = WebhookState(config=load_config(config_path), config_path=config_path)
    with TestClient(create_app(state, reload_interval=0.05)) as client:
        # The watcher's first look at the file is its starting point: a change written before that
        # look (a loaded machine may run the watcher late) is not one. So the change is written again
        # (a new mtime) until the failed reload is counted: only the first load fails.
        deadline = time.monotonic() + 60
        while 'stockade_config_reloads_total{result="rejected"} 1.0' not in client.get("/metrics").text:
            assert time.monotonic() < deadline, "the failed reload was not counted"
            config_path.write_text("rules: {STK-POD-003: {action: warn}}\n")  # the first hits the ValueError
            time.sleep(0.1)
        config_path.write_text("rules: {STK-POD-003: {action: audit}}\n")
        while getattr(state.config.rules.get("STK-POD-003"), "action", None) is not Action.AUDIT:
            assert time.monotonic() < deadline, "the watcher stopped after an unexpected exception"
            time.sleep(0.05)
        assert client.get("/readyz").status_code == 200
        assert state.watcher is not None
        state.watcher.cancel()
        while (r := client.get("/readyz")).status_code != 503:  # once the loop has run the cancel
            assert time.monotonic() < deadline, "/readyz did not report the stopped watcher"
            time.sleep(0.05)
        assert "watcher" in r.text


def test_a_denial_message_is_capped_with_a_count_of_what_was_left_out() -> None:
    from stockade.admission.decide import MAX_DENY_CHARS, respond
    from stockade.policies.evaluate import Evaluator, InventoryFacts
    from stockade.policies.model import Operation, Origin, Resource

    evaluator = Evaluator.default()
    pod = privileged_pod(100)
    findings = evaluator.evaluate(
        Resource(pod, Origin()), operation=Operation.CREATE, source=InventoryFacts()
    )
    assert len(findings) > 300
    message = respond("u", findings).status.message  # type: ignore[union-attr]
    assert len(message) <= MAX_DENY_CHARS + 100 and message.endswith("more")


def test_serve_on_a_busy_port_is_one_line_and_exit_2(pki: tuple[Path, Path, Path]) -> None:
    import subprocess
    import sys

    _, cert, key = pki
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "stockade.cli.main",
                "webhook",
                "serve",
                "--tls-cert",
                str(cert),
                "--tls-key",
                str(key),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-inventory",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        busy.close()
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"stockade: error: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]
    assert "Traceback" not in done.stderr


def test_a_body_too_costly_to_parse_is_denied_by_uid_unparsed(pki: tuple[Path, Path, Path]) -> None:
    """2.9 MiB of `[[],[],...]` parse into a million lists (about 100 MiB, over a second): the values
    are bounded from the bytes first, and the request is denied by its uid without parsing it."""
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "ml"}, "data": {}}
    body = orjson.dumps(admission_review(cm, "ml"))
    filler = b'"binaryData": {}, "junk": [' + b"[]," * 1_000_000 + b"[]]"
    body = body.replace(b'"data":{}', b'"data":{},' + filler)
    assert len(body) < 3 * 1024 * 1024
    with webhook(pki) as (_, client):
        r = client.post("/validate", content=body)
        resp = r.json()["response"]  # the bound's denial and counter: the body was never parsed
        assert resp["uid"] == "u" and resp["allowed"] is False
        assert "admission.max_object_values" in resp["status"]["message"]
        assert 'stockade_admission_refused_total{reason="oversize"} 1.0' in client.get("/metrics").text


def _slow_body(port: int, ca_file: Path, sent: int) -> ssl.SSLSocket:
    s = tls_socket(port, ca_file)
    head = (
        f"POST /validate HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\nContent-Length: 3000000\r\n\r\n"
    )
    s.sendall(head.encode() + b" " * sent)  # then nothing more
    return s


def test_dripping_bodies_do_not_hold_up_a_prompt_request(pki: tuple[Path, Path, Path]) -> None:
    """Ten bodies that stop after 10 bytes, with a 10-minute body timeout: a prompt request held
    behind them would time out (60 s) and fail the test."""
    config = "admission: {body_timeout_seconds: 600}\n"
    with webhook(pki, config) as (srv, client):
        slow = [_slow_body(srv.port, pki[0], 10) for _ in range(10)]
        time.sleep(0.3)
        assert answered(client)
        for s in slow:
            s.close()


def test_the_body_budget_evicts_the_longest_reader(pki: tuple[Path, Path, Path]) -> None:
    """Budget 4 MB: two stalled 1.5 MB bodies and a prompt 1.1 MB request; the oldest stalled body is
    dropped (503, closed) so that the prompt request is read and answered."""
    config = (
        "admission: {body_timeout_seconds: 30, max_request_bytes: 3000000, max_buffered_bytes: 4000000}\n"
    )
    with webhook(pki, config) as (srv, client):
        first = _slow_body(srv.port, pki[0], 1_500_000)
        time.sleep(0.3)
        second = _slow_body(srv.port, pki[0], 1_500_000)
        time.sleep(0.3)
        big = {**configmap("big"), "data": {"a": "x" * 1_100_000}}  # with 3 MB held, over the budget
        assert answered(client, big)
        first.settimeout(30)
        assert first.recv(65536).startswith(b"HTTP/1.1 503")
        second.settimeout(0.3)
        with pytest.raises(TimeoutError):
            second.recv(1)  # still being read
        assert 'stockade_admission_refused_total{reason="evicted"} 1.0' in client.get("/metrics").text
        first.close()
        second.close()


def test_smallest_first_lets_small_bodies_pass_big_ones_but_never_starves_them() -> None:
    import asyncio

    from stockade.admission.bodies import SmallestFirst

    async def scenario() -> list[str]:
        gate = SmallestFirst(1, max_wait=0.2)
        order: list[str] = []

        async def job(name: str, size: int, hold: float) -> None:
            async with gate.slot(size):
                order.append(name)
                await asyncio.sleep(hold)

        running = asyncio.create_task(job("first", 10, 0.05))
        await asyncio.sleep(0.01)
        waiting = [asyncio.create_task(job(n, s, 0.01)) for n, s in (("big", 3_000_000), ("small", 4_000))]
        await asyncio.sleep(0.001)
        waiting.append(asyncio.create_task(job("small2", 4_000, 0.01)))
        await asyncio.gather(running, *waiting)
        # aging: a big body that waited past max_wait goes before newer small ones
        order.append("|")
        hog = asyncio.create_task(job("hog", 10, 0.3))
        await asyncio.sleep(0.01)
        old = asyncio.create_task(job("old-big", 3_000_000, 0.01))
        await asyncio.sleep(0.25)
        young = asyncio.create_task(job("young-small", 4_000, 0.01))
        await asyncio.gather(hog, old, young)
        return order

    assert asyncio.run(scenario()) == [
        "first",
        "small",
        "small2",
        "big",
        "|",
        "hog",
        "old-big",
        "young-small",
    ]


def test_large_bodies_take_one_slot_at_a_time_and_small_ones_the_rest() -> None:
    """With four slots and a flood of large bodies, one large body is in at a time: a small one
    arriving behind the flood goes in at once; the next large one waits for the first to finish."""
    import asyncio

    from stockade.admission.bodies import LARGE_BODY_BYTES, SmallestFirst

    async def scenario() -> list[str]:
        gate = SmallestFirst(4, max_wait=0.05)
        order: list[str] = []
        done = asyncio.Event()

        async def job(name: str, size: int, until: asyncio.Event | None) -> None:
            async with gate.slot(size):
                order.append(name)
                if until is not None:
                    await until.wait()

        big = LARGE_BODY_BYTES + 1
        flood = [asyncio.create_task(job(f"big{i}", big, done)) for i in range(3)]
        await asyncio.sleep(0.1)  # the waiting large ones age past max_wait
        small = [asyncio.create_task(job(f"small{i}", 4_000, None)) for i in range(3)]
        await asyncio.gather(*small)
        order.append("|")
        done.set()
        await asyncio.gather(*flood)
        return order

    assert asyncio.run(scenario()) == ["big0", "small0", "small1", "small2", "|", "big1", "big2"]


def _pod_review_head(port: int) -> Callable[[ssl.SSLSocket], bytes]:
    """A function that sends a Pod's AdmissionReview on a kept-alive TLS socket and returns the
    response's head, lower-cased (its body read to the end, so the next request can follow)."""
    body = orjson.dumps(admission_review(POD, "ml"))
    head = (
        f"POST /validate HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()

    def answer(s: ssl.SSLSocket) -> bytes:
        s.sendall(head + body)
        s.settimeout(30)
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(65536)
        response_head, rest = data.split(b"\r\n\r\n", 1)
        length = int(response_head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
        while len(rest) < length:
            rest += s.recv(65536)
        return response_head.lower()

    return answer


def test_a_worker_over_its_share_of_connections_closes_one_after_its_response(
    pki: tuple[Path, Path, Path],
) -> None:
    """Two workers share their connection counts; this one (index 0) holds three, the other none:
    it answers with Connection: close, one connection at a time, until it holds its even share."""
    import multiprocessing

    from stockade.admission.server import Share

    counts = multiprocessing.get_context("fork").RawArray("i", 2)
    ca_file, cert, key = pki
    # the default header timeout (5 s): the three connections wait for their requests meanwhile
    srv = Server(WebhookState(config=parse_config("")), cert, key, Limits(), Share(counts, 0))
    answer = _pod_review_head(srv.port)

    try:
        sockets = [tls_socket(srv.port, ca_file) for _ in range(3)]
        assert eventually(lambda: counts[0] == 3, 30)
        first = answer(sockets[0])
        assert b"connection: close" in first  # 3 > ceil(3 / 2)
        assert closed_within(sockets[0], 30)
        sockets[0].close()  # as a client does on Connection: close (the server's TLS close waits for it)
        assert eventually(lambda: counts[0] == 2, 30)
        assert b"connection: close" in answer(sockets[1])  # 2 > ceil(2 / 2)
        assert closed_within(sockets[1], 30)
        sockets[1].close()
        assert eventually(lambda: counts[0] == 1, 30)
        assert b"connection: close" not in answer(sockets[2])  # its share
        assert is_open(sockets[2])
        sockets[2].close()
    finally:
        srv.stop()


def test_share_of_requests_is_judged_once_per_window_of_the_worker_s_own() -> None:
    """Share.busier: even load never closes; a worker answering two of every three requests says so
    once per window of its own requests; 55 % is within the margin; so is any split of light load."""
    import multiprocessing

    from stockade.admission.server import REQUEST_WINDOW, REQUEST_WINDOW_SECONDS, Share

    ctx = multiprocessing.get_context("fork")
    served = ctx.RawArray("q", 2)
    share = Share(ctx.RawArray("i", 2), 0, served)

    def run(requests: int, other_every: float) -> list[int]:
        busy, owed = [], 0.0
        for i in range(requests):
            owed += other_every
            while owed >= 1:  # the other worker's requests in the same time
                served[1] += 1
                owed -= 1
            if share.busier():
                busy.append(i)
        return busy

    assert run(3 * REQUEST_WINDOW, 1.0) == []  # even
    assert run(3 * REQUEST_WINDOW, 0.5) == [n * REQUEST_WINDOW - 1 for n in (1, 2, 3)]
    assert run(3 * REQUEST_WINDOW, 0.82) == []  # 55 % of the requests
    assert served[0] == 9 * REQUEST_WINDOW
    assert not Share(ctx.RawArray("i", 2), 0).busier()  # one worker: nothing shared
    # light load: the same 2:1 split, each window taking longer than REQUEST_WINDOW_SECONDS
    now = [0.0]
    share.clock = lambda: now[0]  # type: ignore[method-assign]
    share._since = 0.0

    def slowly(requests: int) -> list[int]:
        busy = []
        for i in range(requests):
            now[0] += 2 * REQUEST_WINDOW_SECONDS / REQUEST_WINDOW
            if i % 2 == 0:
                served[1] += 1
            if share.busier():
                busy.append(i)
        return busy

    assert slowly(3 * REQUEST_WINDOW) == []


def test_a_worker_answering_more_than_its_share_of_requests_closes_a_connection(
    pki: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers with a connection each (even counts); the other has answered nothing: at the end
    of this worker's window (two requests here), its response says Connection: close, and the next
    connection is kept alive while the load is even again."""
    import multiprocessing

    from stockade.admission import server

    monkeypatch.setattr(server, "REQUEST_WINDOW", 2)
    monkeypatch.setattr(server, "REQUEST_WINDOW_SECONDS", 3600.0)  # however slow this machine is
    ctx = multiprocessing.get_context("fork")
    counts, served = ctx.RawArray("i", 2), ctx.RawArray("q", 2)
    counts[1] = 1  # the other worker's connection
    ca_file, cert, key = pki
    srv = Server(WebhookState(config=parse_config("")), cert, key, Limits(), server.Share(counts, 0, served))
    answer = _pod_review_head(srv.port)

    try:
        first = tls_socket(srv.port, ca_file)
        assert b"connection: close" not in answer(first)
        assert b"connection: close" in answer(first)  # 2 of 2 requests: over 1.2 x an even 1
        assert closed_within(first, 30)
        first.close()
        assert served[0] == 2
        served[1] = 4  # the other worker has since answered its share and more
        second = tls_socket(srv.port, ca_file)
        assert b"connection: close" not in answer(second)
        assert b"connection: close" not in answer(second)  # 2 of the last 6 requests: within its share
        assert is_open(second)
        second.close()
    finally:
        srv.stop()


ERROR_RULE = """# METADATA
# title: A sprintf with a missing argument, an error in regorus
# custom:
#   id: TST-ERROR-001
#   severity: low
#   action: deny
#   kinds: [ConfigMap]
package stockade.test.error

import rego.v1

deny contains {"msg": sprintf("%v %v", [1]), "path": []} if input.object.metadata.name
"""


def test_an_evaluation_error_in_the_engine_process_is_the_same_error_as_in_process(tmp_path: Path) -> None:
    """A rule's own error inside a healthy engine process is a RuleEvaluationError, as it is when the
    engine runs in this process; the process is not replaced (only a death or a timeout does that)."""
    from stockade.policies.engines.base import RuleEvaluationError
    from stockade.policies.evaluate import Evaluator
    from stockade.policies.model import Origin, Resource

    (tmp_path / "error.rego").write_text(ERROR_RULE)
    cm = Resource(configmap("c"), Origin())
    with pytest.raises(RuleEvaluationError):
        Evaluator.default(parse_config(""), [tmp_path]).evaluate(cm)
    no_deadline = parse_config("admission: {evaluation_timeout_seconds: 60}\n")  # a loaded machine
    isolated = Evaluator.default(no_deadline, [tmp_path], isolated=True)
    try:
        pid = isolated.engine.pid  # type: ignore[attr-defined]
        with pytest.raises(RuleEvaluationError):
            isolated.evaluate(cm)
        assert isolated.engine.pid == pid  # type: ignore[attr-defined]
    finally:
        isolated.engine.close()  # type: ignore[attr-defined]


SLOW_VAP = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: slow}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  matchConditions:
  - {name: slow-only, expression: "has(object.metadata.labels) && 'slow' in object.metadata.labels"}
  validations:
  - expression: >-
      cel.bind(xs, [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30],
      xs.all(a, xs.all(b, xs.all(c, xs.all(d, xs.all(e, xs.all(f, a + b + c + d + e + f >= 0)))))))
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: slow}
spec: {policyName: slow, validationActions: [Deny]}
"""


def test_an_expensive_cel_expression_is_killed_and_denied(
    pki: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """A VAP whose expression would run for minutes (30^6 comprehension steps) is denied within the
    deadline: the CEL runtime's comprehension iteration budget stops it (an evaluation error, which
    failurePolicy Fail makes a violation), and failing that the webhook's evaluation deadline kills the
    engine process, as for a Rego rule. Either way: denied, and the next request answered."""
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "slow.yaml").write_text(SLOW_VAP)
    config = "admission: {failure_mode: open, evaluation_timeout_seconds: 10}\n"
    with webhook(pki, config, policy_dirs=(policies,), isolated=True) as (_, client):
        assert allowed(client, configmap("first"))
        r = client.post("/validate", content=orjson.dumps(admission_review(configmap("slow", True), "ml")))
        resp = r.json()["response"]
        message = resp["status"]["message"]
        assert resp["allowed"] is False
        assert "exceeded 10 s" in message or "Iteration budget exceeded" in message, message
        assert eventually(lambda: allowed(client, configmap("after")))  # a replaced engine may be starting
