"""What a batch run (scan or audit) produced: the one thing every report format renders."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from stockade.policies.config.waivers import ExceptionStatus
from stockade.policies.model import Action, Finding, InputError, Rule, Severity
from stockade.scanner.sources.base import Skipped


@dataclass(slots=True)
class CoverageGap:
    """Something that could not be examined (an unreachable cluster, a forbidden kind)."""

    scope: str  # e.g. a cluster context, or "cluster/kind"
    message: str


@dataclass(frozen=True, slots=True)
class Note:
    """What a run could not evaluate, or a control left unconfigured: said once per run in every
    format, never a finding, and never part of the exit code."""

    rule: str | None  # the rule it is about (its descriptor in SARIF), None for the run as a whole
    message: str  # one or more sentences: what was not evaluated, where, and what to do
    count: int | None = None  # how many objects it concerns, when it concerns objects


#: the policy area of the Azure-side rules (STK-AZ-*), and `ClusterStats.extras["azure"]` of a cluster
#: whose Azure side was audited (else "not applicable: …", or absent without --azure-subscription)
AZURE_AREA = "azure"
AZURE_AUDITED = "audited"


@dataclass(slots=True)
class ClusterStats:
    """One audited cluster: what was listed and evaluated, and what it cost the API server."""

    name: str
    reachable: bool = True
    objects: int = 0  # objects listed
    evaluated: int = 0  # objects (and pod templates) evaluated
    pods: int = 0  # pods listed
    requests: int = 0  # API requests made, retries included
    seconds: float = 0.0
    kinds: dict[str, int] = field(default_factory=dict)  # objects listed per kind
    extras: dict[str, object] = field(default_factory=dict)  # area summaries (e.g. sandbox classes)


@dataclass(slots=True)
class Result:
    """Findings, input errors and bookkeeping of one run."""

    tool_version: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    rules: dict[str, Rule] = field(default_factory=dict)  # the active rules (for SARIF/JUnit catalogues)
    exceptions: list[ExceptionStatus] = field(default_factory=list)
    gaps: list[CoverageGap] = field(default_factory=list)
    resources: int = 0  # objects evaluated
    files: int = 0  # files read (scan)
    skipped: list[Skipped] = field(default_factory=list)  # files holding no Kubernetes object (scan)
    objects_read: int = 0  # Kubernetes objects read, in scope or not (scan)
    clusters: list[ClusterStats] = field(default_factory=list)  # audit only
    framework: str | None = None  # audit --framework: the report shows that framework's controls
    #: namespaced objects read without metadata.namespace and no --namespace given (scan), as
    #: "file:line Kind/name"; they are judged as in namespace "default", where kubectl would put them
    namespaceless: list[str] = field(default_factory=list)
    #: objects read but left out by `scope` (excluded namespaces), as "file:line Kind/namespace/name"
    #: (scan): a scanned repository's kube-system DaemonSet is its authors' object, said not judged
    out_of_scope: list[str] = field(default_factory=list)
    #: what this run could not evaluate, or controls not configured (:class:`Note`), once each
    notes: list[Note] = field(default_factory=list)

    @property
    def active(self) -> list[Finding]:
        """Findings not covered by an exception."""
        return [f for f in self.findings if f.exception is None]

    def summary(self) -> dict[str, object]:
        active = self.active
        by_action = Counter(f.action.value for f in active)
        by_severity = Counter(f.rule.severity.label for f in active)
        return {
            "resources": self.resources,
            "files": self.files,
            "skipped": len(self.skipped),
            "findings": len(active),
            "waived": len(self.findings) - len(active),
            "errors": len(self.errors),
            "by_action": {a.value: by_action.get(a.value, 0) for a in Action},
            "by_severity": {s.label: by_severity.get(s.label, 0) for s in sorted(Severity, reverse=True)},
        }

    def sorted_findings(self) -> list[Finding]:
        return sorted(
            self.findings,
            key=lambda f: (
                f.file or "",
                f.line or 0,
                -f.rule.severity,
                f.rule.id,
                f.resource.display(),
            ),
        )
