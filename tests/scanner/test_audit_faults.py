"""The audit never passes a cluster it could not read, never hangs, never crashes on a bad body.

A misbehaving API server (a stdlib ``http.server`` on 127.0.0.1, in this module) answers the real
``kubernetes`` client used by the audit's :class:`ClusterReader`: 401 on every request, 403 on every
list, 200 with ``{}`` (no ``items``), items that are not objects or whose ``metadata`` is a string,
a continue token that repeats forever. Each case is bounded by the subprocess-free hang guard of the
reader itself (deadlines), and the test asserts the exit code and the coverage gaps.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from stockade.policies.config.settings import Config
from stockade.policies.evaluate import Evaluator
from stockade.scanner.audit import Target, run_audit
from stockade.scanner.sources.cluster import ClusterReader, Deadlines

Answer = Callable[[str, dict[str, str]], tuple[int, Any]]


def _list(items: Any, cont: str | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"resourceVersion": "1"}
    if cont:
        md["continue"] = cont
    return {"kind": "List", "apiVersion": "v1", "metadata": md, "items": items}


def _status(code: int) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "message": f"code {code}",
    }


CASES: dict[str, tuple[Answer, str]] = {
    "401 everywhere": (lambda path, q: (401, _status(401)), "authentication refused"),
    "403 on every list": (lambda path, q: (403, _status(403)), "no kind could be listed"),
    "200 without items": (lambda path, q: (200, {"kind": "List", "metadata": {}}), "no kind could be listed"),
    "items that are not objects": (lambda path, q: (200, _list([None, 5])), "no kind could be listed"),
    "metadata that is a string": (
        lambda path, q: (200, _list([{"metadata": "x"}])),
        "no kind could be listed",
    ),
    "a continue token that repeats": (lambda path, q: (200, _list([], "again")), "no kind could be listed"),
    "list metadata that is a string": (
        lambda path, q: (200, {"kind": "List", "metadata": "x", "items": []}),
        "no kind could be listed",
    ),
}


@pytest.fixture
def server() -> Iterator[Callable[[Answer], str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(answer: Answer) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path, _, query = self.path.partition("?")
                params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
                code, body = answer(path, params)
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        servers.append(httpd)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    yield start
    for httpd in servers:
        httpd.shutdown()


def _reader(url: str) -> ClusterReader:
    from kubernetes import client as k8s_client

    cfg = k8s_client.Configuration()
    cfg.host = url
    cfg.retries = False
    return ClusterReader(k8s_client.ApiClient(cfg), "bad", sleep=lambda s: None, max_attempts=1)


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_unreadable_cluster_is_never_audited_clean(case: str, server: Callable[[Answer], str]) -> None:
    answer, reason = CASES[case]
    url = server(answer)
    result = run_audit([Target("bad", lambda: _reader(url))], Evaluator.default(Config()), version="t")
    (stats,) = result.clusters
    assert stats.reachable is False, case
    assert any(g.scope == "bad" and reason in g.message for g in result.gaps), [
        g.message for g in result.gaps
    ]
    assert result.findings == []


# --- the whole fault matrix, on a raw socket server -----------------------------------------------
#
# Each fault is served for one kind's list or for every request. The assertions: the audit ends
# within the test's own bound (deadlines shortened for the test), never raises, never reports the
# faulty kind as read, and the CLI exits 2 (a gap or an unreadable cluster).

import socket as _socket  # noqa: E402
import time as _time  # noqa: E402

from stockade.scanner.sources import cluster as cluster_module  # noqa: E402

Action = tuple[
    str, Any
]  # ("json", (code, body, headers)) | ("raw", bytes) | ("drip", bytes) | ("stall", None) | ("reset", None)


class _LoopbackServer:
    """A listening socket on 127.0.0.1 and a thread per accepted connection (``_handle``)."""

    def __init__(self, scheme: str = "http") -> None:
        self.sock = _socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"{scheme}://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stopped = False

    def start(self) -> None:
        threading.Thread(target=self._serve, daemon=True).start()

    def stop(self) -> None:
        self.stopped = True
        self.sock.close()

    def _serve(self) -> None:
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: _socket.socket) -> None:
        raise NotImplementedError


class FaultServer(_LoopbackServer):
    """HTTP/1.1 on 127.0.0.1 from raw sockets: a fault for the kinds named, good answers otherwise."""

    def __init__(self, faulty: Callable[[str, dict[str, str]], Action | None]) -> None:
        super().__init__()
        self.faulty = faulty
        self.requests = 0
        self.start()

    def _handle(self, conn: _socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            target = data.split(b" ", 2)[1].decode()
            self.requests += 1
            path, _, query = target.partition("?")
            params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
            action = self.faulty(path, params) or ("json", (200, _list([]), {}))
            kind, arg = action
            try:
                if kind == "json":
                    code, body, headers = arg
                    payload = json.dumps(body).encode()
                    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
                    conn.sendall(
                        f"HTTP/1.1 {code} X\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(payload)}\r\n{extra}Connection: close\r\n\r\n".encode()
                        + payload
                    )
                elif kind == "raw":
                    conn.sendall(arg)
                elif kind == "drip":
                    head = (
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                    )
                    conn.sendall(head)
                    while not self.stopped:
                        conn.sendall(b" ")
                        _time.sleep(0.05)
                elif kind == "stall":
                    while not self.stopped:
                        _time.sleep(0.05)
                elif kind == "reset":
                    conn.setsockopt(
                        _socket.SOL_SOCKET, _socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                    )
            except OSError:
                pass


def _on(kind_path: str, action: Action) -> Callable[[str, dict[str, str]], Action | None]:
    """The fault on lists whose path ends with `kind_path` ("" = every request)."""
    return lambda path, q: action if path.endswith(kind_path) else None


def _status_action(code: int, headers: dict[str, str] | None = None) -> Action:
    return ("json", (code, _status(code), headers or {}))


TRUNCATED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
    + b'{"kind": "List", "items": ['
)
NOT_JSON = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\nConnection: close\r\n\r\n"
    b"<html>!!!"
)

#: (fault, where) -> what the gap or refusal must say
MATRIX: dict[str, tuple[Callable[[str, dict[str, str]], Action | None], str]] = {
    "401 on pods": (_on("/pods", _status_action(401)), "authentication refused"),
    "403 on pods": (_on("/pods", _status_action(403)), "pods"),
    "404 on pods": (_on("/pods", _status_action(404)), "pods"),
    "410 on every page": (_on("/pods", _status_action(410)), "pods"),
    "429 storm on pods": (_on("/pods", _status_action(429, {"Retry-After": "0"})), "pods"),
    "500 on pods": (_on("/pods", _status_action(500)), "pods"),
    "503 everywhere": (_on("", _status_action(503)), "bad"),
    "truncated body on pods": (_on("/pods", ("raw", TRUNCATED)), "cannot reach the API server"),
    "not JSON on pods": (_on("/pods", ("raw", NOT_JSON)), "pods"),
    "{} on pods": (_on("/pods", ("json", (200, {}, {}))), "pods"),
    "items {} on pods": (_on("/pods", ("json", (200, {"kind": "List", "items": {}}, {}))), "pods"),
    "dripping pods": (_on("/pods", ("drip", None)), "pods"),
    "stalled pods": (_on("/pods", ("stall", None)), "cannot reach the API server"),
    # connection errors (reset, read timeout, a body cut short) mark the whole cluster unreachable
    # (not audited, exit 2), not just the kind
    "connection reset on pods": (_on("/pods", ("reset", None)), "cannot reach the API server"),
    "repeating continue on pods": (_on("/pods", ("json", (200, _list([], "again"), {}))), "pods"),
    "list metadata a string on pods": (
        _on("/pods", ("json", (200, {"kind": "List", "metadata": "x", "items": []}, {}))),
        "pods: malformed response (metadata is not an object)",
    ),
    "continue not a string on pods": (
        _on("/pods", ("json", (200, {"kind": "List", "metadata": {"continue": 5}, "items": []}, {}))),
        "pods: malformed response (metadata.continue is not a string)",
    ),
}


@pytest.mark.parametrize("case", sorted(MATRIX))
def test_fault_matrix(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fault, expected = MATRIX[case]
    srv = FaultServer(fault)
    try:
        from kubernetes import client as k8s_client

        cfg = k8s_client.Configuration()
        cfg.host = srv.url
        cfg.retries = False
        reader = ClusterReader(
            k8s_client.ApiClient(cfg),
            "bad",
            sleep=lambda s: None,
            max_attempts=3,
            request_timeout=(2.0, 2.0),
            deadlines=Deadlines(answer=10.0, request=1.0, kind=3.0, cluster=60.0),
        )
        start = _time.monotonic()
        result = run_audit([Target("bad", lambda: reader)], Evaluator.default(Config()), version="t")
        spent = _time.monotonic() - start
    finally:
        srv.stop()
    assert spent < 30, f"{case}: the audit took {spent:.0f} s"
    messages = [f"{g.scope}: {g.message}" for g in result.gaps]
    assert result.gaps, f"{case}: no coverage gap"
    assert any(expected in m for m in messages), messages
    (stats,) = result.clusters
    if "malformed" in expected:  # one kind is a gap that names it; the rest of the cluster is audited
        assert [g.scope for g in result.gaps] == ["bad/Pod"], messages
        assert stats.reachable is True
    elif expected != "pods":  # the whole cluster is unreadable: never scored
        assert stats.reachable is False
    assert "Traceback" not in " ".join(messages)


@pytest.mark.parametrize(
    ("case", "reason"),
    [("500 on pods", "audit incomplete"), ("401 on pods", "authentication refused")],
)
def test_the_cli_exits_2_and_reports_the_gap(case: str, reason: str, tmp_path: Any, monkeypatch: Any) -> None:
    """`stockade audit` through a kubeconfig: exit 2 with the gap in the JSON report, no traceback."""
    import yaml
    from typer.testing import CliRunner

    from stockade.cli.main import app

    monkeypatch.setattr(cluster_module, "MAX_ATTEMPTS", 2)
    monkeypatch.setattr(cluster_module, "BACKOFF_INITIAL_SECONDS", 0.01)
    monkeypatch.setattr(cluster_module, "BACKOFF_MAX_SECONDS", 0.02)
    srv = FaultServer(MATRIX[case][0])
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": srv.url}}],
                "users": [{"name": "u", "user": {"token": "t0ken-value"}}],
                "contexts": [{"name": "bad", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "bad",
            }
        )
    )
    out = tmp_path / "audit.json"
    try:
        result = CliRunner().invoke(
            app, ["audit", "--kubeconfig", str(kubeconfig), "-f", "json", "-o", str(out)]
        )
    finally:
        srv.stop()
    assert result.exit_code == 2, result.output
    assert reason in result.output and "Traceback" not in result.output
    assert "t0ken-value" not in result.output
    doc = json.loads(out.read_text())
    assert doc["gaps"]


# --- issue 36: hostile servers that held the audit for minutes, or for ever -------------------------
#
# Raw-socket servers on 127.0.0.1 (HTTP/1.1 keep-alive, or TLS with a throwaway CA from
# tests/tls_webhook.py) answer the real `kubernetes` client of ClusterReader; readers made from a
# kubeconfig go through ClusterReader.from_kubeconfig, as `stockade audit` does. Each audit runs in a
# thread joined with a generous bound: the assertions are on outcomes (verdicts, gaps, and the
# connections, handshakes and requests the server saw), never on how long anything took.

import datetime as _dt  # noqa: E402
import logging  # noqa: E402
import ssl as _ssl  # noqa: E402
from pathlib import Path  # noqa: E402

from stockade.scanner.result import Result  # noqa: E402
from tests.fleet import fake  # noqa: E402
from tests.fleet import reader as fleet_reader  # noqa: E402
from tests.tls_webhook import CA  # noqa: E402

DRIP_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
BOUND = 180.0  # seconds: far beyond any deadline below, so only a hang reaches it


def _item(path: str) -> dict[str, Any]:
    return {"metadata": {"name": "obj", "namespace": "default", "uid": path}}


class KeepAliveServer(_LoopbackServer):
    """HTTP/1.1 with keep-alive (as kube-apiserver), optionally over TLS: every list answers one
    object, except where `fault(path)` says "drip" (headers, then a byte every 0.1 s, for ever) or
    "stall" (never a byte). Counts connections, TLS handshakes, and requests per connection."""

    def __init__(self, fault: Callable[[str], str | None], tls: _ssl.SSLContext | None = None) -> None:
        super().__init__("https" if tls else "http")
        self.fault, self.tls = fault, tls
        self.connections: list[list[str]] = []  # per connection: the paths it carried
        self.handshakes = 0
        self.authorized: list[bool] = []
        self.start()

    def _handle(self, conn: _socket.socket) -> None:
        paths: list[str] = []
        self.connections.append(paths)
        try:
            if self.tls is not None:
                self.handshakes += 1
                conn.settimeout(10)
                conn = self.tls.wrap_socket(conn, server_side=True)
                conn.settimeout(None)
            buf = b""
            while not self.stopped:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                path = head.split(b" ")[1].decode().partition("?")[0]
                paths.append(path)
                self.authorized.append(b"\nauthorization:" in head.lower())
                fault = self.fault(path)
                if fault == "stall":
                    while not self.stopped:
                        _time.sleep(0.05)
                    return
                if fault == "drip":
                    conn.sendall(DRIP_HEAD)
                    while not self.stopped:
                        conn.sendall(b" ")
                        _time.sleep(0.1)
                    return
                body = json.dumps(_list([_item(path)])).encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                    % len(body)
                    + body
                )
        except (OSError, _ssl.SSLError):
            pass
        finally:
            conn.close()

    @property
    def requests(self) -> list[str]:
        return [p for paths in self.connections for p in paths]


def _bounded(targets: list[Target]) -> Result:
    """run_audit in a thread, joined within BOUND: a hang fails the test instead of holding it."""
    out: list[Result] = []
    worker = threading.Thread(
        target=lambda: out.append(run_audit(targets, Evaluator.default(Config()), version="t")), daemon=True
    )
    worker.start()
    worker.join(BOUND)
    assert not worker.is_alive(), f"the audit did not end within {BOUND:g} s"
    return out[0]


def _raw_reader(url: str, name: str = "bad", **options: Any) -> ClusterReader:
    from kubernetes import client as k8s_client

    cfg = k8s_client.Configuration()
    cfg.host = url
    cfg.retries = False
    options.setdefault("sleep", lambda s: None)
    return ClusterReader(k8s_client.ApiClient(cfg), name, **options)


def test_a_connection_that_reached_a_deadline_is_never_reused() -> None:
    """Services drip (KeepAliveServer, HTTP/1.1 keep-alive): their list is a gap after the request
    deadline, and the dripping connection carries no other request (before: it went back to the
    pool undrained, and the next list read the drip as its status line, for ever)."""
    # (Services: a list in the middle of the audit's order, so that later lists show where they went)
    srv = KeepAliveServer(lambda path: "drip" if path == "/api/v1/services" else None)
    try:
        deadlines = Deadlines(request=1.0)
        result = _bounded([Target("bad", lambda: _raw_reader(srv.url, deadlines=deadlines))])
    finally:
        srv.stop()
    messages = [f"{g.scope}: {g.message}" for g in result.gaps]
    assert messages == [
        "bad/Service: services could not be listed: GET /api/v1/services: "
        "the response did not finish within 1 s"
    ]
    (stats,) = result.clusters
    assert stats.reachable is True
    dripping = [paths for paths in srv.connections if "/api/v1/services" in paths]
    assert dripping == [["/api/v1/services"]] or dripping[0][-1] == "/api/v1/services"  # nothing after
    after = srv.requests[srv.requests.index("/api/v1/services") + 1 :]
    assert len(after) > 10  # every later kind was listed, on other connections
    assert stats.objects == len(srv.requests) - 1  # one object per list but the dripping one


def test_a_cluster_that_never_answers_is_unreachable_once_and_the_fleet_goes_on() -> None:
    """A server that accepts and never answers (KeepAliveServer, "stall"): after the answer deadline
    the cluster is "not audited" with that cause, after one or two connections, not one per kind
    and retry; the other context of the fleet (tests/fleet.py's fake API server) is audited."""
    srv = KeepAliveServer(lambda path: "stall")
    good = fake.FakeCluster.from_objects("good", [], nodes=1)
    try:
        with fake.ServedCluster(good) as served:
            result = _bounded(
                [
                    Target("dead", lambda: _raw_reader(srv.url, "dead", deadlines=Deadlines(answer=2.0))),
                    Target("good", lambda: fleet_reader(served.url, "good")),
                ]
            )
    finally:
        srv.stop()
    reach = {c.name: c.reachable for c in result.clusters}
    assert reach == {"dead": False, "good": True}
    assert [f"{g.scope}: {g.message}" for g in result.gaps] == [
        "dead: cluster not audited: cannot reach the API server: no answer within 2 s"
    ]
    assert 1 <= len(srv.requests) <= 2 and len(srv.connections) <= 2


def _tls_server(tmp_path: Path, ca: CA, names: list[str], ips: list[str]) -> KeepAliveServer:
    issued = ca.authority.issue(names, ips, _dt.timedelta(hours=1))
    issued.write(tmp_path / "tls.crt", tmp_path / "tls.key")
    ctx = _ssl.SSLContext(_ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    return KeepAliveServer(lambda path: None, tls=ctx)


def _kubeconfig(tmp_path: Path, contexts: dict[str, tuple[dict[str, Any], dict[str, Any]]]) -> Path:
    """contexts: name -> (cluster entry, user entry)."""
    import yaml

    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": n, "cluster": c} for n, (c, _) in contexts.items()],
                "users": [{"name": n, "user": u} for n, (_, u) in contexts.items()],
                "contexts": [{"name": n, "context": {"cluster": n, "user": n}} for n in contexts],
                "current-context": next(iter(contexts)),
            }
        )
    )
    return path


@pytest.mark.parametrize(
    ("case", "cause"),
    [
        ("wrong CA", "TLS verification failed: "),  # another CA of the same name: a bad signature
        ("missing CA", "TLS verification failed: unable to get local issuer certificate"),
        ("wrong host name", "TLS verification failed: IP address mismatch"),
    ],
)
def test_a_tls_verification_failure_is_one_handshake_per_context(
    case: str, cause: str, tmp_path: Path
) -> None:
    """A TLS API server (KeepAliveServer with a throwaway CA) the kubeconfig cannot verify: one
    handshake, then "not audited" with the cause in one line (before: 5 tries for each of 64 kinds,
    320 handshakes); the other context (tests/fleet.py's fake API server) is still audited."""
    ca, other = CA(), CA()
    srv = _tls_server(
        tmp_path,
        ca,
        ["elsewhere.example"] if case == "wrong host name" else ["localhost"],
        [] if case == "wrong host name" else ["127.0.0.1"],
    )
    cluster: dict[str, Any] = {"server": srv.url}
    if case != "missing CA":
        cluster["certificate-authority"] = str(
            (other if case == "wrong CA" else ca).write_ca(tmp_path / "ca.crt")
        )
    good = fake.FakeCluster.from_objects("good", [], nodes=1)
    try:
        with fake.ServedCluster(good) as served:
            kubeconfig = _kubeconfig(
                tmp_path,
                {
                    "tls": (cluster, {"token": "t0ken"}),
                    "good": ({"server": served.url}, {"token": fake.TOKEN}),
                },
            )
            result = _bounded(
                [
                    Target(n, lambda n=n: ClusterReader.from_kubeconfig(str(kubeconfig), n))
                    for n in ("tls", "good")
                ]
            )
    finally:
        srv.stop()
    assert {c.name: c.reachable for c in result.clusters} == {"tls": False, "good": True}
    (gap,) = [g for g in result.gaps if g.scope == "tls"]
    assert gap.message.startswith(f"cluster not audited: cannot reach the API server: {cause}"), gap.message
    assert "\n" not in gap.message
    assert srv.handshakes == 1 and srv.requests == []


def test_connection_refused_is_unreachable_after_the_first_attempts() -> None:
    """A port on 127.0.0.1 that is bound but not listening: the first kind's attempts are refused,
    and no other kind is tried."""
    with _socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        reader = _raw_reader(f"http://127.0.0.1:{sock.getsockname()[1]}", max_attempts=3)
        result = _bounded([Target("bad", lambda: reader)])
    assert [f"{g.scope}: {g.message}" for g in result.gaps] == [
        "bad: cluster not audited: cannot reach the API server: [Errno 111] Connection refused"
    ]
    assert reader.stats.requests == 3


def _plugin(tmp_path: Path, script: str) -> dict[str, Any]:
    plugin = tmp_path / "plugin.sh"
    plugin.write_text("#!/bin/sh\n" + script)
    plugin.chmod(0o755)
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": str(plugin),
            "interactiveMode": "Never",
        }
    }


LEAKED = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJl"


@pytest.mark.parametrize(
    ("case", "cause"),
    [
        ("plugin fails", "credential plugin 'plugin.sh' failed: exec: process returned 1. error: token"),
        (
            "plugin gives nothing",
            "credential plugin 'plugin.sh': its output has no token and no client certificate",
        ),
        ("tokenFile missing", "[Errno 2] No such file or directory:"),
    ],
)
def test_credentials_that_cannot_be_had_are_one_line_and_no_request(
    case: str, cause: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`stockade audit` through a kubeconfig whose user's credentials cannot be had, against
    KeepAliveServer: the cause in one line, no credential in it, no request sent (before: requests
    without credentials, "401 Unauthorized", and an ``ERROR:root`` line with the real cause)."""
    from typer.testing import CliRunner

    from stockade.cli.main import app

    user = {
        "plugin fails": lambda: _plugin(tmp_path, f"echo 'error: token {LEAKED} expired' >&2\nexit 1\n"),
        "plugin gives nothing": lambda: _plugin(
            tmp_path,
            'echo \'{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",'
            ' "status": {}}\'\n',
        ),
        "tokenFile missing": lambda: {"tokenFile": str(tmp_path / "absent")},
    }[case]()
    srv = KeepAliveServer(lambda path: None)
    kubeconfig = _kubeconfig(tmp_path, {"creds": ({"server": srv.url}, user)})
    caplog.set_level(logging.DEBUG)
    try:
        result = CliRunner().invoke(
            app, ["audit", "--kubeconfig", str(kubeconfig), "-f", "json", "-o", str(tmp_path / "a.json")]
        )
    finally:
        srv.stop()
    assert result.exit_code == 2, result.output
    (line,) = [ln for ln in result.output.splitlines() if "gap: creds" in ln]
    assert cause in line, line
    assert LEAKED not in result.output and "401" not in result.output
    assert "ERROR:root" not in result.output
    assert not [r for r in caplog.records if r.name == "root"]
    assert srv.requests == []
