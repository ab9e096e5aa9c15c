"""The scan's progress bar on a terminal starts no thread: the scan forks worker processes while it
is shown, and a thread writing to the terminal at that moment could leave a child a held lock."""

from __future__ import annotations

import io
import sys
import threading

import pytest

from stockade.cli.scan import _with_progress
from stockade.scanner.result import Result


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_runs_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    before = threading.active_count()
    seen: list[int] = []

    def run(progress: object) -> Result:
        assert callable(progress), "a terminal gets a progress callback"
        for _ in range(3):
            progress(10)
            seen.append(threading.active_count())
        return Result(tool_version="t")

    assert isinstance(_with_progress(run), Result)
    assert seen == [before] * 3


def test_a_killed_worker_is_an_error_not_a_traceback(tmp_path: object) -> None:
    """A worker that dies (the OOM killer, a signal) leaves objects undecided: exit code 2 and one
    line, never a traceback and never the exit code of findings."""
    import subprocess
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples" / "manifests"
    probe = (
        "import os, sys\n"
        "import stockade.scanner.scan as s\n"
        "s.PARALLEL_FILES = s.PARALLEL_OBJECTS = 1\n"
        "def die(work):\n"
        "    os._exit(9)\n"
        "s._eval_forked = s._eval_chunk = die\n"
        "from stockade.cli.main import main\n"
        "main(['scan', sys.argv[1], '--workers', '2', '--exclude', 'broken'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(examples)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "a worker process ended abruptly" in done.stderr
