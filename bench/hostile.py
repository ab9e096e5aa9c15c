"""The admission webhook under hostile clients: normal requests' latency and the server's memory.

Starts `stockade webhook serve` (one worker, the default `admission:` limits, the engine in its
child process) on 127.0.0.1 with a throwaway CA, then runs each attack for `--duration` seconds
while a well-behaved client sends normal AdmissionReviews (the generated Pods and Deployments of
bench/webhook.py) open-loop at `--rate` req/s. For each attack it records the normal requests'
p50 / p99 / worst latency (from the scheduled send) and errors, and the peak RSS of the server's
processes (the worker and its engine child, sampled every 100 ms from /proc).

Attacks (each one alone, from a process of its own, so that it does not share the measuring
client's event loop and CPU):
- `slow-lines`: `--connections` TLS connections that send half a request's headers, one byte a
  second, and reconnect when closed;
- `slow-bodies`: 100 connections that send whole headers announcing a 3 MB body, then 1 KiB a second;
- `big-bodies`: 16 clients posting 2.9 MiB ConfigMaps (95,000 data keys, under every limit) in a loop;
- `huge-pod`: 4 clients posting the issue's Pod with 20,000 privileged containers (0.64 MiB) in a loop;
- `parse-bomb`: 4 clients posting 2.9 MiB of `[[],[],...]` inside a review, in a loop.

Loopback only; bounded in time; stops the server itself. Results: docs/benchmarks.md.

    .venv/bin/python bench/hostile.py [--duration 10] [--rate 50] [--connections 400]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import ssl
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
from webhook import HOST, Bodies, WebhookServer, find_stockade, free_port, make_objects, make_pki, pct

ROOT = Path(__file__).resolve().parents[1]


def rss_mib(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024


def review(obj: dict[str, Any]) -> bytes:
    kind = obj["kind"]
    request = {
        "uid": str(uuid.uuid4()),
        "kind": {"group": "", "version": "v1", "kind": kind},
        "resource": {"group": "", "version": "v1", "resource": kind.lower() + "s"},
        "namespace": "ml",
        "operation": "CREATE",
        "userInfo": {"username": "mallory"},
        "object": obj,
    }
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


def huge_pod() -> bytes:
    cs = [{"name": f"c{i}", "image": "x", "securityContext": {"privileged": True}} for i in range(20_000)]
    return review(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "big", "namespace": "ml"},
            "spec": {"containers": cs},
        }
    )


def big_configmap() -> bytes:
    data = {f"k{i:05d}": "v" * 20 for i in range(95_000)}
    return review(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "big", "namespace": "ml"},
            "data": data,
        }
    )


def parse_bomb() -> bytes:
    cm = review(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "ml"}, "data": {}}
    )
    return cm.replace(b'"data":{}', b'"data":{},"junk":[' + b"[]," * 1_000_000 + b"[]]")


class Bench:
    def __init__(self, server: Any, ca: Path, args: argparse.Namespace) -> None:
        self.server, self.ca, self.args = server, ca, args
        self.ctx = ssl.create_default_context(cafile=str(ca))
        self.port = server.port
        self.base = f"https://{HOST}:{server.port}"
        self.stop = asyncio.Event()

    async def normal(self, bodies: Bodies) -> tuple[list[float], int]:
        """Open-loop normal requests until stopped: latencies (s) and errors."""
        latencies: list[float] = []
        errors = 0
        limits = httpx.Limits(max_connections=4, max_keepalive_connections=4)
        async with httpx.AsyncClient(
            base_url=self.base, verify=self.ctx, limits=limits, timeout=15
        ) as client:
            tasks = []

            async def one(at: float, body: bytes) -> None:
                nonlocal errors
                try:
                    r = await client.post(
                        "/validate", content=body, headers={"content-type": "application/json"}
                    )
                    if r.status_code != 200 or "could not evaluate" in r.text:
                        errors += 1
                        return
                except httpx.HTTPError:
                    errors += 1
                    return
                latencies.append(time.monotonic() - at)

            start = time.monotonic()
            n = 0
            while not self.stop.is_set():
                at = start + n / self.args.rate
                delay = at - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(one(at, bodies.next()[1])))
                n += 1
            await asyncio.gather(*tasks)
        return latencies, errors

    async def _conn(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection(HOST, self.port, ssl=self.ctx, server_hostname=HOST)

    async def slow_lines(self) -> None:
        async def one() -> None:
            while not self.stop.is_set():
                try:
                    _, w = await self._conn()
                    w.write(b"POST /validate HTTP/1.1\r\nHost: x\r\n")
                    await w.drain()
                    while not self.stop.is_set():
                        await asyncio.sleep(1)
                        w.write(b"X")
                        await w.drain()
                except (OSError, ssl.SSLError, ConnectionError):
                    await asyncio.sleep(0.05)

        await asyncio.gather(*(one() for _ in range(self.args.connections)))

    async def slow_bodies(self) -> None:
        async def one() -> None:
            while not self.stop.is_set():
                try:
                    _, w = await self._conn()
                    w.write(
                        b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 3000000\r\n\r\n"
                    )
                    while not self.stop.is_set():
                        w.write(b" " * 1024)
                        await w.drain()
                        await asyncio.sleep(1)
                except (OSError, ssl.SSLError, ConnectionError):
                    await asyncio.sleep(0.05)

        await asyncio.gather(*(one() for _ in range(100)))

    async def posting(self, body: bytes, clients: int) -> None:
        async with httpx.AsyncClient(base_url=self.base, verify=self.ctx, timeout=30) as client:

            async def one() -> None:
                while not self.stop.is_set():
                    with contextlib.suppress(httpx.HTTPError):
                        await client.post(
                            "/validate", content=body, headers={"content-type": "application/json"}
                        )

            await asyncio.gather(*(one() for _ in range(clients)))

    async def sample_rss(self) -> float:
        peak = 0.0
        while not self.stop.is_set():
            peak = max(peak, rss_mib(self.server.pids()))
            await asyncio.sleep(0.1)
        return peak

    async def run(self, attack: str | None, bodies: Bodies) -> dict[str, Any]:
        """Normal traffic for `--duration` s, with `attack` running in its own process (a client in
        this process would share its event loop and CPU with the measured requests)."""
        self.stop = asyncio.Event()
        before = rss_mib(self.server.pids())
        proc = None
        if attack is not None:
            proc = multiprocessing.get_context("spawn").Process(
                target=attack_process,
                args=(attack, self.server.port, str(self.ca), self.args.duration + 1, self.args.connections),
            )
            proc.start()
            await asyncio.sleep(1)  # let the attack build up
        normal = asyncio.create_task(self.normal(bodies))
        rss = asyncio.create_task(self.sample_rss())
        await asyncio.sleep(self.args.duration)
        self.stop.set()
        latencies, errors = await normal
        if proc is not None:
            proc.join(60)
            if proc.is_alive():
                proc.kill()
        return {
            "n": len(latencies),
            "errors": errors,
            "p50": pct(latencies, 50),
            "p99": pct(latencies, 99),
            "max": max(latencies) * 1000 if latencies else None,
            "rss_before": before,
            "rss_peak": await rss,
        }


ATTACKS = ["slow-lines", "slow-bodies", "big-bodies", "huge-pod", "parse-bomb"]


def attack_process(name: str, port: int, ca: str, seconds: float, connections: int) -> None:
    """One attack, in a process of its own, for `seconds`."""

    async def go() -> None:
        args = argparse.Namespace(connections=connections)
        server = argparse.Namespace(port=port)
        bench = Bench(server, Path(ca), args)  # type: ignore[arg-type]
        attacks: dict[str, Callable[[], Awaitable[None]]] = {
            "slow-lines": bench.slow_lines,
            "slow-bodies": bench.slow_bodies,
            "big-bodies": lambda: bench.posting(big_configmap(), 16),
            "huge-pod": lambda: bench.posting(huge_pod(), 4),
            "parse-bomb": lambda: bench.posting(parse_bomb(), 4),
        }
        task = asyncio.create_task(attacks[name]())
        await asyncio.sleep(seconds)
        bench.stop.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(task, 30)

    asyncio.run(go())


def refused(server: WebhookServer, ca: Path) -> str:
    ctx = ssl.create_default_context(cafile=str(ca))
    with httpx.Client(base_url=f"https://{HOST}:{server.port}", verify=ctx, timeout=10) as client:
        lines = client.get("/metrics").text.splitlines()
    keep = ("stockade_admission_refused_total", "stockade_engine_restarts_total")
    return "; ".join(line for line in lines if line.startswith(keep))


async def main_async(
    args: argparse.Namespace, server: WebhookServer, ca: Path
) -> list[tuple[str, dict[str, Any]]]:
    bench = Bench(server, ca, args)
    bodies = Bodies(make_objects(200, seed=7, violating=0.3))
    pod, cm, bomb = huge_pod(), big_configmap(), parse_bomb()
    print(
        f"bodies: huge pod {len(pod) / 2**20:.2f} MiB, configmap {len(cm) / 2**20:.2f} MiB, "
        f"parse bomb {len(bomb) / 2**20:.2f} MiB",
        flush=True,
    )
    out = []
    for name in [None, *ATTACKS]:
        if args.only and (name or "none") not in args.only.split(","):
            continue
        result = await bench.run(name, bodies)
        out.append((name or "none", result))
        print(name or "none", result, flush=True)
        await asyncio.sleep(2)  # let stalled connections time out before the next attack
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=50.0, help="normal requests per second")
    parser.add_argument("--connections", type=int, default=400, help="slow-lines connections")
    parser.add_argument("--only", default="", help="comma-separated attacks")
    parser.add_argument("--stockade", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stockade-hostile-") as tmp:
        folder = Path(tmp)
        ca, cert, key = make_pki(folder)
        port = free_port()
        argv = [
            find_stockade(args.stockade),
            "webhook",
            "serve",
            "--tls-cert",
            str(cert),
            "--tls-key",
            str(key),
        ]
        argv += ["--host", HOST, "--port", str(port), "--workers", "1", "--no-inventory"]
        server = WebhookServer("stockade", argv, port, ca, folder / "server.log")
        server.start()
        try:
            results = asyncio.run(main_async(args, server, ca))
            counters = refused(server, ca)
        finally:
            server.stop()
    print(f"\ncommand: {' '.join(sys.argv)}; server: {' '.join(argv[1:])}")
    print(f"normal traffic: {args.rate:g} req/s open-loop for {args.duration:g} s per attack\n")
    print(
        "| attack | normal requests | errors | p50 ms | p99 ms | worst ms | RSS before MiB | RSS peak MiB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in results:
        print(
            f"| {name} | {r['n']} | {r['errors']} | {r['p50']:.2f} | {r['p99']:.2f} | {r['max']:.2f} "
            f"| {r['rss_before']:.0f} | {r['rss_peak']:.0f} |"
        )
    print(f"\nserver counters: {counters}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
