"""The webhook's ASGI application: `POST /validate`, `/healthz`, `/readyz`, `/metrics`.

Evaluation runs on one dedicated thread per process: the engine is not reentrant (set input, then
evaluate), and regorus holds the GIL anyway, so one thread loses nothing; the process count is what
scales (`--workers`). The event loop stays free to read requests and to answer with a fail-closed
denial when an evaluation overruns its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
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

from stockade.admission.decide import evaluate, failure, respond
from stockade.admission.review import AdmissionReview, AdmissionReviewResponse
from stockade.policies.config import Config, ConfigError, load_config
from stockade.policies.engine import PolicyError
from stockade.policies.evaluate import Evaluator, FactsSource, InventoryFacts

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


@dataclass
class WebhookState:
    """What a request needs; `evaluator` and `config` are swapped whole on a config reload.

    regorus objects belong to the thread that created them, so the evaluator is built, used and
    replaced only on the one evaluation thread (`executor`), never on the event loop.
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
    _gatekeeper_version: tuple[int, int] | None = None
    #: False only for benchmarks: parse and answer "allowed" without evaluating (the floor)
    evaluation: bool = True

    def evaluator_here(self) -> Evaluator:
        """The evaluator, built on first use; call only on the evaluation thread."""
        if self.evaluator is None:
            self.evaluator = Evaluator.default(self.config, self.policy_dirs, opa_url=self.opa_url)
        return self.evaluator

    def refresh_gatekeeper_inventory(self, evaluator: Evaluator) -> None:
        """Give Gatekeeper templates that read `data.inventory` what the inventory cache holds (its
        kinds: Namespaces, ServiceAccounts, RBAC, network policies, RuntimeClasses), again only when
        the cache or the evaluator changed. On the evaluation thread only."""
        if not evaluator.engine.library.gatekeeper.uses_inventory:
            return
        inventory = getattr(self.facts, "inventory", None)
        snapshot = getattr(self.facts, "snapshot", None)
        if inventory is None or snapshot is None:
            return
        if (id(evaluator), inventory.version) == self._gatekeeper_version:
            return  # nothing changed: no copy of the cache per request
        version, objects = snapshot()
        evaluator.gatekeeper_inventory(objects)
        self._gatekeeper_version = (id(evaluator), version)

    def release(self) -> None:
        self.evaluator = None

    def replace(self, config: Config) -> None:
        """Build the evaluator of a new config and swap it in; on the evaluation thread only."""
        self.evaluator = Evaluator.default(config, self.policy_dirs, opa_url=self.opa_url)
        self.config = config


class BadRequest(Exception):
    """A request body that is not an AdmissionReview we can read: HTTP 400, never a 500."""


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BadRequest(f"request body of {declared} bytes exceeds the limit of {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BadRequest(f"request body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


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
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "<root>"
        raise BadRequest(f"not an admission.k8s.io/v1 AdmissionReview: {where}: {err['msg']}") from None


def create_app(state: WebhookState, *, reload_interval: float = 2.0) -> Starlette:
    metrics = state.metrics

    async def validate(request: Request) -> Response:
        start = time.perf_counter()
        try:
            review = parse_review(await _read_body(request, state.config.admission.max_request_bytes))
        except BadRequest as exc:
            metrics.requests.labels("", "", "bad-request").inc()
            return JSONResponse({"error": str(exc)}, status_code=400)
        req = review.request
        config = state.config
        loop = asyncio.get_running_loop()

        def run() -> tuple[list[Any], float]:
            t = time.perf_counter()
            if not state.evaluation:
                return [], time.perf_counter() - t
            evaluator = state.evaluator_here()
            state.refresh_gatekeeper_inventory(evaluator)
            findings = evaluate(req, evaluator, state.facts, state.cluster)
            return findings, time.perf_counter() - t

        try:
            findings, spent = await asyncio.wait_for(
                loop.run_in_executor(state.executor, run), config.admission.evaluation_timeout_seconds
            )
            metrics.evaluation.observe(spent)
            response = respond(req.uid, findings)
        except TimeoutError:
            reason = f"policy evaluation exceeded {config.admission.evaluation_timeout_seconds} s"
            response = failure(req.uid, reason, fail_open=config.admission.failure_mode == "open")
        except Exception as exc:  # fail closed on anything unexpected, and say why
            log.exception("evaluation failed", extra={"uid": req.uid})
            reason = f"internal error: {type(exc).__name__}: {exc}"
            response = failure(req.uid, reason, fail_open=config.admission.failure_mode == "open")
        decision = "allowed" if response.allowed else "denied"
        metrics.requests.labels(req.operation, req.kind.kind, decision).inc()
        elapsed = time.perf_counter() - start
        metrics.latency.observe(elapsed)
        log.info(
            "admission",
            extra={
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
        body = orjson.dumps(AdmissionReviewResponse(response=response).to_json())
        return Response(body, media_type="application/json")

    async def healthz(_: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(_: Request) -> Response:
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
        watched = state.config_path or state.policy_dirs
        task = asyncio.create_task(_watch_config(state, reload_interval)) if watched else None
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

    return Starlette(
        routes=[
            Route("/validate", validate, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
        ],
        lifespan=lifespan,
    )


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


async def _watch_config(state: WebhookState, interval: float) -> None:
    """Reload stockade.yaml and the extra policies when they change.

    A broken new config or library is rejected and the active one is kept.
    """
    seen = _fingerprint(state)
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(interval)
        now = _fingerprint(state)
        if now == seen:
            continue
        seen = now
        try:
            config = load_config(state.config_path) if state.config_path else state.config
            await loop.run_in_executor(state.executor, state.replace, config)
        except (ConfigError, PolicyError) as exc:
            state.metrics.config_reloads.labels("rejected").inc()
            log.error("config reload rejected, keeping the active config", extra={"error": str(exc)})
            continue
        state.metrics.config_reloads.labels("applied").inc()
        log.info("config and policies reloaded")


class JSONLogFormatter(logging.Formatter):
    """One JSON object per line, with the extra fields (uid, kind, ...) of each record."""

    _std = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "process": record.process,
            "msg": record.getMessage(),
        }
        out.update({k: v for k, v in record.__dict__.items() if k not in self._std})
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()
