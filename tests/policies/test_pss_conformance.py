"""Conformance of the Pod Security Standards rules with Kyverno's pod-security policy tests.

The corpus (``../shared/corpora/kyverno_policies.jsonl``, rows whose ``source`` contains
``:pod-security/``) holds the test cases of kyverno/policies' hand-written Pod Security Standards
policies: one Kubernetes object, the Kyverno policy, and whether that policy fails (``deny``) or passes
(``allow``) the object. Each Kyverno policy covers one PSS control (``baseline/*``, ``restricted/*``)
or a whole profile (``subrule/*``, Kyverno's ``podSecurity`` rule).

Every row is mapped to the stockade rules that cover the same control (``POLICY_RULES``); the
stockade verdict is ``deny`` iff one of them fires on the object, evaluated with the PSS default level
``restricted`` and a namespace without labels. Stockade follows Kubernetes' Pod Security Admission, not
Kyverno: where PSA decides a row differently from Kyverno's hand-written policy, the row is listed in
``DELIBERATE`` with the reason, and the test asserts stockade's (PSA's) verdict instead of Kyverno's.
Kyverno rows that name one rule of a multi-rule policy (``expect_detail``) are compared against the
matching part of the stockade rule (``RULE_SELECTORS``), and Kyverno's per-image control exemptions
are applied to the findings as a stockade exception would be (``EXEMPTIONS``).

The corpus is not part of the repository; the module skips when it is absent.
"""

from __future__ import annotations

import fnmatch
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from stockade.policies.config.settings import Config
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import Finding, Resource

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "kyverno_policies.jsonl"

pytestmark = pytest.mark.skipif(not CORPUS.exists(), reason=f"conformance corpus not found: {CORPUS}")

BASELINE = (
    "STK-POD-001",  # host_process
    "STK-POD-002",  # host_namespaces
    "STK-POD-003",  # privileged
    "STK-POD-004",  # capabilities_baseline
    "STK-POD-005",  # host_path
    "STK-POD-006",  # host_ports
    "STK-POD-007",  # apparmor
    "STK-POD-008",  # selinux
    "STK-POD-009",  # proc_mount
    "STK-POD-010",  # seccomp_baseline
    "STK-POD-011",  # sysctls
    "STK-POD-012",  # probe_host
)
RESTRICTED = (
    *BASELINE,
    "STK-POD-101",  # volume_types
    "STK-POD-102",  # privilege_escalation
    "STK-POD-103",  # run_as_non_root
    "STK-POD-104",  # run_as_user
    "STK-POD-105",  # seccomp_restricted
    "STK-POD-106",  # capabilities_restricted
)


@dataclass(frozen=True)
class Sel:
    """Findings of one stockade rule; with ``field``, only those whose object path contains it."""

    rule: str
    field: str | None = None

    def matches(self, finding: Finding) -> bool:
        return finding.rule.id == self.rule and (self.field is None or self.field in finding.path)


def sels(*rule_ids: str) -> tuple[Sel, ...]:
    return tuple(Sel(r) for r in rule_ids)


# Kyverno policy (path under pod-security/, without the file name) -> stockade rules of that control.
POLICY_RULES: dict[str, tuple[Sel, ...]] = {
    "baseline/disallow-capabilities": sels("STK-POD-004"),
    "baseline/disallow-host-namespaces": sels("STK-POD-002"),
    "baseline/disallow-host-path": sels("STK-POD-005"),
    "baseline/disallow-host-ports": sels("STK-POD-006"),
    "baseline/disallow-host-ports-range": sels("STK-POD-006"),
    "baseline/disallow-host-process": sels("STK-POD-001"),
    "baseline/disallow-privileged-containers": sels("STK-POD-003"),
    "baseline/disallow-proc-mount": sels("STK-POD-009"),
    "baseline/disallow-selinux": sels("STK-POD-008"),
    "baseline/restrict-apparmor-profiles": sels("STK-POD-007"),
    "baseline/restrict-seccomp": sels("STK-POD-010"),
    "baseline/restrict-sysctls": sels("STK-POD-011"),
    "restricted/disallow-capabilities-strict": sels("STK-POD-106"),
    "restricted/disallow-privilege-escalation": sels("STK-POD-102"),
    "restricted/require-run-as-non-root-user": sels("STK-POD-104"),
    "restricted/require-run-as-nonroot": sels("STK-POD-103"),
    "restricted/restrict-seccomp-strict": sels("STK-POD-105"),
    "restricted/restrict-volume-types": sels("STK-POD-101"),
    # Kyverno `podSecurity` rules: a whole profile at version latest.
    "subrule/podsecurity-subrule-baseline": sels(*BASELINE),
    "subrule/restricted/restricted-latest": sels(*RESTRICTED),
    # restricted, with the Capabilities control exempted for some images (see EXEMPTIONS).
    "subrule/restricted/restricted-exclude-capabilities": sels(*RESTRICTED),
    # restricted, with the Seccomp control (baseline and restricted checks) exempted everywhere.
    "subrule/restricted/restricted-exclude-seccomp": sels(
        *(r for r in RESTRICTED if r not in ("STK-POD-010", "STK-POD-105"))
    ),
}

# (Kyverno policy, Kyverno rule) -> the part of the stockade control that rule covers, for rows whose
# expect_detail names only that rule (kyverno CLI tests report each rule of a policy separately).
RULE_SELECTORS: dict[tuple[str, str], tuple[Sel, ...]] = {
    ("restricted/disallow-capabilities-strict", "require-drop-all"): (Sel("STK-POD-106", "drop"),),
    ("restricted/disallow-capabilities-strict", "adding-capabilities-strict"): (Sel("STK-POD-106", "add"),),
    ("baseline/disallow-selinux", "selinux-type"): (Sel("STK-POD-008", "type"),),
    ("baseline/disallow-selinux", "selinux-user-role"): (
        Sel("STK-POD-008", "user"),
        Sel("STK-POD-008", "role"),
    ),
}

CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def container_at(obj: Mapping[str, Any], path: tuple[Any, ...]) -> Mapping[str, Any] | None:
    """The container a finding's object path points into, if any."""
    node: Any = obj
    for i, key in enumerate(path):
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return None
        if i > 0 and path[i - 1] in CONTAINER_LISTS and isinstance(key, int):
            return node if isinstance(node, Mapping) else None
    return None


def image_exemption(rules: tuple[str, ...], images: tuple[str, ...]) -> Callable[[Finding, Mapping], bool]:
    """Kyverno `exclude: [{controlName, images}]`: the control is not checked on matching containers."""

    def exempt(finding: Finding, obj: Mapping[str, Any]) -> bool:
        if finding.rule.id not in rules:
            return False
        container = container_at(obj, tuple(finding.path))
        image = str((container or {}).get("image") or "")
        return container is not None and any(fnmatch.fnmatchcase(image, p) for p in images)

    return exempt


# Kyverno policy -> findings its per-control exemptions waive (a stockade exception would do the same).
EXEMPTIONS: dict[str, Callable[[Finding, Mapping], bool]] = {
    "subrule/restricted/restricted-exclude-capabilities": image_exemption(
        ("STK-POD-004", "STK-POD-106"), ("ghcr.io/kyverno/test-nginx*", "redis*")
    ),
}


def pod_spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template", {}).get("spec") or {}
    elif "template" in spec:
        spec = (spec.get("template") or {}).get("spec") or {}
    return spec


def containers(obj: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    spec = pod_spec(obj)
    for key in CONTAINER_LISTS:
        yield from spec.get(key) or []


def selinux_options(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    blocks = [(pod_spec(obj).get("securityContext") or {}).get("seLinuxOptions")]
    blocks += [(c.get("securityContext") or {}).get("seLinuxOptions") for c in containers(obj)]
    return [b for b in blocks if b]


def kyverno_allows_nonzero_host_port(row: Mapping[str, Any]) -> bool:
    """Kyverno allows hostPorts 5000-6000; PSA (check hostPorts) forbids every non-zero hostPort."""
    ports = [p.get("hostPort") for c in containers(row["objects"][0]) for p in c.get("ports") or []]
    return row["expect"] == "allow" and any(p not in (None, 0) for p in ports)


def kyverno_denied_container_engine_t(row: Mapping[str, Any]) -> bool:
    """Kyverno's chainsaw test denies container_engine_t; PSA allows it since policy version v1.31."""
    psa_allowed = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
    blocks = selinux_options(row["objects"][0])
    return (
        row["expect"] == "deny"
        and any(b.get("type") == "container_engine_t" for b in blocks)
        and all(
            (b.get("type") or "") in psa_allowed and not b.get("user") and not b.get("role") for b in blocks
        )
    )


def kyverno_denied_user_namespace_proc_mount(row: Mapping[str, Any]) -> bool:
    """Kyverno denies procMount Unmasked in user-namespaced pods; PSA baseline allows it since v1.35."""
    obj = row["objects"][0]
    mounts = [(c.get("securityContext") or {}).get("procMount") for c in containers(obj)]
    return (
        row["expect"] == "deny"
        and pod_spec(obj).get("hostUsers") is False
        and any(m not in (None, "Default") for m in mounts)
    )


@dataclass(frozen=True)
class Deliberate:
    """Rows of a Kyverno policy that PSA, and so stockade, decides the other way."""

    policy: str
    reason: str
    applies: Callable[[Mapping[str, Any]], bool]


DELIBERATE: tuple[Deliberate, ...] = (
    Deliberate(
        "baseline/disallow-host-ports-range",
        "Kyverno's variant allows hostPorts in 5000-6000; PSA check hostPorts (baseline) allows only "
        "an unset or 0 hostPort, with no range or allowlist, so stockade denies them.",
        kyverno_allows_nonzero_host_port,
    ),
    Deliberate(
        "baseline/disallow-selinux",
        "Kyverno's chainsaw test (the *-new cases) treats seLinuxOptions.type container_engine_t as "
        "forbidden; PSA check seLinuxOptions allows it since policy version v1.31 "
        "(kubernetes/kubernetes#126165), so stockade allows it.",
        kyverno_denied_container_engine_t,
    ),
    Deliberate(
        "baseline/disallow-proc-mount",
        "Kyverno denies a non-Default procMount also for pods in their own user namespace "
        "(hostUsers: false); PSA check procMount (baseline) allows any procMount for such pods since "
        "policy version v1.35 (the restricted profile still requires Default), and baseline rows are "
        "compared at the baseline level, so stockade allows them.",
        kyverno_denied_user_namespace_proc_mount,
    ),
)


def policy_key(row: Mapping[str, Any]) -> str:
    path = row["policy"]["paths"][0]
    return path.removeprefix("pod-security/").rsplit("/", 1)[0]


def selectors(row: Mapping[str, Any]) -> tuple[Sel, ...]:
    key = policy_key(row)
    named = {d["rule"] for d in row.get("expect_detail") or [] if isinstance(d, Mapping) and "rule" in d}
    if len(named) == 1 and (key, *named) in RULE_SELECTORS:
        return RULE_SELECTORS[(key, *named)]
    return POLICY_RULES[key]


def deliberate(row: Mapping[str, Any]) -> Deliberate | None:
    key = policy_key(row)
    return next((d for d in DELIBERATE if d.policy == key and d.applies(row)), None)


def load_rows() -> list[dict[str, Any]]:
    if not CORPUS.exists():
        return []
    with CORPUS.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [r for r in rows if ":pod-security/" in r["source"]]


ROWS = load_rows()


class Conformance:
    """One evaluator for the session, and each row's verdict computed once."""

    def __init__(self) -> None:
        config = Config.model_validate({"pss": {"default_level": "restricted"}})
        self.evaluator = Evaluator.default(config)
        self._verdicts: dict[str, tuple[str, list[str]]] = {}

    @staticmethod
    def namespace(row: Mapping[str, Any]) -> dict[str, Any]:
        """Kyverno's baseline policies are compared at the baseline level, the rest at restricted.

        PSA's restricted profile replaces the baseline capabilities and seccomp checks with the
        restricted ones (OverrideCheckIDs), so a baseline control is only itself at baseline.
        """
        key = policy_key(row)
        level = "baseline" if key.startswith("baseline/") or key.endswith("-baseline") else "restricted"
        labels = {"pod-security.kubernetes.io/enforce": level}
        return {"name": "pss-conformance", "labels": labels, "annotations": {}, "known": True}

    def verdict(self, row: Mapping[str, Any]) -> tuple[str, list[str]]:
        """(allow|deny, the messages of the mapped findings that decided it)."""
        if row["id"] not in self._verdicts:
            (obj,) = row["objects"]
            findings = self.evaluator.evaluate(Resource(obj), namespace=self.namespace(row))
            wanted = selectors(row)
            exempt = EXEMPTIONS.get(policy_key(row))
            hits = [
                f"{f.rule.id} {f.message}"
                for f in findings
                if any(s.matches(f) for s in wanted) and not (exempt and exempt(f, obj))
            ]
            self._verdicts[row["id"]] = ("deny" if hits else "allow", hits)
        return self._verdicts[row["id"]]


@pytest.fixture(scope="session")
def conformance() -> Conformance:
    return Conformance()


def test_every_policy_is_mapped() -> None:
    assert ROWS, "no pod-security rows in the corpus"
    unmapped = sorted({policy_key(r) for r in ROWS} - set(POLICY_RULES))
    assert not unmapped, f"Kyverno pod-security policies without a stockade mapping: {unmapped}"


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_row(row: dict[str, Any], conformance: Conformance) -> None:
    got, hits = conformance.verdict(row)
    diff = deliberate(row)
    if diff is None:
        assert got == row["expect"], f"Kyverno says {row['expect']}, stockade says {got}: {hits}"
    else:
        psa = "allow" if row["expect"] == "deny" else "deny"
        assert got == psa, (
            f"deliberate difference ({diff.reason}) expected {psa}, stockade says {got}: {hits}"
        )


def test_summary(conformance: Conformance, capsys: pytest.CaptureFixture[str]) -> None:
    compared = matched = 0
    differences: Counter[str] = Counter()
    mismatched = []
    for row in ROWS:
        got, _ = conformance.verdict(row)
        compared += 1
        diff = deliberate(row)
        if got == row["expect"]:
            matched += 1
            if diff is not None:
                mismatched.append(f"{row['id']}: listed as deliberate but stockade agrees with Kyverno")
        elif diff is not None:
            differences[f"{diff.policy}: {diff.reason}"] += 1
        else:
            mismatched.append(f"{row['id']}: Kyverno {row['expect']}, stockade {got}")
    lines = [
        f"PSS conformance with kyverno/policies pod-security: {compared} rows compared, {matched} match "
        f"Kyverno, {sum(differences.values())} decided differently on purpose (PSA is the authority), "
        f"{len(mismatched)} unexplained",
        *(f"  {n:4d} x {reason}" for reason, n in sorted(differences.items())),
    ]
    with capsys.disabled():  # shown in every run, -q included
        print("\n" + "\n".join(lines))
    unused = [d.policy for d in DELIBERATE if not any(f"{d.policy}: {d.reason}" == k for k in differences)]
    assert not unused, f"deliberate differences that match no row any more: {unused}"
    assert not mismatched, "\n".join(mismatched[:20])
    assert compared == len(ROWS) and matched + sum(differences.values()) == compared
