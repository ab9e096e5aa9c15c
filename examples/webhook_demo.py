"""`make demo`, part 2: a local admission webhook round trip.

Creates a throwaway CA and serving certificate, starts `stockade webhook serve --no-inventory` on a
free loopback port, sends AdmissionReview v1 CREATE requests for a few example objects (as the API
server would), prints each decision, and stops the server. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import datetime as dt
import json
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import yaml

from stockade.webhooks.certs import CertificateAuthority

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / ".demo" / "webhook"
SAMPLES = [
    ("compliant/training/pytorch-ddp-job.yaml", "Job"),
    ("violations/inference.yaml", "Deployment"),
    ("violations/training.yaml", "Pod"),
]


def certificates() -> tuple[Path, Path, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    ca = CertificateAuthority.create("stockade-demo-ca", dt.timedelta(hours=1))
    paths = OUT / "ca.crt", OUT / "tls.crt", OUT / "tls.key"
    paths[0].write_bytes(ca.cert_pem)
    ca.issue(ip_addresses=["127.0.0.1"], valid=dt.timedelta(hours=1)).write(paths[1], paths[2])
    return paths


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def first_of_kind(path: Path, kind: str) -> dict[str, object]:
    return next(
        d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and d.get("kind") == kind
    )


def main() -> int:
    ca, cert, key = certificates()
    port = free_port()
    stockade = Path(sys.executable).parent / "stockade"
    cmd = [
        str(stockade),
        "webhook",
        "serve",
        "--tls-cert",
        str(cert),
        "--tls-key",
        str(key),
        "--host",
        "127.0.0.1",
    ]
    cmd += ["--port", str(port), "--no-inventory", "--config", str(ROOT / "examples" / "stockade.yaml")]
    server = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    ctx = ssl.create_default_context(cafile=str(ca))
    base = f"https://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{base}/healthz", context=ctx, timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    print("webhook did not start", file=sys.stderr)
                    return 1
                time.sleep(0.2)
        print(f"webhook listening on {base}/validate")
        for rel, kind in SAMPLES:
            obj = first_of_kind(ROOT / "examples" / "manifests" / rel, kind)
            md = obj["metadata"]
            assert isinstance(md, dict)
            body = {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "request": {
                    "uid": str(uuid.uuid4()),
                    "kind": {"group": "", "version": "v1", "kind": kind},
                    "resource": {"group": "", "version": "v1", "resource": kind.lower() + "s"},
                    "namespace": md.get("namespace", ""),
                    "name": md["name"],
                    "operation": "CREATE",
                    "object": obj,
                },
            }
            req = urllib.request.Request(
                f"{base}/validate", json.dumps(body).encode(), {"content-type": "application/json"}
            )
            resp = json.loads(urllib.request.urlopen(req, context=ctx, timeout=10).read())["response"]
            verdict = "ALLOWED" if resp["allowed"] else "DENIED"
            print(f"  CREATE {kind}/{md.get('namespace')}/{md['name']}: {verdict}")
            for line in (resp.get("status") or {}).get("message", "").splitlines()[1:4]:
                print(f"      {line}")
            for warning in resp.get("warnings", [])[:2]:
                print(f"      warning: {warning}")
        return 0
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)


if __name__ == "__main__":
    sys.exit(main())
