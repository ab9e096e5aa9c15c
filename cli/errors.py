"""One-line errors with exit code 2, the same for every command."""

from __future__ import annotations

from typing import NoReturn

import typer

EXIT_CLEAN = 0
EXIT_VIOLATIONS = 1
EXIT_USAGE = 2


def fail(message: str) -> NoReturn:
    typer.echo(f"stockade: error: {message}", err=True)
    raise typer.Exit(EXIT_USAGE)
