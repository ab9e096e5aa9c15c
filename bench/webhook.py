"""Benchmark the admission webhook under fixed request rates, against its no-evaluation floor.

Starts `stockade webhook serve` as a subprocess on 127.0.0.1 with a throwaway CA and serving
certificate, twice: (a) with the full policy library and (b) with the hidden `--no-evaluation` flag,
which parses the AdmissionReview and answers "allowed" without evaluating (the floor: TLS, HTTP,
body read, JSON and pydantic parse, response). For each server and each rate it sends AdmissionReview
v1 CREATEs of generated Pods and Deployments (GPU training pods, 2-3 container inference
Deployments with probes, resources and securityContexts; a share break Pod Security controls)
open-loop: sends are scheduled at the target rate whatever the responses, and latency is measured
from the scheduled send time to the response, so a stalled server is not hidden (no coordinated
omission). It reports p50/p95/p99/max latency, the achieved rate and errors, and PASS/FAIL against
the targets. With `--bare`, the frameworks' own floor too: uvicorn and Starlette answering every
review allowed over the same TLS (bench/bare_webhook.py).

Loopback only; bounded in time and request count; stops the servers itself. Not part of the test
suite. Usage and recorded results: bench/README.md, docs/benchmarks.md.

    .venv/bin/python bench/webhook.py [--rates 100,200,300] [--duration 20] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import importlib.util
import math
import os
import platform
import random
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
from workloads import REGISTRY, image_reference, violate

from stockade.webhooks.certs import CertificateAuthority

TARGET_P99_MS = 10.0  # p99 <= 10 ms at TARGET_RATE, with zero errors (issue 39: 1,000 req/s)
TARGET_RATE = 1000
TARGET_EVAL_OVERHEAD_MS = 1.0  # evaluation adds <= 1 ms to the median over the floor
# asyncio timers wake up to ~1 ms late (epoll has millisecond timeouts): wake this much before a
# scheduled send, and send then, so that the timer's lateness is not counted as server latency.
EARLY = 0.0015

HOST = "127.0.0.1"  # never anything else
DIGEST = "sha256:fdb33018a81755570f074a21085deecee8cad34e586370eda4457d1b5bd45327"

# Every image comes from the organisation's registry, so only the deliberate violations are found.
BENCH_CONFIG = f"""\
apiVersion: stockade.io/v1alpha1
kind: Config
pss:
  default_level: restricted
images:
  allowed_registries: ["{REGISTRY}/"]
"""


# ---------------------------------------------------------------------------------------------------
# Throwaway PKI


def make_pki(folder: Path) -> tuple[Path, Path, Path]:
    """Write ca.crt, tls.crt and tls.key (ECDSA P-256, valid for 127.0.0.1 for 2 hours)."""
    ca = CertificateAuthority.create("stockade-bench-ca", dt.timedelta(hours=2))
    ca_path, cert_path, key_path = folder / "ca.crt", folder / "tls.crt", folder / "tls.key"
    ca_path.write_bytes(ca.cert_pem)
    ca.issue(ip_addresses=[HOST], valid=dt.timedelta(hours=2)).write(cert_path, key_path)
    return ca_path, cert_path, key_path


# ---------------------------------------------------------------------------------------------------
# Workloads (shaped like examples/manifests: GPU training pods and inference Deployments)

SIDECARS = (
    ("log-shipper", "platform/fluent-bit", 2020),
    ("metrics-proxy", "platform/metrics-proxy", 9400),
    ("auth-proxy", "platform/oauth2-proxy", 4180),
    ("model-sync", "platform/model-sync", 8081),
)
VIOLATIONS = (
    "privileged",
    "host_path_gpu",
    "host_network",
    "net_admin",
    "run_as_root",
    "latest_image",
    "privilege_escalation",
    "unconfined_seccomp",
    "unsafe_sysctl",
    "host_port",
)


def _container(rng: random.Random, name: str, image: str, port: int, gpus: int) -> dict[str, Any]:
    cpu, mem = rng.choice((2, 4, 8, 16)), rng.choice((8, 16, 64, 160))
    requests: dict[str, Any] = {"cpu": str(cpu), "memory": f"{mem}Gi"}
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    probe = {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 10, "failureThreshold": 3}
    return {
        "name": name,
        "image": image_reference(image, DIGEST, f"{name}/{port}/{cpu}/{mem}"),
        "imagePullPolicy": "IfNotPresent",
        "args": [f"--port={port}", "--log-level=info", f"--workers={cpu}", "--metrics"],
        "env": [
            {"name": "HF_HUB_OFFLINE", "value": "1"},
            {"name": "NCCL_DEBUG", "value": "WARN"},
            {"name": "HOME", "value": "/tmp"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        ],
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        "readinessProbe": probe,
        "livenessProbe": {**probe, "periodSeconds": 30, "failureThreshold": 5},
        "resources": {"requests": requests, "limits": dict(requests)},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": "tmp", "mountPath": "/tmp"},
            {"name": "config", "mountPath": "/etc/app", "readOnly": True},
        ],
    }


def _pod_spec(rng: random.Random, name: str, containers: list[dict[str, Any]], gpu: bool) -> dict[str, Any]:
    uid = 1000 + rng.randint(0, 999)
    spec: dict[str, Any] = {
        "serviceAccountName": name,
        "automountServiceAccountToken": False,
        "terminationGracePeriodSeconds": 120,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": uid,
            "runAsGroup": uid,
            "fsGroup": uid,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": containers,
        "volumes": [
            {"name": "tmp", "emptyDir": {"sizeLimit": "10Gi"}},
            {"name": "config", "configMap": {"name": f"{name}-config"}},
        ],
    }
    if gpu:
        spec["nodeSelector"] = {
            "kubernetes.azure.com/agentpool": rng.choice(("gpua100", "gpuh100")),
            "nvidia.com/gpu.present": "true",
        }
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
        spec["volumes"].append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "32Gi"}})
        containers[0]["volumeMounts"].append({"name": "dshm", "mountPath": "/dev/shm"})
    return spec


def training_pod(rng: random.Random, name: str) -> dict[str, Any]:
    gpus = rng.choice((1, 2, 4, 8))
    main = _container(rng, "trainer", "ml/pytorch-train", 8000, gpus)
    main["command"] = ["torchrun", f"--nproc-per-node={gpus}", "/app/train.py"]
    containers = [main]
    if rng.random() < 0.5:
        side_name, side_image, side_port = rng.choice(SIDECARS)
        containers.append(_container(rng, side_name, side_image, side_port, 0))
    spec = _pod_spec(rng, name, containers, gpu=True)
    spec["restartPolicy"] = "Never"
    labels = {"app.kubernetes.io/name": name, "team": rng.choice(("ml-platform", "research"))}
    metadata = {"name": name, "namespace": "ml-training", "labels": labels}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def inference_deployment(rng: random.Random, name: str) -> dict[str, Any]:
    gpus = rng.choice((0, 1, 4))
    main = _container(rng, "server", rng.choice(("serving/vllm-openai", "serving/triton-server")), 8000, gpus)
    main["startupProbe"] = {**main["readinessProbe"], "failureThreshold": 90}
    containers = [main]
    for side_name, side_image, side_port in rng.sample(SIDECARS, rng.randint(1, 2)):
        containers.append(_container(rng, side_name, side_image, side_port, 0))
    labels = {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/component": "inference",
        "team": rng.choice(("serving", "evals")),
    }
    template = {
        "metadata": {"labels": labels, "annotations": {"prometheus.io/scrape": "true"}},
        "spec": _pod_spec(rng, name, containers, gpu=bool(gpus)),
    }
    spec = {
        "replicas": rng.randint(1, 6),
        "revisionHistoryLimit": 5,
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
        "template": template,
    }
    metadata = {"name": name, "namespace": "ml-inference", "labels": labels}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata, "spec": spec}


def make_objects(count: int, seed: int, violating: float) -> list[dict[str, Any]]:
    """`count` distinct workloads, half training Pods and half inference Deployments."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        make = training_pod if i % 2 == 0 else inference_deployment
        obj = make(rng, f"bench-{i:03d}")
        if rng.random() < violating:
            spec = obj["spec"] if obj["kind"] == "Pod" else obj["spec"]["template"]["spec"]
            for v in rng.sample(VIOLATIONS, rng.randint(1, 2)):
                violate(rng, spec, v)
        out.append(obj)
    return out


_RESOURCE = {"Pod": ("", "v1", "pods"), "Deployment": ("apps", "v1", "deployments")}


#: what an UPDATE's object carries besides its spec: the field managers' records (three, as a
#: Deployment a controller and two appliers have written), which no rule reads
MANAGED_FIELDS = [
    {
        "manager": manager,
        "operation": "Update",
        "apiVersion": "apps/v1",
        "time": "2026-12-05T10:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {"f:labels": {f"f:l{i}": {} for i in range(10)}},
            "f:spec": {
                "f:template": {
                    "f:spec": {
                        "f:containers": {
                            f'k:{{"name":"c{i}"}}': {".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}
                            for i in range(3)
                        }
                    }
                }
            },
        },
    }
    for manager in ("kube-controller-manager", "argocd", "kubectl-client-side-apply")
]


class Bodies:
    """AdmissionReview bodies cycling through the objects, with a fresh name and uid each: CREATEs,
    or UPDATEs (``update``: the object with managedFields, and as oldObject the same object at its
    previous revision: an annotation differs, so the UPDATE is judged)."""

    def __init__(self, objects: list[dict[str, Any]], *, update: bool = False) -> None:
        self.objects = objects
        self.n = 0
        self.update = update

    def next(self) -> tuple[str, bytes]:
        obj = self.objects[self.n % len(self.objects)]
        self.n += 1
        uid = str(uuid.uuid4())
        name = f"{obj['metadata']['name']}-{self.n:07d}"
        group, version, resource = _RESOURCE[obj["kind"]]
        request = {
            "uid": uid,
            "kind": {"group": group, "version": version, "kind": obj["kind"]},
            "resource": {"group": group, "version": version, "resource": resource},
            "requestKind": {"group": group, "version": version, "kind": obj["kind"]},
            "name": name,
            "namespace": obj["metadata"]["namespace"],
            "operation": "CREATE",
            "userInfo": {
                "username": "system:serviceaccount:argocd:argocd-application-controller",
                "uid": "5b0c1e3a-0d7e-4a59-9a57-3c1d1f0c2b11",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:argocd", "system:authenticated"],
            },
            "object": {**obj, "metadata": {**obj["metadata"], "name": name, "uid": str(uuid.uuid4())}},
            "oldObject": None,
            "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions", "fieldManager": "argocd"},
        }
        if self.update:
            md = {**request["object"]["metadata"], "managedFields": MANAGED_FIELDS}
            request["object"] = {**request["object"], "metadata": md}
            # the old object of a rollout's next revision: an UPDATE that changes nothing judged (only
            # status or the API server's metadata) is allowed without evaluation (admission/decide.py)
            old_annotations = {**md.get("annotations", {}), "deployment.kubernetes.io/revision": "1"}
            request["oldObject"] = {**request["object"], "metadata": {**md, "annotations": old_annotations}}
            request["operation"] = "UPDATE"
            request["options"] = {**request["options"], "kind": "UpdateOptions"}
        body = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
        return uid, orjson.dumps(body)


# ---------------------------------------------------------------------------------------------------
# The server under test


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _proc_cpu_seconds(pids: Sequence[int]) -> float:
    """utime + stime of these processes (Linux /proc; 0 elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime (fields 14 and 15)
    return total


def _descendants(pid: int) -> list[int]:
    """Every process below `pid`: the server's workers and their engine processes."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def bench_files(root: Path) -> tuple[Path, Path, Path, Path]:
    """A throwaway CA, serving certificate and key, and the servers' stockade.yaml, under ``root``."""
    ca, cert, key = make_pki(root)
    config = root / "stockade.yaml"
    config.write_text(BENCH_CONFIG, encoding="utf-8")
    return ca, cert, key, config


def serve_command(
    exe: str, port: int, cert: Path, key: Path, config: Path, workers: int, extra: Sequence[str] = ()
) -> list[str]:
    """`stockade webhook serve` on ``port`` of the loopback, as every server of this benchmark runs."""
    cmd = [exe, "webhook", "serve", "--tls-cert", str(cert), "--tls-key", str(key)]
    cmd += ["--port", str(port), "--host", HOST, "--workers", str(workers), "--no-inventory"]
    return [*cmd, "--config", str(config), *extra]


BARE = "bare uvicorn + Starlette"


def bare_command(port: int, cert: Path, key: Path, workers: int) -> list[str]:
    """uvicorn serving bench/bare_webhook.py as `webhook serve` serves stockade: httptools, uvloop,
    the same certificate, `workers` processes, no access log."""
    cmd = [sys.executable, "-m", "uvicorn", "bare_webhook:app", "--app-dir", str(Path(__file__).parent)]
    cmd += ["--host", HOST, "--port", str(port), "--ssl-certfile", str(cert), "--ssl-keyfile", str(key)]
    cmd += ["--workers", str(workers), "--loop", "uvloop", "--http", "httptools"]
    return [*cmd, "--no-access-log", "--log-level", "warning"]


class WebhookServer:
    """`stockade webhook serve` as a subprocess on a free loopback port; stopped with SIGTERM."""

    def __init__(self, label: str, argv: list[str], port: int, ca: Path, log: Path) -> None:
        self.label, self.argv, self.port, self.ca, self.log_path = label, argv, port, ca, log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def command(self) -> str:
        return shlex.join(self.argv)

    def start(self, timeout: float = 60.0) -> None:
        with self.log_path.open("wb") as log:  # the server logs one JSON line per request
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
            )
        ctx = ssl.create_default_context(cafile=str(self.ca))
        deadline = time.monotonic() + timeout
        ok = 0
        with httpx.Client(base_url=f"https://{HOST}:{self.port}", verify=ctx, timeout=2.0) as client:
            while ok < 5:  # several in a row: every worker process should be up
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.label} exited {self.proc.returncode}:\n{self.log_tail()}")
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"{self.label} not ready after {timeout:g} s:\n{self.log_tail()}")
                try:
                    ok = ok + 1 if client.get("/readyz").status_code == 200 else 0
                except httpx.TransportError:
                    ok = 0
                time.sleep(0.1)

    def pids(self) -> list[int]:
        return [] if self.proc is None else [self.proc.pid, *_descendants(self.proc.pid)]

    def worker_cpu(self) -> dict[int, float]:
        return {pid: _proc_cpu_seconds([pid]) for pid in self.pids()}

    def stop(self) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)  # the parent forwards it to its workers
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # our own session: the server and its workers
            return self.proc.wait(timeout=5)

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


# ---------------------------------------------------------------------------------------------------
# Open-loop load


def pct(values: Sequence[float], p: float) -> float | None:
    """The p-th percentile (nearest rank) of values in seconds, in ms."""
    if not values:
        return None
    xs = sorted(values)
    return xs[max(0, math.ceil(p / 100 * len(xs)) - 1)] * 1000


@dataclass
class Result:
    server: str
    rate: int
    duration: float
    latencies: list[float] = field(default_factory=list)  # seconds, successful requests only
    sent: int = 0
    non_200: int = 0
    transport: int = 0
    bad_review: int = 0
    denied: int = 0
    elapsed: float = 0.0
    lags: list[float] = field(default_factory=list)  # how late each send started (generator saturation)
    client_cpu: float = 0.0  # seconds of CPU used by this process during the run
    server_cpu: dict[int, float] = field(default_factory=dict)  # per server process
    first_error: str = ""

    @property
    def errors(self) -> int:
        return self.non_200 + self.transport + self.bad_review

    @property
    def answered(self) -> int:
        return len(self.latencies) + self.non_200 + self.bad_review

    @property
    def achieved(self) -> float:
        return self.answered / self.elapsed if self.elapsed else 0.0

    @property
    def server_us_per_request(self) -> float | None:
        """The server's CPU µs per answered request; None before any answer."""
        return sum(self.server_cpu.values()) / self.answered * 1e6 if self.answered else None

    def pct(self, p: float) -> float | None:
        return pct(self.latencies, p)

    def error_text(self) -> str:
        if not self.errors:
            return "0"
        parts = [(self.non_200, "non-200"), (self.transport, "conn"), (self.bad_review, "bad review")]
        return f"{self.errors} (" + ", ".join(f"{n} {what}" for n, what in parts if n) + ")"


class Client:
    """A keep-alive HTTPS client with at most `connections` connections: httpx or aiohttp."""

    def __init__(self, kind: str, base_url: str, ca: Path, connections: int, timeout: float) -> None:
        self.kind, self.base_url, self.ca = kind, base_url, ca
        self.connections, self.timeout = connections, timeout
        self._httpx: httpx.AsyncClient | None = None
        self._aiohttp: Any = None

    async def __aenter__(self) -> Client:
        ctx = ssl.create_default_context(cafile=str(self.ca))
        if self.kind == "httpx":
            limits = httpx.Limits(
                max_connections=self.connections, max_keepalive_connections=self.connections
            )
            self._httpx = httpx.AsyncClient(
                base_url=self.base_url,
                verify=ctx,
                limits=limits,
                timeout=httpx.Timeout(self.timeout),
                trust_env=False,  # no proxies: loopback only
            )
        else:
            import aiohttp

            self._aiohttp = aiohttp.ClientSession(
                base_url=self.base_url,
                connector=aiohttp.TCPConnector(limit=self.connections, ssl=ctx),
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                trust_env=False,
            )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._httpx is not None:
            await self._httpx.aclose()
        if self._aiohttp is not None:
            await self._aiohttp.close()

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """Status and body; raises TransportError for connection errors and timeouts."""
        headers = {"content-type": "application/json"}
        if self._httpx is not None:
            try:
                r = await self._httpx.post(path, content=body, headers=headers)
            except httpx.HTTPError as exc:
                raise TransportError(f"{type(exc).__name__}: {exc}") from exc
            return r.status_code, r.content
        import aiohttp

        try:
            async with self._aiohttp.post(path, data=body, headers=headers) as r:
                return r.status, await r.read()
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TransportError(f"{type(exc).__name__}: {exc}") from exc

    @staticmethod
    def version(kind: str) -> str:
        if kind == "httpx":
            return f"httpx {httpx.__version__}"
        if kind == "raw":
            return "raw HTTP/1.1 (bench/webhook.py RawClient)"
        import aiohttp

        return f"aiohttp {aiohttp.__version__}"


class TransportError(Exception):
    pass


def _event_loop_run(client: str) -> Any:
    """asyncio.run, or uvloop's for the raw client (its TLS is not asyncio's Python sslproto)."""
    if client == "raw" and importlib.util.find_spec("uvloop"):
        import uvloop

        return uvloop.run
    return asyncio.run


_RAW_ERRORS = (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError)


class RawClient:
    """HTTP/1.1 keep-alive over asyncio streams, written by hand: a request is one pre-formatted
    write, a response is read by its Content-Length. The API server's Go client costs a fraction of
    aiohttp's CPU per request; on a shared 2-core machine, what the load generator spends is taken
    from the server (`--client raw`). At most `connections` connections, each carrying one request
    at a time (no pipelining), as aiohttp's connector does."""

    def __init__(self, base_url: str, ca: Path, connections: int, timeout: float) -> None:
        host_port = base_url.split("://", 1)[1]
        self.host, port = host_port.rsplit(":", 1)
        self.port, self.connections, self.timeout = int(port), connections, timeout
        self.ctx = ssl.create_default_context(cafile=str(ca))
        self._slots = asyncio.Semaphore(connections)  # a connection per slot, in use or idle
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def __aenter__(self) -> RawClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        for _, writer in self._idle:
            writer.close()
        self._idle.clear()

    async def _take(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """The most recently released connection still open, else a new one (holding a slot)."""
        while self._idle:
            reader, writer = self._idle.pop()
            if not reader.at_eof() and not writer.is_closing():
                return reader, writer
            writer.close()  # closed by the server while idle (its keep-alive timeout)
        return await asyncio.open_connection(self.host, self.port, ssl=self.ctx)

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        writer = None
        try:
            async with asyncio.timeout(self.timeout), self._slots:
                reader, writer = await self._take()
                writer.write(head + body)
                status_line = await reader.readuntil(b"\r\n")
                headers = await reader.readuntil(b"\r\n\r\n")
                length, close = 0, False
                for line in headers.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    name = name.strip().lower()
                    if name == b"content-length":
                        length = int(value)
                    elif name == b"connection" and value.strip().lower() == b"close":
                        close = True
                content = await reader.readexactly(length)
                if close:
                    writer.close()
                else:
                    self._idle.append((reader, writer))  # released before the slot is
        except _RAW_ERRORS as e:
            if writer is not None:
                writer.close()
            raise TransportError(f"{type(e).__name__}: {e}") from e
        return int(status_line.split(b" ", 2)[1]), content


async def run_rate(
    client: Client | RawClient, bodies: Bodies, server: str, rate: int, duration: float, timeout: float
) -> Result:
    """Send `rate * duration` requests at fixed intervals, never waiting for responses to send. The
    bodies (each with its fresh uid and name) are built before the first send: building one costs
    the load generator about 50 µs, which it would take from the server's cores while the clock runs."""
    total = max(1, round(rate * duration))
    result = Result(server, rate, duration)
    prepared = [bodies.next() for _ in range(total)]
    pending: set[asyncio.Task[None]] = set()

    async def one(start: float, uid: str, body: bytes) -> None:
        try:
            status, content = await client.post("/validate", body)
        except TransportError as exc:
            result.transport += 1
            result.first_error = result.first_error or str(exc)
            return
        done = time.monotonic()
        if status != 200:
            result.non_200 += 1
            result.first_error = result.first_error or f"HTTP {status}: {content[:200]!r}"
            return
        try:
            resp = orjson.loads(content)["response"]
            allowed = resp["allowed"]
            ok = isinstance(allowed, bool) and resp.get("uid") == uid
        except (orjson.JSONDecodeError, KeyError, TypeError):
            ok = False
        if not ok:
            result.bad_review += 1
            result.first_error = result.first_error or f"bad AdmissionReview: {content[:200]!r}"
            return
        result.denied += not allowed
        result.latencies.append(done - start)

    cpu0 = time.process_time()
    start = time.monotonic() + 0.05
    for i in range(total):
        scheduled = start + i / rate
        now = time.monotonic()
        if scheduled - now > EARLY:
            await asyncio.sleep(scheduled - now - EARLY)
        # The clock starts at the scheduled time, or at the send when the timer woke us up early:
        # a late send (a busy load generator, or a stalled server) is counted against the server.
        sent = time.monotonic()
        result.lags.append(max(0.0, sent - scheduled))
        uid, body = prepared[i]
        task = asyncio.create_task(one(min(sent, scheduled), uid, body))
        pending.add(task)
        task.add_done_callback(pending.discard)
        result.sent += 1
    if pending:  # every request has its own timeout (the client's); this is a backstop
        _, late = await asyncio.wait(set(pending), timeout=timeout + 5)
        for task in late:
            task.cancel()
            result.transport += 1
    result.elapsed = time.monotonic() - start
    result.client_cpu = time.process_time() - cpu0
    return result


async def drive(
    server: WebhookServer, bodies: Bodies, rates: Sequence[int], args: argparse.Namespace
) -> list[Result]:
    results = []
    base_url = f"https://{HOST}:{server.port}"
    client: Client | RawClient = (
        RawClient(base_url, server.ca, args.connections, args.timeout)
        if args.client == "raw"
        else Client(args.client, base_url, server.ca, args.connections, args.timeout)
    )
    async with client:
        if args.warmup > 0:
            warm = await run_rate(client, bodies, server.label, rates[0], args.warmup, args.timeout)
            print(
                f"  {server.label}: warm-up {rates[0]} req/s for {args.warmup:g} s, {warm.errors} errors",
                file=sys.stderr,
            )
        for rate in rates:
            await asyncio.sleep(args.pause)
            cpu0 = server.worker_cpu()
            res = await run_rate(client, bodies, server.label, rate, args.duration, args.timeout)
            cpu1 = server.worker_cpu()
            res.server_cpu = {pid: cpu1[pid] - cpu0.get(pid, 0.0) for pid in cpu1}
            results.append(res)
            print(
                f"  {server.label} @ {rate} req/s: achieved {res.achieved:.1f}, "
                f"p50 {_ms(res.pct(50))} ms, p99 {_ms(res.pct(99))} ms, errors {res.error_text()}"
                + (f" [{res.first_error}]" if res.first_error else ""),
                file=sys.stderr,
            )
    return results


def alternate(stockade: str, baseline: str, bodies: Bodies, rate: int, args: argparse.Namespace) -> int:
    """`--pairs`: this build's server and the baseline's, both up, driven in turn at `rate`: what a
    change of a few percent of CPU does shows in every pair, where separate runs drift more than that."""
    import statistics

    runs: dict[str, list[Result]] = {"stockade": [], "baseline": []}
    with tempfile.TemporaryDirectory(prefix="stockade-bench-webhook-") as tmp:
        root = Path(tmp)
        ca, cert, key, config = bench_files(root)
        servers = {}
        for label, exe in (("stockade", stockade), ("baseline", baseline)):
            port = free_port()
            cmd = serve_command(exe, port, cert, key, config, args.workers)
            servers[label] = WebhookServer(label, cmd, port, ca, root / f"{label}.log")
        try:
            for server in servers.values():
                server.start()
            for i in range(args.pairs):
                for label in ("stockade", "baseline") if i % 2 == 0 else ("baseline", "stockade"):
                    runs[label] += _event_loop_run(args.client)(drive(servers[label], bodies, [rate], args))
        finally:
            for server in servers.values():
                server.stop()
    print(f"\n## {args.pairs} alternating pairs at {rate} req/s, {args.duration:g} s each, ", end="")
    print(f"--workers {args.workers}\n")
    print("| pair | this build µs / req | baseline µs / req | this build p99 ms | baseline p99 ms | errors |")
    print("|---:|---:|---:|---:|---:|---|")
    pairs = list(zip(runs["stockade"], runs["baseline"], strict=True))
    for i, (a, b) in enumerate(pairs, 1):
        cpu = f"{_us(a.server_us_per_request)} | {_us(b.server_us_per_request)}"
        print(f"| {i} | {cpu} | {_ms(a.pct(99))} | {_ms(b.pct(99))} | {a.errors} / {b.errors} |")

    def us(r: Result) -> float:
        return math.nan if r.server_us_per_request is None else r.server_us_per_request

    med = {k: statistics.median(us(r) for r in v) for k, v in runs.items()}
    p99 = {k: statistics.median(r.pct(99) or math.nan for r in v) for k, v in runs.items()}
    lower = sum(us(a) < us(b) for a, b in pairs)
    print(
        f"| median | {med['stockade']:.0f} | {med['baseline']:.0f} | {p99['stockade']:.2f} "
        f"| {p99['baseline']:.2f} | |"
    )
    print(f"\nthis build lower in {lower} of {args.pairs} pairs; baseline: `{baseline}`")
    return 0


# ---------------------------------------------------------------------------------------------------
# In-process breakdown of one request path (no HTTP, no TLS)


#: memory touched between requests in the breakdown's cache-cold pass: more than the L2 cache, as the
#: TLS, HTTP and parsing work between two evaluations in a server evicts what the last one used
COLD_BYTES = 16 * 1024 * 1024
#: idle time before each request in the breakdown's idle pass: a server at 1,000 req/s on two workers
#: waits about this long between two requests, and a CPU that goes idle loses what it had cached (in
#: a virtual machine the host runs other work on it meanwhile)
IDLE_SECONDS = 0.0005


def breakdown(bodies: Bodies, config_path: Path, n: int) -> list[tuple[str, float]]:
    """Median µs per phase of `POST /validate`, called directly, on one thread: CPU time of the
    thread (``time.thread_time``), so that other work on the machine does not count. Two more rows
    time the evaluation as a server pays it, where the caches have lost the engine's memory (the warm
    loop undercounts it by a third): with :data:`COLD_BYTES` of other memory written before each
    request (a server's TLS and HTTP work between two evaluations), and with the thread asleep for
    :data:`IDLE_SECONDS` before each (a worker idle between two requests: a CPU that halts loses its
    caches, and on this machine's virtual CPUs the host runs other work meanwhile; spinning as long
    instead leaves the next evaluation as fast as the warm loop's)."""
    import statistics

    from stockade.admission.app import parse_review
    from stockade.admission.decide import evaluate, respond
    from stockade.admission.review import AdmissionReviewResponse
    from stockade.policies.config.settings import load_config
    from stockade.policies.evaluate import Evaluator, InventoryFacts

    evaluator = Evaluator.default(load_config(config_path))
    facts = InventoryFacts()
    phases: dict[str, list[float]] = {"parse (orjson + pydantic)": [], "evaluate": [], "respond + dump": []}
    sample = [bodies.next()[1] for _ in range(n)]
    clock = time.thread_time
    for rep in range(4):  # the first pass warms up
        for body in sample:
            t0 = clock()
            review = parse_review(body)
            t1 = clock()
            findings = evaluate(review.request, evaluator, facts)
            t2 = clock()
            orjson.dumps(AdmissionReviewResponse(response=respond(review.request.uid, findings)).to_json())
            t3 = clock()
            if rep:
                phases["parse (orjson + pydantic)"].append(t1 - t0)
                phases["evaluate"].append(t2 - t1)
                phases["respond + dump"].append(t3 - t2)

    def evaluations_after(before: Callable[[int], None], bodies: list[bytes]) -> list[float]:
        """Each body's evaluation time, ``before(i)`` run between its parse and its evaluation."""
        out = []
        for i, body in enumerate(bodies):
            review = parse_review(body)
            before(i)
            t1 = clock()
            evaluate(review.request, evaluator, facts)
            out.append(clock() - t1)
        return out

    other = bytearray(COLD_BYTES)

    def write_other(i: int) -> None:
        other[i % 64 :: 64] = bytes([i % 251]) * (COLD_BYTES // 64)  # a byte in every 64-byte line

    phases["evaluate, caches cold"] = evaluations_after(write_other, sample * 2)
    idle = evaluations_after(lambda _: time.sleep(IDLE_SECONDS), sample)
    phases[f"evaluate, {IDLE_SECONDS * 1000:g} ms idle before each"] = idle
    return [(k, statistics.median(v) * 1e6) for k, v in phases.items()]


def baseline_breakdown(stockade: str, objects_args: list[str], config: Path, n: int) -> dict[str, float]:
    """The same breakdown in the baseline build's Python (next to its `stockade`), as a child process."""
    python = Path(stockade).with_name("python")
    argv = [str(python), __file__, *objects_args, "--breakdown-only", str(config), "--breakdown", str(n)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"baseline breakdown failed: {done.stderr.strip()[-500:]}", file=sys.stderr)
        return {}
    return {str(k): float(v) for k, v in orjson.loads(done.stdout.strip().splitlines()[-1])}


# ---------------------------------------------------------------------------------------------------
# Report


def _ms(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _us(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0f}"


def table(results: Sequence[Result]) -> str:
    lines = [
        "| server | rate (req/s) | achieved (req/s) | p50 ms | p95 ms | p99 ms | max ms | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.server} | {r.rate} | {r.achieved:.1f} | {_ms(r.pct(50))} | {_ms(r.pct(95))} "
            f"| {_ms(r.pct(99))} | {_ms(r.pct(100))} | {r.error_text()} |"
        )
    return "\n".join(lines)


def cpu_table(results: Sequence[Result]) -> str:
    lines = [
        "| server | rate | server CPU % (per process) | server CPU µs / request | load gen. CPU % "
        "| send lag ms p50 / max | denied |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for r in results:
        per = [v / r.elapsed * 100 for v in r.server_cpu.values() if v > 0.005]
        server = f"{sum(per):.0f} (" + " + ".join(f"{p:.0f}" for p in per) + ")" if per else "n/a"
        done = len(r.latencies)
        denied = f"{r.denied / done * 100:.0f} %" if done else "n/a"
        lines.append(
            f"| {r.server} | {r.rate} | {server} | {_us(r.server_us_per_request)} "
            f"| {r.client_cpu / r.elapsed * 100:.0f} "
            f"| {_ms(pct(r.lags, 50))} / {_ms(pct(r.lags, 100))} | {denied} |"
        )
    return "\n".join(lines)


def compare(results: Sequence[Result], *pairs: tuple[str, str]) -> str:
    """This build beside the baseline, rate by rate: latency, achieved rate, errors, server CPU."""
    by = {(r.server, r.rate): r for r in results}
    lines = [
        "| server (this build / baseline) | rate | achieved | p50 ms | p99 ms | errors "
        "| server CPU µs / req |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    for new, old in pairs:
        for rate in sorted({r.rate for r in results}):
            a, b = by.get((new, rate)), by.get((old, rate))
            if a is None or b is None:
                continue
            lines.append(
                f"| {new} / {old} | {rate} | {a.achieved:.0f} / {b.achieved:.0f} "
                f"| {_ms(a.pct(50))} / {_ms(b.pct(50))} | {_ms(a.pct(99))} / {_ms(b.pct(99))} "
                f"| {a.error_text()} / {b.error_text()} "
                f"| {_us(a.server_us_per_request)} / {_us(b.server_us_per_request)} |"
            )
    return "\n".join(lines)


def verdicts(results: Sequence[Result], full: str, floor: str) -> list[str]:
    out = []
    by = {(r.server, r.rate): r for r in results}
    top = by.get((full, TARGET_RATE))
    if top is None:
        out.append(f"- p99 target not checked: {full} was not run at {TARGET_RATE} req/s")
    else:
        p99 = top.pct(99)
        ok = p99 is not None and p99 <= TARGET_P99_MS and top.errors == 0
        out.append(
            f"- {'PASS' if ok else 'FAIL'}: {full} p99 at {TARGET_RATE} req/s = {_ms(p99)} ms with "
            f"{top.errors} errors (target <= {TARGET_P99_MS:g} ms, zero errors)"
        )
    for rate in sorted({r.rate for r in results}):
        a, b = by.get((full, rate)), by.get((floor, rate))
        if a is None or b is None or a.pct(50) is None or b.pct(50) is None:
            continue
        delta = a.pct(50) - b.pct(50)  # type: ignore[operator]
        ok = delta <= TARGET_EVAL_OVERHEAD_MS
        out.append(
            f"- {'PASS' if ok else 'FAIL'}: at {rate} req/s evaluation adds {delta:+.2f} ms at the median "
            f"({_ms(a.pct(50))} vs floor {_ms(b.pct(50))}; target <= {TARGET_EVAL_OVERHEAD_MS:g} ms)"
        )
    idle = min((r for r in results if r.pct(50) is not None), key=lambda r: r.rate, default=None)
    if idle is not None and 35 <= (idle.pct(50) or 0) <= 50:
        out.append(
            f"- note: p50 is {_ms(idle.pct(50))} ms at {idle.rate} req/s with the server mostly idle: "
            "that is the 40 ms delayed-ACK stall of a server socket without TCP_NODELAY (see bench/README.md)"
        )
    return out


def find_stockade(given: str | None) -> str:
    if given:
        if not (Path(given).is_file() and os.access(given, os.X_OK)):
            raise SystemExit(f"--stockade {given}: not an executable file")
        return given
    sibling = Path(sys.executable).with_name("stockade")
    found = str(sibling) if sibling.exists() else shutil.which("stockade")
    if not found:
        raise SystemExit("stockade executable not found: pass --stockade PATH")
    return found


def _rates(values: Sequence[str]) -> list[int]:
    rates = [int(x) for v in values for x in v.split(",") if x.strip()]
    if not rates or any(r <= 0 for r in rates):
        raise SystemExit("--rates: positive integers, e.g. --rates 100,200,300")
    return rates


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    ap.add_argument("--rates", nargs="+", default=["100,200,300"], help="req/s, e.g. 100,200,300 (default)")
    ap.add_argument("--duration", type=float, default=20.0, help="seconds per rate (20)")
    ap.add_argument("--warmup", type=float, default=3.0, help="untimed seconds at the first rate (3)")
    ap.add_argument("--pause", type=float, default=1.0, help="idle seconds before each rate (1)")
    ap.add_argument("--workers", type=int, default=2, help="server worker processes (2)")
    ap.add_argument(
        "--client",
        choices=("raw", "aiohttp", "httpx"),
        default="raw",
        help="load generator HTTP client: raw (default; HTTP/1.1 by hand on uvloop, about half of aiohttp's\n"
        "CPU, which it would take from the server's cores), aiohttp or httpx",
    )
    ap.add_argument("--connections", type=int, default=16, help="client keep-alive connections, max (16)")
    ap.add_argument("--timeout", type=float, default=10.0, help="per-request timeout, s (10)")
    ap.add_argument("--objects", type=int, default=200, help="distinct workloads to cycle through (200)")
    ap.add_argument("--violating", type=float, default=0.3, help="share of workloads breaking controls (0.3)")
    ap.add_argument("--seed", type=int, default=20261122, help="generator seed")
    ap.add_argument(
        "--update", action="store_true", help="send UPDATEs (oldObject, managedFields) instead of CREATEs"
    )
    ap.add_argument(
        "--servers", choices=("both", "stockade", "floor"), default="both", help="what to run (both)"
    )
    ap.add_argument(
        "--bare",
        action="store_true",
        help="also run the framework's floor: uvicorn (httptools, uvloop) and Starlette answering every\n"
        "review allowed over the same TLS, with nothing of stockade's (bench/bare_webhook.py)",
    )
    ap.add_argument(
        "--pairs",
        type=int,
        default=0,
        help="with --baseline: N alternating pairs of short runs instead (this build's server and the\n"
        "baseline's both up, driven in turn at the last rate for --duration each, which goes first\n"
        "alternating): each pair's server CPU a request and p99, and their medians",
    )
    ap.add_argument("--stockade", help="stockade executable (default: next to this Python, else PATH)")
    ap.add_argument(
        "--baseline",
        help="another build's stockade executable (OLD_VENV/bin/stockade): its server and floor are run in\n"
        "the same run, after this build's, and its in-process breakdown with its own Python",
    )
    ap.add_argument("--breakdown-only", type=Path, help=argparse.SUPPRESS)  # CONFIG: one JSON line
    ap.add_argument(
        "--breakdown", type=int, default=300, help="requests in the in-process breakdown (300; 0: skip)"
    )
    ap.add_argument("--keep-logs", type=Path, help="copy the server logs into this directory")
    args = ap.parse_args(argv)
    if args.breakdown_only:  # the baseline's breakdown, in the baseline's Python (baseline_breakdown)
        objects = make_objects(args.objects, args.seed, args.violating)
        sample = Bodies(objects, update=args.update)
        print(orjson.dumps(breakdown(sample, args.breakdown_only, args.breakdown)).decode())
        return 0
    rates = _rates(args.rates)
    if args.duration <= 0 or args.duration * max(rates) > 100_000:
        # a rate's bodies are built before it starts: about 4 KB each
        raise SystemExit("--duration: positive, and at most 100,000 requests per rate")
    stockade = find_stockade(args.stockade)
    baseline = find_stockade(args.baseline) if args.baseline else None

    objects = make_objects(args.objects, args.seed, args.violating)
    bodies = Bodies(objects, update=args.update)
    if args.pairs:
        if baseline is None:
            raise SystemExit("--pairs: needs --baseline")
        return alternate(stockade, baseline, bodies, rates[-1], args)
    sizes = sorted(len(bodies.next()[1]) for _ in range(len(objects)))
    full, floor = "stockade", "floor (--no-evaluation)"
    old, old_floor = "baseline", "baseline floor"
    plan = [(full, stockade, []), (floor, stockade, ["--no-evaluation"])]
    if baseline:
        plan += [(old, baseline, []), (old_floor, baseline, ["--no-evaluation"])]
    plan = [p for p in plan if args.servers in ("both", "stockade" if p[0] in (full, old) else "floor")]
    if args.bare:
        plan.append((BARE, sys.executable, []))

    results: list[Result] = []
    commands: list[str] = []
    with tempfile.TemporaryDirectory(prefix="stockade-bench-webhook-") as tmp:
        root = Path(tmp)
        ca, cert, key, config = bench_files(root)
        for label, exe, extra in plan:
            port = free_port()
            if label == BARE:
                cmd = bare_command(port, cert, key, args.workers)
            else:
                cmd = serve_command(exe, port, cert, key, config, args.workers, extra)
            server = WebhookServer(label, cmd, port, ca, root / f"server-{len(commands)}.log")
            commands.append(f"{label}: `{server.command}`")
            try:
                t0 = time.perf_counter()
                server.start()
                print(f"{label}: ready in {time.perf_counter() - t0:.1f} s on {HOST}:{port}", file=sys.stderr)
                results += _event_loop_run(args.client)(drive(server, bodies, rates, args))
            finally:
                code = server.stop()
                print(f"{label}: stopped (exit {code})", file=sys.stderr)
                if args.keep_logs:
                    args.keep_logs.mkdir(parents=True, exist_ok=True)
                    shutil.copy(server.log_path, args.keep_logs / server.log_path.name)
        sample = Bodies(objects, update=args.update)
        phases = breakdown(sample, config, args.breakdown) if args.breakdown > 0 else []
        objects_args = ["--objects", str(args.objects), "--seed", str(args.seed)]
        objects_args += ["--violating", str(args.violating)] + (["--update"] if args.update else [])
        old_phases = (
            baseline_breakdown(baseline, objects_args, config, args.breakdown)
            if baseline and args.breakdown > 0
            else {}
        )

    version = subprocess.run(
        [stockade, "version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    kinds = sum(o["kind"] == "Pod" for o in objects)
    print()
    print(
        f"## stockade admission webhook: open-loop AdmissionReview CREATEs on {HOST}, "
        f"{args.duration:g} s per rate"
    )
    print()
    print(
        f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs (the load generator runs on the same CPUs as the server), "
        f"stockade {version or '?'}, client {Client.version(args.client)}; server --workers {args.workers}, "
        f"client keep-alive pool of {args.connections} connections, TLS 1.3 ECDSA P-256; "
        f"{len(objects)} workloads ({kinds} training Pods, {len(objects) - kinds} inference Deployments, "
        f"{args.violating:.0%} violating), bodies {sizes[0] / 1024:.1f}-{sizes[-1] / 1024:.1f} KB "
        f"(median {sizes[len(sizes) // 2] / 1024:.1f} KB); warm-up {args.warmup:g} s; latency from the "
        f"scheduled send to the response"
        + (f"; load average at the end {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}" if load else "")
    )
    print()
    print(table(results))
    print()
    print(cpu_table(results))
    if baseline:
        print()
        print(compare(results, (full, old), (floor, old_floor)))
    if phases:
        print()
        print(
            f"In-process request path (no HTTP/TLS), median CPU µs (thread time) over {args.breakdown} "
            f"requests, 3 passes, one thread; then with {COLD_BYTES // 2**20} MB of other memory "
            "written between requests, as a server's other work leaves the caches, and with the thread "
            f"idle {IDLE_SECONDS * 1000:g} ms before each request, as a server's worker between two:"
        )
        print()
        if old_phases:
            print("| phase | this build µs | baseline µs | ratio |\n|---|---:|---:|---:|")
            for name, us in phases:
                was = old_phases.get(name)
                ratio = f"{us / was:.2f}" if was else "n/a"
                print(f"| {name} | {us:.0f} | {'n/a' if was is None else f'{was:.0f}'} | {ratio} |")
        else:
            print("| phase | median µs |\n|---|---:|")
            for name, us in phases:
                print(f"| {name} | {us:.0f} |")
    print()
    print("\n".join(verdicts(results, full, floor)))
    print()
    print("Commands:")
    print()
    for c in commands:
        print(f"- {c}")
    print(f"- this benchmark: `{shlex.join([sys.executable, *sys.argv])}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
