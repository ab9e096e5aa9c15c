"""`stockade policy verify` for ValidatingAdmissionPolicy test suites in the shape Kyverno's CLI reads
(`kyverno test`: a `kind: Test`, `apiVersion: cli.kyverno.io/v1alpha1` file; Kyverno's own VAP tests,
test/cli/test-validating-admission-policy, use it):

    apiVersion: cli.kyverno.io/v1alpha1
    kind: Test
    policies: [policy.yaml]          # VAPs and their bindings
    resources: [deployment1.yaml]    # the objects judged
    paramResources: [cm.yaml]        # params objects (optional)
    results:
    - policy: check-deployment-replicas
      isValidatingAdmissionPolicy: true
      kind: Deployment
      resources: [nginx-deployment-1]
      result: fail                   # pass | fail | skip

Each result is checked per named resource: ``fail`` when the policy has a violation on it, ``pass`` when
it applies and holds, ``skip`` when no binding applies it (match constraints, the binding's resources,
or match conditions say no). As Kyverno's CLI does, a policy with no binding in the files is applied
through a binding of its own (Deny); the API server would apply it nowhere. Namespace labels come from
Namespace objects among the resources, or the Test's `variables` file (`namespaceSelector:` entries
of Kyverno's values format). Result entries about Kyverno policies (not VAPs) are not stockade's and are
reported as failed cases naming why, never skipped silently.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from stockade.policies.frameworks.common import GatekeeperError, read_documents
from stockade.policies.frameworks.vap import Binding, VapEngine, VapError, load_vap
from stockade.policies.frameworks.verify import CaseResult
from stockade.policies.model import Action, namespace_info

API = "cli.kyverno.io/"


def is_kyverno_test(docs: list[dict[str, Any]]) -> bool:
    return any(str(d.get("apiVersion") or "").startswith(API) and d.get("kind") == "Test" for d in docs)


def run_kyverno_test(path: Path) -> Iterator[CaseResult]:
    docs = read_documents(path)
    for test in (
        d for d in docs if str(d.get("apiVersion") or "").startswith(API) and d.get("kind") == "Test"
    ):
        name = str((test.get("metadata") or {}).get("name") or path.name)
        base = path.parent
        try:
            files = [
                base / str(f) for f in [*(test.get("policies") or ()), *(test.get("paramResources") or ())]
            ]
            for f in files:
                if not f.is_file():
                    raise GatekeeperError(f"{f}: no such file")
            vap = load_vap(files)
            resources = [d for f in test.get("resources") or () for d in read_documents(base / str(f))]
            labels = _namespace_labels(base, test, resources)
        except (GatekeeperError, VapError) as exc:
            yield CaseResult(str(path), name, "*", False, str(exc))
            continue
        bound = {b.policy for b in vap.bindings}
        for unbound in vap.policies.values():
            if unbound.name not in bound:  # Kyverno's CLI applies an unbound policy as if bound
                vap.bindings.append(
                    Binding(
                        f"{unbound.name}-cli", unbound.name, {"validationActions": ["Deny"]}, unbound.file
                    )
                )
        engine = VapEngine(vap, vap.rules())
        for result in test.get("results") or ():
            if not isinstance(result, Mapping):
                continue
            policy = str(result.get("policy") or "")
            expected = str(result.get("result") or "")
            for resource_name in result.get("resources") or ():
                case = f"{policy}/{resource_name}"
                if policy not in vap.policies:
                    yield CaseResult(
                        str(path),
                        name,
                        case,
                        False,
                        f"{policy!r} is not a ValidatingAdmissionPolicy of the test",
                    )
                    continue
                objs = [
                    o
                    for o in resources
                    if (o.get("metadata") or {}).get("name") == resource_name
                    and (not result.get("kind") or o.get("kind") == result.get("kind"))
                ]
                if not objs:
                    yield CaseResult(
                        str(path),
                        name,
                        case,
                        False,
                        f"resource {resource_name!r} is not in the test's resources",
                    )
                    continue
                got = _outcome(engine, policy, objs[0], labels)
                ok = got == expected
                yield CaseResult(str(path), name, case, ok, "" if ok else f"expected {expected}, got {got}")


def _outcome(
    engine: VapEngine, policy: str, obj: Mapping[str, Any], labels: Mapping[str, Mapping[str, str]]
) -> str:
    ns = (obj.get("metadata") or {}).get("namespace")
    ns_obj = {"metadata": {"name": ns, "labels": dict(labels.get(ns) or {})}} if ns else None
    inp = {"object": obj, "operation": "CREATE", "namespace": namespace_info(ns_obj, ns)}
    found = engine.decide(inp).get(policy)
    if found is None:
        return "skip"
    actions = {v.rule.action for v in found}
    if Action.DENY in actions:
        return "fail"
    # admitted: with a warning to the client (Warn), or recorded only (Audit), as the API server does
    return "warn" if Action.WARN in actions else "pass"


def _namespace_labels(
    base: Path, test: Mapping[str, Any], resources: list[dict[str, Any]]
) -> dict[str, dict[str, str]]:
    labels = {
        str((o.get("metadata") or {}).get("name")): dict((o.get("metadata") or {}).get("labels") or {})
        for o in resources
        if o.get("kind") == "Namespace"
    }
    values = test.get("variables")
    if isinstance(values, str) and (base / values).is_file():
        for doc in read_documents(base / values):
            for entry in doc.get("namespaceSelector") or ():
                if isinstance(entry, Mapping) and entry.get("name"):
                    labels.setdefault(str(entry["name"]), {}).update(
                        {str(k): str(v) for k, v in (entry.get("labels") or {}).items()}
                    )
    return labels
