"""Where a report goes (`scan`, `audit`, `report merge`): standard output, or a file written whole.

A file is written beside its destination under a temporary name and renamed over it once complete,
so a reader (a CI step uploading SARIF, a dashboard polling JSON) never sees half a report, and a
report that fails midway leaves the previous file as it was. A symbolic link stays a link: the file
it points to is the one replaced. A destination that is no regular file (`/dev/null`, `/dev/stdout`,
a pipe, `/dev/fd/N` of a shell's process substitution) is written in place, as a shell redirection
would: renamed over, `/dev/null` would become a regular file holding the report for every later
step of a CI job run as root. A destination that cannot be written is one line and exit 2, never a
traceback.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from stockade.cli.errors import fail

if TYPE_CHECKING:  # imported by `scan` and `audit` before their pipelines are (`--help` stays fast)
    from stockade.scanner.reports.base import Report
    from stockade.scanner.result import Result


def emit(report: Report, result: Result, output: Path | None, *, terminal_colors: bool = False) -> None:
    """Write `result` as `report` to `output`, or to standard output when it is None (with colours
    when `terminal_colors` and standard output is a terminal)."""
    if output is None:
        text = report.render(result, color=terminal_colors and sys.stdout.isatty())
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    if _in_place(output):
        try:
            with output.open("w", encoding="utf-8") as stream:
                report.write(result, stream)
        except OSError as exc:
            fail(f"{output}: cannot write: {exc.strerror or exc}")
        return
    output = Path(os.path.realpath(output)) if output.is_symlink() else output
    # imported here: secrets (hmac, random) is only needed for --output, not for a report on stdout
    import secrets

    # beside the destination (a rename within one file system), created exclusively, with the
    # permissions any new file gets here (umask), as writing the destination directly would
    temporary = output.parent / f".{output.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        with temporary.open("x", encoding="utf-8") as stream:
            report.write(result, stream)
        os.replace(temporary, output)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        fail(f"{output}: cannot write: {exc.strerror or exc}")
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _in_place(output: Path) -> bool:
    """`output` exists and is neither a regular file nor a directory (a device, a pipe, a socket),
    following links (`/dev/stdout` -> `/proc/self/fd/1`)."""
    try:
        mode = output.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
