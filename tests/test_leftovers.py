"""The end-of-run check of tests/leftovers.py, on whole pytest sessions run in a subprocess: a session
that leaves processes behind (a child, and a grandchild reparented to init that only the run's
marker identifies) fails naming them and kills them; a process that is not the run's is neither
named nor touched; a session that cleans up passes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.leftovers import MARKER, Proc, kill, of_run, processes

ROOT = Path(__file__).resolve().parents[1]

LEAKY = """
import subprocess, sys

def test_leaks():
    # a direct child, in its own session
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{tag}-child"],
                     start_new_session=True)
    # a grandchild whose parent exits at once: reparented to init, known by the run's marker only
    subprocess.run(["sh", "-c", f"'{{sys.executable}}' -c 'import time; time.sleep(600)' {tag}-orphan &"],
                   check=True)
"""

CLEAN = """
import subprocess, sys

def test_cleans_up():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{tag}-child"])
    proc.kill()
    proc.wait()
"""


def _run_session(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    test = tmp_path / "test_inner.py"
    test.write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.leftovers", "-p", "no:cacheprovider", "-q", str(test)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _with(tag: str) -> list[Proc]:
    return [p for p in processes().values() if tag in p.command and p.state not in ("Z", "X")]


def _wait_gone(tag: str, seconds: float = 30) -> list[Proc]:
    deadline = time.monotonic() + seconds
    while (left := _with(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def test_a_session_that_leaves_processes_behind_fails_naming_them_and_kills_them(tmp_path: Path) -> None:
    tag = f"leak-{uuid.uuid4().hex}"
    # Someone else's process (no marker, not a descendant of the inner pytest): never flagged.
    other = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", f"{tag}-bystander"],
        env={k: v for k, v in os.environ.items() if k != MARKER},
    )
    try:
        done = _run_session(tmp_path, LEAKY.format(tag=tag))
        out = done.stdout + done.stderr
        assert done.returncode == 1, out
        assert "processes left behind by the tests (now killed)" in out
        assert f"{tag}-child" in out and f"{tag}-orphan" in out, out
        assert "2 process(es) left behind" in out
        assert f"{tag}-bystander" not in out
        assert "1 passed" in out  # the test itself passed: the left-overs fail the run
        assert _wait_gone(f"{tag}-child") == [] and _wait_gone(f"{tag}-orphan") == []
        assert other.poll() is None  # not the inner run's: left alone
    finally:
        other.kill()
        other.wait()


def test_a_session_that_stops_what_it_started_passes(tmp_path: Path) -> None:
    tag = f"clean-{uuid.uuid4().hex}"
    done = _run_session(tmp_path, CLEAN.format(tag=tag))
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "left behind" not in out


def test_of_run_finds_descendants_and_marked_processes_only() -> None:
    """In this process: a child with another run's marker is found as a descendant; init, pytest and
    its parent (neither descendants nor marked) are not; `kill` ends what it is given."""
    run = uuid.uuid4().hex
    tag = f"probe-{uuid.uuid4().hex}"
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", tag],
        env={**os.environ, MARKER: "another-run"},
    )
    try:
        ours = of_run(run, os.getpid())
        found = [p for p in ours if tag in p.command]
        assert [p.pid for p in found] == [child.pid]
        assert not {1, os.getpid(), os.getppid()} & {p.pid for p in ours}  # init, pytest, its parent
        assert kill(found) == []
        assert child.wait(timeout=30) is not None
    finally:
        child.kill()
        child.wait()


def test_a_session_that_leaves_dev_null_a_regular_file_fails(tmp_path: Path) -> None:
    """The check reads os.devnull; the inner session points it at a regular file (a stand-in for a
    /dev/null a report was renamed over: the real one is never touched)."""
    stand_in = tmp_path / "null"
    stand_in.write_text("a report\n")
    source = f"import os\n\ndef test_breaks():\n    os.devnull = {str(stand_in)!r}\n"
    run = _run_session(tmp_path, source)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"{stand_in} is no longer a character device after the tests: the run fails" in run.stdout
    assert _run_session(tmp_path, "def test_fine():\n    pass\n").returncode == 0
