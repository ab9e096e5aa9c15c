"""The interface every source implements: an iterable of resources and input errors."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from stockade.policies.model import InputError, Resource

#: files larger than this are not read (a scanned tree's file, an ARM template's linked template)
MAX_FILE_BYTES = 64 * 1024 * 1024


class Unreadable(Exception):
    """Why a file's text is not read, in one line (:func:`read_text`)."""


def read_text(path: Path) -> str:
    """A file's UTF-8 text, or :class:`Unreadable` saying why not (too large, not UTF-8, an OS
    error): every file a scan reads on its own (a scanned file, an ARM template's parameters file or
    linked template)."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise Unreadable(f"larger than {MAX_FILE_BYTES // 2**20} MiB; not read")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise Unreadable("not UTF-8 text") from None
    except OSError as exc:
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from None


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file read for nothing: no Kubernetes object in it, or not a regular file (a FIFO, a device).
    Counted and reported, never an error and never silent."""

    file: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: skipped: {self.reason}"


Item = Resource | InputError | Skipped


class Source(Protocol):
    """Yields resources, and an :class:`InputError` for anything it could not read.

    A source never raises for bad input: one unreadable file or cluster must not stop the others.
    """

    def __iter__(self) -> Iterator[Item]: ...
