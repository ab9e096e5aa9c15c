"""Tables that fit the width they are printed at: every table stockade prints goes through here.

A table is printed as a table when its columns fit: all of them at their natural width, or every column
but the last (the free text: a finding, a role's rules) at its natural width with room left for the
last. Otherwise it is printed *stacked*: one block per row, the short key columns on the first line
and every other column on an indented line of its own, wrapped at the width. At 80 columns a finding
then reads ``deploy.yaml:12  high  deny  STK-PSS-001`` followed by the object and the message instead
of a grid of ``…``.

No word is ever split across lines or cut short (a resource name, a path, a subject): the last column
counts as fitting only when its longest word does, the other columns keep their natural width, and
text is wrapped at spaces only (:func:`unbroken`); a word longer than the whole width stays whole on
a line of its own, past the width, as ``ls`` and ``kubectl`` print a long name.

The width is ``COLUMNS`` when set (as ``ls`` and ``kubectl`` honour it, also when piped), else the
terminal's width when writing to one, else :data:`PLAIN_WIDTH` (logs and files).
"""

from __future__ import annotations

import os
import sys
from typing import IO

from rich._wrap import divide_line
from rich.console import Console, Group, RenderableType
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


def _longest_word(cell: RenderableType) -> int:
    text = cell.plain if isinstance(cell, Text) else str(cell)
    return max((Text(word).cell_len for word in text.split()), default=0)


def unbroken(text: Text, width: int, *, indent: int = 0) -> Text:
    """`text` wrapped at spaces to `width` (its lines indented by `indent`), never inside a word: a word
    longer than the width is a line of its own, left whole. Print it with ``crop=False``."""
    out = Text(style=text.style, no_wrap=True, overflow="ignore", end=text.end)
    first = True
    for line in text.split("\n", allow_blank=True):
        for piece in line.divide(divide_line(line.plain, max(1, width - indent), fold=False)):
            piece.rstrip()
            if not first:
                out.append("\n")
            first = False
            out.append(" " * indent)
            out.append_text(piece)
    return out


def print_text(out: Console, text: Text, *, indent: int = 0) -> None:
    """Print `text` wrapped at spaces to `out`'s width (see :func:`unbroken`)."""
    # the options matter: Console.print merges a lone Text into a new one, losing its own no_wrap
    out.print(unbroken(text, out.width, indent=indent), crop=False, no_wrap=True, overflow="ignore")


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
    last = max([min(MIN_TEXT, natural[-1])] + [_longest_word(r[-1]) for r in rows])
    return sum(natural[:-1]) + gaps + last <= width


def stacked(table: Table, *, key: int, width: int) -> Group:
    """One block per row: the first `key` columns on one line, each other column indented below it,
    wrapped at spaces to `width`."""
    headers = [str(c.header) for c in table.columns]
    blocks: list[RenderableType] = []
    if table.title:
        blocks.append(unbroken(Text(str(table.title), style="italic"), width))
    for row in _cells(table):
        first = Text("  ").join(
            c if isinstance(c, Text) else Text(str(c)) for c in row[:key] if _cell_width(c)
        )
        blocks.append(unbroken(first, width))
        for header, cell in zip(headers[key:], row[key:], strict=True):
            text = cell if isinstance(cell, Text) else Text(str(cell))
            if not text.plain.strip():
                continue
            if len(headers) - key == 1:  # the one column below needs no name
                blocks.append(unbroken(text, width, indent=2))  # wrapped lines stay indented
            elif "\n" in text.plain:  # a list: its name, then its lines below it
                blocks.append(Text(f"  {header}:", style="dim"))
                blocks.append(unbroken(text, width, indent=4))
            else:
                line = Text(f"{header}: ", style="dim")
                line.append_text(text)
                blocks.append(unbroken(line, width, indent=2))
        blocks.append(Text(""))
    return Group(*blocks)


def fit(table: Table, width: int, *, key: int = 1) -> RenderableType:
    """`table` when it fits `width`, else its stacked form (the first `key` columns as each block's head).
    Print the result with ``crop=False`` (a word longer than the width is not cut)."""
    if not fits(table, width):
        return stacked(table, key=key, width=width)
    # only the last column may be narrowed (rich would otherwise narrow the widest first), and the
    # title is wrapped at spaces above the table rather than folded to the table's width
    for column in table.columns[:-1]:
        column.no_wrap = True
    if not table.title:
        return table
    title = unbroken(Text(str(table.title), style="italic"), width)
    table.title = None
    return Group(title, table)


def table_text(table: Table, *, key: int = 1, out: Console | None = None) -> str:
    """`table` laid out at the output width (or `out`'s), stacked when it does not fit, as plain text
    without rich's padding."""
    out = out or console()
    with out.capture() as capture:
        out.print(fit(table, out.width, key=key), crop=False)
    return plain(capture.get())


def print_table(table: Table, *, key: int = 1, out: Console | None = None) -> None:
    """Print `table` to stdout (or `out`) at the output width, stacked when it does not fit."""
    out = out or console()
    if out.is_terminal:
        out.print(fit(table, out.width, key=key), crop=False)
    else:
        out.file.write(table_text(table, key=key, out=out))


def plain(text: str) -> str:
    """`text` without the spaces rich pads lines with (logs, files and grep need none)."""
    return "".join(line.rstrip() + "\n" for line in text.splitlines())
