"""Notes of a scan and an audit (issues 37 and 40): what the rules could not evaluate on this input, and
an unconfigured registry allowlist, said once per run in every format.

Scans run the real CLI (typer's CliRunner) on manifests written to a temporary directory; the audit runs
the real `kubernetes` client against the fake API server of ``examples/fleet/apiserver.py`` on
127.0.0.1 (tests/fleet.py). Image registries are checked against the image rules' own Rego
(``policies/rego/lib/images.rego``) under regorus.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import regorus
import yaml
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.policies.config.settings import parse_config
from stockade.policies.engines.library import load_library
from stockade.policies.evaluate import Evaluator
from stockade.scanner import scan as scan_module
from stockade.scanner.notes import image_registry
from stockade.scanner.reports import FORMATS
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.files import FileSource
from tests.fleet import audit_objects

runner = CliRunner()

EGRESS = "could not evaluate the egress of"
REGISTRY = "is not configured: STK-IMG-001 checks no registry"


def deployment(name: str, namespace: str | None, *images: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]},
            },
        },
    }


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def ingress_only_policy(ns: str) -> dict[str, Any]:
    """A NetworkPolicy of the namespace that isolates nothing for egress: it still makes the scanned
    set the owner of the namespace's policies, so the workloads' egress is decided (not isolated)."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "ingress", "namespace": ns},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
    }


def write(tmp_path: Path, *objects: dict[str, Any], name: str = "manifests") -> Path:
    root = tmp_path / name
    root.mkdir(exist_ok=True)
    (root / "all.yaml").write_text(yaml.safe_dump_all(objects), encoding="utf-8")
    return root


def scan_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["scan", *args, "-f", "json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def notes(*args: str) -> dict[str, dict[str, Any]]:
    """The scan's notes by rule id."""
    _, doc = scan_json(*args)
    by_rule = {n["rule"]: n for n in doc["notes"]}
    assert len(by_rule) == len(doc["notes"])  # one note per subject, never one per object
    return by_rule


# --- egress not evaluated ------------------------------------------------------------------------------


def test_egress_note_names_the_rules_the_namespaces_and_how_many_workloads(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        deployment("api", "shop", "nginx"),
        deployment("web", "shop", "nginx"),
        deployment("job", "batch", "nginx"),
        namespace("decided"),
        deployment("known", "decided", "nginx"),
    )
    note = notes(str(root))["STK-NET-001"]
    assert note["count"] == 3
    message = note["message"]
    assert message.startswith(
        f"STK-NET-001 and STK-NET-006 {EGRESS} 3 workloads (namespaces batch: 1, shop: 2)"
    )
    assert "decided" not in message
    assert "scan each namespace's manifests together" in message and "stockade audit" in message


@pytest.mark.parametrize("owner", [namespace, ingress_only_policy], ids=["Namespace", "NetworkPolicy"])
def test_no_egress_note_when_the_scan_holds_the_namespace_or_a_policy_of_it(
    tmp_path: Path, owner: Any
) -> None:
    root = write(tmp_path, owner("shop"), deployment("web", "shop", "nginx"))
    _, doc = scan_json(str(root))
    assert "STK-NET-001" not in {n["rule"] for n in doc["notes"]}
    assert EGRESS not in json.dumps(doc["notes"])
    # the rule decided instead: the workload is reported as not isolated
    assert any(f["rule"]["id"] == "STK-NET-001" for f in doc["findings"])


def test_egress_note_caps_its_namespace_list(tmp_path: Path) -> None:
    root = write(tmp_path, *(deployment("web", f"ns-{i}", "nginx") for i in range(7)))
    note = notes(str(root))["STK-NET-001"]
    assert note["count"] == 7
    assert "(namespaces ns-0: 1, ns-1: 1, ns-2: 1, ns-3: 1, ns-4: 1 and 2 more)" in note["message"]


def test_egress_note_names_only_the_enabled_rules(tmp_path: Path) -> None:
    root = write(tmp_path, deployment("web", "shop", "nginx"))
    only_metadata = notes(str(root), "--skip-rule", "STK-NET-001")
    assert only_metadata["STK-NET-006"]["message"].startswith(
        f"STK-NET-006 {EGRESS} 1 workload (namespace shop: 1)"
    )
    neither = notes(str(root), "--skip-rule", "STK-NET-001", "--skip-rule", "STK-NET-006")
    assert not {"STK-NET-001", "STK-NET-006"} & set(neither)


def test_namespaceless_workloads_are_noted_in_default(tmp_path: Path) -> None:
    root = write(tmp_path, deployment("web", None, "nginx"))
    assert "(namespace default: 1)" in notes(str(root))["STK-NET-001"]["message"]
    assert "STK-NET-001" not in notes(
        str(root), "--namespace", "shop", str(write(tmp_path, namespace("shop"), name="ns"))
    )


# --- registry allowlist not configured ----------------------------------------------------------------


def test_registry_note_lists_the_registries_in_use(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        namespace("shop"),
        deployment("web", "shop", "nginx:1.25", "ghcr.io/acme/web:1.2"),
        deployment("api", "shop", "index.docker.io/acme/api:3", "{{ .Values.image }}"),
    )
    note = notes(str(root))["STK-IMG-001"]
    assert note == {
        "rule": "STK-IMG-001",
        "message": "images.allowed_registries is not configured: STK-IMG-001 checks no registry; "
        "2 registries are in use here: docker.io, ghcr.io; add them to stockade.yaml "
        "(`stockade init` writes the registries a repository uses)",
        "count": 2,
    }


def test_no_registry_note_when_configured_disabled_or_without_workloads(tmp_path: Path) -> None:
    root = write(tmp_path, namespace("shop"), deployment("web", "shop", "nginx"))
    config = tmp_path / "stockade.yaml"
    config.write_text("images:\n  allowed_registries: [docker.io/]\n", encoding="utf-8")
    assert "STK-IMG-001" not in notes(str(root), "--config", str(config))
    assert "STK-IMG-001" not in notes(str(root), "--skip-rule", "STK-IMG-001")
    only_config_map = write(
        tmp_path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, name="other"
    )
    assert notes(str(only_config_map)) == {}


# --- every format, exit code, workers ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_shows_each_scan_note_exactly_once(tmp_path: Path, fmt: str) -> None:
    root = write(tmp_path, deployment("web", "shop", "nginx"), deployment("api", "shop", "ghcr.io/a/b:1"))
    out = tmp_path / f"report.{fmt}"
    result = runner.invoke(app, ["scan", str(root), "-f", fmt, "-o", str(out)])
    assert result.exit_code == 1, result.output
    text = out.read_text(encoding="utf-8")
    assert text.count(EGRESS) == 1, text
    assert text.count(REGISTRY) == 1, text


def test_notes_never_change_the_exit_code(tmp_path: Path) -> None:
    """Only the two rules the notes are about run: nothing is found, both notes are said, exit 0."""
    root = write(tmp_path, deployment("web", "shop", "nginx"))
    code, doc = scan_json(str(root), "--rule", "STK-NET-001", "--rule", "STK-IMG-001")
    assert code == 0 and doc["findings"] == []
    assert [n["rule"] for n in doc["notes"]] == ["STK-NET-001", "STK-IMG-001"]


def test_notes_are_computed_once_in_the_parent_when_workers_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forked evaluation path (workers share the inventory) gives the notes of a serial scan."""
    root = write(
        tmp_path, *(deployment(f"w{i}", f"ns-{i % 3}", f"reg{i % 2}.example/app:1") for i in range(12))
    )
    evaluator = Evaluator.default()

    def run(workers: int) -> list[tuple[str | None, str, int | None]]:
        result = run_scan(FileSource([str(root)]), [], evaluator, ScanOptions(workers=workers), version="t")
        return [(n.rule, n.message, n.count) for n in result.notes]

    serial = run(1)
    monkeypatch.setattr(scan_module, "PARALLEL_OBJECTS", 2)
    assert scan_module.can_fork()
    assert run(2) == serial
    assert [count for _, _, count in serial] == [12, 12]
    assert "reg0.example, reg1.example" in serial[1][1]


# --- audit -------------------------------------------------------------------------------------------


def test_audit_notes_an_unconfigured_registry_allowlist_once() -> None:
    objects = [namespace("shop"), deployment("web", "shop", "ghcr.io/acme/web:1", "busybox")]
    result = audit_objects(objects, Evaluator.default(), simulate=True)
    (note,) = result.notes  # a cluster's policies are all known: no egress note
    assert note.rule == "STK-IMG-001"
    assert "2 registries are in use here: docker.io, ghcr.io" in note.message
    configured = parse_config("images:\n  allowed_registries: [ghcr.io/]\n")
    assert audit_objects(objects, Evaluator.default(configured), simulate=True).notes == []


# --- registries as the image rules see them ------------------------------------------------------------

HEX64 = "1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a"
REFERENCES = [
    "nginx",
    "nginx:1.25",
    "library/nginx",
    "user/app:1",
    "docker.io/nginx",
    "index.docker.io/user/app",
    "Docker/docker",
    "docker/Docker",
    "ghcr.io/acme/web:1.2@sha256:" + "a" * 64,
    "ghcr.io/acme/web@sha512:" + "b" * 128,
    "ghcr.io/acme/web@sha256:abc",
    "GHCR.IO/acme/web",
    "localhost/x",
    "localhost:5000/x:1",
    "LOCALDOMAIN/debian",
    "[::1]:5000/repo",
    "[2001:db8::1]/repo:tag",
    "192.168.1.1:5000/repo",
    "192.168.1.1",
    "registry.io:5000/Upper",
    "test_com",
    "foo_bar.com:8080",
    "a/b/c/d",
    "$VLLM_IMAGE",
    "{{ .Values.image }}",
    "ko://github.com/kserve/kserve/cmd/manager",
    "FILLED BY THE OPERATOR",
    "nginx:1.25 ",
    HEX64,
    f"docker.io/{HEX64}",
    "example.com/" + "a" * 256,
    "dock..er/docker",
]


def test_image_registry_is_the_image_rules_domain_of_valid_references() -> None:
    engine: Any = regorus.Engine()
    for module in load_library().policy_modules:
        engine.add_policy(module.path, module.text)
    engine.add_data_json(json.dumps({"stockade": {"config": {}}}))
    engine.set_input_json(json.dumps({"cases": REFERENCES}))
    lib = "data.stockade.lib.images"
    query = f"x := {{s: [{lib}.parse(s).domain, {lib}.valid_reference(s)] | some s in input.cases}}"
    rego = engine.eval_query(query)["result"][0]["bindings"]["x"]
    expected = {s: domain if valid else None for s, (domain, valid) in rego.items()}
    assert {s: image_registry(s) for s in REFERENCES} == expected
    assert expected["nginx"] == "docker.io" and expected["$VLLM_IMAGE"] is None  # the table means something
    assert image_registry("") is None and image_registry(None) is None


# --- containers of kinds not modelled ------------------------------------------------------------------

SELDON = {
    "apiVersion": "machinelearning.seldon.io/v1",
    "kind": "SeldonDeployment",
    "metadata": {"name": "iris", "namespace": "ml"},
    "spec": {
        "predictors": [
            {
                "name": "default",
                "componentSpecs": [
                    {
                        "spec": {
                            "containers": [
                                {
                                    "name": "classifier",
                                    "image": "seldonio/sklearn:1.18",
                                    "securityContext": {"privileged": True},
                                }
                            ]
                        }
                    }
                ],
            }
        ]
    },
}
TRAIN_JOB = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "t", "namespace": "ml"},
    "spec": {
        "runtimeRef": {"name": "torch-distributed"},
        "trainer": {"image": "pytorch:2", "command": ["x"]},
    },
}
KYVERNO = {  # containers in an admission policy are patterns, not pods
    "apiVersion": "kyverno.io/v1",
    "kind": "ClusterPolicy",
    "metadata": {"name": "no-latest"},
    "spec": {
        "rules": [{"validate": {"pattern": {"spec": {"containers": [{"image": "!*:latest", "ports": []}]}}}}]
    },
}


def test_containers_of_kinds_not_modelled_are_said_not_judged(tmp_path: Path) -> None:
    """A SeldonDeployment whose container is privileged, and a TrainJob's trainer, passed a scan with
    "No findings" and nothing else said: no rule reads their kinds."""
    root = write(tmp_path, SELDON, TRAIN_JOB, KYVERNO, deployment("web", "ml", "nginx:1.27"))
    (note,) = [
        n for n in scan_json(str(root), "--fail-on", "never")[1]["notes"] if "does not model" in n["message"]
    ]
    assert note["rule"] is None and note["count"] == 2
    assert note["message"].startswith(
        "2 objects of kinds stockade does not model write containers that a controller runs, and the pod "
        "rules did not judge them: SeldonDeployment (machinelearning.seldon.io) at "
        "spec.predictors[*].componentSpecs[*].spec.containers[*]; TrainJob (trainer.kubeflow.org) at "
        "spec.trainer."
    )
    # declared in the configuration, the kind is judged, and no longer noted
    config = tmp_path / "stockade.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "workloads": [
                    {
                        "apiVersion": "machinelearning.seldon.io/v1",
                        "kind": "SeldonDeployment",
                        "pod_specs": ["spec.predictors[*].componentSpecs[*].spec"],
                    }
                ]
            }
        )
    )
    _, doc = scan_json(str(root), "--config", str(config), "--fail-on", "never")
    assert [f["rule"]["id"] for f in doc["findings"] if f["resource"]["kind"] == "SeldonDeployment"]
    (note,) = [n for n in doc["notes"] if "does not model" in n["message"]]
    assert note["count"] == 1 and "SeldonDeployment" not in note["message"]
    assert note["message"].startswith("1 object of kinds stockade does not model writes containers")
