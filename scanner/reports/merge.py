"""JSON reports read back and merged into one :class:`~stockade.scanner.result.Result`: the fleet's
report from the in-cluster audits' per-cluster files (docs/fleet.md, "Hundreds of clusters").

Each file is validated against the report's own schema (:class:`~.schema.ReportDocument`, the
version this stockade writes); one that cannot be read, is not a report, or names a cluster an
earlier file already gave, is an :class:`~stockade.policies.model.InputError` of that file and the
others are merged. What is merged is what each run decided: findings with their action, severity
and waiver as written, clusters, coverage gaps, input errors, notes (each once), exceptions (matches
added up by name). Nothing is evaluated again. Rules are the bundled library's where it has the id
(for descriptions and remediation), with the severity the report gives; others (custom policies,
Gatekeeper templates, VAPs) keep what the report says of them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping
from pathlib import Path

import orjson
from pydantic import ValidationError

from stockade.policies.config.settings import ExceptionSpec, first_error
from stockade.policies.config.waivers import ExceptionStatus
from stockade.policies.model import ExceptionRef, Finding, InputError, ResourceRef, Rule, Severity
from stockade.scanner.reports.names import original
from stockade.scanner.reports.schema import FindingInfo, ReportDocument
from stockade.scanner.result import ClusterStats, CoverageGap, Note, Result
from stockade.scanner.sources.base import Skipped

#: status order when one waiver is in several reports: the most telling one is kept
_STATUS_RANK = {"active": 2, "expired": 1, "unused": 0}


def _name(shown_name: str | None) -> str | None:
    """A file name as the report showed it, back to the name itself (so it is shown once, not twice)."""
    if shown_name is None:
        return None
    return original(shown_name).decode("utf-8", "surrogateescape")


def _rule(info: FindingInfo, library: Mapping[str, Rule]) -> Rule:
    severity = Severity.parse(info.rule.severity)
    known = library.get(info.rule.id)
    if known is not None:
        return dataclasses.replace(known, severity=severity)
    return Rule(
        id=info.rule.id,
        title=info.rule.title,
        description="",
        area=info.rule.area,
        severity=severity,
        kinds=(),
        frameworks=tuple(info.rule.frameworks),
        remediation="",
        package="",
        file="",
    )


def _finding(info: FindingInfo, library: Mapping[str, Rule]) -> Finding:
    res, loc, waiver = info.resource, info.location, info.exception
    return Finding(
        rule=_rule(info, library),
        action=info.action,
        message=info.message,
        resource=ResourceRef(res.api_version, res.kind, res.namespace, res.name, res.cluster),
        file=_name(loc.file),
        line=loc.line,
        # the dotted path as written: shown again as it was (a key with a dot would not split back)
        path=(loc.path,) if loc.path else (),
        details=dict(info.details),
        exception=None
        if waiver is None
        else ExceptionRef(waiver.name, waiver.owner, waiver.reason, waiver.expires),
        template=loc.template,
        replicas=info.pods,
    )


def read(path: Path) -> ReportDocument:
    """One report file, validated; ValueError (with a one-line reason) when it is not one."""
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    try:
        return ReportDocument.model_validate(data)
    except ValidationError as exc:
        _, where, message = first_error(exc, "the document")
        raise ValueError(f"not a stockade JSON report (schema version 1): {where}: {message}") from None


def _exceptions(doc: ReportDocument) -> list[ExceptionStatus]:
    return [
        ExceptionStatus(
            ExceptionSpec(
                name=e.name,
                rules=("*",),
                owner=e.owner,
                reason=e.reason,
                expires=dt.date.fromisoformat(e.expires),
            ),
            e.status,
            e.matched,
        )
        for e in doc.exceptions
    ]


def _clusters(doc: ReportDocument) -> list[ClusterStats]:
    out = []
    for c in doc.clusters:
        extras: dict[str, object] = {}
        if c.sandbox is not None:
            extras["sandbox"] = c.sandbox
        if c.azure is not None:
            extras["azure"] = c.azure
        out.append(
            ClusterStats(
                name=c.name,
                reachable=c.reachable,
                objects=c.objects,
                evaluated=c.evaluated,
                pods=c.pods,
                requests=c.requests,
                seconds=c.seconds,
                extras=extras,
            )
        )
    return out


def merge(paths: Iterable[Path], library: Mapping[str, Rule], version: str) -> Result:
    """One result of every report in `paths`, in the order given."""
    result = Result(tool_version=version)
    clusters: dict[str, str] = {}  # cluster name -> the file it came from
    notes: dict[tuple[str | None, str, int | None], Note] = {}
    waivers: dict[str, ExceptionStatus] = {}
    versions: set[str] = set()
    for path in paths:
        try:
            doc = read(path)
            statuses = _exceptions(doc)
        except (ValueError, ValidationError) as exc:  # a date that is not ISO, an empty owner
            result.errors.append(InputError(str(path), str(exc).splitlines()[0]))
            continue
        again = [c.name for c in doc.clusters if c.name in clusters]
        if again:
            message = f"cluster {again[0]} is already in {clusters[again[0]]}: one report per cluster"
            result.errors.append(InputError(str(path), message))
            continue
        clusters.update((c.name, str(path)) for c in doc.clusters)
        versions.add(doc.tool.version)
        result.findings.extend(_finding(f, library) for f in doc.findings)
        result.errors.extend(InputError(_name(e.file) or e.file, e.message, e.line) for e in doc.errors)
        result.skipped.extend(Skipped(_name(s.file) or s.file, s.reason) for s in doc.skipped_files)
        result.gaps.extend(CoverageGap(g.scope, g.message) for g in doc.gaps)
        result.clusters.extend(_clusters(doc))
        for n in doc.notes:
            notes.setdefault((n.rule, n.message, n.count), Note(n.rule, n.message, n.count))
        for status in statuses:
            kept = waivers.get(status.spec.name)
            if kept is not None:
                rank = max(kept.status, status.status, key=_STATUS_RANK.__getitem__)
                status = ExceptionStatus(kept.spec, rank, kept.matched + status.matched)
            waivers[status.spec.name] = status
        result.resources += doc.summary.resources
        result.files += doc.summary.files
    result.notes = list(notes.values())
    if len(versions) > 1:
        written = ", ".join(sorted(versions))
        result.notes.append(
            Note(None, f"The merged reports were written by different stockade versions: {written}.")
        )
    result.exceptions = list(waivers.values())
    result.rules = {f.rule.id: f.rule for f in result.findings}
    return result
