"""Waivers: which findings an exception covers, and which exceptions are expired or unused.

An expired exception stops applying the day after its `expires` date, and both expired and unused
exceptions are reported, so waivers cannot quietly outlive their reason.

Suppressions are waivers written next to the object, as an annotation on it:
``stockade.io/ignore-STK-POD-003: "reason; expires=2027-01-31"`` (the reason required, the expiry
optional). A suppressed finding carries an :class:`ExceptionRef` named after the annotation, so every
report shows it as waived, with its reason. Each gate honours them only as `suppressions:` allows
(:class:`SuppressionBook`); one not honoured (no reason, a bad or past expiry, a gate that does not
allow it) leaves the finding active and says why in its message.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from stockade.policies.config.settings import (
    ExceptionMatch,
    ExceptionSpec,
    SuppressionGate,
    SuppressionsConfig,
    glob_match,
)
from stockade.policies.model import ExceptionRef, Finding, Resource, ResourceRef, is_mapping

Status = Literal["active", "expired", "unused"]


@dataclass(frozen=True, slots=True)
class ExceptionStatus:
    spec: ExceptionSpec
    status: Status
    matched: int


class ExceptionBook:
    """Matches findings to exceptions and counts how often each one was used."""

    def __init__(self, specs: tuple[ExceptionSpec, ...], today: dt.date | None = None) -> None:
        self.today = today or dt.date.today()
        self.specs = specs
        self._live = tuple(s for s in specs if not s.expired(self.today))
        self._used: Counter[str] = Counter()

    def match(self, rule_id: str, resource: ResourceRef, labels: Mapping[str, str]) -> ExceptionRef | None:
        for spec in self._live:
            if not glob_match(spec.rules, rule_id):
                continue
            m = spec.match
            if not (
                glob_match(m.clusters, resource.cluster)
                and glob_match(m.namespaces, resource.namespace)
                and glob_match(m.kinds, resource.kind)
                and glob_match(m.names, resource.name)
                and all(labels.get(k) == v for k, v in m.labels.items())
            ):
                continue
            self._used[spec.name] += 1
            return ExceptionRef(spec.name, spec.owner, spec.reason, spec.expires.isoformat())
        return None

    def statuses(self) -> list[ExceptionStatus]:
        out = []
        for spec in self.specs:
            used = self._used.get(spec.name, 0)
            if spec.expired(self.today):
                status: Status = "expired"
            elif used == 0:
                status = "unused"
            else:
                status = "active"
            out.append(ExceptionStatus(spec, status, used))
        return out


#: the annotation key of a suppression is this prefix and the rule id: stockade.io/ignore-STK-POD-003
SUPPRESSION_PREFIX = "stockade.io/ignore-"
#: the owner every suppression's ExceptionRef names: reports show where the waiver came from
SUPPRESSION_OWNER = "manifest annotation"
Gate = Literal["scan", "admission", "audit"]
_EXPIRES = re.compile(r"(?:^|;)\s*expires\s*=\s*([^;]*?)\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Suppression:
    """One `stockade.io/ignore-<RULE>` annotation, read; `problem` says why it cannot be honoured."""

    key: str
    rule: str
    reason: str
    expires: dt.date | None
    problem: str | None = None


def parse_suppression(key: str, value: object) -> Suppression:
    """The annotation ``key: value``: "reason" or "reason; expires=YYYY-MM-DD"."""
    rule = key[len(SUPPRESSION_PREFIX) :].strip().upper()
    text = value.strip() if isinstance(value, str) else ""
    expires: dt.date | None = None
    problem: str | None = None
    m = _EXPIRES.search(text)
    if m is not None:
        text = text[: m.start()].strip()
        try:
            expires = dt.date.fromisoformat(m.group(1))
        except ValueError:
            problem = "its expires= is not a date YYYY-MM-DD"
    reason = text.rstrip(";").strip()
    if not reason:
        problem = "it gives no reason"
    return Suppression(key, rule, reason, expires, problem)


def suppressions_of(obj: Mapping[str, object]) -> dict[str, Suppression]:
    """The object's suppressions by rule id (from its own metadata.annotations)."""
    md = obj.get("metadata")
    annotations = md.get("annotations") if is_mapping(md) else None
    if not is_mapping(annotations):
        return {}
    out: dict[str, Suppression] = {}
    for key, value in annotations.items():
        if isinstance(key, str) and key.startswith(SUPPRESSION_PREFIX) and len(key) > len(SUPPRESSION_PREFIX):
            s = parse_suppression(key, value)
            out[s.rule] = s
    return out


class SuppressionBook:
    """Applies the suppression annotations one gate honours, and remembers what became of them.

    ``gate`` names the gate (`scan`, `admission`, `audit`): its part of `suppressions:` decides which
    rules and namespaces may be suppressed there. Findings an exception already covers are left as they
    are; so are findings of rules the object does not name."""

    def __init__(self, config: SuppressionsConfig, gate: Gate, today: dt.date | None = None) -> None:
        self.config = config
        self.gate = gate
        self.today = today or dt.date.today()
        self._seen: dict[tuple[ResourceRef, str], tuple[Suppression, int]] = {}

    def allows(self, rule_id: str, namespace: str | None) -> bool:
        if self.gate == "scan":
            return self.config.scan
        policy: SuppressionGate = getattr(self.config, self.gate)
        return policy.allows(rule_id, namespace)

    def _refusal(self, rule_id: str, namespace: str | None) -> str:
        if self.gate == "scan":
            return "suppressions.scan is false"
        where = f"in namespace {namespace}" if namespace else "on cluster-scoped objects"
        return f"suppressions.{self.gate} does not allow it for this rule {where}"

    def apply(self, resource: Resource, findings: Sequence[Finding]) -> list[Finding]:
        """`findings` (of `resource`), those its annotations suppress given their ExceptionRef."""
        found = suppressions_of(resource.obj)
        if not found:
            return list(findings)
        ref = resource.ref()
        used: Counter[str] = Counter()
        for f in findings:
            s = found.get(f.rule.id)
            if s is None or f.exception is not None:
                continue
            if s.problem is not None:
                f.message = f"{f.message} ({s.key} not honoured: {s.problem})"
            elif not self.allows(s.rule, ref.namespace):
                why = self._refusal(s.rule, ref.namespace)
                f.message = f"{f.message} ({s.key} not honoured at {self.gate}: {why})"
            elif s.expires is not None and self.today > s.expires:
                f.message = f"{f.message} ({s.key} expired on {s.expires.isoformat()})"
            else:
                f.exception = ExceptionRef(
                    s.key,
                    f"{SUPPRESSION_OWNER} on {ref.display()}",
                    s.reason,
                    s.expires.isoformat() if s.expires is not None else None,
                )
                used[s.rule] += 1
        for s in found.values():
            if s.problem is None and self.allows(s.rule, ref.namespace):
                _, before = self._seen.get((ref, s.rule), (s, 0))
                self._seen[(ref, s.rule)] = (s, before + used[s.rule])
        return list(findings)

    def statuses(self) -> list[ExceptionStatus]:
        """Every honoured suppression seen, as exceptions are reported: active, expired or unused (its
        rule found nothing on its object). One without an expiry has 9999-12-31."""
        out = []
        for (ref, rule), (s, used) in sorted(
            self._seen.items(), key=lambda kv: (kv[0][0].display(), kv[0][1])
        ):
            spec = ExceptionSpec(
                name=f"{s.key} on {ref.display()}",
                rules=(rule,),
                match=ExceptionMatch(
                    namespaces=(ref.namespace,) if ref.namespace else (), kinds=(ref.kind,), names=(ref.name,)
                ),
                owner=SUPPRESSION_OWNER,
                reason=s.reason,
                expires=s.expires or dt.date.max,
            )
            status: Status = "expired" if spec.expired(self.today) else "active" if used else "unused"
            out.append(ExceptionStatus(spec, status, used))
        return out
