"""Request bodies (admission/bodies.py): a body that arrived whole with its request is taken at once;
one still coming is read with the body timeout and the byte budget.

Against the real uvicorn TLS server on loopback (tests/tls_webhook.py, in this process), and the
reader alone with a stand-in for uvicorn's request cycle.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from starlette.requests import Request

from stockade.admission import bodies
from stockade.admission.app import WebhookState
from stockade.admission.bodies import BadRequest, BodyReader, SlowBody, arrived
from stockade.policies.config.settings import parse_config
from tests.admission.test_hostile_clients import POD
from tests.reviews import admission_review
from tests.tls_webhook import Server, pki_files


class _Cycle:
    """What `arrived` reads of uvicorn's RequestResponseCycle: `more_body` and `message_event`."""

    def __init__(self, body: bytes, more_body: bool) -> None:
        self.body, self.more_body = body, more_body
        self.message_event = asyncio.Event()
        if not more_body:
            self.message_event.set()

    async def receive(self) -> dict[str, Any]:
        await self.message_event.wait()
        self.message_event.clear()
        body, self.body = self.body, b""
        return {"type": "http.request", "body": body, "more_body": self.more_body}


def _request(receive: Any, length: int | None = None) -> Request:
    headers = [] if length is None else [(b"content-length", str(length).encode())]
    return Request({"type": "http", "method": "POST", "path": "/", "headers": headers}, receive)


def test_a_whole_body_is_taken_without_a_timeout_and_checked_against_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_timer(_: float) -> Any:
        raise AssertionError("a body that has arrived needs no timer")

    monkeypatch.setattr(bodies.asyncio, "timeout", no_timer)

    async def main() -> None:
        reader = BodyReader(1 << 20)
        cycle = _Cycle(b'{"kind": "AdmissionReview"}', more_body=False)
        assert arrived(_request(cycle.receive))
        assert await reader.read(_request(cycle.receive), 1000, 5.0) == b'{"kind": "AdmissionReview"}'
        assert reader.used == 0 and not reader._readers
        with pytest.raises(BadRequest, match="exceeds the limit of 10 bytes"):
            await reader.read(_request(_Cycle(b"x" * 11, more_body=False).receive), 10, 5.0)

    asyncio.run(main())


def test_a_body_still_coming_is_read_with_the_timeout() -> None:
    async def main() -> None:
        reader = BodyReader(1 << 20)
        coming = _Cycle(b"", more_body=True)  # its head came, its body never does
        assert not arrived(_request(coming.receive))
        started = time.monotonic()
        with pytest.raises(SlowBody):
            await reader.read(_request(coming.receive), 1000, 0.2)
        assert time.monotonic() - started >= 0.2 and not reader._readers

        async def plain_receive() -> dict[str, Any]:  # another server's receive: nothing to look at
            return {"type": "http.request", "body": b"{}", "more_body": False}

        assert not arrived(_request(plain_receive))
        assert await reader.read(_request(plain_receive), 1000, 1.0) == b"{}"

    asyncio.run(main())


def test_the_real_server_takes_a_whole_review_at_once_and_a_late_body_with_the_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunked: list[int] = []
    reading = threading.Event()
    original = BodyReader._chunks

    async def counted(self: BodyReader, request: Request, reader: Any, limit: int) -> bytes:
        chunked.append(limit)
        reading.set()
        return await original(self, request, reader, limit)

    monkeypatch.setattr(BodyReader, "_chunks", counted)
    ca, cert, key = pki_files(tmp_path)
    state = WebhookState(config=parse_config("admission: {body_timeout_seconds: 30}\n"))
    srv = Server(state, cert, key)
    try:
        body = orjson.dumps(admission_review(POD, "ml"))
        head = (
            f"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        context = ssl.create_default_context(cafile=str(ca))

        def ask(parts: list[bytes]) -> bytes:
            with (
                socket.create_connection(("127.0.0.1", srv.port), timeout=30) as raw,
                context.wrap_socket(raw, server_hostname="127.0.0.1") as s,
            ):
                for i, part in enumerate(parts):
                    if i:  # the server reads the body it is waiting for
                        assert reading.wait(30)
                    s.sendall(part)
                answer = s.recv(65536)
                while b"\r\n\r\n" not in answer:
                    answer += s.recv(65536)
                return answer

        assert ask([head + body]).startswith(b"HTTP/1.1 200")
        assert chunked == []  # taken whole
        assert ask([head, body]).startswith(b"HTTP/1.1 200")
        assert len(chunked) == 1  # read as it came
    finally:
        srv.stop()
