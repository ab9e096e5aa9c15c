"""The webhook's ASGI application: `POST /validate`, `/healthz`, `/readyz`, `/metrics`.

A request's cost is bounded before, during and after evaluation:

- bodies are read concurrently, each within ``body_timeout_seconds`` (HTTP 408, connection closed)
  and ``max_request_bytes`` (HTTP 400), all together within ``max_buffered_bytes`` (the longest
  reader is dropped: :mod:`stockade.admission.bodies`);
- a body with more JSON values than ``max_object_values`` allows is denied from its bytes, unparsed;
- at most ``admission.max_inflight`` requests per process (default 4) are parsed and evaluated at
  once, the smallest body first: while the engine process evaluates one, the next is parsed and
  sent behind it (:meth:`~stockade.policies.engines.process.ProcessEngine.evaluate_inputs_async`),
  and a small request never waits behind more than a few large ones;
- objects beyond the structural limits, or with fields of the wrong type, are denied before any rule
  runs, in either failure mode (:mod:`stockade.admission.bounds`);
- evaluation runs on one dedicated thread per process (the engine is not reentrant), and with
  ``isolated`` (what `webhook serve` uses) the engine itself runs in a child process that is killed
  and replaced when it overruns ``evaluation_timeout_seconds``
  (:mod:`stockade.policies.engines.process`): regorus holds the GIL while it evaluates, so an
  unbounded evaluation in this process would stall the event loop and every other request with it.
  Only what is bounded runs here: an input up to 16 KiB that the compiled VM alone judges, which
  stops every run at its instruction limit (a few milliseconds at most, ``bench/vm_bound.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from stockade.admission.bodies import (
    LARGE_BODY_BYTES,
    BadRequest,
    BodyReader,
    Evicted,
    SlowBody,
    SmallestFirst,
)
from stockade.admission.bounds import (
    exact_values_bound,
    has_old_object,
    malformed,
    object_shallow,
    oversize,
    review_uid,
    values_upper_bound,
)
from stockade.admission.decide import denial, evaluate, evaluate_async, failure, judged, respond
from stockade.admission.review import AdmissionResponse, AdmissionReview, AdmissionReviewResponse
from stockade.policies.config.settings import Config, ConfigError, first_error, load_config
from stockade.policies.engines.base import RuleEvaluationError
from stockade.policies.engines.library import PolicyError
from stockade.policies.engines.process import (
    EngineClosed,
    EngineProcessError,
    EvaluationTimeout,
    ProcessEngine,
)
from stockade.policies.evaluate import Evaluator, FactsSource, InventoryFacts
from stockade.policies.kinds.workloads import WorkloadKinds

log = logging.getLogger("stockade.admission")


class Metrics:
    """Prometheus metrics of one app (its own registry, so several apps can live in one process)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "stockade_admission_requests",
            "AdmissionReview requests answered",
            ["operation", "kind", "decision"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "stockade_admission_request_seconds",
            "Time to answer an AdmissionReview, from body read to response",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
            registry=self.registry,
        )
        self.evaluation = Histogram(
            "stockade_rule_evaluation_seconds",
            "Time the policy engine spent on one request",
            buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1),
            registry=self.registry,
        )
        self.cache_age = Gauge(
            "stockade_inventory_age_seconds",
            "Seconds since the inventory cache last heard from the API server",
            registry=self.registry,
        )
        self.config_reloads = Counter(
            "stockade_config_reloads", "Configuration reloads", ["result"], registry=self.registry
        )
        self.refused = Counter(
            "stockade_admission_refused",
            "Requests refused before evaluation: oversize or malformed objects, slow or oversize bodies",
            ["reason"],
            registry=self.registry,
        )
        self.certificate_reloads = Counter(
            "stockade_certificate_reloads",
            "Serving certificate reloads: applied, or rejected (the current one kept serving)",
            ["result"],
            registry=self.registry,
        )
        self.connections_shed = Counter(
            "stockade_connections_shed",
            "Connections past admission.max_connections: evicted (the one that waited longest for a"
            " request), overloaded (answered 503 with Retry-After), closed (past twice the bound)",
            ["action"],
            registry=self.registry,
        )
        self.engine_restarts = Counter(
            "stockade_engine_restarts",
            "Engine processes killed and replaced after an evaluation overran its timeout or died",
            registry=self.registry,
        )


@dataclass
class WebhookState:
    """What a request needs; `evaluator` and `config` are swapped whole on a config reload.

    regorus objects belong to the thread that created them, so the evaluator is built, replaced and
    given the inventory only on the one evaluation thread (`executor`), never on the event loop.
    With its engine in a child process (``isolated``, what `webhook serve` runs), the evaluator holds
    no regorus object: requests are then evaluated from the event loop, which builds the inputs and
    findings and waits for the child in its selector (no thread hop per request); the thread only
    builds it, loads inventory changes into it and replaces it.
    """

    config: Config
    facts: FactsSource = field(default_factory=InventoryFacts)
    ready: Callable[[], bool] = lambda: True
    cache_age: Callable[[], float] = lambda: 0.0
    config_path: Path | None = None
    policy_dirs: tuple[Path, ...] = ()
    metrics: Metrics = field(default_factory=Metrics)
    executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="stockade-eval")
    )
    evaluator: Evaluator | None = None
    #: called when the app shuts down (e.g. stop the inventory cache's threads)
    on_shutdown: list[Callable[[], None]] = field(default_factory=list)
    #: the cluster this webhook guards (`--cluster`), as the audit names it: per-cluster settings
    cluster: str | None = None
    #: an OPA server holding `stockade policy bundle` to evaluate on (`--engine opa`); None: embedded
    opa_url: str | None = None
    _inventory_version: tuple[int, int] | None = None
    #: False only for benchmarks: parse and answer "allowed" without evaluating (the floor)
    evaluation: bool = True
    #: run the embedded engine in a child process killed on timeout (`webhook serve` does)
    isolated: bool = False
    #: the handler `webhook serve` installs for its JSON lines: each request's line is written to it
    #: directly (:class:`RequestLog`); without one, through `logging`
    log_handler: logging.Handler | None = None
    #: whether the config watcher runs (readyz reports a dead one); set by the app
    watcher: asyncio.Task[None] | None = None
    #: set to reload the config and policies now, changed or not (SIGHUP)
    reload_requested: asyncio.Event = field(default_factory=asyncio.Event)
    _kinds: tuple[Config, WorkloadKinds] | None = None

    def workload_kinds(self) -> WorkloadKinds:
        """The workload kinds of the active config (the built-in ones and its `workloads:`), built
        once per config, not per request."""
        if self._kinds is None or self._kinds[0] is not self.config:
            self._kinds = (self.config, WorkloadKinds(self.config.workload_kinds()))
        return self._kinds[1]

    def _build(self, config: Config) -> Evaluator:
        isolated = self.isolated and self.opa_url is None
        return Evaluator.default(config, self.policy_dirs, opa_url=self.opa_url, isolated=isolated)

    def evaluator_here(self) -> Evaluator:
        """The evaluator, built on first use; call only on the evaluation thread."""
        if self.evaluator is None:
            self.evaluator = self._build(self.config)
        return self.evaluator

    def inventory_given(self, evaluator: Evaluator) -> bool:
        """Whether ``evaluator`` has what :meth:`refresh_inventory` would give it (it needs nothing, or
        has the cache's current version): it can then evaluate without a turn on the evaluation
        thread."""
        if not evaluator.engine.library.uses_inventory:
            return True
        inventory = getattr(self.facts, "inventory", None)
        if inventory is None or getattr(self.facts, "snapshot", None) is None:
            return True
        current = getattr(self.facts, "version", inventory.version)
        return (id(evaluator), current) == self._inventory_version

    def refresh_inventory(self, evaluator: Evaluator) -> None:
        """Give Gatekeeper templates that read `data.inventory`, and VAPs with params, what the inventory
        cache holds (its kinds: Namespaces, ServiceAccounts, RBAC, network policies, RuntimeClasses,
        and the VAPs' param kinds), again only when the cache or the evaluator changed. On the
        evaluation thread only."""
        inventory = getattr(self.facts, "inventory", None)
        snapshot = getattr(self.facts, "snapshot", None)
        if inventory is None or snapshot is None or self.inventory_given(evaluator):
            return  # nothing changed: no copy of the cache per request
        version, objects = snapshot()
        evaluator.set_inventory(objects, complete=inventory.complete)
        self._inventory_version = (id(evaluator), version)

    def release(self) -> None:
        _close(self.evaluator)
        self.evaluator = None

    def replace(self, config: Config) -> None:
        """Build the evaluator of a new config and swap it in; on the evaluation thread only."""
        old, self.evaluator = self.evaluator, self._build(config)
        self.config = config
        _close(old)


def _close(evaluator: Evaluator | None) -> None:
    """Stop an evaluator's engine process, if it has one."""
    close = getattr(evaluator.engine, "close", None) if evaluator is not None else None
    if close is not None:
        close()


def parse_review(body: bytes) -> AdmissionReview:
    """Parse an AdmissionReview, or raise BadRequest with a one-line reason."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadRequest("expected an AdmissionReview object")
    try:
        return AdmissionReview.model_validate(data)
    except ValidationError as exc:
        _, where, message = first_error(exc)
        raise BadRequest(f"not an admission.k8s.io/v1 AdmissionReview: {where}: {message}") from None


def _answer(response: AdmissionResponse) -> Response:
    return Response(
        orjson.dumps(AdmissionReviewResponse(response=response).to_json()), media_type="application/json"
    )


def _client(request: Request) -> str:
    return f"{request.client.host}:{request.client.port}" if request.client else ""


def create_app(state: WebhookState, *, reload_interval: float = 2.0) -> Starlette:
    metrics = state.metrics
    request_log = RequestLog(log, state.log_handler)

    def _refusal(obj: Any, old: Any, body: bytes) -> tuple[str, str] | None:
        """(metric reason, message) when the object must be denied before evaluation."""
        limits = state.config.admission
        kinds = state.workload_kinds()
        for which in (obj, old):
            if isinstance(which, dict):
                too_big = oversize(which, limits, kinds)
                if too_big:
                    return "oversize", f"stockade does not evaluate objects this large: {too_big}"
        if isinstance(obj, dict):
            bad = malformed(obj, kinds, shallow=object_shallow(body))
            if bad:
                return "malformed", f"stockade denied a malformed object: {bad}"
        return None

    inflight = SmallestFirst(state.config.admission.max_inflight)
    bodies = BodyReader(state.config.admission.max_buffered_bytes)

    def _too_costly_to_parse(body: bytes, most: int) -> Response:
        """A body with more JSON values than any object it may carry: denied by uid, unparsed."""
        metrics.refused.labels("oversize").inc()
        uid = review_uid(body)
        why = f"the request has more than {most} JSON values per object (admission.max_object_values)"
        if uid is None:
            metrics.requests.labels("", "", "bad-request").inc()
            return JSONResponse({"error": why}, status_code=400, headers={"connection": "close"})
        metrics.requests.labels("", "", "denied").inc()
        response = denial(uid, f"stockade does not evaluate objects this large: {why}")
        request_log.info("admission refused before parsing", {"uid": uid, "reason": "oversize"})
        return _answer(response)

    def _refused(status: int, reason: str, message: str, request: Request) -> Response:
        metrics.requests.labels("", "", "bad-request").inc()
        metrics.refused.labels(reason).inc()
        if status != 400:
            log.warning(message, extra={"client": _client(request)})
        return JSONResponse({"error": message}, status_code=status, headers={"connection": "close"})

    async def validate(request: Request) -> Response:
        limits = state.config.admission
        try:
            body = await bodies.read(request, limits.max_request_bytes, limits.body_timeout_seconds)
        except BadRequest as exc:
            return _refused(400, "bad-request", str(exc), request)
        except SlowBody:
            message = f"request body not received within {limits.body_timeout_seconds:g} s"
            return _refused(408, "slow-body", message, request)
        except Evicted:
            message = "request body dropped: the server's body buffer is full (admission.max_buffered_bytes)"
            return _refused(503, "evicted", message, request)
        # Parsing and evaluating hold memory in proportion to the object: a few at a time.
        async with inflight.slot(len(body)):
            return await _validate(body)

    async def _validate(body: bytes) -> Response:
        start = time.perf_counter()
        limits = state.config.admission
        # the object (and the oldObject of an UPDATE), and the review around them
        most = (2 if has_old_object(body) else 1) * limits.max_object_values + 10_000
        if values_upper_bound(body) > most and exact_values_bound(body) > most:
            return _too_costly_to_parse(body, limits.max_object_values)
        try:
            review = parse_review(body)
        except BadRequest as exc:
            metrics.requests.labels("", "", "bad-request").inc()
            metrics.refused.labels("bad-request").inc()
            return JSONResponse({"error": str(exc)}, status_code=400, headers={"connection": "close"})
        req = review.request
        config = state.config
        loop = asyncio.get_running_loop()
        problem = judged(req) and req.malformed()
        refusal = (
            ("malformed-review", f"stockade denied a malformed AdmissionReview: {problem}")
            if problem
            else judged(req) and _refusal(req.object, req.old_object, body)
        )
        if refusal:
            # A verdict about the object, not a failure of the webhook: it stands in failure_mode open.
            reason, why = refusal
            metrics.refused.labels(reason).inc()
            response = denial(req.uid, why)
            metrics.requests.labels(req.operation, req.kind.kind, "denied").inc()
            request_log.info(
                "admission refused before evaluation",
                {"uid": req.uid, "kind": req.kind.kind, "namespace": req.namespace, "reason": reason},
            )
            return _answer(response)

        def run() -> tuple[list[Any], float]:
            t = time.perf_counter()
            evaluator = state.evaluator_here()
            state.refresh_inventory(evaluator)
            findings = evaluate(req, evaluator, state.facts, state.cluster)
            return findings, time.perf_counter() - t

        async def run_here(evaluator: Evaluator, engine: ProcessEngine) -> tuple[list[Any], float]:
            t = time.perf_counter()
            judge_on = state.executor if len(body) > LARGE_BODY_BYTES else None
            try:
                findings = await evaluate_async(
                    req, evaluator, engine, state.facts, state.cluster, judge_on=judge_on
                )
            except EngineClosed:  # a config reload replaced the evaluator meanwhile: the new one judges
                return await loop.run_in_executor(state.executor, run)
            return findings, time.perf_counter() - t

        timeout = config.admission.evaluation_timeout_seconds
        fail_open = config.admission.failure_mode == "open"
        try:
            # The engine process enforces the timeout itself (and is replaced); this one is the
            # backstop for the Python around it, with room for a replacement to start.
            backstop = timeout + 1.0 if state.isolated and state.opa_url is None else timeout
            evaluator = state.evaluator
            engine = evaluator.engine if evaluator is not None else None
            findings: list[Any]
            if not state.evaluation:
                findings, spent = [], 0.0
            elif (
                evaluator is not None
                and isinstance(engine, ProcessEngine)
                and state.inventory_given(evaluator)
            ):
                # the engine process is waited for in this loop: no thread hop per request
                async with asyncio.timeout(backstop):  # no task of its own, as wait_for makes
                    findings, spent = await run_here(evaluator, engine)
            else:  # the evaluator's thread builds it, loads the inventory into it, or runs the engine
                findings, spent = await asyncio.wait_for(loop.run_in_executor(state.executor, run), backstop)
            metrics.evaluation.observe(spent)
            response = respond(req.uid, findings, fail_open=fail_open)
        except EvaluationTimeout:
            # The engine process timed this object's own evaluation (queueing excluded) and was
            # replaced: an object that costs this much is denied in either failure mode.
            metrics.engine_restarts.inc()
            metrics.refused.labels("evaluation-timeout").inc()
            log.warning("evaluation timed out", extra={"uid": req.uid, "kind": req.kind.kind})
            response = denial(
                req.uid, f"stockade denied the request: its policy evaluation exceeded {timeout:g} s"
            )
        except TimeoutError:  # the webhook could not answer in time (busy, or a remote engine)
            log.warning("evaluation timed out", extra={"uid": req.uid, "kind": req.kind.kind})
            response = failure(req.uid, f"policy evaluation exceeded {timeout:g} s", fail_open=fail_open)
        except EngineProcessError as exc:
            metrics.engine_restarts.inc()
            log.error("engine process failed", extra={"uid": req.uid, "error": str(exc)})
            response = failure(req.uid, "internal error: the engine process failed", fail_open=fail_open)
        except RuleEvaluationError as exc:  # a rule could not decide: the failure mode decides, and
            # the answer names the rule (the engine's messages carry no value of the object)
            log.error("rule evaluation failed", extra={"uid": req.uid, "error": str(exc)})
            response = failure(req.uid, f"rule evaluation failed: {exc}", fail_open=fail_open)
        except Exception as exc:  # fail closed on anything unexpected, and say why (the type only:
            # exception messages can quote the object's values)
            log.error("evaluation failed", extra={"uid": req.uid, "error": type(exc).__name__})
            response = failure(req.uid, f"internal error: {type(exc).__name__}", fail_open=fail_open)
        decision = "allowed" if response.allowed else "denied"
        metrics.requests.labels(req.operation, req.kind.kind, decision).inc()
        elapsed = time.perf_counter() - start
        metrics.latency.observe(elapsed)
        request_log.info(
            "admission",
            {
                "uid": req.uid,
                "operation": req.operation,
                "kind": req.kind.kind,
                "namespace": req.namespace,
                "object_name": req.name,  # `name` is reserved by logging.LogRecord
                "allowed": response.allowed,
                "dry_run": req.dry_run,
                "ms": round(elapsed * 1000, 3),
            },
        )
        return _answer(response)

    async def healthz(_: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(_: Request) -> Response:
        if state.watcher is not None and state.watcher.done():
            return PlainTextResponse("config watcher not running", status_code=503)
        if state.ready():
            return PlainTextResponse("ok")
        return PlainTextResponse("inventory cache not synced", status_code=503)

    async def metrics_endpoint(_: Request) -> Response:
        metrics.cache_age.set(state.cache_age())
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        # Build the engine before the first request, on the thread that will use it.
        await asyncio.get_running_loop().run_in_executor(state.executor, state.evaluator_here)
        gc.freeze()  # what start-up built lives as long as the worker: no collection walks it again
        watched = state.config_path or state.policy_dirs
        task = asyncio.create_task(_watch_config(state, reload_interval)) if watched else None
        state.watcher = task
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
            # Drop the engine on the thread that owns it (regorus objects cannot be freed elsewhere).
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    asyncio.get_running_loop().run_in_executor(state.executor, state.release), 5
                )
            state.executor.shutdown(wait=False, cancel_futures=True)
            for close in state.on_shutdown:
                close()

    app = Starlette(
        routes=[
            Route("/validate", validate, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    # What the server (admission/server.py) reaches: the metrics it counts certificate reloads and
    # shed connections in, and the reload that SIGHUP asks for.
    app.state.metrics = metrics
    app.state.reload = state.reload_requested.set
    return app


def _fingerprint(state: WebhookState) -> tuple[tuple[str, float], ...]:
    """Modification times of the config and of every extra Rego file (added or removed ones too).

    `stat` follows the `..data` symlink that a ConfigMap mount swaps on update.
    """
    paths = [state.config_path] if state.config_path else []
    for d in state.policy_dirs:
        paths.extend(sorted(Path(d).rglob("*.rego")) if Path(d).is_dir() else [Path(d)])
    out = []
    for p in paths:
        try:
            out.append((str(p), p.stat().st_mtime))
        except OSError:
            out.append((str(p), -1.0))
    return tuple(out)


async def _pause(state: WebhookState, interval: float) -> None:
    """Sleep `interval` seconds, or less if a reload is requested (SIGHUP)."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(state.reload_requested.wait(), interval)


async def _watch_config(state: WebhookState, interval: float) -> None:
    """Reload stockade.yaml and the extra policies when they change, or at once when asked to
    (`state.reload_requested`, set on SIGHUP).

    A broken new config or library is rejected and the active one is kept. No exception ends the
    watcher (each is logged and counted); `/readyz` fails if it ever stops all the same.
    """
    seen: tuple[tuple[str, float], ...] | None = None
    loop = asyncio.get_running_loop()
    while True:
        try:
            asked = state.reload_requested.is_set()
            state.reload_requested.clear()
            now = _fingerprint(state)
            if not asked and (seen is None or now == seen):
                seen = now
                await _pause(state, interval)
                continue
            seen = now
            config = load_config(state.config_path) if state.config_path else state.config
            await loop.run_in_executor(state.executor, state.replace, config)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every rejection is logged and counted; the watcher goes on
            state.metrics.config_reloads.labels("rejected").inc()
            reason = str(exc) if isinstance(exc, ConfigError | PolicyError) else type(exc).__name__
            log.error("config reload rejected, keeping the active config", extra={"error": reason})
            await _pause(state, interval)
            continue
        state.metrics.config_reloads.labels("applied").inc()
        log.info("config and policies reloaded")


class JSONLogFormatter(logging.Formatter):
    """One JSON object per line, with the extra fields (uid, kind, ...) of each record."""

    _std = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}

    @staticmethod
    def head(created: float, level: str, logger: str, process: int | None, msg: str) -> dict[str, Any]:
        """The fields every line starts with, in their order."""
        return {"time": round(created, 3), "level": level, "logger": logger, "process": process, "msg": msg}

    def format(self, record: logging.LogRecord) -> str:
        out = self.head(
            record.created, record.levelname.lower(), record.name, record.process, record.getMessage()
        )
        out.update({k: v for k, v in record.__dict__.items() if k not in self._std})
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()


class RequestLog:
    """Each admission request's line, at INFO. With the handler `webhook serve` installs (a stream
    with :class:`JSONLogFormatter`), the line that formatter would write is written to the handler's
    stream under its lock, without a LogRecord, the logger hierarchy and the handler's filters between:
    run cold between two requests, that machinery cost a server about 35 µs of the 60 a line took
    (docs/benchmarks.md). Without one (tests, an embedding) the line goes through `logging`. A
    write that fails is handled as `logging` handles it (``handleError``)."""

    def __init__(self, logger: logging.Logger, handler: logging.Handler | None) -> None:
        self.logger = logger
        self.handler: logging.StreamHandler[Any] | None = None
        if isinstance(handler, logging.StreamHandler) and isinstance(handler.formatter, JSONLogFormatter):
            self.handler = handler

    def info(self, msg: str, fields: dict[str, Any]) -> None:
        handler = self.handler
        if handler is None or handler.level > logging.INFO or not self.logger.isEnabledFor(logging.INFO):
            self.logger.info(msg, extra=fields)
            return
        line = JSONLogFormatter.head(time.time(), "info", self.logger.name, os.getpid(), msg)
        line.update(fields)
        text = orjson.dumps(line, default=str).decode()
        handler.acquire()
        try:
            handler.stream.write(text + handler.terminator)
            handler.flush()
        except Exception:  # as logging would: the request is answered whatever its log line does
            handler.handleError(logging.makeLogRecord({"msg": msg, **fields}))
        finally:
            handler.release()
