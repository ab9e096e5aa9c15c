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
  connection errors too, except a TLS verification failure (a wrong CA or host name), which no
  retry changes.
- **deadlines** (:class:`Deadlines`): a cluster that has not answered at all within ``answer``
  seconds is unreachable; one request (its whole body) has ``request`` seconds, one kind's list
  ``kind``, one cluster's lists ``cluster``. A timer enforces each by shutting the connection's
  socket down, so that no read, however slowly a server drips its bytes, outlives it; a connection
  that reached a deadline, or failed in any way mid-response, is closed, never reused.
- **gaps, not crashes**: a kind that is forbidden (403) or keeps failing becomes a
  :class:`~stockade.scanner.result.CoverageGap`; a custom resource that is not installed (404) is
  simply absent; an unreachable cluster (refused, DNS, TLS verification, no answer) is one gap for
  the whole cluster, found once, not once per kind.
- **credentials**: a kubeconfig user whose credentials cannot be had (a failing exec plugin, a
  missing ``tokenFile``) is a :class:`CredentialError` with its cause in one line: never a request
  without credentials (that the client would send, and report as "401 Unauthorized").

Secrets: a rule (STK-STO-004) needs the names of their data keys, which metadata-only lists do not
carry, so Secrets are listed whole and reduced as each page is parsed, before the page is yielded:
only ``metadata`` (without ``managedFields`` and without the last-applied-configuration annotation,
which holds the values in clear), ``type`` and ``dataKeys`` (the sorted data key names) are kept. No
value can reach the audit's objects, a report or a log.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import socket
import ssl
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import urllib3
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.config import exec_provider as _exec_provider
from kubernetes.config import kube_config as _kube_config

from stockade.policies.facts.credentials import key_names_only
from stockade.policies.kinds.api import KindInfo, discovery_call, kind_in_discovery, list_call, object_kind

PAGE_SIZE = 500
DEFAULT_QPS = 50.0
DEFAULT_BURST = 100
MAX_ATTEMPTS = 5
BACKOFF_INITIAL_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 10.0
REQUEST_TIMEOUT = (10.0, 60.0)  # connect, read (each capped by the deadlines below)
MAX_LIST_RESTARTS = 3
HTTP_OK, HTTP_UNAUTHORIZED = 200, 401
HTTP_FORBIDDEN, HTTP_NOT_FOUND, HTTP_GONE, HTTP_TOO_MANY = 403, 404, 410, 429
#: metadata-only list: what `kubectl get --output=name` asks for (for kinds whose body no rule reads)
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
METADATA_ONLY_KINDS: frozenset[str] = frozenset()
#: kinds reduced to metadata, type and data key names as soon as a page is parsed
KEY_NAMES_ONLY_KINDS = frozenset({"Secret"})


@dataclass(frozen=True, slots=True)
class Deadlines:
    """How long an audit waits for one cluster, in seconds (`stockade audit --answer-timeout`,
    `--kind-timeout`, `--cluster-timeout`).

    ``answer``: until the API server has answered once (any HTTP status), every attempt together:
    then the cluster is unreachable, so a dead cluster is known within this. ``request``: one
    request, headers and whole body. ``kind``: one kind's list, every page and retry. ``cluster``:
    all of one cluster's lists.
    """

    answer: float = 20.0
    request: float = 60.0
    kind: float = 300.0
    cluster: float = 1800.0

    def __post_init__(self) -> None:
        for name in ("answer", "request", "kind", "cluster"):
            if not getattr(self, name) > 0:
                raise ValueError(f"the {name} deadline must be > 0 seconds")


class ListError(Exception):
    """A kind could not be listed; `status` is the HTTP status (None for connection errors).

    ``unreachable``: the cluster as a whole cannot be read (no connection, TLS verification,
    credentials, or its own deadline passed), so no other kind is tried.
    """

    def __init__(self, message: str, status: int | None = None, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.unreachable = unreachable


class CredentialError(k8s_config.ConfigException):
    """The kubeconfig user's credentials could not be had: one line, its cause, no credential (a
    ConfigException, as callers of the client's loader expect)."""


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
        deadlines: Deadlines | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api_client = api_client
        self.name = name
        self.page_size = page_size
        self.max_attempts = max_attempts
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.request_timeout = request_timeout
        self.deadlines = deadlines or Deadlines()
        self.limiter = RateLimiter(qps, burst)
        self.sleep = sleep
        self.stats = ListStats()
        self.answered = False  # the API server has answered a request (any HTTP status)
        self._started: float | None = None  # the first request: the cluster's deadlines count from it
        self._calls: dict[str, Callable[..., Any]] = {}
        self._owns_client = False
        self._connections = _Connections()
        self._connections.watch(api_client)

    @classmethod
    def from_kubeconfig(cls, config_file: str | None, context: str | None, **options: Any) -> ClusterReader:
        """A reader for a kubeconfig context; refreshed credentials are never written back to the file.

        Raises :class:`CredentialError` when the context's user names credentials that cannot be had
        (the client would log the cause to the root logger and send the requests without them)."""
        configuration = k8s_client.Configuration()
        _StrictLoader.for_context(config_file, context).load_and_set(configuration)
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

    def expired(self) -> bool:
        """The cluster's own deadline has passed: nothing more is listed."""
        return self._started is not None and time.monotonic() > self._started + self.deadlines.cluster

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
        deadline = time.monotonic() + self.deadlines.kind
        for _ in range(MAX_LIST_RESTARTS):
            token: str | None = None
            seen_tokens: set[str] = set()
            while True:
                query: dict[str, Any] = {"limit": self.page_size}
                if token:
                    query["_continue"] = token
                if time.monotonic() > deadline:
                    raise ListError(f"list of {info.plural} did not finish within {self.deadlines.kind:g} s")
                try:
                    page = self._get(info, query, accept, deadline)
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

    def _get(self, info: KindInfo, query: dict[str, Any], accept: str, deadline: float) -> dict[str, Any]:
        """One LIST page with rate limit and retries; the parsed JSON body or :class:`ListError`."""
        call = self._calls.get(info.kind)
        if call is None:
            call = self._calls[info.kind] = list_call(self.api_client, info)
        return self._request(call, info.list_path(), query, accept, deadline)

    def discover(self, info: KindInfo) -> KindInfo | None:
        """A kind the table does not hold (a VAP's param kind), by its group-version's discovery
        document: None when not served (the group-version answers 404, or lacks the kind)."""
        call, path = discovery_call(self.api_client, info.api_version)
        try:
            document = self._request(
                call, path, {}, "application/json", time.monotonic() + self.deadlines.kind
            )
        except ListError as exc:
            if exc.status == HTTP_NOT_FOUND:
                return None
            raise
        return kind_in_discovery(document, info.api_version, info.kind)

    def _request(
        self, call: Callable[..., Any], path: str, query: dict[str, Any], accept: str, deadline: float
    ) -> dict[str, Any]:
        """One GET with rate limit, retries and deadlines; the parsed JSON body or :class:`ListError`.

        Each attempt ends by the first of: its own ``request`` deadline, the kind's `deadline`, the
        cluster's deadline and, until the server first answers, the ``answer`` deadline. A timer
        shuts the connection's socket down at that moment (so a server that drips its status line,
        headers or an error body cannot hold a read open), and the connection is never reused.
        """
        now = time.monotonic()
        if self._started is None:
            self._started = now
        failures = 0
        while True:
            limit, why = self._limit(deadline)
            if time.monotonic() >= limit:
                raise ListError(f"GET {path}: {why}", unreachable=why.startswith("no answer"))
            self.limiter.acquire(self.sleep)
            self.stats.requests += 1
            retry_after: float | None = None
            fatal = lost = False  # lost: no HTTP answer (refused, DNS, TLS, timeout, reset)
            headers = False  # this request's status line and headers arrived
            attempt_end, why = self._limit(deadline, request=True)
            fired = threading.Event()
            timer = threading.Timer(max(0.0, attempt_end - time.monotonic()), self._connections.cut, [fired])
            timer.daemon = True
            timer.start()
            try:
                remaining = max(0.01, attempt_end - time.monotonic())
                response = call(
                    **query,
                    _preload_content=False,
                    _request_timeout=(
                        min(self.request_timeout[0], remaining),
                        min(self.request_timeout[1], remaining),
                    ),
                    **({"_headers": {"Accept": accept}} if accept != "application/json" else {}),
                )
                self.answered = headers = True
                body = _read_body(response, path, attempt_end, why)
                if fired.is_set():  # cut short: what arrived is not the whole body
                    raise ListError(f"GET {path}: {why}")
                data = orjson.loads(body)
                if not isinstance(data, dict):
                    raise ListError(f"GET {path}: the response is not a JSON object")
                return data
            except k8s_client.ApiException as exc:
                status = int(exc.status or 0)
                if status == 0:  # the client's wrapping of a TLS error (its other errors are urllib3's)
                    cause = _tls_cause(exc)
                    fatal, lost = isinstance(cause, ssl.SSLCertVerificationError), True
                    error = ListError(_connection_message(cause or exc, why, fired.is_set()))
                else:
                    self.answered = True
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
            except CredentialError as exc:  # an exec plugin's token, refreshed before a request
                raise ListError(str(exc), unreachable=True) from None
            except (urllib3.exceptions.HTTPError, OSError) as exc:  # connection errors, timeouts, TLS
                if headers and fired.is_set():  # the server answers, too slowly: this kind's gap
                    raise ListError(f"GET {path}: {why}") from None
                cause = _tls_cause(exc)
                fatal, lost = isinstance(cause, ssl.SSLCertVerificationError), True
                error = ListError(_connection_message(cause or exc, why, fired.is_set()))
            finally:
                timer.cancel()
                if fired.is_set():
                    self._connections.drop(self.api_client)
            # no connection at all, or one that keeps failing once retried: the cluster is lost, not a kind
            error.unreachable = lost
            failures += 1
            if fatal or failures >= self.max_attempts:
                raise error
            delay = min(self.backoff_max, self.backoff_initial * 2 ** (failures - 1))
            delay = max(delay * (0.5 + random.random() / 2), retry_after or 0.0)
            limit, _ = self._limit(deadline)
            if time.monotonic() + delay >= limit:
                raise error
            self.stats.retries += 1
            self.sleep(delay)

    def _limit(self, deadline: float, *, request: bool = False) -> tuple[float, str]:
        """The earliest of the deadlines that apply now, and what to say when it passes."""
        assert self._started is not None
        limits = [
            (deadline, f"the list did not finish within {self.deadlines.kind:g} s"),
            (
                self._started + self.deadlines.cluster,
                f"the cluster's lists did not finish within {self.deadlines.cluster:g} s",
            ),
        ]
        if not self.answered:
            limits.append(
                (self._started + self.deadlines.answer, f"no answer within {self.deadlines.answer:g} s")
            )
        if request:
            limits.append(
                (
                    time.monotonic() + self.deadlines.request,
                    f"the response did not finish within {self.deadlines.request:g} s",
                )
            )
        return min(limits)


class _Connections:
    """The connections of one reader's `kubernetes` client, so that a deadline can cut the one in use.

    The client's urllib3 pool manager is given pool classes whose connections register themselves
    when they connect. A reader makes one request at a time, so cutting every registered socket
    cuts that request: `shutdown` ends a blocked read at once (closing it would not), wherever it
    is (TLS handshake, status line, headers, body). Cut connections are then dropped from the pool.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: weakref.WeakSet[Any] = weakref.WeakSet()

    def watch(self, api_client: Any) -> None:
        manager = getattr(getattr(api_client, "rest_client", None), "pool_manager", None)
        classes = getattr(manager, "pool_classes_by_scheme", None)
        if manager is None or not isinstance(classes, dict):
            return  # not the client this was written for: the read timeouts still bound each read
        registry = self

        def watched(pool_cls: type) -> type:
            base = pool_cls.ConnectionCls  # type: ignore[attr-defined]

            def connect(conn: Any) -> None:
                registry.add(conn)
                base.connect(conn)

            conn_cls = type(f"Watched{base.__name__}", (base,), {"connect": connect})
            return type(f"Watched{pool_cls.__name__}", (pool_cls,), {"ConnectionCls": conn_cls})

        manager.pool_classes_by_scheme = {scheme: watched(cls) for scheme, cls in classes.items()}

    def add(self, conn: Any) -> None:
        with self._lock:
            self._open.add(conn)

    def cut(self, fired: threading.Event) -> None:
        fired.set()
        with self._lock:
            conns = list(self._open)
        for conn in conns:
            sock = getattr(conn, "sock", None)
            if isinstance(sock, socket.socket):
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the OS socket, under any TLS

    def drop(self, api_client: Any) -> None:
        """After a cut: close every connection, so that none is handed out again."""
        with self._lock:
            conns = list(self._open)
            self._open.clear()
        for conn in conns:
            with contextlib.suppress(Exception):
                conn.close()
        with contextlib.suppress(Exception):
            api_client.rest_client.pool_manager.clear()


def _status_message(exc: Any) -> str:
    """The API server's one-line Status.message (never headers or a whole body)."""
    body: Any = getattr(exc, "body", None)
    with contextlib.suppress(Exception):
        message = orjson.loads(body).get("message")
        if message:
            return str(message).splitlines()[0][:300]
    return str(getattr(exc, "reason", "") or "error")


def _read_body(response: Any, path: str, deadline: float, why: str) -> bytes:
    """The whole body, read in chunks under a deadline (the read timeout bounds one read, not all).

    The connection goes back to the pool only after a whole body; otherwise it is closed first, so
    that the next request cannot read the rest of this one (a dripping body) as its status line."""
    chunks: list[bytes] = []
    whole = False
    try:
        while True:
            # read1: what has arrived, after at most one read on the socket. (`stream(amt)` waits for
            # `amt` bytes, so a server dripping a byte at a time would never reach the deadline check.)
            chunk = response.read1(1 << 16, decode_content=True)
            if not chunk:
                whole = True
                return b"".join(chunks)
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise ListError(f"GET {path}: {why}")
    finally:
        if not whole:
            with contextlib.suppress(Exception):
                response.close()
        with contextlib.suppress(Exception):
            response.release_conn()


def _retry_after(exc: Any) -> float | None:
    headers: Any = getattr(exc, "headers", None) or {}
    with contextlib.suppress(Exception):
        return min(float(headers.get("Retry-After")), BACKOFF_MAX_SECONDS)
    return None


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what it wraps: urllib3's ``reason``, exception arguments, ``__cause__``/``__context__``."""
    todo, seen = [exc], set()
    while todo:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        wrapped = [getattr(e, "reason", None), *getattr(e, "args", ()), e.__cause__, e.__context__]
        todo.extend(w for w in wrapped if isinstance(w, BaseException))


def _tls_cause(exc: BaseException) -> BaseException | None:
    """The TLS error under a client error (the client wraps urllib3's, which wraps ssl's), if any."""
    found = [e for e in _causes(exc) if isinstance(e, ssl.SSLError)]
    verify = [e for e in found if isinstance(e, ssl.SSLCertVerificationError)]
    return (verify or found or [None])[0]


def _connection_message(exc: BaseException, why: str, fired: bool) -> str:
    """One line: why the API server could not be read (the innermost cause, without urllib3's
    wrappings and pool descriptions)."""
    if fired:
        return f"cannot reach the API server: {why}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        detail = str(exc.verify_message or exc.reason or exc).rstrip(".")
        return f"cannot reach the API server: TLS verification failed: {detail}"[:400]
    causes = list(_causes(exc))
    timeouts = (TimeoutError, urllib3.exceptions.ReadTimeoutError, urllib3.exceptions.ConnectTimeoutError)
    if why.startswith("no answer") and any(
        isinstance(e, timeouts) and not isinstance(e, urllib3.exceptions.NewConnectionError) for e in causes
    ):
        return f"cannot reach the API server: {why}"
    inner = causes[-1] if causes else exc
    for e in causes:  # the deepest urllib3 / OS error that says something
        if isinstance(e, OSError | urllib3.exceptions.HTTPError) and str(e):
            inner = e
    text = str(inner).splitlines()[0] if str(inner) else type(inner).__name__
    text = re.sub(r"^<[^>]*>: ", "", text)  # "<urllib3.connection.HTTPConnection object at 0x..>: "
    text = re.sub(r"^HTTPS?Connection(Pool)?\([^)]*\): ", "", text)
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
        raise ListError(
            f"list of {info.plural}: malformed response (metadata.continue is not a string)", HTTP_OK
        )
    for i, obj in enumerate(items):
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata", {}), dict):
            raise ListError(
                f"list of {info.plural}: malformed response (items[{i}] is not an object)", HTTP_OK
            )
    return items


# --- credentials -----------------------------------------------------------------------------------

kube_config: Any = _kube_config  # partly typed: its loader is used as the client uses it
ExecProvider: Any = _exec_provider.ExecProvider

#: kubeconfig user fields that name credentials; a user with none of them is anonymous on purpose
CREDENTIAL_FIELDS = (
    "token",
    "tokenFile",
    "exec",
    "auth-provider",
    "client-certificate",
    "client-certificate-data",
    "username",
)
#: what looks like a token in a plugin's error output (long runs of token characters)
_TOKEN_LIKE = re.compile(r"[A-Za-z0-9_\-.~+/=]{32,}")


def _clean(text: str, *, redact: bool = False) -> str:
    """The first line of an error; `redact`: with anything that looks like a token replaced (what a
    credential plugin wrote on its stderr)."""
    line = (text.strip().splitlines() or [""])[0]
    return (_TOKEN_LIKE.sub("[redacted]", line) if redact else line)[:300]


class _StrictLoader(kube_config.KubeConfigLoader):  # type: ignore[misc]
    """The client's kubeconfig loader, except that credentials that cannot be had are an error.

    The client logs a failing exec plugin to the root logger ("ERROR:root:exec: ...") and goes on
    with no credentials at all; its requests are then refused as "401 Unauthorized", the cause lost.
    Here the plugin's failure is a :class:`CredentialError` (when the reader is made, and when its
    token is refreshed before a request), and a user that names credentials but yields none never
    gets a client.
    """

    @classmethod
    def for_context(cls, config_file: str | None, context: str | None) -> _StrictLoader:
        path = config_file or os.environ.get("KUBECONFIG") or kube_config.KUBE_CONFIG_DEFAULT_LOCATION
        merged = kube_config.KubeConfigMerger(path)
        if merged.config is None:
            raise k8s_config.ConfigException("Invalid kube-config file. No configuration found.")
        return cls(config_dict=merged.config, active_context=context, config_base_path=None)

    def load_and_set(self, client_configuration: Any) -> None:
        user = self._user.value if self._user is not None else {}
        try:
            super().load_and_set(client_configuration)
        except CredentialError:
            raise
        except (OSError, k8s_config.ConfigException) as exc:  # a tokenFile or certificate file missing
            raise CredentialError(f"context {self._context_name()!r}: {_clean(str(exc))}") from None
        named = [f for f in CREDENTIAL_FIELDS if isinstance(user, dict) and user.get(f)]
        has = bool(client_configuration.api_key) or bool(client_configuration.cert_file)
        if named and not has:
            raise CredentialError(
                f"context {self._context_name()!r}: its user ({', '.join(named)}) yields no credentials"
            )

    def _context_name(self) -> str:
        context = self.current_context
        return str(context.get("name") if isinstance(context, dict) else context)

    def _load_from_exec_plugin(self) -> bool | None:
        if "exec" not in self._user:
            return None
        spec = self._user["exec"]
        command = str(spec.value.get("command") if hasattr(spec, "value") else "") or "exec plugin"
        base_path = self._get_base_path(self._cluster.path)
        try:
            status = ExecProvider(spec, base_path, self._cluster).run()
        except Exception as exc:
            raise CredentialError(
                f"credential plugin {os.path.basename(command)!r} failed: {_clean(str(exc), redact=True)}"
            ) from None
        if "token" in status:
            self.token = f"Bearer {status['token']}"
        elif "clientCertificateData" in status and "clientKeyData" in status:
            for attr, key in (("cert_file", "clientCertificateData"), ("key_file", "clientKeyData")):
                data = kube_config.FileOrData(
                    status,
                    None,
                    data_key_name=key,
                    file_base_path=base_path,
                    base64_file_content=False,
                    temp_file_path=self._temp_file_path,
                )
                setattr(self, attr, data.as_file())
        else:
            name = os.path.basename(command)
            raise CredentialError(
                f"credential plugin {name!r}: its output has no token and no client certificate"
            )
        if "expirationTimestamp" in status:
            self.expiry = kube_config.parse_rfc3339(status["expirationTimestamp"])
        return True
