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

from stockade.policies.config import Config
from stockade.policies.evaluate import Evaluator
from stockade.scanner.audit import Target, run_audit
from stockade.scanner.sources.cluster import ClusterReader

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
