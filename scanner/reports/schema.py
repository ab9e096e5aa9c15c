"""The JSON report's schema: pydantic models of the document `stockade scan -f json` prints.

The JSON report is the machine interface other tools build on (dashboards, ticket bots, diffing two
runs), so its shape is a contract: it is defined here once, versioned by ``schema_version``, documented
field by field in ``docs/json-report.md``, and published as a JSON Schema (:func:`json_schema`, or
``python -m stockade.scanner.reports.schema``). Building the document through these models means the
report cannot drift from the published schema: a field that does not validate fails the build, not a
consumer. Changing a key's meaning or removing one requires a new ``schema_version``; adding one does not.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from stockade.policies.config.waivers import ExceptionStatus
from stockade.policies.model import Action, Finding, InputError, Severity, format_path
from stockade.scanner.reports.names import shown, shown_or_none
from stockade.scanner.result import CoverageGap, Result

#: bump when a key is removed or changes meaning (adding keys is backwards compatible)
SCHEMA_VERSION: Literal[1] = 1

SeverityLabel = Literal["critical", "high", "medium", "low", "info"]
ExceptionState = Literal["active", "expired", "unused"]

_SEVERITY: dict[Severity, SeverityLabel] = {
    Severity.CRITICAL: "critical",
    Severity.HIGH: "high",
    Severity.MEDIUM: "medium",
    Severity.LOW: "low",
    Severity.INFO: "info",
}


class _Model(BaseModel):
    # Unknown keys are rejected so that the published schema can say additionalProperties: false, and
    # every key is "required" in the schema because every key is always written (null when unknown).
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        json_schema_serialization_defaults_required=True,
    )


class ToolInfo(_Model):
    """The program that wrote the report."""

    name: Literal["stockade"] = Field(description="Always `stockade`.")
    version: str = Field(description="The stockade version that produced the report.")


class RuleInfo(_Model):
    """The rule that produced a finding, as its METADATA annotation describes it."""

    id: str = Field(description="Stable rule id, e.g. `STK-POD-003`.")
    title: str = Field(description="One-line title of the rule.")
    area: str = Field(description="Policy area: the folder under `policies/rego/`, e.g. `pod`.")
    severity: SeverityLabel = Field(description="Effective severity (after configuration overrides).")
    frameworks: list[str] = Field(description="Framework controls the rule maps to, e.g. `pss-baseline`.")


class ResourceInfo(_Model):
    """The object a finding is about."""

    api_version: str = Field(alias="apiVersion", description="`apiVersion` of the object.")
    kind: str = Field(description="`kind` of the object.")
    namespace: str | None = Field(description="Namespace; null for cluster-scoped or namespace-less objects.")
    name: str = Field(description="`metadata.name` (or `generateName` when no name is set).")
    cluster: str | None = Field(description="Cluster context for audit findings; null for files.")


class Location(_Model):
    """Where in the input the offending field sits."""

    file: str | None = Field(
        description="File the object was read from, as given, shown by the file-name rule (bytes that are "
        "not UTF-8, control characters and `%` percent-encoded); null for live objects."
    )
    line: int | None = Field(description="1-based line of the offending field (or of the object) in `file`.")
    path: str | None = Field(
        description="Dotted path of the field inside the object, e.g. "
        "`spec.template.spec.containers[0].securityContext.privileged`; null when the finding is about "
        "the object as a whole."
    )
    template: str | None = Field(
        None,
        description="Which pod spec of the object the finding is in, for objects that hold several "
        "(`workerGroupSpecs[gpu-workers]` of a RayCluster, `replicatedJobs[workers]` of a JobSet, "
        "`predictor` of an InferenceService); null otherwise.",
    )


class WaiverInfo(_Model):
    """The exception (waiver) from stockade.yaml that covers a finding."""

    name: str = Field(description="Name of the exception in stockade.yaml.")
    owner: str = Field(description="Who is accountable for the waiver.")
    reason: str = Field(description="Why the finding is accepted.")
    expires: str | None = Field(description="ISO date after which the waiver stops applying.")


class FindingInfo(_Model):
    """One violation of one rule by one object, with its enforcement decision."""

    rule: RuleInfo
    action: Action = Field(description="Enforcement action: `deny`, `warn` or `audit`.")
    message: str = Field(description="Human-readable message written by the rule.")
    resource: ResourceInfo
    location: Location
    details: dict[str, Any] = Field(description="Rule-specific structured data (free form, may be empty).")
    exception: WaiverInfo | None = Field(description="The waiver covering this finding; null when active.")
    pods: int | None = Field(
        description="Audits: running pods of the workload that the finding was found on; null for files."
    )


class SkippedInfo(_Model):
    """A file read for nothing (no Kubernetes object in it) or not opened (not a regular file)."""

    file: str = Field(description="The file.")
    reason: str = Field(description="Why it holds nothing to check.")


class ErrorInfo(_Model):
    """Input that could not be read or evaluated (one file or document, never the whole run)."""

    file: str = Field(description="File (or object) the error is about.")
    line: int | None = Field(description="1-based line when known.")
    message: str = Field(description="What went wrong.")


class ExceptionInfo(_Model):
    """An exception (waiver) declared in stockade.yaml and what became of it in this run."""

    name: str = Field(description="Name of the exception.")
    owner: str = Field(description="Who is accountable for the waiver.")
    reason: str = Field(description="Why the findings are accepted.")
    expires: str = Field(description="ISO date after which the waiver stops applying.")
    status: ExceptionState = Field(
        description="`active` (matched at least one finding), `expired` (past `expires`, no longer "
        "applied) or `unused` (matched nothing: the waiver can probably be removed)."
    )
    matched: int = Field(description="Number of findings the exception waived in this run.")


class GapInfo(_Model):
    """Something that could not be examined, so an empty result there does not mean compliant."""

    scope: str = Field(description="What was not examined, e.g. a cluster context or `cluster/kind`.")
    message: str = Field(description="Why.")


class NoteInfo(_Model):
    """Something this run could not evaluate, or a control not configured: said once per run, never a
    finding, never part of the exit code."""

    rule: str | None = Field(description="The rule the note is about; null when it is about the run.")
    message: str = Field(description="What was not evaluated or configured, where, and what to do.")
    count: int | None = Field(description="How many objects the note concerns; null when not about objects.")


class ClusterInfo(_Model):
    """One audited cluster: whether it could be read and what the audit cost it."""

    name: str = Field(description="kubeconfig context name.")
    reachable: bool = Field(description="False when nothing could be listed (see `gaps`).")
    objects: int = Field(description="Objects listed.")
    pods: int = Field(description="Pods listed (folded into their workloads for evaluation).")
    evaluated: int = Field(description="Objects and pod templates evaluated.")
    requests: int = Field(description="API requests made, retries included.")
    seconds: float = Field(description="Wall time of the cluster's listing.")
    sandbox: dict[str, Any] | None = Field(
        description="Sandbox runtime classes and high-risk workloads by sandbox status (see docs)."
    )
    azure: str | None = Field(
        default=None,
        description='The Azure side (--azure-subscription): "audited", "not applicable: …" when no AKS '
        "cluster of the subscriptions serves the context (bare metal); null when not asked.",
    )


class ActionCounts(_Model):
    """Active (not waived) findings per enforcement action."""

    deny: int
    warn: int
    audit: int


class SeverityCounts(_Model):
    """Active (not waived) findings per severity."""

    critical: int
    high: int
    medium: int
    low: int
    info: int


class Summary(_Model):
    """Counts of the run; waived findings are counted in `waived` only."""

    resources: int = Field(description="Objects evaluated.")
    files: int = Field(description="Files read (0 for audits).")
    skipped: int = Field(0, description="Files holding no Kubernetes object, or not regular files.")
    findings: int = Field(description="Active findings (not waived).")
    waived: int = Field(description="Findings covered by an exception.")
    errors: int = Field(description="Input errors.")
    by_action: ActionCounts
    by_severity: SeverityCounts


class ReportDocument(_Model):
    """A stockade report: findings, input errors, exceptions and coverage gaps of one scan or audit."""

    model_config = ConfigDict(title="stockade report")

    schema_version: Literal[1] = Field(description="Version of this schema; see docs/json-report.md.")
    tool: ToolInfo
    findings: list[FindingInfo] = Field(description="All findings, waived ones included, in report order.")
    errors: list[ErrorInfo]
    skipped_files: list[SkippedInfo] = Field(default_factory=list, description="Scans: files with no object.")
    exceptions: list[ExceptionInfo]
    gaps: list[GapInfo]
    notes: list[NoteInfo] = Field(
        default_factory=list, description="What could not be evaluated, or is not configured (once each)."
    )
    clusters: list[ClusterInfo] = Field(description="Audits: one entry per cluster; empty for scans.")
    summary: Summary


def build(result: Result, *, findings: bool = True) -> ReportDocument:
    """The report document for `result` (validated, so it always matches :func:`json_schema`);
    without its findings when `findings` is false (the JSON report writes them one by one:
    :func:`finding_document`)."""
    return ReportDocument(
        schema_version=SCHEMA_VERSION,
        tool=ToolInfo(name="stockade", version=result.tool_version),
        findings=[finding_info(f) for f in result.sorted_findings()] if findings else [],
        errors=[_error(e) for e in result.errors],
        skipped_files=[SkippedInfo(file=shown(s.file), reason=s.reason) for s in result.skipped],
        exceptions=[_exception(s) for s in result.exceptions],
        gaps=[_gap(g) for g in result.gaps],
        notes=[NoteInfo(rule=n.rule, message=n.message, count=n.count) for n in result.notes],
        clusters=[
            ClusterInfo(
                name=c.name,
                reachable=c.reachable,
                objects=c.objects,
                pods=c.pods,
                evaluated=c.evaluated,
                requests=c.requests,
                seconds=round(c.seconds, 3),
                sandbox=c.extras.get("sandbox"),
                azure=azure if isinstance(azure := c.extras.get("azure"), str) else None,
            )
            for c in result.clusters
        ],
        summary=Summary.model_validate(result.summary()),
    )


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the report, for publishing next to the docs."""
    schema = ReportDocument.model_json_schema(by_alias=True, mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def finding_document(f: Finding) -> dict[str, Any]:
    """A finding's entry of the document's `findings`, as JSON values: the JSON report writes every
    finding this way, without validating it through four models (that cost a findings-heavy scan
    seconds of CPU and a copy of every finding: docs/benchmarks.md, issue 39). The one mapping from
    a finding to its entry: :func:`finding_info` validates it, and tests/scanner/test_json_stream.py
    checks on findings of every shape that validation keeps it as built."""
    ref, waiver = f.resource, f.exception
    return {
        "rule": {
            "id": f.rule.id,
            "title": f.rule.title,
            "area": f.rule.area,
            "severity": _SEVERITY[f.rule.severity],
            "frameworks": list(f.rule.frameworks),
        },
        "action": f.action.value,
        "message": f.message,
        "resource": {
            "apiVersion": ref.api_version,
            "kind": ref.kind,
            "namespace": ref.namespace,
            "name": ref.name,
            "cluster": ref.cluster,
        },
        "location": {
            "file": shown_or_none(f.file),
            "line": f.line,
            "path": format_path(f.path) or None,
            "template": f.template,
        },
        "details": dict(f.details),
        "exception": None
        if waiver is None
        else {"name": waiver.name, "owner": waiver.owner, "reason": waiver.reason, "expires": waiver.expires},
        "pods": f.replicas,
    }


def finding_info(f: Finding) -> FindingInfo:
    """One entry of the document's `findings`, validated as the whole document is: the entry
    :func:`finding_document` builds, so the two never describe a finding differently."""
    return FindingInfo.model_validate(finding_document(f))


def _error(e: InputError) -> ErrorInfo:
    return ErrorInfo(file=shown(e.file), line=e.line, message=e.message)


def _exception(s: ExceptionStatus) -> ExceptionInfo:
    spec = s.spec
    return ExceptionInfo(
        name=spec.name,
        owner=spec.owner,
        reason=spec.reason,
        expires=spec.expires.isoformat(),
        status=s.status,
        matched=s.matched,
    )


def _gap(g: CoverageGap) -> GapInfo:
    return GapInfo(scope=g.scope, message=g.message)


if __name__ == "__main__":  # publish: python -m stockade.scanner.reports.schema > report.schema.json
    import orjson

    print(orjson.dumps(json_schema(), option=orjson.OPT_INDENT_2).decode())
