"""File names in reports: one rule for every format, so any name a file system allows is shown exactly.

A Linux file name is any bytes but ``/`` and NUL: it need not be UTF-8, and it may hold newlines,
control characters or ``<&>``. Python hands such a name over with each byte that is not UTF-8 as a lone
surrogate (``os.fsdecode``: byte 0xFF is ``"\\udcff"``), which no UTF-8 report can carry. So every report
shows a file name by this rule (:func:`shown`):

    The bytes of the name that are not UTF-8, the characters that would break a line, a table or an
    XML document (control characters U+0000-U+001F and U+007F-U+009F, the line and paragraph
    separators U+2028 and U+2029, the bidirectional-text controls U+061C, U+200E, U+200F,
    U+202A-U+202E and U+2066-U+2069, and U+FFFE and U+FFFF) and ``%`` itself are percent-encoded,
    byte by byte (``%FF``, ``%0A``, ``%25``); every other character is written as it is.

A name that is UTF-8 and holds none of these is shown unchanged, and ``urllib.parse.unquote_to_bytes``
of any shown name gives back its original bytes (:func:`original`). Each format then escapes the shown
name as it escapes any text (JSON strings, XML attributes, HTML, Markdown code spans). SARIF's
``artifactLocation.uri`` is a URI reference, so it percent-encodes the raw bytes of the path (RFC 3986),
which decodes to the same bytes.

Other text that quotes the input (messages) is never percent-encoded; a lone surrogate in it, which no
UTF-8 report can carry, is written as a ``\\udcff`` escape (:func:`text`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, unquote_to_bytes

#: characters percent-encoded in a shown name, besides the bytes that are not UTF-8 (lone surrogates)
_ENCODED = re.compile(
    "[%\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufffe\uffff\ud800-\udfff]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def raw(name: str) -> bytes:
    """The bytes of a file name as the operating system gave them (``os.fsencode``)."""
    try:
        return os.fsencode(name)
    except UnicodeError:  # a lone surrogate that is no escaped byte (not from a POSIX file system)
        return name.encode("utf-8", "surrogatepass")


def _encode(match: re.Match[str]) -> str:
    char = match.group()
    if "\udc80" <= char <= "\udcff":  # a byte that is not UTF-8, as os.fsdecode escapes it
        return f"%{ord(char) - 0xDC00:02X}"
    return "".join(f"%{b:02X}" for b in char.encode("utf-8", "surrogatepass"))


def shown(name: str) -> str:
    """`name` as every report shows it (the rule of this module's docstring)."""
    if not _ENCODED.search(name):
        return name
    # the name's own bytes (a non-UTF-8 locale encodes names in its charset), read back as UTF-8
    name = raw(name).decode("utf-8", "surrogateescape")
    return _ENCODED.sub(_encode, name)


def shown_at(file: str | None, line: int | None) -> str:
    """`file:line` as every report writes a location (the file by this module's rule; no line: the
    file alone; no file: ""). One line, no control character, nothing XML cannot carry."""
    return f"{shown(file)}:{line}" if file and line else shown(file) if file else ""


def shown_or_none(name: str | None) -> str | None:
    return None if name is None else shown(name)


def original(shown_name: str) -> bytes:
    """The bytes of the file a shown name names: the inverse of :func:`shown`."""
    return unquote_to_bytes(shown_name)


def uri_path(name: str) -> str:
    """A relative POSIX path as a URI reference path: its bytes percent-encoded, ``/`` kept."""
    return quote(raw(name), safe="/")


def text(value: str) -> str:
    """Any other text of a report (a message that quotes the input): lone surrogates escaped as
    ``\\udcff``, since UTF-8 cannot carry them; everything else unchanged."""
    if not _SURROGATE.search(value):
        return value
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def texts(value: Any) -> Any:
    """:func:`text` applied to every string in a JSON-like document (dicts, lists, strings)."""
    return _walk(value, text)


def _walk(value: Any, fix: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, dict):
        return {fix(k) if isinstance(k, str) else k: _walk(v, fix) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(v, fix) for v in value]
    return value
