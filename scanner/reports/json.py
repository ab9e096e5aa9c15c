"""JSON: the machine-readable report, in the versioned schema of :mod:`.schema`.

Everything a consumer may want is here, waived findings included (with the exception that covers them),
so that dashboards can show what is accepted and by whom. See docs/json-report.md for every field.

The report is written finding by finding (:meth:`JsonReport.write`): the document without its
findings is validated and serialised once, and each finding is built as its schema entry
(:func:`~.schema.finding_document`), serialised and written in turn, with the indentation it has
inside the whole document. A fleet's audit of 187,600 findings is then never one
document in memory; the text is byte for byte what serialising the whole document gives
(tests/scanner/test_json_stream.py).
"""

from __future__ import annotations

import io
from typing import TextIO

import orjson

from stockade.scanner.reports.base import Report
from stockade.scanner.reports.names import texts
from stockade.scanner.reports.schema import build, finding_document
from stockade.scanner.result import Result

_INDENT = orjson.OPT_INDENT_2
#: how the document without findings names them (orjson, indent 2): replaced by the findings written
_EMPTY = '\n  "findings": [],\n'


class JsonReport(Report):
    """Serialises the validated :class:`~.schema.ReportDocument` with orjson (UTF-8, indent 2)."""

    name = "json"
    suffix = ".json"

    def render(self, result: Result, *, color: bool = False) -> str:
        out = io.StringIO()
        self.write(result, out)
        return out.getvalue()

    def write(self, result: Result, stream: TextIO, *, color: bool = False) -> None:
        text = dumps(build(result, findings=False).model_dump(mode="json", by_alias=True))
        at = text.index(_EMPTY)
        stream.write(text[:at])
        stream.write('\n  "findings": [')
        first = True
        for finding in result.sorted_findings():
            entry = _text(finding_document(finding), _INDENT)
            stream.write("\n    " if first else ",\n    ")
            stream.write(entry.replace("\n", "\n    "))  # JSON text has no newline inside a string
            first = False
        stream.write("],\n" if first else "\n  ],\n")
        stream.write(text[at + len(_EMPTY) :])


def dumps(document: object) -> str:
    """`document` as indented UTF-8 JSON; a lone surrogate in its text (a message quoting input that
    was not UTF-8) is written as a ``\\udcff`` escape (:func:`~.names.text`) rather than failing."""
    return _text(document, _INDENT | orjson.OPT_APPEND_NEWLINE)


def _text(document: object, option: int) -> str:
    try:
        return orjson.dumps(document, option=option).decode()
    except TypeError:  # orjson refuses str that is not valid UTF-8; rare, so only then walk the document
        return orjson.dumps(texts(document), option=option).decode()


REPORT = JsonReport()
