"""Reports written to a file (cli/output.py): whole or not at all, and a destination that cannot be
written is one line and exit 2."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import TextIO

import pytest
import typer
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.cli.output import emit
from stockade.scanner.reports import get_report
from stockade.scanner.reports.base import Report
from stockade.scanner.result import Result

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "manifests" / "compliant"


class Halfway(Report):
    """Writes part of its text, then fails (a bug, a full disk)."""

    name = "halfway"

    def render(self, result: Result, *, color: bool = False) -> str:
        out = io.StringIO()
        self.write(result, out)
        return out.getvalue()

    def write(self, result: Result, stream: TextIO, *, color: bool = False) -> None:
        stream.write('{"findings": [')
        raise RuntimeError("failed midway")


def test_a_report_that_fails_midway_leaves_the_previous_file_and_no_temporary(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    out.write_text("previous report\n")
    with pytest.raises(RuntimeError):
        emit(Halfway(), Result(tool_version="t"), out)
    assert out.read_text() == "previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_an_unwritable_destination_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    for where in (tmp_path / "taken", Path("/proc/stockade-no-such-dir/r.json")):
        run = CliRunner().invoke(app, ["scan", str(EXAMPLES), "--no-config", "-f", "json", "-o", str(where)])
        assert run.exit_code == 2, run.output
        assert f"stockade: error: {where}: cannot write:" in run.output
        assert "Traceback" not in run.output
    with pytest.raises(typer.Exit):
        emit(get_report("json"), Result(tool_version="t"), tmp_path / "taken")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]  # no temporary left


def test_a_written_report_is_what_standard_output_shows_with_the_usual_permissions(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "r.sarif"
    run = CliRunner().invoke(app, ["scan", str(EXAMPLES), "--no-config", "-f", "sarif", "-o", str(out)])
    assert run.exit_code == 0, run.output
    shown = CliRunner().invoke(app, ["scan", str(EXAMPLES), "--no-config", "-f", "sarif"])
    assert out.read_text(encoding="utf-8") == shown.stdout
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in out.parent.iterdir()) == ["r.sarif"]


@pytest.mark.parametrize(
    "args",
    [
        ["policy", "bundle", "-o", "{bad}/bundle.tar.gz"],
        ["webhook", "manifests", "--cert-manager", "-o", "{bad}/m.yaml"],
        ["webhook", "manifests", "--cert-manager", "--kustomize-dir", "{bad}/base"],
        ["webhook", "chart", "-o", "{bad}/chart"],
        ["init", "--output", "{bad}/stockade.yaml"],
        ["scan", str(EXAMPLES), "--no-config", "--write-baseline", "{bad}/baseline.json"],
    ],
)
def test_every_command_that_writes_files_says_so_in_one_line(args: list[str], tmp_path: Path) -> None:
    """A destination under a regular file cannot be created: one `stockade: error:` line, exit 2."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    run = CliRunner().invoke(app, [a.replace("{bad}", str(blocker)) for a in args])
    assert run.exit_code == 2, run.output
    assert "Traceback" not in run.output
    assert run.exception is None or isinstance(run.exception, SystemExit)
    assert run.output.count("stockade: error:") == 1, run.output
    assert str(blocker) in run.output


def test_a_pipe_is_written_in_place_and_stays_a_pipe(tmp_path: Path) -> None:
    """`-o /dev/null`, `-o /dev/stdout`, `-o >(gzip > r.gz)`: a destination that is no regular file is
    written as a shell redirection writes it. A FIFO stands for them here (a test must never risk the
    machine's /dev/null: renamed over, it became a regular file for every later process)."""
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    run = CliRunner().invoke(app, ["scan", str(EXAMPLES), "--no-config", "-f", "json", "-o", str(fifo)])
    reader.join(timeout=10)  # the scan has returned: the writer has closed the pipe
    assert run.exit_code == 0, run.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received and received[0].startswith(b"{")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]  # no temporary beside it


def test_a_symbolic_link_stays_a_link_and_its_target_gets_the_report(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "r.json"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    emit(get_report("json"), Result(tool_version="t"), link)
    assert link.is_symlink() and target.read_text().startswith("{")
    assert sorted(p.name for p in target.parent.iterdir()) == ["r.json"]
