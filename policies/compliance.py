"""Compliance frameworks: which controls each rule evidences, and per-control pass/fail.

Rules name what they evidence in their METADATA `frameworks` list: `pss-baseline`,
`pss-restricted`, `NSA-CISA`, and CIS Kubernetes Benchmark controls as `CIS-<id>` (section 5,
"Policies"). The CIS AKS Benchmark's section 4 ("Policies") carries the same recommendations under
its own numbers, so its controls are derived from the CIS Kubernetes ids through one table here
(:data:`CIS_K8S_TO_AKS`) rather than written into every rule twice; the table is the one place to
review when a benchmark version renumbers.

A control *passes* when no active (unwaived) finding of a rule that evidences it remains; it is
*not evaluated* when no enabled rule evidences it in this run. A control with only waived findings
passes, with the waivers listed by the report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import Finding, Rule

#: CIS Kubernetes Benchmark (section 5) -> CIS AKS Benchmark (section 4) recommendation ids.
CIS_K8S_TO_AKS: dict[str, str] = {
    "5.1.1": "4.1.1",  # cluster-admin only where required
    "5.1.2": "4.1.2",  # minimize access to secrets
    "5.1.3": "4.1.3",  # minimize wildcard use in Roles and ClusterRoles
    "5.1.4": "4.1.4",  # minimize access to create pods
    "5.1.5": "4.1.5",  # default service accounts are not actively used
    "5.1.6": "4.1.6",  # service account tokens are only mounted where necessary
    "5.2.2": "4.2.1",  # privileged containers
    "5.2.3": "4.2.2",  # hostPID
    "5.2.4": "4.2.3",  # hostIPC
    "5.2.5": "4.2.4",  # hostNetwork
    "5.2.6": "4.2.5",  # allowPrivilegeEscalation
    "5.2.7": "4.2.6",  # root containers
    "5.2.8": "4.2.7",  # NET_RAW
    "5.2.9": "4.2.8",  # added capabilities
    "5.2.10": "4.2.9",  # capabilities assigned
    "5.3.2": "4.3.2",  # every namespace has network policies
    "5.7.2": "4.6.2",  # seccomp profile
    "5.7.3": "4.6.3",  # security context
    "5.7.4": "4.6.4",  # the default namespace is not used
}


@dataclass(frozen=True, slots=True)
class Framework:
    name: str
    title: str


FRAMEWORKS: dict[str, Framework] = {
    f.name: f
    for f in (
        Framework("cis-k8s", "CIS Kubernetes Benchmark (section 5, Policies)"),
        Framework("cis-aks", "CIS Azure Kubernetes Service Benchmark (section 4, Policies)"),
        Framework("nsa-cisa", "NSA-CISA Kubernetes Hardening Guidance"),
        Framework("pss-baseline", "Pod Security Standards: baseline"),
        Framework("pss-restricted", "Pod Security Standards: restricted"),
    )
}


class FrameworkError(ValueError):
    """An unknown framework name."""


def controls(rule: Rule, framework: str) -> list[str]:
    """The controls of `framework` that `rule` evidences (empty: the rule is not part of it)."""
    out: list[str] = []
    for tag in rule.frameworks:
        t = tag.strip()
        low = t.lower()
        if framework in ("cis-k8s", "cis-aks") and low.startswith("cis-"):
            cis = t[4:]
            if framework == "cis-k8s":
                out.append(cis)
            elif cis in CIS_K8S_TO_AKS:
                out.append(CIS_K8S_TO_AKS[cis])
        elif framework == "nsa-cisa" and low == "nsa-cisa":
            out.append(rule.area)  # the guidance has no numbered controls: group by policy area
        elif low == framework:
            out.append(rule.id)  # a PSS control is the rule's own check
    return out


def get_framework(name: str) -> Framework:
    try:
        return FRAMEWORKS[name.lower()]
    except KeyError:
        raise FrameworkError(f"unknown framework {name!r} (choose from {', '.join(FRAMEWORKS)})") from None


def restrict_to_framework(evaluator: Evaluator, name: str) -> Evaluator:
    """An evaluator running only the enabled rules that evidence a control of the framework."""
    framework = get_framework(name)
    engine = evaluator.engine
    enabled = getattr(engine, "enabled", frozenset(evaluator.rules))
    keep = [
        rid for rid in enabled if rid in evaluator.rules and controls(evaluator.rules[rid], framework.name)
    ]
    if not isinstance(engine, EmbeddedEngine):  # pragma: no cover - remote engines filter findings only
        return evaluator
    narrowed = EmbeddedEngine(engine.library, evaluator.config.rule_data(), keep, vm=engine.uses_vm)
    return Evaluator(narrowed, evaluator.config, evaluator.exceptions.today)


@dataclass(frozen=True, slots=True)
class ControlResult:
    control: str
    rules: tuple[str, ...]
    status: str  # "pass" | "fail"
    findings: int  # active findings
    waived: int


def control_results(
    rules: Mapping[str, Rule], findings: Iterable[Finding], framework: str
) -> list[ControlResult]:
    """Per-control pass/fail of one run, in control order."""
    by_control: dict[str, list[str]] = {}
    for rule in rules.values():
        for control in controls(rule, framework):
            by_control.setdefault(control, []).append(rule.id)
    active: dict[str, int] = {}
    waived: dict[str, int] = {}
    for f in findings:
        bucket = waived if f.waived else active
        bucket[f.rule.id] = bucket.get(f.rule.id, 0) + 1
    out = []
    for control in sorted(by_control, key=_control_key):
        ids = tuple(sorted(by_control[control]))
        n = sum(active.get(r, 0) for r in ids)
        out.append(
            ControlResult(control, ids, "fail" if n else "pass", n, sum(waived.get(r, 0) for r in ids))
        )
    return out


def _control_key(control: str) -> tuple[tuple[int, str], ...]:
    return tuple((int(p), "") if p.isdigit() else (0, p) for p in control.replace("-", ".").split("."))
