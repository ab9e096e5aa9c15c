"""Conformance of the image, resource, hostPath and ServiceAccount rules with Polaris and Kubescape.

The corpora (``../shared/corpora/polaris.jsonl`` and ``kubescape_regolibrary.jsonl``, see their README)
hold the test cases of FairwindsOps/polaris' checks and kubescape/regolibrary's rules: the objects, the
peer rule, and whether it fails them. Peer rules that decide the same control as a stockade rule are
mapped to it (``POLARIS`` / ``KUBESCAPE``), each with the stockade configuration that makes the two
comparable (e.g. the peer's registry allowlist as ``images.allowed_registries``). Every workload object
of a row is evaluated through the public pipeline (facts from the row's other objects, e.g. its
ServiceAccount; objects without a namespace are in "default", as kubectl would create them), and the
object is "flagged" when one of the mapped rules fires. Polaris flags the row's workload when the row
expects ``deny``; Kubescape names the flagged objects in ``expect_detail.flagged``.

Kubescape rows also name the containers and volumes they flag (``failedPaths``, ``fixPaths``); for those
the flagged elements are compared too (``test_kubescape_elements``).

Where stockade decides a row differently on purpose, the row is listed in ``DELIBERATE`` with the reason,
and the test asserts stockade's own verdict; ``ELEMENT_DELIBERATE`` does the same for element-level
differences. Peer rules on the same topics that stockade deliberately does not decide at all are listed
in ``NOT_COMPARED``, with the reason. ``test_summary`` prints the counts.

The corpora are not part of the repository; the module skips when they are absent.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from stockade.policies.config.settings import DEFAULT_FORBIDDEN_HOST_PATHS, ImagesConfig, parse_config
from stockade.policies.evaluate import Evaluator, namespace_info
from stockade.policies.facts import facts_for, inventory_of
from stockade.policies.kinds.workloads import WORKLOAD_KINDS
from stockade.policies.model import Resource

CORPORA = Path(__file__).resolve().parents[2].parent / "shared" / "corpora"
POLARIS_CORPUS = CORPORA / "polaris.jsonl"
KUBESCAPE_CORPUS = CORPORA / "kubescape_regolibrary.jsonl"

pytestmark = pytest.mark.skipif(
    not (POLARIS_CORPUS.exists() and KUBESCAPE_CORPUS.exists()),
    reason=f"conformance corpora not found in {CORPORA}",
)


# ---- the mapping ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Peer:
    """A peer rule, the stockade rules that decide the same control, and how to make them comparable."""

    rules: tuple[str, ...]
    config: Mapping[str, Any] = field(default_factory=dict)  # stockade.yaml sections for the comparison
    allowlist_from_row: bool = False  # images.allowed_registries := the row's imageRepositoryAllowList
    floating_from_row: bool = False  # images.floating_tags += the row's floatingImageTags


RES_002_ALONE = {"rules": {"STK-RES-001": {"enabled": False}}}
RES_003_ALONE = {"rules": {"STK-RES-001": {"enabled": False}, "STK-RES-002": {"enabled": False}}}

# Polaris check (policy.polaris_check) -> stockade.
POLARIS: dict[str, Peer] = {
    "memoryLimitsMissing": Peer(("STK-RES-001",)),
    # a container with no resources at all is STK-RES-001's one finding (issue 37): the peer's single
    # control is compared with the rule alone, the rules before it off
    "cpuRequestsMissing": Peer(("STK-RES-002",), RES_002_ALONE),
    "memoryRequestsMissing": Peer(("STK-RES-003",), RES_003_ALONE),
    "tagNotSpecified": Peer(("STK-IMG-002",)),
    "pullPolicyNotAlways": Peer(("STK-IMG-004",)),
    "hostPathSet": Peer(("STK-POD-005",)),
    "automountServiceAccountToken": Peer(("STK-SA-001",)),
    "notReadOnlyRootFilesystem": Peer(("STK-POD-202",)),
}

# Kubescape's exact runtime-socket paths (rules/containers-mounting-docker-socket): /var/run/docker is
# dockerd's state directory, which stockade's default list does not name (only the socket).
KUBESCAPE_SOCKETS = (
    "/var/run/docker.sock",
    "/var/run/docker",
    "/run/containerd/containerd.sock",
    "/var/run/crio/crio.sock",
)

# Kubescape rule (policy.rule) -> stockade.
KUBESCAPE: dict[str, Peer] = {
    "resources-memory-limits": Peer(("STK-RES-001",)),  # C-0271
    "resources-memory-requests": Peer(("STK-RES-003",), RES_003_ALONE),  # C-0269
    "resources-cpu-requests": Peer(("STK-RES-002",), RES_002_ALONE),  # C-0268
    "resources-memory-limit-and-request": Peer(("STK-RES-001", "STK-RES-003")),  # C-0004
    "image-pull-policy-is-not-set-to-always": Peer(("STK-IMG-004",), floating_from_row=True),  # C-0075
    "agent-sandbox-image-tag-provenance": Peer(("STK-IMG-002",)),
    # a malformed digest is not pinned for Kubescape; for stockade the text is no image reference at
    # all (STK-IMG-005, issue 37), which no digest rule judges
    "image-not-pinned-to-digest": Peer(
        ("STK-IMG-003", "STK-IMG-005"), {"images": {"require_digest_namespaces": ["*"]}}
    ),  # C-0306
    "container-image-repository": Peer(("STK-IMG-001",), allowlist_from_row=True),  # C-0078
    "agent-sandbox-image-registry-allowlist": Peer(("STK-IMG-001",), allowlist_from_row=True),
    "automount-service-account": Peer(("STK-SA-001",)),  # C-0034, C-0190
    "serviceaccount-token-mount": Peer(("STK-SA-001",)),  # C-0261
    "immutable-container-filesystem": Peer(("STK-POD-202",)),  # C-0017
    "alert-any-hostpath": Peer(("STK-POD-005",)),  # C-0048
    "containers-mounting-docker-socket": Peer(  # C-0074
        ("STK-POD-201",), {"host_paths": {"forbidden": [*DEFAULT_FORBIDDEN_HOST_PATHS, *KUBESCAPE_SOCKETS]}}
    ),
}

# Peer rules on the topics of these stockade rules that stockade deliberately does not decide.
NOT_COMPARED: dict[str, str] = {
    "polaris/cpuLimitsMissing": (
        "stockade requires CPU requests, not CPU limits: CPU is compressible, and CFS quota throttling "
        "hurts latency-sensitive and data-loader processes more than it protects neighbours."
    ),
    "kubescape/resources-cpu-limits": "C-0270 requires CPU limits; see polaris/cpuLimitsMissing.",
    "kubescape/resources-cpu-limit-and-request": (
        "C-0050 requires a CPU limit (and checks configured min/max ranges); STK-RES-002 covers only the "
        "request."
    ),
    "kubescape/resource-policies": "C-0009 requires CPU and memory limits; see polaris/cpuLimitsMissing.",
    "kubescape/resources-sandbox-cpu-limits": "Range checks on agent-sandbox templates; stockade has none.",
    "kubescape/resources-sandbox-memory-limits": "Range checks (agent-sandbox templates); stockade has none.",
    "kubescape/automount-default-service-account": (
        "C-0189 flags the ServiceAccount object named default; stockade decides on workloads: STK-SA-002 "
        "(workload uses the default ServiceAccount) and STK-SA-001 (its token is mounted)."
    ),
    "kubescape/alert-rw-hostpath": (
        "C-0045 flags writable hostPath mounts only; stockade forbids hostPath at baseline whether "
        "read-only or not (STK-POD-005) and forbids sensitive targets at every level (STK-POD-201)."
    ),
    "kubescape/alert-mount-potential-credentials-paths": (
        "C-0020 looks for cloud credential files (~/.aws, ~/.azure); not a stockade default, add them to "
        "host_paths.forbidden where nodes carry them."
    ),
    "kubescape/rule-identify-blocklisted-image-registries": (
        "C-0001 is a registry denylist; stockade only has an allowlist (STK-IMG-001), which a denylist "
        "cannot express safely."
    ),
    "kubescape/non-existent-service-account": (
        "C-0307 is STK-SA-005, decided only where the inventory is complete (audit, synced webhook): "
        "compared in tests/policies/test_inventory_conformance.py with a complete inventory."
    ),
    "kubescape/deprecated-service-account-field": "C-0294 (spec.serviceAccount) is not a stockade rule.",
    "polaris/<admission-webhook harness>": (
        "The webhook harness rows run all Polaris checks at once with its danger/warning levels; only "
        "single checks are compared."
    ),
}


@dataclass(frozen=True)
class Deliberate:
    """Rows that stockade decides the other way on purpose."""

    reason: str
    rows: tuple[str, ...]


DELIBERATE: tuple[Deliberate, ...] = (
    Deliberate(
        "Polaris pullPolicyNotAlways wants imagePullPolicy: Always written out; for an untagged or "
        '"latest" image Kubernetes defaults an omitted policy to Always, so stockade (which decides on the '
        "effective policy, as admission sees it) does not report it; the mutable tag is STK-IMG-002.",
        (
            "polaris/pullPolicyNotAlways/failure.cron-job.yaml",
            "polaris/pullPolicyNotAlways/failure.yaml",
        ),
    ),
    Deliberate(
        "Kubernetes defaults a Pod's missing request to its limit (SetDefaults_Pod), so a limit satisfies "
        "STK-RES-002/003; the peers require the request written out. Deciding on the manifest would make "
        "the scan report Pods that admission and audit (which see the defaulted Pod) pass.",
        (
            "regolibrary/resources-cpu-requests/pod-only-requests",
            "regolibrary/resources-memory-requests/pod-only-requests",
            "regolibrary/resources-memory-limit-and-request/pod-only-requests",
        ),
    ),
    Deliberate(
        "Kubescape checks configured min/max ranges (postureControlInputs memory_*_max/min); stockade "
        "requires the limit and request but sets no ranges (a LimitRange does that in the cluster).",
        (
            "regolibrary/resources-memory-limit-and-request/workload-exceeded",
            "regolibrary/resources-memory-limit-and-request/workload-milli-suffix",
            "regolibrary/resources-memory-limit-and-request/workload-mixed-unit",
        ),
    ),
    Deliberate(
        "stockade's default images.floating_tags holds the release channels publishers move (dev, "
        "nightly, stable, main...); Kubescape reports them only when its floatingImageTags input lists "
        "them (its rows that list dev or nightly agree with stockade).",
        ("regolibrary/agent-sandbox-image-tag-provenance/success-dev-tag-no-floating-config",),
    ),
    Deliberate(
        "Polaris pullPolicyNotAlways wants imagePullPolicy: Always on every image; stockade reports a pull "
        "policy only on a tag that moves (issue 37): on a version tag IfNotPresent is Kubernetes' own "
        "default and a re-pushed version is a digest question (STK-IMG-003).",
        ("polaris/pullPolicyNotAlways/failure.deployment.yaml",),
    ),
    Deliberate(
        "Kubescape takes any OCI digest algorithm as a pin; the kubelet's parser (distribution/reference "
        "with go-digest) knows sha256, sha384 and sha512 only and refuses the others (InvalidImageName), "
        "so stockade reports blake3 and custom algorithms as no image reference (STK-IMG-005).",
        (
            "regolibrary/image-not-pinned-to-digest/pod-blake3-pinned",
            "regolibrary/image-not-pinned-to-digest/pod-custom-digest",
            "regolibrary/image-not-pinned-to-digest/pod-short-custom-digest",
        ),
    ),
    Deliberate(
        "Kubescape's imageDigestExemptRepositories exempts repositories from digest pinning; stockade has "
        "no per-repository exemption: a waiver (exceptions: with owner, reason, expiry) does that.",
        ("regolibrary/image-not-pinned-to-digest/pod-exempted-repo",),
    ),
    Deliberate(
        "Polaris automountServiceAccountToken and Kubescape C-0034 report a pod that sets "
        "automountServiceAccountToken: true; stockade reads that as the workload's declared intent to "
        "call the API (issue 22: Argo CD's and kube-prometheus' controllers set it and hold bindings), "
        "so STK-SA-001 does not report it, and what the token may do is STK-RBAC-030's finding.",
        (
            "polaris/automountServiceAccountToken/failure.all_true.yaml",
            "polaris/automountServiceAccountToken/failure.pod_true_serviceaccount_false.yaml",
            "regolibrary/automount-service-account/both-mount",
            "regolibrary/automount-service-account/cronjob-pod-true-sa-false",
            "regolibrary/automount-service-account/deployment-pod-true-sa-false",
            "regolibrary/automount-service-account/deployment-pod-true-sa-true",
            "regolibrary/automount-service-account/pod-mount",
        ),
    ),
    Deliberate(
        "Kubescape C-0261 reports a mounted token when its ServiceAccount has RBAC bindings; for stockade "
        "a ServiceAccount that a binding names is an API client (STK-SA-001 does not report its token), "
        "and the permissions that token carries are reported by STK-RBAC-030 on the workload.",
        ("regolibrary/serviceaccount-token-mount/pod-mount-and-rb-bind",),
    ),
    Deliberate(
        "Kubescape C-0261 passes a mounted token whose ServiceAccount has no bindings; stockade reports a "
        "token mounted by a workload that neither asks for it nor has a bound ServiceAccount: the token "
        "still authenticates (as system:serviceaccounts), and bindings can be added later without "
        "touching the workload.",
        ("regolibrary/serviceaccount-token-mount/both-mount-default",),
    ),
)


# Rows where stockade flags more containers or volumes than Kubescape, on purpose.
ELEMENT_DELIBERATE: tuple[Deliberate, ...] = (
    Deliberate(
        "STK-POD-201 also reports a hostPath above a forbidden path (/var exposes /var/run/docker.sock and "
        "/var/lib/kubelet); Kubescape C-0074 compares the path with its four socket paths only.",
        tuple(
            f"regolibrary/containers-mounting-docker-socket/{name}"
            for name in (
                "cronjob",
                "cronjob-containerd",
                "cronjob-crio",
                "pod",
                "pod-containerd",
                "pod-crio",
                "workloads",
                "workloads-containerd",
                "workloads-crio",
            )
        ),
    ),
)


# ---- rows -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    source: str  # "polaris" | "kubescape"
    peer_rule: str
    data: Mapping[str, Any]

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def expect(self) -> str:
        return str(self.data["expect"])

    @property
    def peer(self) -> Peer:
        return (POLARIS if self.source == "polaris" else KUBESCAPE)[self.peer_rule]


def read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def peer_rule_of(source: str, row: Mapping[str, Any]) -> str:
    policy = row.get("policy") or {}
    if source == "polaris":
        return str(policy.get("polaris_check") or "<admission-webhook harness>")
    return str(policy.get("rule") or "")


def load() -> tuple[list[Row], Counter[str]]:
    rows, skipped = [], Counter[str]()
    for source, path in (("polaris", POLARIS_CORPUS), ("kubescape", KUBESCAPE_CORPUS)):
        for data in read(path):
            rule = peer_rule_of(source, data)
            table = POLARIS if source == "polaris" else KUBESCAPE
            if rule in table:
                rows.append(Row(source, rule, data))
            elif f"{source}/{rule}" in NOT_COMPARED:
                skipped[f"{source}/{rule}"] += 1
    return rows, skipped


ROWS, NOT_COMPARED_ROWS = load()
DELIBERATE_BY_ROW = {row_id: d for d in DELIBERATE for row_id in d.rows}
ELEMENT_DELIBERATE_BY_ROW = {row_id: d for d in ELEMENT_DELIBERATE for row_id in d.rows}


# ---- evaluation -----------------------------------------------------------------------------------------


def as_workload(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The object as stockade evaluates it: workload kinds as they are, an agent-sandbox
    SandboxTemplate as the Pod its podTemplate describes, anything else not at all."""
    out: dict[str, Any] = copy.deepcopy(dict(obj))
    md = out.setdefault("metadata", {})
    md.setdefault("namespace", "default")
    if out.get("kind") in WORKLOAD_KINDS:
        return out
    if out.get("kind") == "SandboxTemplate":
        template = (out.get("spec") or {}).get("podTemplate") or {}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": template.get("spec") or {}}
    return None


def config_text(row: Row) -> str:
    sections: dict[str, Any] = copy.deepcopy(dict(row.peer.config))
    if row.peer.allowlist_from_row:
        inputs = ((row.data.get("policy") or {}).get("data") or {}).get("postureControlInputs") or {}
        allowed = [r if r.endswith("/") else f"{r}/" for r in inputs.get("imageRepositoryAllowList") or []]
        sections.setdefault("images", {})["allowed_registries"] = allowed
    if row.peer.floating_from_row:
        inputs = ((row.data.get("policy") or {}).get("data") or {}).get("postureControlInputs") or {}
        if inputs.get("floatingImageTags"):
            floating = [*ImagesConfig().floating_tags, *inputs["floatingImageTags"]]
            sections.setdefault("images", {})["floating_tags"] = floating
    return yaml.safe_dump(sections, sort_keys=True)


@cache
def evaluator(text: str) -> Evaluator:
    return Evaluator.default(parse_config(text))


@dataclass(frozen=True)
class Outcome:
    """Per workload object of a row: (kind, name) -> (peer flags it, stockade flags it, messages); and
    the containers / volumes (object paths) the mapped stockade rules flag."""

    objects: dict[tuple[str, str], tuple[bool, bool, tuple[str, ...]]]
    elements: frozenset[str] = frozenset()

    @property
    def agree(self) -> bool:
        return all(peer == ours for peer, ours, _ in self.objects.values())

    @property
    def stockade(self) -> str:
        return "deny" if any(ours for _, ours, _ in self.objects.values()) else "allow"


def peer_flags(row: Row, key: tuple[str, str], workloads: int) -> bool:
    if row.expect != "deny":
        return False
    if row.source == "polaris":
        return True  # a Polaris test file holds one workload (plus its ServiceAccount)
    flagged = {
        (f.get("kind"), f.get("name")) for f in (row.data.get("expect_detail") or {}).get("flagged") or []
    }
    return key in flagged or (workloads == 1 and not flagged)


@cache
def outcome(row_id: str) -> Outcome:
    (row,) = [r for r in ROWS if r.id == row_id]
    objects = [copy.deepcopy(o) for o in row.data["objects"]]
    for obj in objects:
        obj.setdefault("metadata", {}).setdefault("namespace", "default")
    inventory = inventory_of(objects)
    ev = evaluator(config_text(row))
    pairs = [(o, w) for o in objects if (w := as_workload(o)) is not None]
    result: dict[tuple[str, str], tuple[bool, bool, tuple[str, ...]]] = {}
    elements: set[str] = set()
    for original, workload in pairs:
        key = (str(original.get("kind")), str(original["metadata"].get("name")))
        assert key not in result, f"{row.id}: two workloads named {key}"
        findings = ev.evaluate(
            Resource(workload),
            namespace=namespace_info(None, workload["metadata"]["namespace"]),
            facts=facts_for(workload, inventory),
        )
        mapped = [f for f in findings if f.rule.id in row.peer.rules]
        hits = tuple(sorted(f"{f.rule.id} {f.message}" for f in mapped))
        result[key] = (peer_flags(row, key, len(pairs)), bool(hits), hits)
        prefix = "spec.podTemplate." if original.get("kind") == "SandboxTemplate" else ""
        elements |= element_anchors((prefix + dotted(f.path) for f in mapped), volume_rule(row))
    assert result, f"{row.id}: no workload object to evaluate"
    return Outcome(result, frozenset(elements))


# ---- elements (Kubescape paths) ---------------------------------------------------------------------

_ANCHOR = re.compile(r"^(.*?(?:initContainers|ephemeralContainers|containers|volumes)\[\d+\])")


def dotted(path: Iterable[Any]) -> str:
    """("spec", "containers", 1, "image") -> "spec.containers[1].image" (Kubescape's notation)."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def volume_rule(row: Row) -> bool:
    """The peer flags volumes (hostPath rules), else containers."""
    return bool({"STK-POD-005", "STK-POD-201"} & set(row.peer.rules))


def element_anchors(paths: Iterable[str], volumes: bool) -> set[str]:
    """The container or volume each path points into ("spec.containers[1]"), of the kind compared."""
    out = set()
    for path in paths:
        m = _ANCHOR.match(path)
        if m and m.group(1).endswith("]") and ("volumes[" in m.group(1)) == volumes:
            out.add(m.group(1))
    return out


def peer_elements(row: Row) -> set[str]:
    paths: list[str] = []
    for alert in (row.data.get("expect_detail") or {}).get("alerts") or []:
        paths += alert.get("failedPaths") or []
        paths += alert.get("reviewPaths") or []
        paths += [f.get("path") or "" for f in alert.get("fixPaths") or []]
    return element_anchors(paths, volume_rule(row))


def describe(o: Outcome) -> str:
    return "; ".join(
        f"{kind}/{name}: peer {'flags' if peer else 'passes'}, "
        f"stockade {'flags' if ours else 'passes'} {list(hits)}"
        for (kind, name), (peer, ours, hits) in o.objects.items()
    )


# ---- tests ----------------------------------------------------------------------------------------------


def test_corpora_have_rows_for_every_mapping() -> None:
    seen = {(r.source, r.peer_rule) for r in ROWS}
    missing = [f"polaris/{k}" for k in POLARIS if ("polaris", k) not in seen]
    missing += [f"kubescape/{k}" for k in KUBESCAPE if ("kubescape", k) not in seen]
    assert not missing, f"mapped peer rules without rows: {missing}"
    assert set(NOT_COMPARED_ROWS) == set(NOT_COMPARED), "NOT_COMPARED names peer rules the corpora lack"


def test_mapped_rules_exist() -> None:
    rules = set(evaluator("{}").rules)
    for peer in (*POLARIS.values(), *KUBESCAPE.values()):
        assert set(peer.rules) <= rules


def test_deliberate_rows_exist() -> None:
    ids = {r.id for r in ROWS}
    assert not [i for i in DELIBERATE_BY_ROW if i not in ids]


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_row(row: Row) -> None:
    o = outcome(row.id)
    diff = DELIBERATE_BY_ROW.get(row.id)
    if diff is None:
        assert o.agree, f"{row.source} {row.peer_rule} says {row.expect}: {describe(o)}"
    else:
        opposite = "allow" if row.expect == "deny" else "deny"
        assert o.stockade == opposite, f"deliberate difference ({diff.reason}) but {describe(o)}"


ELEMENT_ROWS = [
    r for r in ROWS if r.source == "kubescape" and r.id not in DELIBERATE_BY_ROW and peer_elements(r)
]


@pytest.mark.parametrize("row", ELEMENT_ROWS, ids=[r.id for r in ELEMENT_ROWS])
def test_kubescape_elements(row: Row) -> None:
    """The containers / volumes Kubescape flags are the ones stockade flags."""
    ours, peer = set(outcome(row.id).elements), peer_elements(row)
    if row.id in ELEMENT_DELIBERATE_BY_ROW:
        assert ours > peer, f"{ELEMENT_DELIBERATE_BY_ROW[row.id].reason}: stockade {ours}, Kubescape {peer}"
    else:
        assert ours == peer


def test_element_deliberate_rows_exist() -> None:
    ids = {r.id for r in ELEMENT_ROWS}
    assert not [i for i in ELEMENT_DELIBERATE_BY_ROW if i not in ids]


def iter_outcomes() -> Iterator[tuple[Row, Outcome]]:
    for row in ROWS:
        yield row, outcome(row.id)


def test_summary(capsys: pytest.CaptureFixture[str]) -> None:
    compared: Counter[str] = Counter()
    matched: Counter[str] = Counter()
    deliberate: Counter[str] = Counter()
    objects: Counter[str] = Counter()
    unexplained = []
    for row, o in iter_outcomes():
        compared[row.source] += 1
        objects[row.source] += len(o.objects)
        diff = DELIBERATE_BY_ROW.get(row.id)
        if o.agree:
            matched[row.source] += 1
            if diff is not None:
                unexplained.append(f"{row.id}: listed as deliberate but stockade agrees")
        elif diff is not None:
            deliberate[row.source] += 1
        else:
            unexplained.append(f"{row.id}: {describe(o)}")
    lines = ["Polaris / Kubescape conformance of the image, resource, hostPath and ServiceAccount rules:"]
    for source in ("polaris", "kubescape"):
        lines.append(
            f"  {source}: {compared[source]} rows ({objects[source]} workload objects) compared, "
            f"{matched[source]} match, {deliberate[source]} decided differently on purpose; "
            f"{sum(n for k, n in NOT_COMPARED_ROWS.items() if k.startswith(source))} rows of "
            f"{sum(1 for k in NOT_COMPARED if k.startswith(source))} peer rules not compared by design"
        )
    for d in DELIBERATE:
        lines.append(f"    {len(d.rows):2d} x {d.reason[:100]}...")
    same = sum(1 for r in ELEMENT_ROWS if r.id not in ELEMENT_DELIBERATE_BY_ROW)
    lines.append(
        f"  kubescape elements (containers / volumes flagged): {len(ELEMENT_ROWS)} rows compared, {same} "
        f"identical, {len(ELEMENT_DELIBERATE_BY_ROW)} where stockade flags more on purpose"
    )
    for d in ELEMENT_DELIBERATE:
        lines.append(f"    {len(d.rows):2d} x {d.reason[:100]}...")
    with capsys.disabled():  # shown in every run, -q included
        print("\n" + "\n".join(lines))
    assert not unexplained, "\n".join(unexplained)
    total = sum(compared.values())
    assert total == len(ROWS) and sum(matched.values()) + sum(deliberate.values()) == total
