"""`stockade scan` pauses the cyclic garbage collector only while it starts (cli.loading.pause_collector):
it reads and evaluates with the collector running, and the collector runs again after any scan,
one that fails before reading anything included. Run in a child process: the probe changes its
interpreter's collector."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """\
import gc, sys
import stockade.scanner.scan as pipeline
seen = []
real = pipeline.run_scan
def run_scan(*args, **kwargs):
    seen.append(gc.isenabled())
    return real(*args, **kwargs)
pipeline.run_scan = run_scan
from stockade.cli.main import main
try:
    main(['scan', *sys.argv[1:]])
except SystemExit:
    pass
print('SEEN', seen, 'ENABLED', gc.isenabled(), 'FROZEN', gc.get_freeze_count())
"""


def _probe(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return next(line for line in done.stdout.splitlines() if line.startswith("SEEN"))


def test_a_scan_reads_and_evaluates_with_the_collector_running(tmp_path: Path) -> None:
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: apps}\n"
        "spec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec:\n      containers: [{name: web, image: 'nginx:1.27'}]\n"
    )
    # evaluated with the collector on; nothing left frozen (run_scan unfreezes what it froze)
    assert _probe(str(manifest), "--fail-on", "never") == "SEEN [True] ENABLED True FROZEN 0"


def test_the_collector_runs_again_after_a_scan_that_fails_early(tmp_path: Path) -> None:
    config = tmp_path / "stockade.yaml"
    config.write_text("exeptions: []\n")  # an unknown key: exit 2 before anything is read
    assert _probe(str(tmp_path), "--config", str(config)) == "SEEN [] ENABLED True FROZEN 0"
    assert _probe("--no-such-option") == "SEEN [] ENABLED True FROZEN 0"
