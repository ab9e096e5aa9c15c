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
from stockade.cli import run
sys.argv = ['stockade', 'scan', *sys.argv[1:]]
try:
    run()
except SystemExit:
    pass
print('SEEN', seen, 'ENABLED', gc.isenabled(), 'FROZEN', gc.get_freeze_count())
"""


def _probe(*args: str) -> str:
    """What the executable (stockade.cli.run, which pauses the collector first) did with the collector."""
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


def test_other_commands_run_with_the_collector() -> None:
    """Every command but `scan` gets the collector back before it parses its options."""
    probe = (
        "import gc, sys\nimport stockade.cli.main as cli\nreal = cli.build\n"
        "def build(load):\n    print('ON', load, gc.isenabled())\n    return real(load)\n"
        "cli.build = build\nfrom stockade.cli import run\nsys.argv = ['stockade', *sys.argv[1:]]\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\nprint('ENABLED', gc.isenabled())\n"
    )
    for args in (["policy", "list"], ["rbac", "--help"]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=300, check=False
        )
        assert f"ON {{'{args[0]}'}} True" in done.stdout, (args, done.stdout, done.stderr)
        assert done.stdout.rstrip().endswith("ENABLED True"), (args, done.stdout, done.stderr)
