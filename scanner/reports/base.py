"""The interface every report format implements."""

from __future__ import annotations

import abc
from typing import ClassVar, TextIO

from stockade.scanner.result import Result


class Report(abc.ABC):
    """Renders a :class:`Result` to text. Formats never decide anything, they only present."""

    name: ClassVar[str]
    #: default file suffix when writing to a directory
    suffix: ClassVar[str] = ".txt"
    #: the report shows `Result.tool_version` (looking the version up costs a one-file scan 18 ms:
    #: the CLI asks for it only for formats that show it)
    shows_version: ClassVar[bool] = True

    @abc.abstractmethod
    def render(self, result: Result, *, color: bool = False) -> str:
        """The whole report as text; `color` only matters for terminal formats."""

    def write(self, result: Result, stream: TextIO, *, color: bool = False) -> None:
        """Write the report to `stream`: the text :meth:`render` returns. Formats whose size grows
        with the findings (JSON) override it to write finding by finding, so that a fleet's report
        is never held whole in memory."""
        stream.write(self.render(result, color=color))


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`1 file`, `2 files`: report text never says "1 files"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def until(expires: object) -> str:
    """` until DATE` for a waiver that expires; nothing for one that does not (a baseline entry, an
    annotation without an expiry)."""
    return f" until {expires}" if expires else ""
