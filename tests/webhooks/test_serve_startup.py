"""`stockade webhook serve` start-up failures: one line and exit code 2, in the parent and in a worker.

Every test runs the installed `stockade` command in a subprocess (its own stdout and stderr, real
forked workers), with HOME in the test's directory and no KUBERNETES_SERVICE_* variables, as on a
laptop outside any cluster. Servers listen on 127.0.0.1 only; kubeconfigs point at the fake API
server (tests/webhooks/fake_apply_server.py, aiohttp on 127.0.0.1) or at a closed loopback port.
"""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.tls_webhook import pki_files

STOCKADE = str(Path(sys.executable).parent / "stockade")
DEADLINE = 120.0  # generous: a loaded 2-core machine


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_") and k != "KUBECONFIG"}
    return {**clean, "HOME": str(home)}


@pytest.fixture
def pki(tmp_path: Path) -> tuple[Path, Path, Path]:
    return pki_files(tmp_path)


def _kubeconfig(path: Path, server_url: str, contexts: tuple[str, ...] = ("fake-ctx",)) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "fake", "cluster": {"server": server_url}}],
                "users": [{"name": "u", "user": {"token": "serve-startup-token-7f3a"}}],
                "contexts": [{"name": c, "context": {"cluster": "fake", "user": "u"}} for c in contexts],
                "current-context": contexts[0],
            }
        )
    )
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(
    cert: Path, key: Path, *extra: str, env: dict[str, str], cwd: Path, local: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run `webhook serve` to its end (a start-up failure ends it), bounded by DEADLINE."""
    cmd = [STOCKADE, "webhook", "serve", "--tls-cert", str(cert), "--tls-key", str(key)]
    if local:
        cmd += ["--host", "127.0.0.1", "--port", str(_free_port())]
    return subprocess.run(
        [*cmd, *extra], env=env, cwd=cwd, capture_output=True, text=True, timeout=DEADLINE, check=False
    )


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Process ForkProcess" not in done.stderr, done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("stockade: error: ")]
    assert len(errors) == 1, done.stderr
    return errors[0]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_readme_form_outside_a_cluster_is_one_line_and_exit_2(
    pki: tuple[Path, Path, Path], env: dict[str, str], tmp_path: Path, workers: str
) -> None:
    """The README's command as written (no --no-inventory, default host and port) on a machine that is
    not a pod: it was a ConfigException traceback and exit 1, or with --workers 2 two tracebacks and
    exit 0. It fails before binding, so the default port being busy cannot change the answer."""
    _, cert, key = pki
    done = _serve(cert, key, "--workers", workers, env=env, cwd=tmp_path, local=False)
    line = _one_error_line(done)
    assert "not running in a Kubernetes pod" in line
    assert "--no-inventory" in line and "--kubeconfig" in line


def test_a_missing_kubeconfig_is_one_line(
    pki: tuple[Path, Path, Path], env: dict[str, str], tmp_path: Path
) -> None:
    _, cert, key = pki
    done = _serve(cert, key, "--kubeconfig", "nope.yaml", "--workers", "2", env=env, cwd=tmp_path)
    assert _one_error_line(done).startswith("stockade: error: --kubeconfig nope.yaml: no such file")
    done = _serve(cert, key, "--context", "prod", env=env, cwd=tmp_path)  # the default file is missing
    assert f"kubeconfig {tmp_path / 'home' / '.kube' / 'config'}: no such file" in _one_error_line(done)


def test_an_unknown_context_names_the_contexts_there_are(
    pki: tuple[Path, Path, Path], env: dict[str, str], tmp_path: Path
) -> None:
    _, cert, key = pki
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:1", ("dev", "staging"))
    done = _serve(cert, key, "--kubeconfig", str(kubeconfig), "--context", "prod", env=env, cwd=tmp_path)
    line = _one_error_line(done)
    assert f"--context prod: not in {kubeconfig} (its contexts: dev, staging)" in line
    assert "serve-startup-token" not in done.stderr


def test_a_certificate_that_is_not_a_pair_is_one_line(
    pki: tuple[Path, Path, Path], env: dict[str, str], tmp_path: Path
) -> None:
    _, cert, _key = pki
    done = _serve(cert, cert, "--no-inventory", env=env, cwd=tmp_path)
    assert "not a PEM certificate and its private key" in _one_error_line(done)


WORKER_FAILS = """
import os, sys
from stockade.admission import inventory
from stockade.cli.main import main

marker, parent = sys.argv[1], os.getpid()
real = inventory.InventoryCache.from_kubeconfig.__func__

def from_kubeconfig(cls, *args, **kwargs):
    # the first worker to get here cannot start (as if its kubeconfig had gone); the others can
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return real(cls, *args, **kwargs)
    raise inventory.ClusterConfigError("--kubeconfig gone.yaml: no such file")

inventory.InventoryCache.from_kubeconfig = classmethod(from_kubeconfig)
main(sys.argv[2:])
"""


def test_a_worker_that_cannot_start_stops_the_server_with_exit_2(
    pki: tuple[Path, Path, Path], env: dict[str, str], tmp_path: Path
) -> None:
    """Two workers; the first that builds its inventory cache fails (patched in this test's driver
    script, since the parent's own check would catch any real cause first). Its error is one line, the
    parent stops the other worker, and the server exits 2 instead of serving on with one worker."""
    _, cert, key = pki
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:1")
    args = ["webhook", "serve", "--tls-cert", str(cert), "--tls-key", str(key), "--host", "127.0.0.1"]
    args += ["--port", str(_free_port()), "--workers", "2", "--kubeconfig", str(kubeconfig)]
    done = subprocess.run(
        [sys.executable, "-c", WORKER_FAILS, str(tmp_path / "failed-once"), *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Process ForkProcess" not in done.stderr, done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("stockade: error: ")]
    assert errors == [
        "stockade: error: --kubeconfig gone.yaml: no such file",
        "stockade: error: 1 of 2 worker processes ended on their own, so the server stopped",
    ], done.stderr
    assert "ended with exit code 2, stopping the others" in done.stderr  # the parent's log line


@pytest.fixture
def cluster(fake_apply_module: Any) -> Iterator[Any]:
    """The admission tests' fake API server (tests/admission/fake_apiserver.py) with every built-in
    kind the inventory cache watches; the custom ones (Cilium, Calico) answer 404, not installed."""
    server = fake_apply_module.admission_conftest._load_fake_apiserver().FakeApiServer().start()
    try:
        yield server
    finally:
        server.stop()


def test_serving_with_a_kubeconfig_still_starts_and_stops_cleanly(
    pki: tuple[Path, Path, Path], env: dict[str, str], tmp_path: Path, cluster: Any
) -> None:
    """The start-up checks do not get in the way: two workers fill their caches from the fake API
    server, /readyz turns 200, and SIGTERM ends the server with exit 0."""
    ca_file, cert, key = pki
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", cluster.url)
    port = _free_port()
    cmd = [STOCKADE, "webhook", "serve", "--tls-cert", str(cert), "--tls-key", str(key), "--host"]
    cmd += ["127.0.0.1", "--port", str(port), "--workers", "2", "--kubeconfig", str(kubeconfig)]
    proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        verify = ssl.create_default_context(cafile=str(ca_file))
        deadline = time.monotonic() + DEADLINE
        while True:
            assert proc.poll() is None, "server ended"
            try:
                if httpx.get(f"https://127.0.0.1:{port}/readyz", verify=verify, timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "never ready"
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert b"Traceback" not in err
