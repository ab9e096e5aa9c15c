"""The interface every source implements: an iterable of resources and input errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from stockade.policies.model import InputError, Resource

Item = Resource | InputError


class Source(Protocol):
    """Yields resources, and an :class:`InputError` for anything it could not read.

    A source never raises for bad input: one unreadable file or cluster must not stop the others.
    """

    def __iter__(self) -> Iterator[Item]: ...
