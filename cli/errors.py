"""One-line errors with exit code 2, the same for every command, and the one way a typed name (a rule
id, a framework, an area) is matched: case, separators and a plural `s` do not matter, and a name that
matches nothing fails with the closest names ("did you mean")."""

from __future__ import annotations

import contextlib
import difflib
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NoReturn

import typer

EXIT_CLEAN = 0
EXIT_VIOLATIONS = 1
EXIT_USAGE = 2


def fail(message: str) -> NoReturn:
    typer.echo(f"stockade: error: {message}", err=True)
    raise typer.Exit(EXIT_USAGE)


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """A failure to write `path` (or a file under it) inside the block is one line and exit 2,
    naming the file that could not be written, never a traceback."""
    try:
        yield
    except OSError as exc:
        fail(f"{exc.filename or path}: cannot write: {exc.strerror or exc}")


def name_key(name: str) -> str:
    """What a typed name is compared by: lower case, letters, digits and dots only, no plural `s`
    (`NSA-CISA`, `nsa_cisa` and `nsa cisa` are one name; so are `pods` and `pod`)."""
    key = re.sub(r"[^a-z0-9.*?\[\]]", "", name.strip().lower())
    return key[:-1] if len(key) > 1 and key.endswith("s") else key


def did_you_mean(typed: str, choices: Iterable[str]) -> str:
    """` (did you mean A, B?)` naming the up to three choices closest to `typed`, or ``""``; of
    choices spelt alike, the first given is named."""
    by_key: dict[str, str] = {}
    for choice in choices:
        by_key.setdefault(name_key(choice), choice)
    close = difflib.get_close_matches(name_key(typed), list(by_key), n=3, cutoff=0.6)
    return f" (did you mean {', '.join(by_key[k] for k in close)}?)" if close else ""


def resolve(what: str, typed: str, choices: Iterable[str], *, see: str = "") -> str:
    """The choice `typed` names (see :func:`name_key`; of choices spelt alike, the first given), else
    exit 2 naming the closest choices."""
    options = list(dict.fromkeys(choices))
    key = name_key(typed)
    for choice in options:
        if name_key(choice) == key:
            return choice
    listed = f"; choose from {', '.join(sorted(options))}" if len(options) <= 20 else ""
    fail(f"unknown {what} {typed!r}{did_you_mean(typed, options)}{listed}{see}")
