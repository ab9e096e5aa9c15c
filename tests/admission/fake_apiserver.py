"""A small fake Kubernetes API server (aiohttp, 127.0.0.1 only) for list + watch clients.

It serves `GET /api/v1/{plural}` and `GET /apis/{group}/{version}/{plural}` (all namespaces) for the
plurals it is given, the way kube-apiserver does in the parts a reflector depends on:

- LIST with `limit` / `continue` paging, one `resourceVersion` per list, items without `kind` and
  `apiVersion` (as in a real list response);
- WATCH (`watch=true`) as chunked newline-delimited JSON events from `resourceVersion` on: events
  already in its log after that version are replayed first, then live ones as the test makes them;
  `BOOKMARK` events on request; a watch from a compacted resourceVersion gets HTTP 410, and
  :meth:`FakeApiServer.expire` sends a live watch an ERROR event with code 410;
- injected failures: the next requests for a plural answer with given HTTP statuses;
- a gate that holds LIST responses, so a test can look at a client before its first list completes.

Every request is recorded (plural, watch or not, query, status, Authorization header present or not).
The server runs its own event loop in a thread; the test thread drives it through thread-safe methods.
"""

from __future__ import annotations

import asyncio
import copy
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from stockade.admission.inventory import DEFAULT_KINDS

#: plural -> (kind, apiVersion): by default every built-in kind the webhook's cache watches (empty until
#: put); custom kinds (Cilium, Calico) answer 404, as on a cluster without their CRDs
CORE_KINDS = {k.plural: (k.kind, k.api_version) for k in DEFAULT_KINDS if not k.custom}


@dataclass(frozen=True)
class Seen:
    """One request the server answered."""

    plural: str
    watch: bool
    query: dict[str, str]
    status: int
    authorized: bool
    at: float  # time.monotonic() when answered


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


class FakeApiServer:
    def __init__(
        self, kinds: dict[str, tuple[str, str]] | None = None, ssl_context: ssl.SSLContext | None = None
    ) -> None:
        self.kinds = dict(kinds or CORE_KINDS)
        self.ssl_context = ssl_context  # HTTPS, as real API servers: a TLS read is what stop() must cut
        self.port = 0
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        self._rv = 100
        self._objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {p: {} for p in self.kinds}
        self._log: dict[str, list[tuple[int, dict[str, Any]]]] = {p: [] for p in self.kinds}
        self._compacted: dict[str, int] = dict.fromkeys(self.kinds, 0)
        self._watchers: dict[str, list[asyncio.Queue[dict[str, Any] | None]]] = {p: [] for p in self.kinds}
        self._failures: dict[str, list[int]] = {p: [] for p in self.kinds}
        self._lists_open = threading.Event()
        self._lists_open.set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fake-apiserver", daemon=True)
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_context else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    # -- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> FakeApiServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=5)
        return self

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_get("/api/v1/{plural}", self._handle)
        app.router.add_get("/apis/{group}/{version}/{plural}", self._handle)
        app.router.add_get("/api/v1", self._discovery)
        app.router.add_get("/apis/{group}/{version}", self._discovery)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.ssl_context)
        await site.start()
        server = site._server
        assert server is not None and server.sockets
        self.port = server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        self._lists_open.set()
        self.end_watches()
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    # -- what tests do to the "cluster" ------------------------------------------------------------------

    def put(self, plural: str, obj: dict[str, Any], *, notify: bool = True) -> int:
        """Create or update an object; watchers get ADDED or MODIFIED unless `notify` is false (an
        event the client will only learn about by listing again). Returns its resourceVersion."""
        obj = copy.deepcopy(obj)
        md = obj.setdefault("metadata", {})
        key = (str(md.get("namespace") or ""), str(md["name"]))
        obj["kind"], obj["apiVersion"] = self.kinds[plural]
        with self._lock:
            self._rv += 1
            md["resourceVersion"] = str(self._rv)
            kind = "MODIFIED" if key in self._objects[plural] else "ADDED"
            self._objects[plural][key] = obj
            if notify:
                self._emit(plural, {"type": kind, "object": copy.deepcopy(obj)}, logged=True)
            return self._rv

    def delete(self, plural: str, namespace: str | None, name: str, *, notify: bool = True) -> None:
        with self._lock:
            obj = self._objects[plural].pop((namespace or "", name))
            self._rv += 1
            obj["metadata"]["resourceVersion"] = str(self._rv)
            if notify:
                self._emit(plural, {"type": "DELETED", "object": obj}, logged=True)

    def bookmark(self, plural: str) -> int:
        """Send live watchers a BOOKMARK at the current resourceVersion (advanced, as when other kinds
        change). Returns that resourceVersion."""
        with self._lock:
            self._rv += 1
            kind, api_version = self.kinds[plural]
            obj = {"kind": kind, "apiVersion": api_version, "metadata": {"resourceVersion": str(self._rv)}}
            self._emit(plural, {"type": "BOOKMARK", "object": obj}, logged=False)
            return self._rv

    def expire(self, plural: str, *, notify: bool = True) -> None:
        """Compact history: watches from any resourceVersion seen so far get 410; live watchers get an
        ERROR 410 event (unless `notify` is false: then they learn it when they next re-watch)."""
        with self._lock:
            self._rv += 1
            self._compacted[plural] = self._rv
            self._log[plural].clear()
            if notify:
                error = _status(410, "Expired", f"too old resource version (compacted at {self._rv})")
                self._emit(plural, {"type": "ERROR", "object": error}, logged=False)

    def end_watches(self, plural: str | None = None) -> None:
        """End live watches normally (as their server-side timeout does)."""
        with self._lock:
            for p in [plural] if plural else list(self.kinds):
                for queue in self._watchers[p]:
                    self._loop.call_soon_threadsafe(queue.put_nowait, None)

    def fail_next(self, plural: str, *statuses: int) -> None:
        """Answer the next requests (list or watch) for `plural` with these HTTP statuses."""
        with self._lock:
            self._failures[plural].extend(statuses)

    def hold_lists(self) -> None:
        self._lists_open.clear()

    def release_lists(self) -> None:
        self._lists_open.set()

    def seen(self, plural: str, *, watch: bool | None = None) -> list[Seen]:
        with self._lock:
            return [r for r in self.requests if r.plural == plural and (watch is None or r.watch is watch)]

    def watching(self, plural: str) -> int:
        with self._lock:
            return len(self._watchers[plural])

    def _emit(self, plural: str, event: dict[str, Any], *, logged: bool) -> None:
        # Under self._lock: a watch registering now either replays this event from the log or gets it.
        if logged:
            self._log[plural].append((self._rv, event))
        for queue in self._watchers[plural]:
            self._loop.call_soon_threadsafe(queue.put_nowait, event)

    # -- HTTP ------------------------------------------------------------------------------------------

    def _record(self, request: web.Request, plural: str, watch: bool, status: int) -> None:
        authorized = "Authorization" in request.headers
        seen = Seen(plural, watch, dict(request.query), status, authorized, time.monotonic())
        with self._lock:
            self.requests.append(seen)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        plural = request.match_info["plural"]
        watch = request.query.get("watch") == "true"
        group, version = request.match_info.get("group"), request.match_info.get("version", "v1")
        if plural not in self.kinds or self.kinds[plural][1] != (f"{group}/{version}" if group else version):
            self._record(request, plural, watch, 404)
            return web.json_response(_status(404, "NotFound", f"no resource {plural}"), status=404)
        with self._lock:
            failure = self._failures[plural].pop(0) if self._failures[plural] else None
        if failure is not None:
            self._record(request, plural, watch, failure)
            return web.json_response(_status(failure, "InternalError", "injected failure"), status=failure)
        if watch:
            return await self._watch(request, plural)
        return await self._list(request, plural)

    async def _discovery(self, request: web.Request) -> web.Response:
        """The group-version's APIResourceList (every served plural is namespaced here); 404 if none."""
        group, version = request.match_info.get("group"), request.match_info.get("version", "v1")
        api = f"{group}/{version}" if group else version
        resources = [
            {"name": plural, "kind": kind, "namespaced": True, "verbs": ["list", "watch"]}
            for plural, (kind, api_version) in self.kinds.items()
            if api_version == api
        ]
        self._record(request, f"discovery:{api}", False, 200 if resources else 404)
        if not resources:
            return web.json_response(_status(404, "NotFound", f"no group-version {api}"), status=404)
        return web.json_response({"kind": "APIResourceList", "groupVersion": api, "resources": resources})

    async def _list(self, request: web.Request, plural: str) -> web.Response:
        for _ in range(500):  # held by hold_lists(): at most 5 s
            if self._lists_open.is_set():
                break
            await asyncio.sleep(0.01)
        limit = int(request.query.get("limit") or 0)
        token = request.query.get("continue")
        with self._lock:
            objects = [copy.deepcopy(self._objects[plural][k]) for k in sorted(self._objects[plural])]
            rv = self._rv
        offset = 0
        if token:  # "<resourceVersion>:<offset>": pages of one list share its resourceVersion
            token_rv, _, token_offset = token.partition(":")
            rv, offset = int(token_rv), int(token_offset)
        end = offset + limit if limit else len(objects)
        items = objects[offset:end]
        for item in items:
            item.pop("kind", None)
            item.pop("apiVersion", None)
        metadata: dict[str, Any] = {"resourceVersion": str(rv)}
        if end < len(objects):
            metadata["continue"] = f"{rv}:{end}"
        self._record(request, plural, False, 200)
        kind, api_version = self.kinds[plural]
        body = {"kind": f"{kind}List", "apiVersion": api_version, "metadata": metadata, "items": items}
        return web.Response(body=orjson.dumps(body), content_type="application/json")

    async def _watch(self, request: web.Request, plural: str) -> web.StreamResponse:
        since = int(request.query.get("resourceVersion") or 0)
        timeout = float(request.query.get("timeoutSeconds") or 1800)
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        with self._lock:
            if since < self._compacted[plural]:
                expired = True
            else:
                expired = False
                backlog = [event for rv, event in self._log[plural] if rv > since]
                self._watchers[plural].append(queue)
        if expired:
            self._record(request, plural, True, 410)
            message = f"too old resource version: {since} ({self._compacted[plural]})"
            return web.json_response(_status(410, "Expired", message), status=410)
        self._record(request, plural, True, 200)
        response = web.StreamResponse()
        response.content_type = "application/json"
        response.enable_chunked_encoding()
        try:
            await response.prepare(request)
            for event in backlog:
                await response.write(orjson.dumps(event) + b"\n")
            deadline = asyncio.get_running_loop().time() + timeout
            while True:
                remaining = deadline - asyncio.get_running_loop().time()
                if remaining <= 0:
                    break
                if request.transport is None or request.transport.is_closing():
                    break  # the client went away (aiohttp does not cancel handlers for that)
                try:
                    event = await asyncio.wait_for(queue.get(), min(remaining, 0.05))
                except TimeoutError:
                    continue
                if event is None:
                    break
                await response.write(orjson.dumps(event) + b"\n")
                if event["type"] == "ERROR":
                    break
            await response.write_eof()
        except ConnectionResetError:
            pass  # the client went away (a stopped cache shuts its socket down)
        finally:
            with self._lock:
                self._watchers[plural].remove(queue)
        return response
