"""Tables that fit the width they are printed at: every table stockade prints goes through here.

A table is printed as a table when its columns fit: all of them at their natural width, or every column
but the last (the free text: a finding, a role's rules) at its natural width with room left for the
last. Otherwise it is printed *stacked*: one block per row, the short key columns on the first line
and every other column on an indented line of its own, wrapped at the width. At 80 columns a finding
then reads ``deploy.yaml:12  high  deny  STK-PSS-001`` followed by the object and the message instead
of a grid of ``…``.

The width is ``COLUMNS`` when set (as ``ls`` and ``kubectl`` honour it, also when piped), else the
terminal's width when writing to one, else :data:`PLAIN_WIDTH` (logs and files).
"""

from __future__ import annotations

import os
import sys
from typing import IO

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

#: width when not writing to a terminal and COLUMNS is unset: wide enough for file:line and a message
PLAIN_WIDTH = 160
#: the narrowest the last (free-text) column of a table may get before the table is stacked instead
MIN_TEXT = 30
#: the narrowest width anything is laid out at (a smaller COLUMNS is taken as this)
MIN_WIDTH = 40


def output_width(stream: IO[str] | None = None, *, terminal: bool | None = None) -> int:
    """The width to lay out at: COLUMNS if set, the terminal's if `stream` (stdout) is one, else 160."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return max(MIN_WIDTH, int(env))
    stream = stream if stream is not None else sys.stdout
    if terminal is None:
        try:
            terminal = stream.isatty()
        except (AttributeError, ValueError):
            terminal = False
    if terminal:
        try:
            return max(MIN_WIDTH, os.get_terminal_size(stream.fileno()).columns)
        except (AttributeError, OSError, ValueError):
            pass
    return PLAIN_WIDTH


def console(file: IO[str] | None = None, *, width: int | None = None, color: bool = False) -> Console:
    """A console for reports: plain unless `color`, no markup guessing, at `width` (default: output_width)."""
    return Console(
        file=file,
        width=width if width is not None else output_width(),
        force_terminal=color,
        color_system="auto" if color else None,
        highlight=False,
        emoji=False,
        legacy_windows=False,
        soft_wrap=False,
    )


def _cell_width(cell: RenderableType) -> int:
    text = cell if isinstance(cell, Text) else Text(str(cell))
    return max((line.cell_len for line in text.split("\n", allow_blank=True)), default=0)


def _cells(table: Table) -> list[list[RenderableType]]:
    columns = [list(c.cells) for c in table.columns]
    return [list(row) for row in zip(*columns, strict=True)] if columns else []


def fits(table: Table, width: int) -> bool:
    """Whether `table` reads as a table at `width` (see the module's docstring)."""
    rows = _cells(table)
    if not table.columns:
        return True
    natural = [
        max([_cell_width(Text(str(c.header)))] + [_cell_width(r[i]) for r in rows])
        for i, c in enumerate(table.columns)
    ]
    gaps = 3 * len(natural) + 1  # padding and separators of the widest box rich uses
    if sum(natural) + gaps <= width:
        return True
    return sum(natural[:-1]) + gaps + min(MIN_TEXT, natural[-1]) <= width


def stacked(table: Table, *, key: int) -> Group:
    """One block per row: the first `key` columns on one line, each other column indented below it."""
    headers = [str(c.header) for c in table.columns]
    blocks: list[RenderableType] = []
    if table.title:
        blocks.append(Text(str(table.title), style="italic"))
    for row in _cells(table):
        first = Text("  ").join(
            c if isinstance(c, Text) else Text(str(c)) for c in row[:key] if _cell_width(c)
        )
        blocks.append(first)
        for header, cell in zip(headers[key:], row[key:], strict=True):
            text = cell if isinstance(cell, Text) else Text(str(cell))
            if not text.plain.strip():
                continue
            if len(headers) - key == 1:  # the one column below needs no name
                blocks.append(Padding(text, (0, 0, 0, 2), expand=False))  # wrapped lines stay indented
            elif "\n" in text.plain:  # a list: its name, then its lines below it
                blocks.append(Text(f"  {header}:", style="dim"))
                blocks.append(Padding(text, (0, 0, 0, 4), expand=False))
            else:
                line = Text(f"{header}: ", style="dim")
                line.append_text(text)
                blocks.append(Padding(line, (0, 0, 0, 2), expand=False))
        blocks.append(Text(""))
    return Group(*blocks)


def fit(table: Table, width: int, *, key: int = 1) -> RenderableType:
    """`table` when it fits `width`, else its stacked form (the first `key` columns as each block's head)."""
    return table if fits(table, width) else stacked(table, key=key)


def table_text(table: Table, *, key: int = 1, out: Console | None = None) -> str:
    """`table` laid out at the output width (or `out`'s), stacked when it does not fit, as plain text
    without rich's padding."""
    out = out or console()
    with out.capture() as capture:
        out.print(fit(table, out.width, key=key))
    return plain(capture.get())


def print_table(table: Table, *, key: int = 1, out: Console | None = None) -> None:
    """Print `table` to stdout (or `out`) at the output width, stacked when it does not fit."""
    out = out or console()
    if out.is_terminal:
        out.print(fit(table, out.width, key=key))
    else:
        out.file.write(table_text(table, key=key, out=out))


def plain(text: str) -> str:
    """`text` without the spaces rich pads lines with (logs, files and grep need none)."""
    return "".join(line.rstrip() + "\n" for line in text.splitlines())
