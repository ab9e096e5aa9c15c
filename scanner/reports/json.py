"""JSON: the machine-readable report, in the versioned schema of :mod:`.schema`.

Everything a consumer may want is here, waived findings included (with the exception that covers them),
so that dashboards can show what is accepted and by whom. See docs/json-report.md for every field.
"""

from __future__ import annotations

import orjson

from stockade.scanner.reports.base import Report
from stockade.scanner.reports.names import texts
from stockade.scanner.reports.schema import build
from stockade.scanner.result import Result


class JsonReport(Report):
    """Serialises the validated :class:`~.schema.ReportDocument` with orjson (UTF-8, indent 2)."""

    name = "json"
    suffix = ".json"

    def render(self, result: Result, *, color: bool = False) -> str:
        document = build(result).model_dump(mode="json", by_alias=True)
        return dumps(document)


def dumps(document: object) -> str:
    """`document` as indented UTF-8 JSON; a lone surrogate in its text (a message quoting input that
    was not UTF-8) is written as a ``\\udcff`` escape (:func:`~.names.text`) rather than failing."""
    option = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
    try:
        return orjson.dumps(document, option=option).decode()
    except TypeError:  # orjson refuses str that is not valid UTF-8; rare, so only then walk the document
        return orjson.dumps(texts(document), option=option).decode()


REPORT = JsonReport()
