"""The image built by `make image` (webhooks/image/build.sh: debootstrap + buildah, no daemon, no
registry), unpacked from its OCI archive and run: its entrypoint serves a real AdmissionReview over TLS
on 127.0.0.1, as UID 65532, on a read-only root filesystem (a private mount namespace: the image's
tree bind-mounted read-only, a tmpfs on /tmp, as the Deployment mounts it), chrooted into the image.

Needs root, debootstrap and buildah (the Makefile's `image-tools` installs them where it can); builds
once per session (about 2-3 minutes on a fresh machine; the Debian tree is kept in dist/image).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tarfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.leftovers import Proc, carrying, marker_env
from tests.tls_webhook import CA

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "dist" / "image"
TOOLS = ("debootstrap", "buildah", "chroot", "unshare")
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or any(shutil.which(t) is None for t in TOOLS),
    reason="needs root, debootstrap and buildah (make image-tools)",
)
#: the environment variable that marks the processes of one server started by a test
TAG = "STOCKADE_IMAGE_TEST"
PRIVILEGED_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ml"},
    "spec": {"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": True}}]},
}


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any], float]]:
    """(the unpacked root filesystem, the image config, seconds the build took)."""
    started = time.monotonic()
    done = subprocess.run(
        ["bash", str(ROOT / "webhooks" / "image" / "build.sh")],
        env={**os.environ, "OUT": str(OUT), "PY": str(ROOT / ".venv" / "bin" / "python")},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seconds = time.monotonic() - started
    root = tmp_path_factory.mktemp("image") / "root"
    root.mkdir()
    with tarfile.open(OUT / "stockade.oci.tar") as archive:
        index = json.load(_member(archive, "index.json"))
        manifest = json.load(_member(archive, _blob(index["manifests"][0]["digest"])))
        config = json.load(_member(archive, _blob(manifest["config"]["digest"])))
        for layer in manifest["layers"]:
            with tarfile.open(fileobj=_member(archive, _blob(layer["digest"])), mode="r:*") as tar:
                tar.extractall(root, filter="fully_trusted")  # our own build's layer; device nodes kept
    yield root, config, seconds


def _blob(digest: str) -> str:
    return "blobs/sha256/" + digest.split(":", 1)[1]


def _member(archive: tarfile.TarFile, name: str) -> Any:
    member = archive.extractfile(name)
    assert member is not None, name
    return member


def test_image_shape(image: tuple[Path, dict[str, Any], float]) -> None:
    root, config, seconds = image
    cfg = config["config"]
    assert cfg["User"] == "65532:65532"
    assert cfg["Entrypoint"] == ["/opt/stockade/bin/stockade"]
    assert not any(
        (root / p).exists() or (root / p).is_symlink() for p in ("bin/sh", "usr/bin/sh", "usr/bin/bash")
    )
    assert sorted(p.name for p in (root / "usr" / "bin").iterdir()) == ["python3", "python3.11"]
    size = (OUT / "stockade.oci.tar").stat().st_size
    print(f"\nimage: {size / 2**20:.0f} MiB OCI archive, built in {seconds:.0f} s")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_server(proc: subprocess.Popen[bytes], tag: str) -> list[Proc]:
    """Stop the server started as `proc` and everything it started: SIGTERM to its process group
    (a graceful stop), SIGKILL to the group and to any process still carrying `tag` (one that left
    the group) 15 s later. Returns what is still running 30 s after that (nothing, normally)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while carrying(TAG, tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):  # proc is not reaped yet: its group id is not reused
        os.killpg(proc.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while (left := carrying(TAG, tag)) and time.monotonic() < deadline:
        for p in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGKILL)
        time.sleep(0.1)
    proc.wait(timeout=30)
    return left


def test_entrypoint_answers_admission_review_over_tls_read_only(
    image: tuple[Path, dict[str, Any], float], tmp_path: Path
) -> None:
    root, config, _ = image
    ca = CA()
    certs = tmp_path / "certs"
    certs.mkdir()
    ca.issue(certs / "tls.crt", certs / "tls.key")
    for f in certs.iterdir():
        f.chmod(0o644)  # read by UID 65532 inside (a Secret volume's defaultMode does this in a pod)
    port = _free_port()
    env = dict(e.split("=", 1) for e in config["config"]["Env"])
    entry = " ".join(config["config"]["Entrypoint"])
    script = (
        f"set -e; R={root}; mount --make-rprivate /; mount --bind $R $R; mount -o remount,bind,ro $R $R;"
        f" mount -t tmpfs -o size=64m tmpfs $R/tmp; cp {certs}/tls.crt {certs}/tls.key $R/tmp/;"
        f" exec chroot --userspec=65532:65532 $R {entry} webhook serve --tls-cert /tmp/tls.crt"
        f" --tls-key /tmp/tls.key --host 127.0.0.1 --port {port} --no-inventory"
    )
    ca_file = ca.write_ca(tmp_path / "ca.crt")
    started = time.monotonic()
    log = tmp_path / "serve.log"
    tag = f"stockade-image-test-{uuid.uuid4().hex}"  # in the environment of every process below
    with log.open("w") as out:
        # Its own session (process group), and a PID namespace whose init is the server: stopping it
        # ends every process inside, whatever user it runs as (tests/leftovers.py checks the run).
        proc = subprocess.Popen(
            ["unshare", "--mount", "--pid", "--fork", "--kill-child", "/bin/sh", "-c", script],
            env={**env, "PATH": env["PATH"] + ":/usr/sbin:/sbin", TAG: tag, **marker_env()},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        verify = ssl.create_default_context(cafile=str(ca_file))
        with httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=verify, timeout=30) as client:
            ready = None
            while time.monotonic() - started < 120 and proc.poll() is None:
                with contextlib.suppress(httpx.TransportError):
                    ready = client.get("/readyz")
                    if ready.status_code == 200:
                        break
                time.sleep(0.1)
            assert ready is not None and ready.status_code == 200, log.read_text()
            startup = time.monotonic() - started
            review = {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "request": {
                    "uid": "3d3c9a8e-0000-4000-8000-000000000001",
                    "kind": {"group": "", "version": "v1", "kind": "Pod"},
                    "resource": {"group": "", "version": "v1", "resource": "pods"},
                    "namespace": "ml",
                    "operation": "CREATE",
                    "userInfo": {"username": "alice"},
                    "object": PRIVILEGED_POD,
                },
            }
            answer = client.post("/validate", json=review).json()
            assert answer["response"]["uid"] == review["request"]["uid"]
            assert answer["response"]["allowed"] is False
            assert "privileged" in answer["response"]["status"]["message"]
            print(f"\nimage entrypoint: /readyz after {startup:.2f} s")
    finally:
        left = stop_server(proc, tag)
    assert left == [], f"still running after the test: {left}"
