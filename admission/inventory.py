"""The webhook's inventory cache: the cluster objects the facts need, kept current by list + watch.

The admission path must never call the API server: a slow or unavailable API server would make every
admission request slow, and the API server calling us calling it is a loop that can deadlock under
load. So namespace labels and cross-object facts (`input.namespace`, `input.facts`) are read from
memory, from an :class:`~stockade.policies.facts.Inventory` that background threads keep in step with
the cluster, one thread per watched kind, the way client-go's reflector does:

1. LIST the kind in pages (`limit=500` + `continue`), as raw JSON parsed with orjson (the client's
   model classes cost far more than the parse and are never needed: analyzers read plain dicts);
2. swap that kind's objects in the inventory, and remember the list's `resourceVersion`;
3. WATCH from that resourceVersion (bookmarks on, a server-side timeout of ~5 minutes), applying
   ADDED / MODIFIED / DELETED events and advancing the resourceVersion on every event and BOOKMARK;
4. when the watch times out, watch again from the last resourceVersion; when the resourceVersion has
   expired (`410 Gone`, as an HTTP status or an ERROR event) only a new LIST can resume, so relist;
   on any other error back off exponentially (capped, with jitter) and retry.

Requests go through the generated `kubernetes` API methods with `_preload_content=False`: they
return the raw urllib3 response (no models), handle authentication (and in-cluster token refresh),
and exist with the same parameters in every client version `pyproject.toml` allows. The watch stream
is read here rather than through `kubernetes.watch.Watch`, which parses with the standard `json`
module, builds model objects unless told not to, and then mishandles ERROR events.

Consistency for the request path: every write to the inventory, and every read through
:meth:`InventoryCache.facts` / :meth:`InventoryCache.namespace`, holds one lock, so an analyzer that
iterates a kind never sees a dict change size under it, and a relist (add every listed object, then
drop the ones that are gone) is atomic for readers. Even a lock-free `get` never sees a listed object
missing, because objects are replaced before stale ones are removed.

`inventory.complete` (absence means "does not exist") becomes true only once every kind is listed,
and only if the watched kinds cover every kind the inventory indexes: before that, a missing
ServiceAccount is "not seen", not "missing", so nothing is denied for the cache being cold.

Only kind, name, counts, resourceVersions and HTTP status lines are logged: never object contents,
request headers or response bodies beyond the API server's one-line `Status.message`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from stockade.policies.facts import Inventory, facts_for
from stockade.policies.facts.credentials import key_names_only
from stockade.policies.facts.inventory import WATCHED_KINDS
from stockade.policies.kinds.api import KINDS, KindInfo, discover, info_for, list_call
from stockade.policies.model import namespace_info

log = logging.getLogger("stockade.admission.inventory")

#: Page size of LISTs: large enough for few round trips, small enough to bound one response's memory.
PAGE_SIZE = 500
#: Server-side watch timeout; a quiet watch is re-opened this often (and `age_seconds` stays below it).
WATCH_TIMEOUT_SECONDS = 300
#: Time to wait for a connection; reads get the watch timeout plus this much, to notice a dead peer.
CONNECT_TIMEOUT_SECONDS = 10.0
LIST_READ_TIMEOUT_SECONDS = 60.0
BACKOFF_INITIAL_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 30.0
HTTP_GONE = 410
HTTP_NOT_FOUND = 404
#: A custom kind whose CRD is not installed (404) counts as listed and empty; it is looked for again
#: this often, so a CRD installed later (Cilium, Calico) is picked up without a restart.
NOT_INSTALLED_RECHECK_SECONDS = 60.0
#: An expired `continue` token restarts the whole LIST (a consistent snapshot); give up after this many.
MAX_LIST_RESTARTS = 3
MAX_ERROR_CHARS = 300


#: One kind the cache lists and watches, across all namespaces when it is namespaced. The table of
#: where each kind lives is shared with the audit and the deployment's RBAC (stockade.policies.kinds.api).
WatchedKind = KindInfo

#: How to watch each kind an analyzer may index; DEFAULT_KINDS picks those in WATCHED_KINDS, so a
#: later issue that indexes a kind gets it watched (and the deployment's RBAC follows the same table).
WATCHABLE: dict[str, WatchedKind] = KINDS
DEFAULT_KINDS: tuple[WatchedKind, ...] = tuple(WATCHABLE[k] for k in sorted(WATCHED_KINDS) if k in WATCHABLE)


class _Stopped(Exception):
    """The cache is stopping: unwind the kind's thread without logging an error."""


@dataclass
class _WatchEnd:
    """How one watch request ended: `resource_version` None means it expired and a LIST must follow."""

    resource_version: str | None
    events: int
    seconds: float


@dataclass
class _KindState:
    """What one kind's thread owns; `response` is shared with stop(), under the cache's lock."""

    kind: WatchedKind
    list_call: Callable[..., Any]
    keys: set[tuple[str, str]] = field(default_factory=set)
    listed: bool = False
    last_heard: float = field(default_factory=time.monotonic)
    response: Any = None
    thread: threading.Thread | None = None


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    md = obj.get("metadata") or {}
    return str(md.get("namespace") or ""), str(md.get("name") or "")


def _resource_version(obj: Mapping[str, Any]) -> str | None:
    md = obj.get("metadata")
    rv = md.get("resourceVersion") if isinstance(md, Mapping) else None
    return str(rv) if rv else None


def describe_error(exc: BaseException) -> str:
    """A one-line account of a failure that never includes headers (the ApiException str does)."""
    status = getattr(exc, "status", None)
    if isinstance(exc, k8s_client.ApiException) or isinstance(status, int):
        text = f"HTTP {status} {getattr(exc, 'reason', '') or ''}".strip()
        body = getattr(exc, "body", None)
        message = None
        if body:
            with contextlib.suppress(orjson.JSONDecodeError, TypeError):
                parsed = orjson.loads(body)
                message = parsed.get("message") if isinstance(parsed, dict) else None
        if message:
            text += f": {message}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return text[:MAX_ERROR_CHARS]


def _lines(response: Any) -> Iterator[bytes]:
    """The non-empty lines of a streamed (chunked) response, as they arrive."""
    buffer = b""
    for chunk in response.stream(None):
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if line.strip():
                yield line


class InventoryCache:
    """An Inventory of the watched kinds, filled by LIST and kept current by WATCH in background threads.

    Use :meth:`from_kubeconfig` or :meth:`in_cluster`, or pass an `ApiClient` (tests). Start it with
    :meth:`start` (or a `with` block), gate readiness on :attr:`synced`, read through
    :meth:`namespace` and :meth:`facts` (a `stockade.policies.evaluate.FactsSource`), and
    :meth:`stop` it. Each process needs its own cache, started after any fork: threads do not survive a fork.
    """

    def __init__(
        self,
        api_client: Any,
        kinds: Iterable[tuple[Any, ...]] = DEFAULT_KINDS,
        *,
        page_size: int = PAGE_SIZE,
        watch_timeout_seconds: int = WATCH_TIMEOUT_SECONDS,
        connect_timeout_seconds: float = CONNECT_TIMEOUT_SECONDS,
        list_timeout_seconds: float = LIST_READ_TIMEOUT_SECONDS,
        backoff_initial_seconds: float = BACKOFF_INITIAL_SECONDS,
        backoff_max_seconds: float = BACKOFF_MAX_SECONDS,
        not_installed_recheck_seconds: float = NOT_INSTALLED_RECHECK_SECONDS,
        cluster: str | None = None,
        params: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.api_client = api_client
        self.kinds = tuple(WatchedKind(*k) for k in kinds)
        # VAP param kinds ((apiVersion, kind)): kept whole beside the inventory, for set_inventory; a
        # kind the table does not hold is found by discovery in its thread (plural "" until then)
        extra: list[WatchedKind] = []
        for api_version, kind in sorted(set(params)):
            if kind in {k.kind for k in self.kinds}:
                continue  # already watched (and indexed)
            group, _, version = api_version.rpartition("/")
            extra.append(
                info_for(api_version, kind) or WatchedKind(group, version, "", kind, True, custom=True)
            )
        self._params = {k.kind for k in extra}
        self._extra: dict[str, dict[tuple[str, str], dict[str, Any]]] = {k: {} for k in self._params}
        self._extra_version = 0
        names = [k.kind for k in self.kinds]
        if len(set(names)) != len(names):
            raise ValueError(f"a kind is watched twice: {names}")
        not_indexed = sorted(set(names) - WATCHED_KINDS)
        if not_indexed:
            # Inventory.add drops them: listing and watching them would only cost memory and traffic.
            raise ValueError(f"the inventory does not index {', '.join(not_indexed)} (see WATCHED_KINDS)")
        self.page_size = page_size
        self.watch_timeout_seconds = watch_timeout_seconds
        self.connect_timeout_seconds = connect_timeout_seconds
        self.list_timeout_seconds = list_timeout_seconds
        self.backoff_initial_seconds = backoff_initial_seconds
        self.backoff_max_seconds = backoff_max_seconds
        self.not_installed_recheck_seconds = not_installed_recheck_seconds
        # Complete only once synced, and only if every indexed kind is watched (module docstring).
        self._covers_indexed = set(names) >= WATCHED_KINDS
        # The cluster's name selects per-cluster settings (the sandbox profile), as in an audit.
        self._inventory = Inventory(complete=False, cluster=cluster)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._synced = threading.Event()
        self._started = False
        self._owns_client = False
        self._states = [_KindState(k, self._list_call(k)) for k in self.kinds] + [
            _KindState(k, self._list_call(k) if k.plural else _undiscovered) for k in extra
        ]
        self.kinds = self.kinds + tuple(extra)

    # -- construction -------------------------------------------------------------------------------

    @classmethod
    def from_kubeconfig(
        cls, config_file: str | None = None, context: str | None = None, **options: Any
    ) -> InventoryCache:
        """A cache for a kubeconfig context (the default file and current context when not given).

        `persist_config=False`: refreshed credentials are never written back into the file. A file or
        context that cannot be used is a :class:`ClusterConfigError`.
        """
        cache = cls(kubeconfig_client(config_file, context), **options)
        cache._owns_client = True
        return cache

    @classmethod
    def in_cluster(cls, **options: Any) -> InventoryCache:
        """A cache for the cluster the pod runs in, with its ServiceAccount token (refreshed on expiry).

        The configuration is the cache's own, not the client library's process-wide default. Outside a
        pod this is a :class:`ClusterConfigError`.
        """
        cache = cls(in_cluster_client(), **options)
        cache._owns_client = True
        return cache

    def _list_call(self, kind: WatchedKind) -> Callable[..., Any]:
        """The generated list-or-watch method for a kind, across all namespaces."""
        return list_call(self.api_client, kind)

    # -- lifecycle ----------------------------------------------------------------------------------

    def start(self) -> None:
        """Start one list+watch thread per kind (daemon threads: they never hold the process up)."""
        if self._started:
            raise RuntimeError("an InventoryCache is started once")
        self._started = True
        for state in self._states:
            state.last_heard = time.monotonic()
            state.thread = threading.Thread(
                target=self._run, args=(state,), name=f"stockade-inventory-{state.kind.plural}", daemon=True
            )
            state.thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the threads: wake their waits, cut their open requests, and join them within `timeout`."""
        self._stopping.set()
        with self._lock:
            responses = [s.response for s in self._states if s.response is not None]
        for response in responses:
            _shutdown(response)
        deadline = time.monotonic() + timeout
        for state in self._states:
            if state.thread is not None:
                state.thread.join(max(0.0, deadline - time.monotonic()))
        alive = [s.kind.plural for s in self._states if s.thread is not None and s.thread.is_alive()]
        if alive:
            log.warning("inventory threads still stopping", extra={"kinds": alive})
        if self._owns_client:
            close = getattr(self.api_client, "close", None)
            if callable(close):
                close()

    def __enter__(self) -> InventoryCache:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    # -- what the webhook reads -----------------------------------------------------------------------

    @property
    def inventory(self) -> Inventory:
        """The live inventory. Read it through namespace()/facts(), which hold the lock: iterating it
        directly can race with the watch threads."""
        return self._inventory

    @property
    def synced(self) -> bool:
        """True once every watched kind has completed its first LIST (the webhook's readiness)."""
        return self._synced.is_set()

    def wait_synced(self, timeout: float | None = None) -> bool:
        """Block until synced or `timeout` seconds pass; returns :attr:`synced` (for startup, tests)."""
        return self._synced.wait(timeout)

    def age_seconds(self) -> float:
        """Seconds since the stalest kind last heard from the API server (a list, an event, a watch
        opened or ended normally); below the watch timeout while healthy, growing while not."""
        now = time.monotonic()
        return max((now - s.last_heard for s in self._states), default=0.0)

    def namespace(self, name: str | None) -> dict[str, Any]:
        """`input.namespace` for a namespace name: its labels and annotations when the cache has it."""
        with self._lock:
            obj = self._inventory.get("Namespace", None, name) if name else None
            return namespace_info(obj, name)

    @property
    def version(self) -> int:
        """Grows with every change of the inventory or of the params objects."""
        return self._inventory.version + self._extra_version

    def snapshot(self) -> tuple[int, list[Mapping[str, Any]]]:
        """(version, every cached object), read under the lock: Gatekeeper's data.inventory, and the
        VAPs' params objects."""
        with self._lock:
            extra = [o for by_key in self._extra.values() for o in by_key.values()]
            return self.version, self._inventory.objects() + extra

    def facts(self, obj: Mapping[str, Any], pod: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """`input.facts` for an object (one pod spec of a workload), from the analyzers over the cache."""
        with self._lock:
            return facts_for(obj, self._inventory, pod)

    # -- the per-kind thread --------------------------------------------------------------------------

    def _run(self, state: _KindState) -> None:
        """LIST, then WATCH until stopped; relist on expiry, back off on failures and idle churn."""
        failures = 0
        resource_version: str | None = None
        while not self._stopping.is_set():
            try:
                if not state.kind.plural:
                    self._discover(state)
                if resource_version is None:
                    resource_version = self._list(state)
                end = self._watch(state, resource_version)
            except _Stopped:
                break
            except Exception as exc:
                if self._stopping.is_set():
                    break
                if (
                    isinstance(exc, k8s_client.ApiException)
                    and exc.status == HTTP_NOT_FOUND
                    and state.kind.custom
                ):
                    if resource_version is None:  # the LIST: the CRD is not installed
                        self._not_installed(state)
                        failures = 0
                        self._stopping.wait(self.not_installed_recheck_seconds)
                    resource_version = None  # a WATCH: the CRD went away; LIST again
                    continue
                failures += 1
                delay = self._backoff(failures)
                log.warning(
                    "inventory request failed, retrying",
                    extra={
                        "kind": state.kind.kind,
                        "phase": "list" if resource_version is None else "watch",
                        "error": describe_error(exc),
                        "failures": failures,
                        "retry_in_seconds": round(delay, 3),
                    },
                )
                self._stopping.wait(delay)
                continue
            resource_version = end.resource_version
            if resource_version is None:
                log.info("inventory watch expired, relisting", extra={"kind": state.kind.kind})
            if end.events or end.seconds >= min(30.0, self.watch_timeout_seconds / 2):
                failures = 0  # a healthy watch: re-open (or relist) at once
            else:
                # Closed at once with nothing in it: do not hammer a server that keeps doing that.
                failures += 1
                self._stopping.wait(self._backoff(failures))

    def _discover(self, state: _KindState) -> None:
        """Find a param kind's plural by discovery; its group-version not served (404) or the kind not
        in it: not installed (nothing to list, looked for again later)."""
        found = discover(
            self.api_client, state.kind.api_version, state.kind.kind, self.connect_timeout_seconds
        )
        if found is None:
            raise k8s_client.ApiException(status=HTTP_NOT_FOUND, reason=f"{state.kind.kind} is not served")
        state.kind, state.list_call = found, self._list_call(found)

    def _not_installed(self, state: _KindState) -> None:
        """A custom kind whose CRD is not installed: nothing of it can exist, a complete answer."""
        if not state.listed or state.keys:
            log.info("inventory kind not installed", extra={"kind": state.kind.kind})
        self._replace(state, [])

    def _backoff(self, failures: int) -> float:
        delay = min(self.backoff_max_seconds, self.backoff_initial_seconds * 2.0 ** (failures - 1))
        return delay * random.uniform(0.8, 1.0)  # jitter: replicas do not retry in lockstep

    def _heard(self, state: _KindState) -> None:
        state.last_heard = time.monotonic()

    @contextlib.contextmanager
    def _tracked(self, state: _KindState, response: Any, *, reuse: bool) -> Iterator[Any]:
        """Make an open response visible to stop(), and give its connection back however the block
        ends: to the pool when the body was read to its end (`reuse`), else closed, so that no
        connection with unread bytes is reused."""
        with self._lock:
            state.response = response
        ok = False
        try:
            if self._stopping.is_set():  # stop() may have looked before the response was tracked
                raise _Stopped
            yield response
            ok = reuse
        finally:
            with self._lock:
                state.response = None
            with contextlib.suppress(Exception):
                if not ok:
                    response.close()
                response.release_conn()

    def _list(self, state: _KindState) -> str:
        """One consistent paginated LIST of a kind; swaps its objects in and returns the resourceVersion."""
        started = time.monotonic()
        for _ in range(MAX_LIST_RESTARTS):
            items: list[dict[str, Any]] = []
            token: str | None = None
            pages = 0
            while True:
                if self._stopping.is_set():
                    raise _Stopped
                options: dict[str, Any] = {"limit": self.page_size}
                if token:
                    options["_continue"] = token
                try:
                    response = state.list_call(
                        **options,
                        _preload_content=False,
                        _request_timeout=(self.connect_timeout_seconds, self.list_timeout_seconds),
                    )
                except k8s_client.ApiException as exc:
                    if exc.status == HTTP_GONE and token:
                        break  # the continue token expired: restart for a consistent snapshot
                    raise
                with self._tracked(state, response, reuse=True):
                    page = orjson.loads(response.data)
                pages += 1
                md = page.get("metadata") or {}
                items.extend(self._normalize(state.kind, o) for o in page.get("items") or [])
                token = md.get("continue") or None
                if token is None:
                    resource_version = str(md.get("resourceVersion") or "")
                    self._replace(state, items)
                    log.info(
                        "inventory listed",
                        extra={
                            "kind": state.kind.kind,
                            "objects": len(items),
                            "pages": pages,
                            "resource_version": resource_version,
                            "seconds": round(time.monotonic() - started, 3),
                        },
                    )
                    return resource_version
            log.info("inventory list continue token expired, restarting", extra={"kind": state.kind.kind})
        raise RuntimeError(f"LIST of {state.kind.plural} restarted {MAX_LIST_RESTARTS} times")

    def _watch(self, state: _KindState, resource_version: str) -> _WatchEnd:
        """One WATCH request from `resource_version`, applied event by event until it ends."""
        started = time.monotonic()
        if self._stopping.is_set():
            raise _Stopped
        try:
            response = state.list_call(
                watch=True,
                resource_version=resource_version,
                allow_watch_bookmarks=True,
                timeout_seconds=self.watch_timeout_seconds,
                _preload_content=False,
                _request_timeout=(self.connect_timeout_seconds, self.watch_timeout_seconds + 30.0),
            )
        except k8s_client.ApiException as exc:
            if exc.status == HTTP_GONE:
                return _WatchEnd(None, 0, time.monotonic() - started)
            raise
        events = 0
        with self._tracked(state, response, reuse=False):
            self._heard(state)
            for line in _lines(response):
                if self._stopping.is_set():
                    raise _Stopped
                event = orjson.loads(line)
                etype, obj = event.get("type"), event.get("object")
                if not isinstance(obj, dict):
                    raise ValueError(f"watch event {etype!r} without an object")
                if etype == "ERROR":
                    if obj.get("code") == HTTP_GONE:
                        return _WatchEnd(None, events, time.monotonic() - started)
                    raise k8s_client.ApiException(
                        status=obj.get("code"), reason=f"{obj.get('reason')}: {obj.get('message')}"
                    )
                if etype in ("ADDED", "MODIFIED"):
                    self._put(state, self._normalize(state.kind, obj))
                elif etype == "DELETED":
                    self._delete(state, obj)
                elif etype != "BOOKMARK":
                    log.debug("inventory watch event ignored", extra={"kind": state.kind.kind, "type": etype})
                    continue
                resource_version = _resource_version(obj) or resource_version
                events += 1
                self._heard(state)
            self._heard(state)  # a watch that ran to its timeout is the API server telling us "no news"
        return _WatchEnd(resource_version, events, time.monotonic() - started)

    # -- inventory writes ------------------------------------------------------------------------------

    @staticmethod
    def _normalize(kind: WatchedKind, obj: dict[str, Any]) -> dict[str, Any]:
        """List items carry no kind/apiVersion (the Inventory keys on kind); managedFields are dropped:
        no analyzer reads them and they are often most of an object's size. A Secret (a VAP's param
        kind) is reduced to its key names, as the audit lists Secrets."""
        obj.setdefault("kind", kind.kind)
        obj.setdefault("apiVersion", kind.api_version)
        if kind.kind == "Secret" and not kind.group:
            key_names_only(obj)  # a VAP's Secret params: key names only, no value kept in memory
            return obj
        md = obj.get("metadata")
        if isinstance(md, dict):
            md.pop("managedFields", None)
        return obj

    def _replace(self, state: _KindState, objects: list[dict[str, Any]]) -> None:
        """Swap a kind's objects: add or replace every listed one, then drop those no longer listed."""
        keys = {_key(o) for o in objects}
        with self._lock:
            if state.kind.kind in self._params:
                self._extra[state.kind.kind] = {_key(o): o for o in objects}
                self._extra_version += 1
                objects = []  # not indexed: the inventory drops them
            for obj in objects:
                self._inventory.add(obj)
            for namespace, name in state.keys - keys:
                self._inventory.remove(state.kind.kind, namespace, name)
            state.keys = keys
        self._heard(state)
        if not state.listed:
            state.listed = True
            self._check_synced()

    def _put(self, state: _KindState, obj: dict[str, Any]) -> None:
        with self._lock:
            if state.kind.kind in self._params:
                self._extra[state.kind.kind][_key(obj)] = obj
                self._extra_version += 1
            else:
                self._inventory.add(obj)
            state.keys.add(_key(obj))

    def _delete(self, state: _KindState, obj: Mapping[str, Any]) -> None:
        namespace, name = _key(obj)
        with self._lock:
            if state.kind.kind in self._params:
                self._extra[state.kind.kind].pop((namespace, name), None)
                self._extra_version += 1
            self._inventory.remove(state.kind.kind, namespace, name)
            state.keys.discard((namespace, name))

    def _check_synced(self) -> None:
        with self._lock:
            if self._synced.is_set() or not all(s.listed for s in self._states):
                return
            self._inventory.complete = self._covers_indexed
            self._synced.set()
        if not self._covers_indexed:
            log.warning(
                "inventory synced, but incomplete: some indexed kinds are not watched",
                extra={"unwatched": sorted(WATCHED_KINDS - {k.kind for k in self.kinds})},
            )
        log.info("inventory synced", extra={"kinds": [k.kind for k in self.kinds]})


class ClusterConfigError(Exception):
    """No API client could be made (no kubeconfig, an unknown context, not in a pod): one line that says
    which, and never a credential."""


def _default_kubeconfigs() -> list[str]:
    """The files the client reads without `config_file`: $KUBECONFIG's list, else ~/.kube/config."""
    listed = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    return [os.path.expanduser(p) for p in listed or ["~/.kube/config"]]


def kubeconfig_client(config_file: str | None = None, context: str | None = None) -> Any:
    """An `ApiClient` for a kubeconfig context (the default files and current context when not given),
    checked before any request: the file exists and holds the context."""
    paths = [config_file] if config_file else _default_kubeconfigs()
    where = f"--kubeconfig {config_file}" if config_file else f"kubeconfig {os.pathsep.join(paths)}"
    if not any(os.path.isfile(p) for p in paths):
        hint = "" if config_file else " (give --kubeconfig FILE, or set KUBECONFIG)"
        raise ClusterConfigError(f"{where}: no such file{hint}")
    new_client: Any = k8s_config.new_client_from_config  # untyped in some client versions
    try:
        return new_client(config_file=config_file, context=context, persist_config=False)
    except (k8s_config.ConfigException, OSError, ValueError, TypeError, AttributeError) as exc:
        names = _context_names(paths)
        if context is not None and names is not None and context not in names:
            raise ClusterConfigError(
                f"--context {context}: not in {where.split(' ', 1)[1]}"
                f" (its contexts: {', '.join(names) or 'none'})"
            ) from None
        raise ClusterConfigError(f"{where}: {_first_line(exc)}") from None


def _context_names(paths: Iterable[str]) -> list[str] | None:
    """The context names of kubeconfig files (None when one cannot be read as YAML)."""
    import yaml

    names: list[str] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as fh:
                data = yaml.safe_load(fh)
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return None
        contexts = data.get("contexts") if isinstance(data, dict) else None
        names += [str(c["name"]) for c in contexts or () if isinstance(c, dict) and "name" in c]
    return names


def in_cluster_client() -> Any:
    """An `ApiClient` with the pod's ServiceAccount (a configuration of its own, not the process-wide
    default)."""
    configuration = k8s_client.Configuration()
    load: Any = k8s_config.load_incluster_config  # untyped in some client versions
    try:
        load(client_configuration=configuration)
    except k8s_config.ConfigException as exc:
        if not os.environ.get("KUBERNETES_SERVICE_HOST"):
            raise ClusterConfigError(
                "not running in a Kubernetes pod (KUBERNETES_SERVICE_HOST is not set), so there is no "
                "in-cluster configuration"
            ) from None
        raise ClusterConfigError(f"in-cluster configuration: {_first_line(exc)}") from None
    return k8s_client.ApiClient(configuration)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:MAX_ERROR_CHARS] if text else type(exc).__name__


def _undiscovered(*_: Any, **__: Any) -> Any:
    raise RuntimeError("a param kind is listed before its discovery")  # _run discovers first


def _shutdown(response: Any) -> None:
    """Unblock a thread reading `response`: shut its socket down (closing it would not wake a read)."""
    shutdown = getattr(response, "shutdown", None)  # urllib3 >= 2.3
    if callable(shutdown):
        with contextlib.suppress(Exception):
            shutdown()
            return
    connection = getattr(response, "connection", None) or getattr(response, "_connection", None)
    sock = getattr(connection, "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
