"""The same custom-resource workload gets the same findings at all three gates.

For one object of every built-in custom workload kind (built from the kinds table's paths, with a
privileged container and hostNetwork in its last pod spec, plus the first real sample of each kind in
``../shared/corpora/ai_workloads.jsonl`` when present), the findings of

- the scan (``stockade.scanner.scan.scan``, the CI gate's pipeline),
- the webhook (the AdmissionReview v1 decision path, ``stockade.admission.decide.evaluate``, with the
  inventory a synced cache would hold), and
- the audit (``run_audit`` through the real ``kubernetes`` client against the fake API server of
  ``examples/fleet/apiserver.py`` on loopback, which serves the object's CRD; no pods exist, so the
  audit evaluates the object's own templates)

are identical: rule, path, pod spec name, action and message.
"""

from __future__ import annotations

from typing import Any

import pytest

from stockade.admission.decide import evaluate
from stockade.admission.review import AdmissionReview
from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS
from stockade.policies.model import Finding, Resource
from stockade.scanner.scan import ScanOptions, scan
from tests.corpora import corpus_rows
from tests.fleet import audit_objects, fake
from tests.reviews import admission_review
from tests.workloads import build_workload, with_violations_in_last_pod_spec

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml", "labels": {"team": "ml"}}}
SERVICE_ACCOUNT = {
    "apiVersion": "v1",
    "kind": "ServiceAccount",
    "metadata": {"name": "default", "namespace": "ml"},
}
CONTEXT = [NAMESPACE, SERVICE_ACCOUNT]

Key = tuple[str, tuple[Any, ...], str | None, str, str]


def _objects() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for info in DEFAULT_WORKLOADS.custom:
        out.append((f"built-{info.kind}", with_violations_in_last_pod_spec(build_workload(info))))
    seen: set[str] = set()
    for row in corpus_rows("ai_workloads.jsonl"):
        obj = row["objects"][0]
        kind = f"{obj['apiVersion'].split('/')[0]}/{obj['kind']}"
        if kind in seen or not DEFAULT_WORKLOADS.pods(obj):
            continue
        seen.add(kind)
        sample = with_violations_in_last_pod_spec(obj)
        md = sample.setdefault("metadata", {})
        if "namespace" in md or DEFAULT_WORKLOADS.info(sample).namespaced:  # type: ignore[union-attr]
            md["namespace"] = "ml"
        out.append((f"sample-{row['id']}", sample))
    return out


OBJECTS = _objects()


def _key(f: Finding) -> Key:
    return (f.rule.id, tuple(f.path), f.template, f.action.value, f.message)


def _mine(findings: list[Finding], obj: dict[str, Any]) -> set[Key]:
    name = obj["metadata"]["name"]
    return {_key(f) for f in findings if f.resource.kind == obj["kind"] and f.resource.name == name}


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator.default(parse_config("pss: {default_level: baseline}"))


def _scan(evaluator: Evaluator, obj: dict[str, Any]) -> set[Key]:
    resources = [Resource(o) for o in (*CONTEXT, obj)]
    result = scan(resources, evaluator, ScanOptions(evaluator.config), version="t")
    assert result.errors == []
    return _mine(result.findings, obj)


def _webhook(evaluator: Evaluator, obj: dict[str, Any]) -> set[Key]:
    facts = InventoryFacts(inventory_of(CONTEXT))
    namespace = obj["metadata"].get("namespace", "")
    request = AdmissionReview.model_validate(admission_review(obj, namespace)).request
    return _mine(evaluate(request, evaluator, facts), obj)


def _audit(evaluator: Evaluator, objects: list[dict[str, Any]], *, simulate: bool = True) -> list[Finding]:
    """One audit, through the real `kubernetes` client, of a fake cluster holding `objects`."""
    result = audit_objects([*CONTEXT, *objects], evaluator, simulate=simulate)
    assert result.errors == [], result.errors
    return result.findings


@pytest.fixture(scope="module")
def audited(evaluator: Evaluator) -> list[Finding]:
    """One audit of a cluster holding every object (each kind's CRD served, no pods)."""
    return _audit(evaluator, [o for _, o in OBJECTS])


@pytest.mark.parametrize(("name", "obj"), OBJECTS, ids=[n for n, _ in OBJECTS])
def test_scan_webhook_and_audit_agree(
    name: str, obj: dict[str, Any], evaluator: Evaluator, audited: list[Finding]
) -> None:
    scanned = _scan(evaluator, obj)
    assert {k[0] for k in scanned} >= {"STK-POD-002", "STK-POD-003"}, name
    assert _webhook(evaluator, obj) == scanned
    assert _mine(audited, obj) == scanned


def test_names_are_unique_so_the_shared_audit_separates_objects() -> None:
    keys = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for _, o in OBJECTS]
    # built objects are all named "w": kinds tell them apart, except kinds shared across groups
    groups: dict[tuple[Any, ...], set[str]] = {}
    for (_, o), key in zip(OBJECTS, keys, strict=True):
        groups.setdefault(key, set()).add(o["apiVersion"])
    clashes = {k: v for k, v in groups.items() if len(v) > 1}
    assert not clashes, clashes


def _pod(name: str, owner: dict[str, Any], spec: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "labels": labels,
            "ownerReferences": [fake._owner(owner)],
        },
        "spec": spec,
        "status": {"phase": "Running"},
    }


def test_the_audit_folds_pods_into_the_top_level_custom_resource(evaluator: Evaluator) -> None:
    """A RayCluster's pods (owned by it directly, no template-hash label, so told apart by content)
    and a JobSet's pods (JobSet -> batch/v1 Job -> Pod) are reported on the RayCluster and the JobSet;
    the privileged worker group is found although the head pod, listed first, is clean."""
    ray = build_workload(next(i for i in DEFAULT_WORKLOADS.custom if i.kind == "RayCluster"), 2)
    ray["metadata"]["name"] = "llm"
    fake._with_identity(ray, "gpu-1")
    head = ray["spec"]["headGroupSpec"]["template"]["spec"]
    worker = with_violations_in_last_pod_spec(ray)["spec"]["workerGroupSpecs"][1]["template"]["spec"]
    jobset = build_workload(next(i for i in DEFAULT_WORKLOADS.custom if i.kind == "JobSet"), 1)
    jobset["metadata"]["name"] = "train"
    fake._with_identity(jobset, "gpu-1")
    job = fake._with_identity(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "train-item-0", "namespace": "ml", "ownerReferences": [fake._owner(jobset)]},
            "spec": {"template": jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]},
        },
        "gpu-1",
    )
    uid = {"batch.kubernetes.io/controller-uid": job["metadata"]["uid"]}
    pods = [
        _pod("llm-head", ray, head, {"ray.io/node-type": "head"}),
        *(_pod(f"llm-gpu-{i}", ray, worker, {"ray.io/group": "item-1"}) for i in range(3)),
        _pod("train-0", job, with_violations_in_last_pod_spec(job)["spec"]["template"]["spec"], uid),
    ]
    findings = _audit(evaluator, [ray, jobset, job, *pods], simulate=False)
    privileged = [f for f in findings if f.rule.id == "STK-POD-003"]
    on = {(f.resource.kind, f.resource.name, f.replicas) for f in privileged}
    assert on == {("RayCluster", "llm", 3), ("JobSet", "train", 1)}
    assert not [f for f in findings if f.resource.kind in ("Pod", "Job")]
