"""AI workloads inside custom resources: every pod spec a custom resource holds is a workload.

Two sources of objects:
- the real samples of ``../shared/corpora/ai_workloads.jsonl`` (KubeRay, Kubeflow, JobSet, LWS, Volcano,
  KServe, agent-sandbox, Argo Rollouts; one object per row with ``pod_specs``, the paths of every
  PodSpec in it). Each unmodified sample scans with no input error; then, for every row and every pod
  spec in it, a privileged container is injected there (and, separately, ``hostNetwork: true``), the
  files are scanned with ``stockade scan`` (the whole pipeline: files, YAML lines, workers) and the
  finding must be at a path inside that pod spec, on the injected field's line, naming the pod spec;
- synthetic objects built from the kinds table's own paths, for every built-in custom kind (the
  corpus does not hold them all), with a violation in the *last* item of each list or map of pod
  specs, so that "the third worker group" is where the finding is.

The corpus module skips without ``../shared`` (a user's clone); the synthetic tests always run.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from stockade.policies.config.settings import ConfigError, parse_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.kinds.api import WILDCARD, KindInfo, object_kind
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS, WorkloadKinds
from stockade.policies.model import Finding, Resource
from stockade.scanner.scan import ScanOptions, run_scan, scan
from stockade.scanner.sources.files import FileSource
from tests.corpora import corpus_rows, requires_corpus
from tests.workloads import PRIVILEGED, at, build_workload, clean_pod_spec, with_violations_in_last_pod_spec

CORPUS = "ai_workloads.jsonl"


def _evaluator() -> Evaluator:
    return Evaluator.default(parse_config("pss: {default_level: baseline}"))


# ---- the real samples ---------------------------------------------------------------------------------


def _rows() -> tuple[dict[str, Any], ...]:
    return corpus_rows(CORPUS)


def _injections() -> list[tuple[str, str, dict[str, Any], tuple[Any, ...], str]]:
    """(file name, row id, injected object, pod spec path, what was injected) for every pod spec."""
    out = []
    for n, row in enumerate(_rows()):
        for m, spec_path in enumerate(row["pod_specs"]):
            for what in ("privileged", "hostNetwork"):
                obj = copy.deepcopy(row["objects"][0])
                spec = at(obj, spec_path)
                if what == "privileged":
                    spec.setdefault("containers", []).append(copy.deepcopy(PRIVILEGED))
                else:
                    spec["hostNetwork"] = True
                out.append((f"r{n:03d}-p{m}-{what}.yaml", row["id"], obj, tuple(spec_path), what))
    return out


@requires_corpus(CORPUS)
def test_every_sample_pod_spec_is_one_of_ours() -> None:
    """Every pod spec the corpus lists is one the kinds table finds (the table may find more: a KServe
    predictor holding only a framework container is still a PodSpec carrier by its type)."""
    for row in _rows():
        found = {tuple(p["specPath"]) for p in DEFAULT_WORKLOADS.pods(row["objects"][0])}
        assert {tuple(p) for p in row["pod_specs"]} <= found, row["id"]


@requires_corpus(CORPUS)
def test_unmodified_samples_scan_without_input_errors(tmp_path: Path) -> None:
    for n, row in enumerate(_rows()):
        (tmp_path / f"r{n:03d}.yaml").write_text(yaml.safe_dump_all(row["objects"]))
    evaluator = _evaluator()
    result = run_scan(FileSource([str(tmp_path)]), [], evaluator, ScanOptions(evaluator.config), version="t")
    assert result.errors == []
    assert result.resources == sum(len(r["objects"]) for r in _rows())


@requires_corpus(CORPUS)
def test_injected_violations_are_found_in_every_pod_spec(tmp_path: Path) -> None:
    cases = _injections()
    assert len(cases) >= 2 * len(_rows())
    for name, _, obj, _, _ in cases:
        (tmp_path / name).write_text(yaml.safe_dump(obj, sort_keys=False))
    evaluator = _evaluator()
    options = ScanOptions(evaluator.config, workers=2)
    result = run_scan(FileSource([str(tmp_path)]), [], evaluator, options, version="t")
    assert result.errors == []
    by_file: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_file.setdefault(Path(f.file or "").name, []).append(f)
    missed = []
    for name, row_id, obj, spec_path, what in cases:
        rule, field = (
            ("STK-POD-003", "containers") if what == "privileged" else ("STK-POD-002", "hostNetwork")
        )
        hits = [
            f
            for f in by_file.get(name, ())
            if f.rule.id == rule and f.path[: len(spec_path) + 1] == (*spec_path, field)
        ]
        text = (tmp_path / name).read_text().splitlines()
        if not hits:
            missed.append(f"{row_id} {what} at {spec_path}")
            continue
        line = hits[0].line
        assert line is not None and ("privileged" in text[line - 1] or "hostNetwork" in text[line - 1]), (
            row_id,
            what,
            line,
        )
        pods = DEFAULT_WORKLOADS.pods(obj)
        if len(pods) > 1 or any(WILDCARD in p.path for p in DEFAULT_WORKLOADS.info(obj).pods):  # type: ignore[union-attr]
            assert hits[0].template, (row_id, "the finding names which pod spec")
    assert not missed, f"{len(missed)}/{len(cases)} injections missed: {missed[:10]}"
    print(f"\nai_workloads corpus: {len(cases)} injections into {len(_rows())} samples, all found")


# ---- every built-in custom kind, from the kinds table ------------------------------------------------


CUSTOM_KINDS = DEFAULT_WORKLOADS.custom


def test_every_custom_kind_has_pod_specs_and_a_resource() -> None:
    assert len(CUSTOM_KINDS) >= 30
    names = {object_kind(i) for i in CUSTOM_KINDS}
    for kind in [
        "RayCluster",
        "RayJob",
        "RayService",
        "PyTorchJob",
        "TFJob",
        "MPIJob",
        "XGBoostJob",
        "PaddleJob",
        "JAXJob",
        "TrainingRuntime",
        "ClusterTrainingRuntime",
        "JobSet",
        "LeaderWorkerSet",
        "Job",
        "InferenceService",
        "ServingRuntime",
        "ClusterServingRuntime",
        "Notebook",
        "Sandbox",
        "SandboxTemplate",
        "Rollout",
        "Service",
    ]:
        assert kind in names, kind
    for info in CUSTOM_KINDS:
        assert info.custom and info.pods and info.plural and info.group, info


@pytest.mark.parametrize("info", CUSTOM_KINDS, ids=lambda i: i.kind)
def test_a_violation_in_the_last_pod_spec_is_reported_there(info: KindInfo) -> None:
    pods = DEFAULT_WORKLOADS.pods(build_workload(info))
    assert pods, "the built object holds pod specs"
    last = pods[-1]
    obj = with_violations_in_last_pod_spec(build_workload(info))
    evaluator = _evaluator()
    result = scan([Resource(obj)], evaluator, ScanOptions(evaluator.config), version="t")
    assert result.errors == []
    where = tuple(last["specPath"])
    privileged = [f for f in result.findings if f.rule.id == "STK-POD-003"]
    host_network = [f for f in result.findings if f.rule.id == "STK-POD-002"]
    if info.pods[-1].form == "argo":  # written in the template's sidecars and its podSpecPatch
        assert [f.path for f in privileged] == [(*where, "sidecars", 0, "securityContext", "privileged")]
        assert [f.path for f in host_network] == [(*where, "podSpecPatch")]
    else:
        assert [f.path for f in privileged] == [(*where, "containers", 1, "securityContext", "privileged")]
        assert [f.path for f in host_network] == [(*where, "hostNetwork")]
    # an object another creates names its pods after the object's kind (a Katib trial's "Job")
    named = len(pods) > 1 or any(WILDCARD in p.path or p.form == "object" for p in info.pods)
    assert privileged[0].template == (last["template"] if named else None)
    # the other pod specs are clean: no baseline finding outside the last one
    for f in result.findings:
        if f.rule.id.startswith("STK-POD-0"):
            assert f.path[: len(where)] == where, (f.rule.id, f.path)


def test_pod_spec_names_follow_the_items() -> None:
    ray = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "llm", "namespace": "ml"},
        "spec": {
            "headGroupSpec": {"template": {"spec": clean_pod_spec()}},
            "workerGroupSpecs": [
                {"groupName": "cpu", "template": {"spec": clean_pod_spec()}},
                {"groupName": "gpu-workers", "template": {"spec": clean_pod_spec()}},
            ],
        },
    }
    names = [p["template"] for p in DEFAULT_WORKLOADS.pods(ray)]
    assert names == ["headGroupSpec", "workerGroupSpecs[cpu]", "workerGroupSpecs[gpu-workers]"]
    pytorch = build_workload(next(i for i in CUSTOM_KINDS if i.kind == "PyTorchJob"), 2)
    assert [p["template"] for p in DEFAULT_WORKLOADS.pods(pytorch)] == [
        "pytorchReplicaSpecs[Master]",
        "pytorchReplicaSpecs[Worker]",
    ]


def test_volcano_job_is_not_batch_job_and_knative_service_is_not_a_service() -> None:
    volcano = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "spec": {"tasks": []}}
    assert DEFAULT_WORKLOADS.engine_kind(volcano) == "@workloads"
    assert DEFAULT_WORKLOADS.pods(volcano) == []  # no task, no pod (not batch/v1's spec.template)
    assert DEFAULT_WORKLOADS.engine_kind({"apiVersion": "batch/v1", "kind": "Job"}) == "Job"
    knative = {"apiVersion": "serving.knative.dev/v1", "kind": "Service", "spec": {"template": {"spec": {}}}}
    assert DEFAULT_WORKLOADS.pods(knative)[0]["specPath"] == ["spec", "template", "spec"]
    assert DEFAULT_WORKLOADS.info({"apiVersion": "v1", "kind": "Service"}) is None


def test_kserve_components_carry_their_labels() -> None:
    isvc = {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "m", "namespace": "ml", "labels": {"team": "a"}},
        "spec": {"predictor": {"labels": {"tier": "gpu"}, "containers": [{"name": "c", "image": "i"}]}},
    }
    (pod,) = DEFAULT_WORKLOADS.pods(isvc)
    assert pod["metadata"]["labels"] == {"team": "a", "tier": "gpu"}
    assert pod["specPath"] == ["spec", "predictor"] and pod["metadataPath"] == ["spec", "predictor"]


# ---- kinds a configuration declares -------------------------------------------------------------------

DECLARED = """
workloads:
  - apiVersion: example.com/v1
    kind: Trainer
    pod_templates: ["spec.stages[*].template"]
    pod_specs: ["spec.runner"]
"""


def test_a_declared_kind_gets_every_pod_rule() -> None:
    config = parse_config(DECLARED)
    evaluator = Evaluator.default(config)
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Trainer",
        "metadata": {"name": "t", "namespace": "ml"},
        "spec": {
            "stages": [
                {"name": "prep", "template": {"spec": clean_pod_spec()}},
                {"name": "train", "template": {"spec": {**clean_pod_spec(), "hostPID": True}}},
            ],
            "runner": {"containers": [dict(PRIVILEGED)]},
        },
    }
    result = scan([Resource(obj)], evaluator, ScanOptions(config), version="t")
    got = {(f.rule.id, f.template) for f in result.findings if f.rule.id in ("STK-POD-002", "STK-POD-003")}
    assert got == {("STK-POD-002", "stages[train]"), ("STK-POD-003", "runner")}
    # without the declaration the kind is unknown and nothing is judged
    plain = _evaluator()
    assert not scan([Resource(obj)], plain, ScanOptions(plain.config), version="t").findings


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("workloads: [{apiVersion: example.com/v1, kind: T}]", "declares no pod_templates or pod_specs"),
        ("workloads: [{apiVersion: example.com/v1, kind: T, pod_specs: ['spec..x']}]", "is not a field path"),
        ("workloads: [{apiVersion: v1, kind: T, pod_specs: [spec]}]", "workloads.0.apiVersion"),
        ("workloads: [{apiVersion: example.com/v1, kind: T, pod_spec: [spec]}]", "unknown key"),
    ],
)
def test_declarations_are_validated(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("[", r"\[")) as exc:
        parse_config(text, "stockade.yaml")
    assert str(exc.value).startswith("stockade.yaml:1:")


def test_declared_kinds_reach_the_webhook_registration_and_the_audit() -> None:
    from stockade.scanner.audit import kinds_to_list
    from stockade.webhooks.manifests import covered_kinds, webhook_rules

    config = parse_config(DECLARED)
    evaluator = Evaluator.default(config)
    rules = webhook_rules(covered_kinds(evaluator.engine.library), config.workload_kinds())
    sent = {(g, r) for rule in rules for g in rule["apiGroups"] for r in rule["resources"]}
    assert ("example.com", "trainers") in sent and ("ray.io", "rayclusters") in sent
    listed = {(i.group, i.plural) for i in kinds_to_list(evaluator)}
    assert ("example.com", "trainers") in listed and ("jobset.x-k8s.io", "jobsets") in listed


def test_a_declaration_can_replace_a_built_in_kind() -> None:
    kinds = WorkloadKinds(
        parse_config(
            DECLARED.replace("example.com", "ray.io").replace("Trainer", "RayCluster")
        ).workload_kinds()
    )
    obj: Mapping[str, Any] = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "spec": {"runner": {}}}
    assert [p["specPath"] for p in kinds.pods(obj)] == [["spec", "runner"]]


def test_summary_line(capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print(f"\nworkload kinds: {len(DEFAULT_WORKLOADS.infos)} ({len(CUSTOM_KINDS)} custom resources)")
    assert json.dumps([i.kind for i in CUSTOM_KINDS])


# ---- sandboxes, GPUs and egress see the pods of custom resources -------------------------------------

NS_ML = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}


def _sandbox(kind: str = "Sandbox", runtime: str | None = None) -> dict[str, Any]:
    spec = clean_pod_spec()
    if runtime:
        spec["runtimeClassName"] = runtime
    group = "agents.x-k8s.io" if kind == "Sandbox" else "extensions.agents.x-k8s.io"
    return {
        "apiVersion": f"{group}/v1beta1",
        "kind": kind,
        "metadata": {"name": "agent", "namespace": "ml"},
        "spec": {"podTemplate": {"metadata": {"labels": {"app": "agent"}}, "spec": spec}},
    }


def _rule_ids(
    objects: list[dict[str, Any]], config: str = "pss: {default_level: baseline}"
) -> set[tuple[str, str]]:
    evaluator = Evaluator.default(parse_config(config))
    result = scan([Resource(o) for o in objects], evaluator, ScanOptions(evaluator.config), version="t")
    assert result.errors == []
    return {(f.resource.kind, f.rule.id) for f in result.findings}


def test_agent_sandboxes_are_high_risk_without_any_label() -> None:
    found = _rule_ids([NS_ML, _sandbox("Sandbox"), _sandbox("SandboxTemplate")])
    assert ("Sandbox", "STK-RT-001") in found and ("SandboxTemplate", "STK-RT-001") in found
    # the pod a Sandbox runs (owned by it) is high-risk too, in the webhook and the audit
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "agent-0",
            "namespace": "ml",
            "ownerReferences": [
                {
                    "apiVersion": "agents.x-k8s.io/v1beta1",
                    "kind": "Sandbox",
                    "name": "agent",
                    "controller": True,
                }
            ],
        },
        "spec": clean_pod_spec(),
    }
    assert ("Pod", "STK-RT-001") in _rule_ids([NS_ML, pod])
    plain = {**pod, "metadata": {"name": "web", "namespace": "ml"}}
    assert ("Pod", "STK-RT-001") not in _rule_ids([NS_ML, plain])
    # in an approved sandbox class it is not reported
    gvisor = {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "gvisor"},
        "handler": "runsc",
    }
    assert ("Sandbox", "STK-RT-001") not in _rule_ids([NS_ML, gvisor, _sandbox("Sandbox", "gvisor")])


def test_gpu_rules_see_a_gpu_worker_group() -> None:
    ray = build_workload(next(i for i in CUSTOM_KINDS if i.kind == "RayCluster"), 3)
    worker = ray["spec"]["workerGroupSpecs"][2]["template"]["spec"]["containers"][0]
    worker["resources"] = {"limits": {"nvidia.com/gpu": 1}, "requests": {"nvidia.com/gpu": 1}}
    evaluator = _evaluator()
    result = scan([Resource(NS_ML), Resource(ray)], evaluator, ScanOptions(evaluator.config), version="t")
    gpu = {(f.rule.id, f.template) for f in result.findings if f.rule.id.startswith("STK-GPU-")}
    # not in a GPU-labelled namespace, and no GPU toleration: both reported on the third group only
    assert gpu == {("STK-GPU-002", "workerGroupSpecs[item-2]"), ("STK-GPU-003", "workerGroupSpecs[item-2]")}


def test_egress_reach_names_each_pod_spec_and_skips_templates() -> None:
    from stockade.policies.facts.netpol.reach import Reachability

    ray = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "llm", "namespace": "ml"},
        "spec": {
            "headGroupSpec": {
                "template": {"metadata": {"labels": {"role": "head"}}, "spec": clean_pod_spec()}
            },
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "template": {"metadata": {"labels": {"role": "worker"}}, "spec": clean_pod_spec()},
                }
            ],
        },
    }
    deny_workers = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "deny", "namespace": "ml"},
        "spec": {"podSelector": {"matchLabels": {"role": "worker"}}, "policyTypes": ["Egress"]},
    }
    runtime = build_workload(next(i for i in CUSTOM_KINDS if i.kind == "TrainingRuntime"), 1)
    reach = Reachability([NS_ML, ray, deny_workers, runtime])
    assert sorted(w.key for w in reach.workloads) == [
        "ml/llm(headGroupSpec)[RayCluster]",
        "ml/llm(workerGroupSpecs[gpu])[RayCluster]",
    ]
    lines = reach.connlist()
    assert (
        "ml/llm(headGroupSpec)[RayCluster] => ml/llm(workerGroupSpecs[gpu])[RayCluster] : All Connections"
        in lines
    )
    assert not [ln for ln in lines if ln.startswith("ml/llm(workerGroupSpecs[gpu])")]
    assert [w.key for w in reach.find("ml", "llm")] == sorted(w.key for w in reach.workloads)


def test_policy_kinds_and_explain_list_the_custom_kinds() -> None:
    from typer.testing import CliRunner

    from stockade.cli.main import app

    listed = CliRunner().invoke(app, ["policy", "kinds", "--format", "json"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    ray = next(r for r in rows if r["kind"] == "RayCluster")
    assert ray["podSpecs"] == [
        "spec.headGroupSpec.template (template)",
        "spec.workerGroupSpecs[*].template (template)",
    ]
    explained = CliRunner().invoke(app, ["policy", "explain", "STK-POD-003"])
    assert "ray.io: RayCluster, RayJob, RayService" in explained.stdout
    assert "@workloads" not in explained.stdout


GK_TEMPLATE = """
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata: {name: k8smaxworkergroups}
spec:
  crd: {spec: {names: {kind: K8sMaxWorkerGroups}}}
  targets:
    - target: admission.k8s.gatekeeper.sh
      rego: |
        package k8smaxworkergroups
        violation[{"msg": msg}] {
          n := count(input.review.object.spec.workerGroupSpecs)
          n > 1
          msg := sprintf("%v worker groups", [n])
        }
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sMaxWorkerGroups
metadata: {name: one-group}
spec:
  match: {kinds: [{apiGroups: [ray.io], kinds: [RayCluster]}]}
"""


def test_gatekeeper_constraints_judge_the_whole_custom_resource_once(tmp_path: Path) -> None:
    (tmp_path / "gk.yaml").write_text(GK_TEMPLATE)
    evaluator = Evaluator.default(parse_config("pss: {default_level: baseline}"), [tmp_path])
    ray = with_violations_in_last_pod_spec(
        build_workload(next(i for i in CUSTOM_KINDS if i.kind == "RayCluster"), 3)
    )
    result = scan([Resource(ray)], evaluator, ScanOptions(evaluator.config), version="t")
    gk = [f for f in result.findings if f.rule.id.startswith("GK-")]
    assert [(f.message, f.template) for f in gk] == [("3 worker groups", None)]
    assert [f.template for f in result.findings if f.rule.id == "STK-POD-003"] == ["workerGroupSpecs[item-2]"]


def test_a_leader_worker_set_group_of_one_has_no_worker_pods() -> None:
    """kubernetes-sigs/lws' DisaggregatedSet sample: roles of `size: 1` with a leaderTemplate. The lws
    controller makes their workers' StatefulSet with size - 1 = 0 replicas (pod_controller.go), so
    no pod is built from their workerTemplate: 18 findings on pods that never run, the leader's
    own said again. Without a leaderTemplate the workerTemplate is the leader's too, and judged."""
    template = {"spec": clean_pod_spec()}
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "w", "namespace": "ml"},
        "spec": {"leaderWorkerTemplate": {"leaderTemplate": template, "workerTemplate": template}},
    }
    names = [p["template"] for p in DEFAULT_WORKLOADS.pods(lws)]
    assert names == ["leaderWorkerTemplate.leaderTemplate"]
    lws["spec"]["leaderWorkerTemplate"]["size"] = 4
    assert len(DEFAULT_WORKLOADS.pods(lws)) == 2
    del lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    lws["spec"]["leaderWorkerTemplate"]["size"] = 1
    assert [p["template"] for p in DEFAULT_WORKLOADS.pods(lws)] == ["leaderWorkerTemplate.workerTemplate"]
    roles = {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": "DisaggregatedSet",
        "metadata": {"name": "d", "namespace": "ml"},
        "spec": {
            "roles": [
                {
                    "name": "prefill",
                    "spec": {
                        "leaderWorkerTemplate": {
                            "leaderTemplate": template,
                            "workerTemplate": template,
                            "size": 1,
                        }
                    },
                },
                {
                    "name": "decode",
                    "spec": {
                        "leaderWorkerTemplate": {
                            "leaderTemplate": template,
                            "workerTemplate": template,
                            "size": 2,
                        }
                    },
                },
            ]
        },
    }
    assert [p["template"] for p in DEFAULT_WORKLOADS.pods(roles)] == [
        "roles[prefill].leaderWorkerTemplate.leaderTemplate",
        "roles[decode].leaderWorkerTemplate.leaderTemplate",
        "roles[decode].leaderWorkerTemplate.workerTemplate",
    ]


def test_no_kind_of_the_table_hides_another_of_the_same_name() -> None:
    """Katib's Experiment (kubeflow.org) and Argo Rollouts' (argoproj.io) share a kind's name: keyed
    by the bare name, the one added later hid the other, whose objects then went unjudged. A kind
    whose name another group uses is keyed `Kind.group` (as Knative's Service and Calico's
    NetworkPolicy)."""
    from stockade.policies.kinds import api

    assert len(api.KINDS) == len(api._ALL)
    assert {(i.group, api.object_kind(i)) for i in DEFAULT_WORKLOADS.custom} >= {
        ("argoproj.io", "Experiment"),
        ("kubeflow.org", "Experiment"),
    }
