"""Gatekeeper ConstraintTemplates and constraints through `--policy-dir`, in every gate.

The templates here are written for these tests (Gatekeeper's input shape, Rego v0 as Gatekeeper
users write it, one in Rego v1 with a lib); the match table follows Gatekeeper's
`pkg/mutation/match` semantics case by case.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from stockade.admission.app import WebhookState, create_app
from stockade.cli.main import app
from stockade.policies.config.settings import Config
from stockade.policies.engines.library import PolicyError, load_library
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.frameworks.gatekeeper import matches
from stockade.policies.model import Action, Resource
from tests.reviews import admission_review

REQUIRED_LABELS = """\
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: k8srequiredlabels
spec:
  crd:
    spec:
      names:
        kind: K8sRequiredLabels
  targets:
    - target: admission.k8s.gatekeeper.sh
      rego: |
        package k8srequiredlabels

        violation[{"msg": msg, "details": {"missing": missing}}] {
          provided := {l | input.review.object.metadata.labels[l]}
          required := {l | l := input.parameters.labels[_]}
          missing := required - provided
          count(missing) > 0
          msg := sprintf("missing labels: %v", [missing])
        }
"""

# Rego v1 with a lib, through the newer `code` field.
NO_LATEST = """\
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: nolatest
spec:
  crd:
    spec:
      names:
        kind: NoLatest
  targets:
    - target: admission.k8s.gatekeeper.sh
      code:
        - engine: Rego
          source:
            rego: |
              package nolatest

              import data.lib.images
              import rego.v1

              violation contains {"msg": sprintf("container %s uses %s", [c.name, c.image])} if {
                some c in input.review.object.spec.containers
                images.latest(c.image)
              }
            libs:
              - |
                package lib.images

                import rego.v1

                latest(image) if endswith(image, ":latest")

                latest(image) if not contains(image, ":")
"""


def constraint(
    kind: str,
    name: str,
    match: dict[str, Any],
    parameters: dict[str, Any] | None = None,
    action: str | None = None,
) -> str:
    spec: dict[str, Any] = {"match": match}
    if parameters is not None:
        spec["parameters"] = parameters
    if action is not None:
        spec["enforcementAction"] = action
    doc = {
        "apiVersion": "constraints.gatekeeper.sh/v1beta1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    }
    return yaml.safe_dump(doc)


def policy_dir(tmp_path: Path, *docs: str) -> Path:
    folder = tmp_path / "gk"
    folder.mkdir(exist_ok=True)
    (folder / "policies.yaml").write_text("---\n".join(docs))
    return folder


def pod(name: str, image: str, namespace: str = "default", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": image}]},
    }


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def gk_findings(folder: Path, *objects: dict[str, Any]) -> set[tuple[str, str, str]]:
    evaluator = Evaluator.default(Config(), [folder])
    source = InventoryFacts(inventory_of(objects))
    out = set()
    for obj in objects:
        resource = Resource(obj)
        for f in evaluator.evaluate(
            resource, namespace=source.namespace(resource.namespace), facts=source.facts(obj)
        ):
            if f.rule.id.startswith("GK-"):
                out.add((f.rule.id, f.action.value, f"{resource.kind}/{resource.name}: {f.message}"))
    return out


def test_template_v0_constraint_parameters_and_enforcement_actions(tmp_path: Path) -> None:
    folder = policy_dir(
        tmp_path,
        REQUIRED_LABELS,
        constraint(
            "K8sRequiredLabels",
            "owner",
            {"kinds": [{"apiGroups": [""], "kinds": ["Namespace"]}]},
            {"labels": ["owner"]},
            "warn",
        ),
        constraint(
            "K8sRequiredLabels",
            "team",
            {"kinds": [{"apiGroups": [""], "kinds": ["Namespace"]}]},
            {"labels": ["team"]},
            "dryrun",
        ),
        constraint(
            "K8sRequiredLabels",
            "app",
            {"kinds": [{"apiGroups": [""], "kinds": ["Pod"]}]},
            {"labels": ["app"]},
        ),
    )
    got = gk_findings(folder, namespace("a", owner="x"), pod("p", "r/i:1"))
    assert got == {
        ("GK-K8sRequiredLabels-team", "audit", 'Namespace/a: missing labels: {"team"}'),
        ("GK-K8sRequiredLabels-app", "deny", 'Pod/p: missing labels: {"app"}'),
    }
    lib = load_library([folder])
    assert lib.rules["GK-K8sRequiredLabels-owner"].action is Action.WARN
    assert lib.rules["GK-K8sRequiredLabels-app"].kinds == ("Pod",)


def test_rego_v1_template_with_a_lib(tmp_path: Path) -> None:
    folder = policy_dir(tmp_path, NO_LATEST, constraint("NoLatest", "all", {}))
    assert gk_findings(folder, pod("a", "nginx"), pod("b", "nginx:1.27"), pod("c", "r/x:latest")) == {
        ("GK-NoLatest-all", "deny", "Pod/a: container c uses nginx"),
        ("GK-NoLatest-all", "deny", "Pod/c: container c uses r/x:latest"),
    }


POD = pod("p", "i", "team-a", app="web")
CLUSTER_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "r"},
}


@pytest.mark.parametrize(
    ("match", "obj", "ns_labels", "expected"),
    [
        ({}, POD, {}, True),
        ({"kinds": [{"apiGroups": [""], "kinds": ["Pod"]}]}, POD, {}, True),
        ({"kinds": [{"apiGroups": ["apps"], "kinds": ["Pod"]}]}, POD, {}, False),
        ({"kinds": [{"apiGroups": ["*"], "kinds": ["*"]}]}, CLUSTER_ROLE, {}, True),
        ({"kinds": [{"apiGroups": ["rbac.authorization.k8s.io"], "kinds": []}]}, CLUSTER_ROLE, {}, True),
        ({"scope": "Cluster"}, POD, {}, False),
        ({"scope": "Cluster"}, CLUSTER_ROLE, {}, True),
        ({"scope": "Cluster"}, namespace("n"), {}, True),
        ({"scope": "Namespaced"}, namespace("n"), {}, False),
        ({"namespaces": ["team-*"]}, POD, {}, True),
        ({"namespaces": ["*-a"]}, POD, {}, True),
        ({"namespaces": ["team"]}, POD, {}, False),
        ({"namespaces": ["team-a"]}, CLUSTER_ROLE, {}, True),  # cluster-scoped: not disqualified
        ({"namespaces": ["n"]}, namespace("n"), {}, True),  # a Namespace is in itself
        ({"excludedNamespaces": ["team-*"]}, POD, {}, False),
        ({"excludedNamespaces": ["kube-*"]}, POD, {}, True),
        ({"excludedNamespaces": ["n"]}, namespace("n"), {}, False),
        ({"labelSelector": {"matchLabels": {"app": "web"}}}, POD, {}, True),
        (
            {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}},
            POD,
            {},
            False,
        ),
        ({"namespaceSelector": {"matchLabels": {"env": "prod"}}}, POD, {"env": "prod"}, True),
        ({"namespaceSelector": {"matchLabels": {"env": "prod"}}}, POD, {"env": "dev"}, False),
        ({"namespaceSelector": {"matchLabels": {"env": "prod"}}}, CLUSTER_ROLE, {}, True),
        ({"namespaceSelector": {"matchLabels": {"env": "prod"}}}, namespace("n", env="prod"), {}, True),
        (
            {"namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}},
            POD,
            {},
            True,
        ),
        ({"name": "p*"}, POD, {}, True),
        ({"name": "*x"}, POD, {}, False),
    ],
)
def test_match_semantics(
    match: dict[str, Any], obj: dict[str, Any], ns_labels: dict[str, str], expected: bool
) -> None:
    assert matches(match, obj, ns_labels) is expected


def test_bad_templates_and_constraints_are_one_line_errors(tmp_path: Path) -> None:
    folder = policy_dir(tmp_path, constraint("Unknown", "x", {}))
    with pytest.raises(PolicyError, match="Unknown/x has no ConstraintTemplate"):
        load_library([folder])
    folder = policy_dir(
        tmp_path,
        REQUIRED_LABELS.replace("count(missing) > 0", "count(missing) >"),
        constraint("K8sRequiredLabels", "x", {}),
    )
    with pytest.raises(PolicyError, match="k8srequiredlabels"):
        Evaluator.default(Config(), [folder])
    folder = policy_dir(tmp_path, REQUIRED_LABELS, constraint("K8sRequiredLabels", "x", {}, action="block"))
    with pytest.raises(PolicyError, match="enforcementAction 'block' is not deny, warn or dryrun"):
        load_library([folder])
    result = CliRunner().invoke(app, ["scan", str(folder), "--policy-dir", str(folder)])
    assert result.exit_code == 2 and "enforcementAction" in result.stderr


def test_scan_and_webhook_give_the_same_gatekeeper_verdict(tmp_path: Path) -> None:
    """The same constraint in two gates: `stockade scan` and the webhook's /validate."""
    from starlette.testclient import TestClient

    folder = policy_dir(
        tmp_path,
        REQUIRED_LABELS,
        constraint(
            "K8sRequiredLabels",
            "app",
            {"kinds": [{"apiGroups": [""], "kinds": ["Pod"]}]},
            {"labels": ["app"]},
        ),
    )
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(yaml.safe_dump(pod("p", "i")))
    scanned = CliRunner().invoke(app, ["scan", str(manifest), "--policy-dir", str(folder), "-f", "json"])
    assert scanned.exit_code == 1 and "GK-K8sRequiredLabels-app" in scanned.stdout
    state = WebhookState(config=Config(), policy_dirs=(folder,))
    review = admission_review(pod("p", "i"), "default")
    with TestClient(create_app(state)) as client:
        resp = client.post("/validate", json=review).json()["response"]
    assert (
        resp["allowed"] is False
        and 'GK-K8sRequiredLabels-app: missing labels: {"app"}' in resp["status"]["message"]
    )


UNIQUE_SELECTOR = """\
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: uniqueselector
spec:
  crd:
    spec:
      names:
        kind: UniqueSelector
  targets:
    - target: admission.k8s.gatekeeper.sh
      rego: |
        package uniqueselector

        violation[{"msg": msg}] {
          svc := input.review.object
          other := data.inventory.namespace[svc.metadata.namespace][_]["Service"][name]
          name != svc.metadata.name
          other.spec.selector == svc.spec.selector
          msg := sprintf("same selector as service %v", [name])
        }
"""


def service(name: str, selector: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "web"},
        "spec": {"selector": selector},
    }


def test_data_inventory_is_the_scanned_set(tmp_path: Path) -> None:
    """A referential template sees the other scanned objects as data.inventory, in Gatekeeper's
    shape, also when the scan would otherwise use worker processes."""
    folder = policy_dir(tmp_path, UNIQUE_SELECTOR, constraint("UniqueSelector", "svc", {}))
    manifests = tmp_path / "m.yaml"
    manifests.write_text(
        yaml.safe_dump_all(
            [service("a", {"app": "x"}), service("b", {"app": "x"}), service("c", {"app": "y"})]
        )
    )
    result = CliRunner().invoke(
        app, ["scan", str(manifests), "--policy-dir", str(folder), "-f", "json", "--workers", "2"]
    )
    import json

    found = {
        (f["resource"]["name"], f["message"])
        for f in json.loads(result.stdout)["findings"]
        if f["rule"]["id"] == "GK-UniqueSelector-svc"
    }
    assert found == {("a", "same selector as service b"), ("b", "same selector as service a")}


def test_policy_verify_runs_gator_suites(tmp_path: Path) -> None:
    """`stockade policy verify` on a gator Suite: yes/no/count assertions, message regexes, a failing
    case (exit 1) and a suite that names a missing file (that test fails, naming the file)."""
    root = Path(__file__).resolve().parents[2] / "examples" / "gatekeeper"
    (tmp_path / "constraint.yaml").write_text(
        constraint(
            "K8sRequiredLabels",
            "owner",
            {"kinds": [{"apiGroups": [""], "kinds": ["Namespace"]}]},
            {"labels": [{"key": "owner", "allowedRegex": "^[a-z]+$"}]},
        )
    )
    (tmp_path / "good.yaml").write_text(yaml.safe_dump(namespace("a", owner="bob")))
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(namespace("b", owner="Bob!")))
    (tmp_path / "none.yaml").write_text(yaml.safe_dump(namespace("c")))
    suite = {
        "apiVersion": "test.gatekeeper.sh/v1alpha1",
        "kind": "Suite",
        "tests": [
            {
                "name": "owner",
                "template": str(root / "requiredlabels.yaml"),
                "constraint": "constraint.yaml",
                "cases": [
                    {"name": "good", "object": "good.yaml", "assertions": [{"violations": "no"}]},
                    {
                        "name": "bad",
                        "object": "bad.yaml",
                        "assertions": [{"violations": 1, "message": "regex"}],
                    },
                    {
                        "name": "none",
                        "object": "none.yaml",
                        "assertions": [{"violations": "yes", "message": "owner"}],
                    },
                    {"name": "wrong", "object": "good.yaml", "assertions": [{"violations": "yes"}]},
                ],
            },
            {"name": "missing", "template": "nope.yaml", "constraint": "constraint.yaml", "cases": []},
        ],
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    result = CliRunner().invoke(app, ["policy", "verify", str(tmp_path / "suite.yaml"), "-v"])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert sum(line.startswith("PASS") for line in lines) == 3
    assert any(
        line.startswith("FAIL") and "owner/wrong: expected violations, got none" in line for line in lines
    )
    assert any(line.startswith("FAIL") and "nope.yaml: no such file" in line for line in lines)
    assert lines[-1] == "3 passed, 2 failed"
    (tmp_path / "not-a-suite.yaml").write_text("kind: ConfigMap\n")
    result = CliRunner().invoke(app, ["policy", "verify", str(tmp_path / "not-a-suite.yaml")])
    assert result.exit_code == 2 and "not a gator Suite" in result.stderr


NAMESPACE_TEAM = """\
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: namespaceteam
spec:
  crd:
    spec:
      names:
        kind: NamespaceTeam
  targets:
    - target: admission.k8s.gatekeeper.sh
      rego: |
        package namespaceteam

        violation[{"msg": msg}] {
          ns := input.review.object.metadata.namespace
          not data.inventory.cluster["v1"]["Namespace"][ns].metadata.labels.team
          msg := sprintf("namespace %v has no team label", [ns])
        }
"""


@pytest.mark.parametrize("isolated", [False, True], ids=["in-process", "engine-process"])
def test_webhook_gives_templates_its_inventory(tmp_path: Path, isolated: bool) -> None:
    """data.inventory in the webhook is the inventory cache (here a fixed inventory), refreshed when
    the cache changes; also in the engine's child process (`webhook serve`)."""
    from starlette.testclient import TestClient

    folder = policy_dir(
        tmp_path,
        NAMESPACE_TEAM,
        constraint("NamespaceTeam", "pods", {"kinds": [{"apiGroups": [""], "kinds": ["Pod"]}]}),
    )
    facts = InventoryFacts(inventory_of([namespace("a", team="x"), namespace("b")]))
    state = WebhookState(config=Config(), policy_dirs=(folder,), facts=facts, isolated=isolated)

    def decide(ns: str) -> dict[str, Any]:
        review = admission_review(pod("p", "i", ns), ns)
        response: dict[str, Any] = client.post("/validate", json=review).json()["response"]
        return response

    with TestClient(create_app(state)) as client:
        assert "GK-NamespaceTeam-pods" not in str(decide("a"))
        assert "GK-NamespaceTeam-pods: namespace b has no team label" in decide("b")["status"]["message"]
        facts.inventory.add(namespace("b", team="y"))  # the cache learns of a change
        assert "GK-NamespaceTeam-pods" not in str(decide("b"))


BREAKS_ON_NUMBERS = """\
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: breaksonnumbers
spec:
  crd:
    spec:
      names:
        kind: BreaksOnNumbers
  targets:
    - target: admission.k8s.gatekeeper.sh
      rego: |
        package breaksonnumbers
        violation[{"msg": msg}] {
          to_number(input.review.object.metadata.annotations.size) > 3
          msg := "too large"
        }
"""


def _breaking(tmp_path: Path) -> Path:
    return policy_dir(
        tmp_path,
        BREAKS_ON_NUMBERS,
        constraint("BreaksOnNumbers", "size", {"kinds": [{"apiGroups": [""], "kinds": ["Pod"]}]}),
    )


def _privileged_pod(size: Any) -> dict[str, Any]:
    obj = pod("p", "registry.example.com/a:1")
    obj["metadata"]["annotations"] = {"size": size}
    obj["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    return obj


def test_a_constraint_error_is_that_constraints_finding_and_every_other_rule_still_decides(
    tmp_path: Path,
) -> None:
    """Issue 18: an evaluation error in one constraint used to drop every finding of the object
    (STK rules included). Now it is one high-severity deny of that constraint, one line, and the
    other rules decide as before."""
    folder = _breaking(tmp_path)
    evaluator = Evaluator.default(Config(), [folder])
    findings = evaluator.evaluate(Resource(_privileged_pod("AZURE_CLIENT_SECRET=abc")))
    by_rule = {f.rule.id: f for f in findings}
    error = by_rule["GK-BreaksOnNumbers-size"]
    assert error.error and error.action.value == "deny" and error.rule.severity.name == "HIGH"
    assert error.message.startswith("the constraint could not be evaluated:") and "\n" not in error.message
    assert "AZURE_CLIENT_SECRET" not in error.message  # the value is named by its type only
    assert "STK-POD-003" in by_rule  # privileged: still found


@pytest.mark.parametrize("mode", ["closed", "open"])
def test_the_webhook_fails_closed_or_open_on_that_constraint_only(tmp_path: Path, mode: str) -> None:
    from starlette.testclient import TestClient

    from stockade.policies.config.settings import parse_config

    folder = _breaking(tmp_path)
    state = WebhookState(config=parse_config(f"admission: {{failure_mode: {mode}}}\n"), policy_dirs=(folder,))
    clean = pod("p", "registry.example.com/a:1")
    clean["metadata"]["annotations"] = {"size": "x"}
    with TestClient(create_app(state)) as client:
        privileged = client.post("/validate", json=admission_review(_privileged_pod("x"), "default")).json()
        only_error = client.post("/validate", json=admission_review(clean, "default")).json()
    resp = privileged["response"]
    assert resp["allowed"] is False and "STK-POD-003" in resp["status"]["message"]  # never bypassed
    resp = only_error["response"]
    if mode == "closed":
        assert resp["allowed"] is False and "GK-BreaksOnNumbers-size" in resp["status"]["message"]
    else:
        assert "GK-BreaksOnNumbers-size skipped (failure_mode open)" in " ".join(resp.get("warnings") or [])
        assert "GK-BreaksOnNumbers-size" not in str(resp.get("status") or "")


CEL_ONLY = """\
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: celonly
spec:
  crd:
    spec:
      names:
        kind: CelOnly
  targets:
    - target: admission.k8s.gatekeeper.sh
      code:
        - engine: K8sNativeValidation
          source:
            validations:
              - expression: "has(object.metadata.labels)"
                message: "labels required"
"""

EXTERNAL = """\
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: externalcheck
spec:
  crd:
    spec:
      names:
        kind: ExternalCheck
  targets:
    - target: admission.k8s.gatekeeper.sh
      rego: |
        package externalcheck
        violation[{"msg": msg}] {
          images := [c.image | c := input.review.object.spec.containers[_]]
          response := external_data({"provider": "ratify", "keys": images})
          count(response.errors) > 0
          msg := "image not verified"
        }
"""


def test_cel_only_templates_run_their_cel_and_external_data_says_why_it_is_not_evaluated(
    tmp_path: Path,
) -> None:
    pods = {"kinds": [{"apiGroups": [""], "kinds": ["Pod"]}]}
    folder = policy_dir(
        tmp_path,
        CEL_ONLY,
        EXTERNAL,
        constraint("CelOnly", "labels", pods),
        constraint("ExternalCheck", "sig", pods),
    )
    manifest = tmp_path / "pod.yaml"
    unlabelled = pod("p", "registry.example.com/a:1")
    unlabelled["metadata"].pop("labels", None)
    labelled = pod("q", "registry.example.com/a:1")
    labelled["metadata"]["labels"] = {"app": "q"}
    manifest.write_text(yaml.safe_dump_all([unlabelled, labelled]))
    scanned = CliRunner().invoke(app, ["scan", str(manifest), "--policy-dir", str(folder), "-f", "json"])
    assert scanned.exit_code == 1, scanned.output  # the external-data constraint cannot decide: deny
    found = json.loads(scanned.stdout)["findings"]
    cel = [
        (f["resource"]["name"], f["action"], f["message"])
        for f in found
        if f["rule"]["id"] == "GK-CelOnly-labels"
    ]
    assert cel == [("p", "deny", "labels required")]  # the CEL ran: only the unlabelled pod fails
    external = next(f for f in found if f["rule"]["id"] == "GK-ExternalCheck-sig")
    assert external["action"] == "deny" and "external data providers are not available" in external["message"]
    from stockade.policies.engines.bundle import bundle_files
    from stockade.policies.engines.library import load_library

    files = bundle_files(load_library([folder]), {})
    assert not any("CelOnly" in p or "ExternalCheck" in p for p in files)


def test_engine_errors_are_one_line_even_with_rust_backtrace_set(tmp_path: Path) -> None:
    """With RUST_BACKTRACE=1, regorus appends a backtrace to every error (831 lines for 10 failures,
    the issue measured): the report and stderr keep one line per error."""
    import os
    import subprocess
    import sys

    broken = BREAKS_ON_NUMBERS.replace('msg := "too large"', 'msg := "too large" +')  # a parse error
    pods = {"kinds": [{"apiGroups": [""], "kinds": ["Pod"]}]}
    folder = policy_dir(tmp_path, broken, constraint("BreaksOnNumbers", "size", pods))
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(yaml.safe_dump(pod("p", "registry.example.com/a:1")))
    env = {**os.environ, "RUST_BACKTRACE": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "stockade.cli.main", "scan", str(manifest), "--policy-dir", str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 2
    assert "backtrace" not in run.stderr.lower() and len(run.stderr.strip().splitlines()) <= 2, run.stderr
    (tmp_path / "ok").mkdir()
    ok = _breaking(tmp_path / "ok")
    obj = _privileged_pod("x")
    manifest.write_text(yaml.safe_dump(obj))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "stockade.cli.main",
            "scan",
            str(manifest),
            "--policy-dir",
            str(ok),
            "-f",
            "json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 1, run.stderr
    messages = [f["message"] for f in json.loads(run.stdout)["findings"] if f["rule"]["id"].startswith("GK-")]
    assert messages and all("\n" not in m and "backtrace" not in m.lower() for m in messages)


def test_a_broken_template_without_constraints_is_still_an_error(tmp_path: Path) -> None:
    broken = BREAKS_ON_NUMBERS.replace('msg := "too large"', 'msg := "too large" +')
    folder = policy_dir(tmp_path, broken)
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(yaml.safe_dump(pod("p", "registry.example.com/a:1")))
    result = CliRunner().invoke(app, ["scan", str(manifest), "--policy-dir", str(folder)])
    assert result.exit_code == 2 and "ConstraintTemplate breaksonnumbers" in result.output


TYPE_ERROR = """\
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: prefixedimages
spec:
  crd:
    spec:
      names:
        kind: PrefixedImages
  targets:
    - target: admission.k8s.gatekeeper.sh
      rego: |
        package prefixedimages
        violation[{"msg": msg}] {
          c := input.review.object.spec.containers[_]
          not startswith(c.image, object.get(input.parameters, "prefix", "registry.example/"))
          msg := sprintf("container %v: image %v is not from the registry", [c.name, c.image])
        }
"""


def test_a_builtin_type_error_is_undefined_in_the_gate_as_in_gatekeeper(tmp_path: Path) -> None:
    """rewrite 7 in the gate: the template is evaluated without the type guards first and, when a
    builtin raises (an image that is a number: startswith(7, ...)), again with them. OPA as
    Gatekeeper runs it makes startswith(7, ...) undefined, so `not` is true: a violation, not an
    error."""
    folder = policy_dir(
        tmp_path,
        TYPE_ERROR,
        constraint("PrefixedImages", "registry", {"kinds": [{"apiGroups": [""], "kinds": ["Pod"]}]}),
    )
    good = pod("good", "registry.example/app:1")
    odd = pod("odd", "x")
    odd["spec"]["containers"][0]["image"] = 7
    found = gk_findings(folder, good, odd)
    assert found == {
        ("GK-PrefixedImages-registry", "deny", "Pod/odd: container c: image 7 is not from the registry")
    }, found
