"""The JSON report written finding by finding (scanner/reports/json.py) is byte for byte the whole
validated document serialised at once, the way it was written before: with findings of every shape
(waived, live, nested details, text that is not UTF-8), with none, and through the CLI to a file."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import orjson
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.policies.model import Finding
from stockade.scanner.reports.json import REPORT
from stockade.scanner.reports.names import texts
from stockade.scanner.reports.schema import FindingInfo, build, finding_document, finding_info
from stockade.scanner.result import Result
from tests.scanner.test_reports import make_result

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "manifests"


def whole(result: Result) -> str:
    """The document serialised at once (the previous JsonReport.render)."""
    document = build(result).model_dump(mode="json", by_alias=True)
    option = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
    try:
        return orjson.dumps(document, option=option).decode()
    except TypeError:
        return orjson.dumps(texts(document), option=option).decode()


def streamed(result: Result) -> str:
    out = io.StringIO()
    REPORT.write(result, out)
    return out.getvalue()


def test_streamed_equals_whole_on_every_finding_shape() -> None:
    result = make_result()
    nested = replace(
        result.findings[0],
        details={"folded": [{"rule": "STK-POD-102", "path": ["a", 0], "details": {}}], "list": [], "n": None},
    )
    surrogate = replace(result.findings[1], message="name \udcff not UTF-8")
    result.findings += [nested, surrogate]
    assert streamed(result) == whole(result) == REPORT.render(result)
    assert len(orjson.loads(streamed(result))["findings"]) == 6


def test_streamed_equals_whole_without_findings() -> None:
    result = replace(make_result(), findings=[])
    assert streamed(result) == whole(result)
    assert orjson.loads(streamed(result))["findings"] == []


def test_the_cli_writes_the_same_document_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    run = CliRunner().invoke(
        app, ["scan", str(EXAMPLES), "--no-config", "--format", "json", "--output", str(out)]
    )
    assert run.exit_code == 2, run.output  # examples/manifests/broken holds a file that is not YAML
    doc = orjson.loads(out.read_bytes())
    assert doc["findings"] and 0 < doc["summary"]["findings"] <= len(doc["findings"])
    to_stdout = CliRunner().invoke(app, ["scan", str(EXAMPLES), "--no-config", "--format", "json"])
    assert to_stdout.stdout == out.read_text(encoding="utf-8")


def _scanned() -> list[Finding]:
    """Every finding of the bundled examples, waived and folded ones included."""
    from stockade.policies.config.settings import load_config
    from stockade.policies.evaluate import Evaluator
    from stockade.scanner.scan import ScanOptions, run_scan
    from stockade.scanner.sources.files import FileSource

    config = load_config(EXAMPLES.parent / "stockade.yaml")
    evaluator = Evaluator.default(config)
    options = ScanOptions(config, workers=1)
    return run_scan(FileSource([str(EXAMPLES)]), [], evaluator, options, version="t").findings


def test_each_finding_is_written_as_the_schema_validates_and_dumps_it() -> None:
    """The JSON report builds each finding's entry directly (schema.finding_document): equal to the
    validated model's dump, on the examples' findings and the hand-made shapes."""
    result = make_result()
    findings = [*result.findings, *_scanned()]
    findings.append(replace(findings[0], message="name \udcff not UTF-8", details={"p": ("a", 0), "n": 1.5}))
    assert len(findings) > 50
    assert any(f.details.get("folded") for f in findings) and any(f.exception for f in findings)
    for f in findings:
        direct = finding_document(f)
        # the same JSON (details may hold tuples, written as arrays either way)
        as_json = orjson.loads(orjson.dumps(texts(direct)))
        assert as_json == orjson.loads(
            orjson.dumps(texts(finding_info(f).model_dump(mode="json", by_alias=True)))
        )
        FindingInfo.model_validate(direct)
