"""Report formats: one module per format, each a :class:`~stockade.scanner.reports.base.Report`.

Adding a format touches this folder only: write a module with a ``Report`` subclass and list it in
``FORMATS`` below.
"""

from __future__ import annotations

import importlib

from stockade.scanner.reports.base import Report

# format name -> module (imported lazily so `stockade scan` loads only the format it prints).
FORMATS: dict[str, str] = {
    "table": "stockade.scanner.reports.table",
    "json": "stockade.scanner.reports.json",
    "sarif": "stockade.scanner.reports.sarif",
    "junit": "stockade.scanner.reports.junit",
    "markdown": "stockade.scanner.reports.markdown",
    "html": "stockade.scanner.reports.html",
}


def get_report(name: str) -> Report:
    try:
        module = importlib.import_module(FORMATS[name])
    except KeyError:
        raise ValueError(f"unknown format {name!r} (choose from {', '.join(FORMATS)})") from None
    report: Report = module.REPORT
    return report
