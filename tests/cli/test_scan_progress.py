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
