"""Argo Workflows' objects judged as the pods the workflow controller builds from them
(stockade.policies.kinds.argo; argoproj/argo-workflows workflow/controller/workflowpod.go).

A Workflow with a privileged sidecar and a host-root hostPath passed a scan with "No findings":
its templates are not pod specs. Each template that runs containers is now one pod, built as the
controller builds it (the template's value, else the workflow's; templateDefaults first; a literal
podSpecPatch merged), and findings point at the field of the object that writes the pod's field. The
objects are in tests/policies/data/upstream_shapes/argo_workflows.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.kinds import argo
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS
from stockade.policies.model import Finding, Resource
from stockade.scanner.scan import ScanOptions, scan

DATA = Path(__file__).parent / "data" / "upstream_shapes" / "argo_workflows.yaml"


def _objects() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(DATA.read_text()) if d]


def _findings() -> list[Finding]:
    evaluator = Evaluator.default(parse_config("{}"))
    result = scan([Resource(o) for o in _objects()], evaluator, ScanOptions(evaluator.config), version="t")
    assert result.errors == []
    return result.findings


def _where(findings: list[Finding], rule: str, name: str) -> list[tuple[Any, ...]]:
    return sorted(f.path for f in findings if f.rule.id == rule and f.resource.name == name)


def test_each_template_that_runs_containers_is_a_pod() -> None:
    dind, defaults, cron, template, *_ = _objects()
    assert [p["template"] for p in DEFAULT_WORKLOADS.pods(dind)] == ["templates[dind-sidecar-example]"]
    assert [p["template"] for p in DEFAULT_WORKLOADS.pods(defaults)] == [
        "templates[main]",
        "templates[set]",
        "templates[patched-at-run-time]",
    ]
    assert [p["path"] for p in DEFAULT_WORKLOADS.pods(cron)] == [["spec", "workflowSpec", "templates", 0]]
    # a WorkflowTemplate's pods run when a Workflow uses it: judged, and no pod runs as it
    info = DEFAULT_WORKLOADS.info(template)
    assert info is not None and not info.runs_pods and DEFAULT_WORKLOADS.pods(template)


def test_the_pod_is_built_as_the_workflow_controller_builds_it() -> None:
    dind, defaults, *_ = _objects()
    (pod,) = DEFAULT_WORKLOADS.pods(dind)
    spec = pod["spec"]
    assert [c["name"] for c in spec["containers"]] == ["main", "dind"]
    # the sidecar mirrors the main container's mounts; only the mounted workflow volume is the pod's
    assert spec["containers"][1]["volumeMounts"] == [{"name": "host-root", "mountPath": "/host"}]
    assert [v["name"] for v in spec["volumes"]] == ["host-root"]
    assert spec["serviceAccountName"] == "workflow-runner" and spec["hostNetwork"] is True
    assert spec["securityContext"] == {"runAsNonRoot": True}
    assert pod["account"] == {"source": "pod", "apiClient": True, "field": ["spec", "serviceAccountName"]}
    assert pod["parameters"] == argo.PARAMETERS
    main, container_set, scripted = DEFAULT_WORKLOADS.pods(defaults)
    # templateDefaults fill the template in (the container's securityContext, the account)
    assert main["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesystem"] is True
    assert main["spec"]["serviceAccountName"] == "from-defaults"
    assert main["spec"]["automountServiceAccountToken"] is False
    assert main["account"]["field"] == ["spec", "templateDefaults", "serviceAccountName"]
    # a containerSet: every container, the set's mounts on each; a literal podSpecPatch applied
    assert [c["name"] for c in container_set["spec"]["containers"]] == ["a", "b"]
    assert all(c["volumeMounts"][-1]["name"] == "workspace" for c in container_set["spec"]["containers"])
    assert container_set["spec"]["hostPID"] is True
    # a patch's parameter is decided at run time: the field is set, its value kept as written
    assert scripted["spec"]["hostIPC"] == "{{inputs.parameters.ipc}}"
    assert scripted["spec"]["containers"][0]["name"] == "main"
    assert "source" not in scripted["spec"]["containers"][0]


def test_findings_point_at_the_fields_that_write_them() -> None:
    findings = _findings()
    assert _where(findings, "STK-POD-003", "sidecar-dind-") == [
        ("spec", "templates", 0, "sidecars", 0, "securityContext", "privileged")
    ]
    assert _where(findings, "STK-POD-002", "sidecar-dind-") == [("spec", "hostNetwork")]
    # the host root the main container mounts is the workflow's volume; the unused one is no pod's
    hostpaths = [p for p in _where(findings, "STK-POD-201", "sidecar-dind-")]
    assert hostpaths and all(p[:3] == ("spec", "volumes", 0) for p in hostpaths)
    assert _where(findings, "STK-POD-003", "defaults-and-sets") == [
        ("spec", "templates", 1, "containerSet", "containers", 1, "securityContext", "privileged")
    ]
    assert _where(findings, "STK-POD-002", "defaults-and-sets") == [("spec", "templates", 1, "podSpecPatch")]
    # the defaults make the main template's pod restricted: no pod security finding on it
    assert not [
        f
        for f in findings
        if f.resource.name == "defaults-and-sets"
        and f.template == "templates[main]"
        and f.rule.id.startswith("STK-POD-")
    ]
    assert _where(findings, "STK-IMG-002", "hello-world") == [
        ("spec", "workflowSpec", "templates", 0, "container", "image")
    ]


def test_an_image_parameter_is_decided_when_the_workflow_runs() -> None:
    (note,) = [
        f for f in _findings() if f.rule.id == "STK-IMG-005" and f.resource.name == "defaults-and-sets"
    ]
    assert note.message == (
        'container "main" image "{{inputs.parameters.image}}": an Argo Workflows parameter, set when '
        "the workflow runs: the image rules did not check it"
    )
    assert note.path == ("spec", "templates", 2, "script", "image")


def test_template_defaults_merge_as_a_strategic_merge() -> None:
    workflow = {
        "templateDefaults": {
            "container": {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
            "script": {"image": "never-for-a-container"},
            "timeout": "1h",
        }
    }
    template = {"name": "t", "container": {"image": "x", "env": [{"name": "B", "value": "3"}]}}
    merged = argo.with_defaults(workflow, template)
    assert merged["container"]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}]
    assert "script" not in merged and merged["timeout"] == "1h"
    assert argo.template_type(merged) == "container"


def test_a_workload_a_resource_template_creates_is_judged_at_its_manifest() -> None:
    """volcano's MPI example submits a Volcano Job from a resource template's manifest (a text): its
    pods run as much as the workflow's own. Judged as pods of the workflow, at the manifest's line,
    its paths under `resource.manifest`; its `{{...}}` parameters are filled in when the workflow
    runs. A `patch` manifest changes another object: not judged as one."""
    volcano = _objects()[4]
    pods = DEFAULT_WORKLOADS.pods(volcano)
    assert [p["template"] for p in pods] == ["templates[submit-volcano-job]: Job tasks[mpimaster]"]
    findings = [f for f in _findings() if f.resource.name == "volcano-mpi-hello"]
    privileged = [f.path for f in findings if f.rule.id == "STK-POD-003"]
    assert privileged == [
        (
            "spec",
            "templates",
            0,
            "resource",
            "manifest",
            "spec",
            "tasks",
            0,
            "template",
            "spec",
            "containers",
            0,
            "securityContext",
            "privileged",
        )
    ]
    (note,) = [f for f in findings if f.rule.id == "STK-IMG-005"]
    assert note.message.startswith(
        'container "mpimaster" image "{{workflow.parameters.image}}": an Argo Workflows'
    )
    assert not [f for f in findings if f.rule.id == "STK-POD-002"]  # the patch's hostNetwork


def test_a_manifest_that_is_not_one_object_makes_no_pod() -> None:
    for manifest in ("", "- a\n- b\n", "key: [unclosed\n", "{{x}}: {{y}}\n"):
        template = {"resource": {"action": "create", "manifest": manifest}}
        made = argo.created_object(template)
        assert made is None or not DEFAULT_WORKLOADS.pods(made)


def test_a_hostile_manifest_is_not_read() -> None:
    """A billion-laughs manifest (aliases of aliases, which a walk would expand), one nested past the
    parser's recursion, and one past MAX_MANIFEST: none is read, and none stops the scan."""
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(20)
    )
    deep = "spec: " + "[" * 5000 + "]" * 5000 + "\n"
    large = "kind: Pod\nspec:\n  x: '" + "y" * (argo.MAX_MANIFEST + 1) + "'\n"
    for manifest in (laughs, deep, large):
        assert argo.created_object({"resource": {"action": "create", "manifest": manifest}}) is None
    assert (
        argo.pod_spec({"podSpecPatch": laughs}, {"container": {"image": "x"}})["containers"][0]["name"]
        == "main"
    )


def test_a_star_in_a_manifest_is_not_an_alias() -> None:
    manifest = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: c\n    image: x:1\n    command: [sh, -c, ls *.txt]\n"
    )
    made = argo.created_object({"resource": {"action": "create", "manifest": manifest}})
    assert made is not None and made["spec"]["containers"][0]["command"][2] == "ls *.txt"


def test_inline_templates_empty_overrides_and_parameterised_patches() -> None:
    """What a review of argo-workflows' examples found (docs/precision.md): a template written inline
    in a step or a DAG task runs a pod too (steps-inline-workflow.yaml, never judged); a template's
    `securityContext: {}` replaces the workflow's (a non-nil pointer in Go), it does not inherit it;
    a podSpecPatch whose value is a parameter still sets its field (pod-spec-yaml-patch.yaml's memory
    limit: "no memory limit" was wrong)."""
    overrides = _objects()[5]
    pods = {p["template"]: p for p in DEFAULT_WORKLOADS.pods(overrides)}
    assert set(pods) == {"templates[main].steps[0][a].inline", "templates[unhardened]"}
    assert pods["templates[unhardened]"]["spec"]["securityContext"] == {}
    assert all(
        p["spec"]["containers"][0]["resources"] == {"limits": {"memory": "{{workflow.parameters.mem-limit}}"}}
        for p in pods.values()
    )
    findings = [f for f in _findings() if f.resource.name == "inline-and-overrides"]
    assert [f.path for f in findings if f.rule.id == "STK-POD-003"] == [
        ("spec", "templates", 0, "steps", 0, 0, "inline", "container", "securityContext", "privileged")
    ]
    assert {f.template for f in findings if f.rule.id == "STK-POD-103"} == {"templates[unhardened]"}
    assert not [f for f in findings if f.rule.id == "STK-RES-001" and "memory limit" in f.message]
