"""No process started by the tests outlives the test run (issue 40), and /dev/null is still the null device.

Every pytest run gets a unique marker, ``STOCKADE_TEST_RUN=<uuid>``, in its environment, which every
subprocess inherits (tests that build an environment from scratch add it themselves, see
:func:`marker_env`). At the end of the session, a process is the run's if it descends from the
pytest process (which is made the subreaper of its descendants, so that an orphan stays one), or if
``/proc/<pid>/environ`` carries this run's marker (whatever its user or mount namespace). Nothing
else is looked at: the shell that started pytest, and other users' or other runs' processes (other
markers), are never flagged.

Left-over processes make the run fail, named, and are killed. Helpers of the pytest process itself
that end with it (multiprocessing's resource tracker, zombies awaiting their parent) are not
left-overs.

tests/conftest.py imports the hooks below; tests/test_leftovers.py runs whole pytest sessions that
leak processes and checks that they fail naming them, and that the processes are gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import stat
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

MARKER = "STOCKADE_TEST_RUN"
PROC = Path("/proc")
PR_SET_CHILD_SUBREAPER = 36
#: commands of the pytest process's own helpers, which exit when pytest does
OWN_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")


def start_run() -> str:
    """Give this process (and every subprocess it starts from now on) a fresh run marker, and make it
    the subreaper of its descendants: one whose parent exits is reparented to this process, not to
    init, so it stays a descendant even if it was started without the marker."""
    run = uuid.uuid4().hex
    os.environ[MARKER] = run
    with contextlib.suppress(OSError, AttributeError):  # Linux only; the marker still works elsewhere
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    return run


def marker_env() -> dict[str, str]:
    """The marker, for a subprocess environment built without os.environ."""
    return {MARKER: os.environ[MARKER]} if MARKER in os.environ else {}


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    pgid: int
    uid: int
    state: str
    command: str

    def describe(self) -> str:
        return f"pid {self.pid} (uid {self.uid}, parent {self.ppid}): {self.command}"


def _read(pid: int) -> Proc | None:
    """The process's parent, group, user, state and command line; None if it is gone."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
        status = (PROC / str(pid) / "status").read_text()
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    uid = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("Uid:")), -1)
    command = raw.replace(b"\0", b" ").decode(errors="replace").strip() or f"[{name}]"
    return Proc(pid, int(fields[1]), int(fields[2]), uid, fields[0], command)


def _has(pid: int, name: str, value: str) -> bool:
    """Whether the environment the process started with holds name=value."""
    try:
        environ = (PROC / str(pid) / "environ").read_bytes()
    except OSError:  # gone, or another user's process we may not read: not ours
        return False
    return f"{name}={value}".encode() in environ.split(b"\0")


def carrying(name: str, value: str) -> list[Proc]:
    """The live processes (not zombies) whose environment holds name=value, in any namespace."""
    return [p for p in processes().values() if p.state not in ("Z", "X") and _has(p.pid, name, value)]


def processes() -> dict[int, Proc]:
    found = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (p := _read(int(entry.name))) is not None:
            found[p.pid] = p
    return found


def of_run(run: str, root: int) -> list[Proc]:
    """The live processes of the test run `run` whose pytest process is `root` (root excluded): its
    descendants, and every process carrying the run's marker; not root's own helpers, not zombies."""
    table = processes()
    children: dict[int, list[int]] = {}
    for p in table.values():
        children.setdefault(p.ppid, []).append(p.pid)
    ours: set[int] = set()
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid not in ours:
            ours.add(pid)
            todo.extend(children.get(pid, []))
    ours |= {pid for pid in table if pid != root and _has(pid, MARKER, run)}
    ancestors = set()
    pid = root
    while pid in table and pid not in ancestors:  # a marker in an ancestor is not a left-over
        ancestors.add(pid)
        pid = table[pid].ppid
    return sorted(
        (
            table[pid]
            for pid in ours - ancestors
            if pid in table
            and table[pid].state not in ("Z", "X")
            and not (table[pid].ppid == root and any(h in table[pid].command for h in OWN_HELPERS))
        ),
        key=lambda p: p.pid,
    )


def kill(procs: Iterable[Proc], grace: float = 5.0) -> list[Proc]:
    """SIGTERM, then SIGKILL after `grace` seconds; returns those still alive after that (none,
    normally). Signals go to each pid, never to a group (the group may be pytest's own)."""
    procs = list(procs)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p.pid, sig)
        deadline = time.monotonic() + grace
        while (procs := [p for p in procs if _alive(p)]) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not procs:
            break
    return procs


def _alive(p: Proc) -> bool:
    now = _read(p.pid)
    # the same process (not a new one that reused the pid), and not a zombie
    return now is not None and now.command == p.command and now.state not in ("Z", "X")


# --- the session hooks (imported by tests/conftest.py) ---------------------------------------------

_LEFT = pytest.StashKey[list[Proc]]()
_DEVNULL = pytest.StashKey[bool]()


def pytest_configure(config: pytest.Config) -> None:
    start_run()


@pytest.hookimpl(trylast=True)
def _devnull_broken() -> bool:
    """/dev/null is no longer the null device: a report renamed over it (`-o /dev/null` as root, before
    cli/output.py wrote such destinations in place) leaves a regular file every later step writes to."""
    try:
        return not stat.S_ISCHR(os.stat(os.devnull).st_mode)
    except OSError:
        return True


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.name == "posix" and _devnull_broken():
        session.config.stash[_DEVNULL] = True
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    run = os.environ.get(MARKER)
    if run is None:
        return
    left = of_run(run, os.getpid())
    if not left:
        return
    session.config.stash[_LEFT] = left
    kill(left)
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if terminalreporter.config.stash.get(_DEVNULL, False):
        terminalreporter.line(
            f"{os.devnull} is no longer a character device after the tests: the run fails", red=True
        )
    left = terminalreporter.config.stash.get(_LEFT, [])
    if left:
        terminalreporter.section("processes left behind by the tests (now killed)", sep="=", red=True)
        for p in left:
            terminalreporter.line(p.describe(), red=True)
        terminalreporter.line(f"{len(left)} process(es) left behind: the run fails", red=True, bold=True)
