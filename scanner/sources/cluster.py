"""A live cluster as a source: paginated raw-JSON LISTs through the `kubernetes` client.

An audit must never hurt the cluster it audits, and must survive the cluster misbehaving:

- **pages**: every kind is listed with ``limit=500`` + ``continue`` (the API server serves pages from
  its watch cache, and no single response holds a whole kind). An expired continue token (410)
  restarts that kind's list.
- **raw JSON**: responses are read with ``_preload_content=False`` and parsed with orjson; the
  client's model classes cost far more than the parse and are never needed (rules read plain dicts).
  The generic ``ApiClient.call_api`` is used so that any kind, custom resources included, goes
  through the same authentication, TLS and proxy handling as the generated methods.
- **a client-side rate limit**: a token bucket (``qps``, ``burst``) shared by all of one cluster's
  requests, like client-go's default limiter, so an audit cannot flood an API server.
- **retries**: 429 and 5xx are retried with capped exponential backoff (``Retry-After`` honoured);
  connection errors too.
- **gaps, not crashes**: a kind that is forbidden (403) or keeps failing becomes a
  :class:`~stockade.scanner.result.CoverageGap`; a custom resource that is not installed (404) is
  simply absent; an unreachable cluster is one gap for the whole cluster.

Secrets: a rule (STK-STO-004) needs the names of their data keys, which metadata-only lists do not
carry, so Secrets are listed whole and reduced as each page is parsed, before the page is yielded:
only ``metadata`` (without ``managedFields`` and without the last-applied-configuration annotation,
which holds the values in clear), ``type`` and ``dataKeys`` (the sorted data key names) are kept. No
value can reach the audit's objects, a report or a log.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import urllib3
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from stockade.policies.facts.credentials import key_names_only
from stockade.policies.kinds import KindInfo, discovery_call, kind_in_discovery, list_call, object_kind

PAGE_SIZE = 500
DEFAULT_QPS = 50.0
DEFAULT_BURST = 100
MAX_ATTEMPTS = 5
BACKOFF_INITIAL_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 10.0
REQUEST_TIMEOUT = (10.0, 120.0)  # connect, read
MAX_LIST_RESTARTS = 3
#: One kind's whole LIST (every page, retries included) must finish within this; else it is a gap.
LIST_DEADLINE_SECONDS = 600.0
HTTP_OK, HTTP_UNAUTHORIZED = 200, 401
HTTP_FORBIDDEN, HTTP_NOT_FOUND, HTTP_GONE, HTTP_TOO_MANY = 403, 404, 410, 429
#: metadata-only list: what `kubectl get --output=name` asks for (for kinds whose body no rule reads)
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
METADATA_ONLY_KINDS: frozenset[str] = frozenset()
#: kinds reduced to metadata, type and data key names as soon as a page is parsed
KEY_NAMES_ONLY_KINDS = frozenset({"Secret"})


class ListError(Exception):
    """A kind could not be listed; `status` is the HTTP status (None for connection errors)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RateLimiter:
    """A token bucket: at most `burst` requests at once, refilled at `qps` per second."""

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("qps must be > 0 and burst >= 1")
        self.qps, self.burst, self.clock = qps, burst, clock
        self._tokens = float(burst)
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self, sleep: Callable[[float], None] = time.sleep) -> None:
        with self._lock:
            now = self.clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1
            wait = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if wait > 0:
            sleep(wait)


@dataclass(slots=True)
class ListStats:
    """What listing one cluster cost: requests made, retries, objects, seconds."""

    requests: int = 0
    retries: int = 0
    objects: int = 0
    seconds: float = 0.0
    by_kind: dict[str, int] = field(default_factory=dict)


class ClusterReader:
    """Lists kinds from one cluster (a kubeconfig context, or an `ApiClient` in tests)."""

    def __init__(
        self,
        api_client: Any,
        name: str,
        *,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
        page_size: int = PAGE_SIZE,
        max_attempts: int = MAX_ATTEMPTS,
        backoff_initial: float = BACKOFF_INITIAL_SECONDS,
        backoff_max: float = BACKOFF_MAX_SECONDS,
        request_timeout: tuple[float, float] = REQUEST_TIMEOUT,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api_client = api_client
        self.name = name
        self.page_size = page_size
        self.max_attempts = max_attempts
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.request_timeout = request_timeout
        self.limiter = RateLimiter(qps, burst)
        self.sleep = sleep
        self.stats = ListStats()
        self._calls: dict[str, Callable[..., Any]] = {}
        self._owns_client = False

    @classmethod
    def from_kubeconfig(cls, config_file: str | None, context: str | None, **options: Any) -> ClusterReader:
        """A reader for a kubeconfig context; refreshed credentials are never written back to the file."""
        configuration = k8s_client.Configuration()
        load: Any = k8s_config.load_kube_config  # untyped in some client versions
        load(
            config_file=config_file, context=context, client_configuration=configuration, persist_config=False
        )
        configuration.retries = False  # retries are ours (counted, rate limited, Retry-After honoured)
        reader = cls(k8s_client.ApiClient(configuration), context or "current-context", **options)
        reader._owns_client = True
        return reader

    @classmethod
    def in_cluster(cls, name: str, **options: Any) -> ClusterReader:
        """A reader for the cluster this pod runs in, with its ServiceAccount token (`audit --in-cluster`,
        the audit CronJob); ``name`` is how reports name the cluster."""
        configuration = k8s_client.Configuration()
        load: Any = k8s_config.load_incluster_config  # untyped in some client versions
        load(client_configuration=configuration)
        configuration.retries = False
        reader = cls(k8s_client.ApiClient(configuration), name, **options)
        reader._owns_client = True
        return reader

    def close(self) -> None:
        if self._owns_client:
            with contextlib.suppress(Exception):
                self.api_client.close()

    def __enter__(self) -> ClusterReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- listing ------------------------------------------------------------------------------------

    def pages(
        self, info: KindInfo, on_restart: Callable[[], None] | None = None
    ) -> Iterator[list[dict[str, Any]]]:
        """The kind's objects page by page, each with `kind` and `apiVersion` filled in.

        Pages are yielded as they arrive so that a caller can keep only what it needs of a large kind
        (an audit keeps one pod per template, not 150,000 pods). Raises :class:`ListError` when the
        kind cannot be listed. A continue token that expires mid-list (410) restarts the list for a
        consistent snapshot: `on_restart` is called first, so the caller can drop what it kept.
        """
        kind, api_version = object_kind(info), info.api_version
        metadata_only = info.kind in METADATA_ONLY_KINDS
        accept = METADATA_ONLY if metadata_only else "application/json"
        deadline = time.monotonic() + LIST_DEADLINE_SECONDS
        for _ in range(MAX_LIST_RESTARTS):
            token: str | None = None
            seen_tokens: set[str] = set()
            while True:
                query: dict[str, Any] = {"limit": self.page_size}
                if token:
                    query["_continue"] = token
                if time.monotonic() > deadline:
                    raise ListError(
                        f"list of {info.plural} did not finish within {LIST_DEADLINE_SECONDS:.0f} s"
                    )
                try:
                    page = self._get(info, query, accept)
                except ListError as exc:
                    if exc.status == HTTP_GONE and token:
                        break
                    raise
                items = _items(page, info)
                key_names_only_kind = info.kind in KEY_NAMES_ONLY_KINDS
                for obj in items:
                    obj["kind"] = kind
                    obj["apiVersion"] = api_version
                    if key_names_only_kind:
                        key_names_only(obj)
                    if metadata_only:
                        # keep metadata and type only: never data, even if a server sent it
                        for key in [k for k in obj if k not in ("kind", "apiVersion", "metadata", "type")]:
                            del obj[key]
                self.stats.objects += len(items)
                self.stats.by_kind[info.kind] = self.stats.by_kind.get(info.kind, 0) + len(items)
                yield items
                token = page.get("metadata", {}).get("continue") or None  # checked by _items
                if token is None:
                    return
                if token in seen_tokens:
                    raise ListError(f"list of {info.plural}: the server repeated a continue token", HTTP_OK)
                seen_tokens.add(token)
            self.stats.by_kind[info.kind] = 0
            if on_restart is not None:
                on_restart()
        raise ListError(f"list of {info.plural} restarted {MAX_LIST_RESTARTS} times (continue token expired)")

    def list(self, info: KindInfo) -> list[dict[str, Any]]:
        """Every object of a kind (a consistent snapshot: a restart discards earlier pages)."""
        out: list[dict[str, Any]] = []
        for page in self.pages(info, on_restart=out.clear):
            out.extend(page)
        return out

    # -- one request --------------------------------------------------------------------------------

    def _get(self, info: KindInfo, query: dict[str, Any], accept: str) -> dict[str, Any]:
        """One LIST page with rate limit and retries; the parsed JSON body or :class:`ListError`."""
        call = self._calls.get(info.kind)
        if call is None:
            call = self._calls[info.kind] = list_call(self.api_client, info)
        return self._request(call, info.list_path(), query, accept)

    def discover(self, info: KindInfo) -> KindInfo | None:
        """A kind the table does not hold (a VAP's param kind), by its group-version's discovery
        document: None when not served (the group-version answers 404, or lacks the kind)."""
        call, path = discovery_call(self.api_client, info.api_version)
        try:
            document = self._request(call, path, {}, "application/json")
        except ListError as exc:
            if exc.status == HTTP_NOT_FOUND:
                return None
            raise
        return kind_in_discovery(document, info.api_version, info.kind)

    def _request(
        self, call: Callable[..., Any], path: str, query: dict[str, Any], accept: str
    ) -> dict[str, Any]:
        """One GET with rate limit and retries; the parsed JSON body or :class:`ListError`."""
        failures = 0
        while True:
            self.limiter.acquire(self.sleep)
            self.stats.requests += 1
            retry_after: float | None = None
            try:
                response = call(
                    **query,
                    _preload_content=False,
                    _request_timeout=self.request_timeout,
                    **({"_headers": {"Accept": accept}} if accept != "application/json" else {}),
                )
                try:
                    body = _read_body(response, path)
                finally:
                    with contextlib.suppress(Exception):
                        response.release_conn()
                data = orjson.loads(body)
                if not isinstance(data, dict):
                    raise ListError(f"GET {path}: the response is not a JSON object")
                return data
            except k8s_client.ApiException as exc:
                status = int(exc.status or 0)
                if status in (HTTP_FORBIDDEN, HTTP_NOT_FOUND, HTTP_GONE) or (
                    400 <= status < 500 and status != HTTP_TOO_MANY
                ):
                    raise ListError(f"{status} {_status_message(exc)}", status) from None
                retry_after = _retry_after(exc)
                error = ListError(f"{status} {_status_message(exc)}", status)
            except orjson.JSONDecodeError as exc:
                error = ListError(f"GET {path}: invalid JSON in the response ({exc.msg})")
            except ListError:
                raise
            except (urllib3.exceptions.HTTPError, OSError) as exc:  # connection errors, timeouts, TLS
                error = ListError(_connection_message(exc))
            failures += 1
            if failures >= self.max_attempts:
                raise error
            self.stats.retries += 1
            delay = min(self.backoff_max, self.backoff_initial * 2 ** (failures - 1))
            delay = delay * (0.5 + random.random() / 2)
            self.sleep(max(delay, retry_after or 0.0))


def _status_message(exc: Any) -> str:
    """The API server's one-line Status.message (never headers or a whole body)."""
    body: Any = getattr(exc, "body", None)
    with contextlib.suppress(Exception):
        message = orjson.loads(body).get("message")
        if message:
            return str(message).splitlines()[0][:300]
    return str(getattr(exc, "reason", "") or "error")


#: A page's body must arrive within this (a server dripping one byte every few seconds is cut off).
PAGE_DEADLINE_SECONDS = 120.0


def _read_body(response: Any, path: str) -> bytes:
    """The whole body, read in chunks under a deadline (the read timeout bounds one read, not all)."""
    deadline = time.monotonic() + PAGE_DEADLINE_SECONDS
    chunks: list[bytes] = []
    while True:
        # read1: what has arrived, after at most one read on the socket. (`stream(amt)` waits for
        # `amt` bytes, so a server dripping a byte at a time would never reach the deadline check.)
        chunk = response.read1(1 << 16, decode_content=True)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        if time.monotonic() > deadline:
            raise ListError(f"GET {path}: the response did not finish within {PAGE_DEADLINE_SECONDS:g} s")


def _retry_after(exc: Any) -> float | None:
    headers: Any = getattr(exc, "headers", None) or {}
    with contextlib.suppress(Exception):
        return min(float(headers.get("Retry-After")), BACKOFF_MAX_SECONDS)
    return None


def _connection_message(exc: BaseException) -> str:
    """A one-line reason: urllib3 wraps the cause several times; keep the innermost, shortened."""
    inner: BaseException = exc
    while getattr(inner, "reason", None) is not None and isinstance(inner.reason, BaseException):  # type: ignore[attr-defined]
        inner = inner.reason  # type: ignore[attr-defined]
    text = str(inner).splitlines()[0] if str(inner) else type(inner).__name__
    return f"cannot reach the API server: {text[:300]}"


def _items(page: Any, info: KindInfo) -> list[dict[str, Any]]:
    """The items of a LIST response, or ListError for a body no API server sends: no ``items`` list,
    a list ``metadata`` that is not an object, a ``continue`` that is not a string, an item that is
    not an object or whose ``metadata`` is not one (a coverage gap naming the kind, never "empty")."""
    items = page.get("items") if isinstance(page, dict) else None
    if not isinstance(items, list):
        what = "no items list" if isinstance(page, dict) else "not a JSON object"
        raise ListError(f"list of {info.plural}: malformed response ({what})", HTTP_OK)
    md = page.get("metadata", {})
    if not isinstance(md, dict):
        raise ListError(f"list of {info.plural}: malformed response (metadata is not an object)", HTTP_OK)
    if not isinstance(md.get("continue") or "", str):
        raise ListError(f"list of {info.plural}: malformed response (metadata.continue is not a string)", HTTP_OK)
    for i, obj in enumerate(items):
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata", {}), dict):
            raise ListError(
                f"list of {info.plural}: malformed response (items[{i}] is not an object)", HTTP_OK
            )
    return items
