"""JSON: the machine-readable report, in the versioned schema of :mod:`.schema`.

Everything a consumer may want is here, waived findings included (with the exception that covers them),
so that dashboards can show what is accepted and by whom. See docs/json-report.md for every field.
"""

from __future__ import annotations

import orjson

from stockade.scanner.reports.base import Report
from stockade.scanner.reports.schema import build
from stockade.scanner.result import Result


class JsonReport(Report):
    """Serialises the validated :class:`~.schema.ReportDocument` with orjson (UTF-8, indent 2)."""

    name = "json"
    suffix = ".json"

    def render(self, result: Result, *, color: bool = False) -> str:
        document = build(result).model_dump(mode="json", by_alias=True)
        return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode()


REPORT = JsonReport()
