"""`stockade rbac who-can|explain|escalations`: over manifests and over a (fake, loopback) cluster."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from stockade.cli.main import app

runner = CliRunner()

RBAC = "rbac.authorization.k8s.io/v1"
OBJECTS: list[dict[str, Any]] = [
    {
        "apiVersion": RBAC,
        "kind": "ClusterRole",
        "metadata": {"name": "secret-reader"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}],
    },
    {
        "apiVersion": RBAC,
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "sync"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "secret-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "sync", "namespace": "ml"}],
    },
    {
        "apiVersion": RBAC,
        "kind": "Role",
        "metadata": {"name": "deployer", "namespace": "ml"},
        "rules": [
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create", "get"]},
            {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]},
        ],
    },
    {
        "apiVersion": RBAC,
        "kind": "RoleBinding",
        "metadata": {"name": "deployers", "namespace": "ml"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deployer"},
        "subjects": [{"kind": "Group", "name": "ml-devs"}],
    },
]


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    path = tmp_path / "rbac.yaml"
    path.write_text(yaml.safe_dump_all(OBJECTS))
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["rbac", *args])
    return result.exit_code, result.stdout, result.stderr


def test_who_can_table_and_json(manifests: Path) -> None:
    code, out, _ = run("who-can", "get", "secrets", str(manifests))
    assert code == 0
    assert "ServiceAccount ml/sync" in out and "ClusterRoleBinding sync" in out
    code, out, _ = run("who-can", "create", "deployments", "-n", "ml", str(manifests), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["request"]["apiGroup"] == "apps"
    assert [s["subject"] for s in data["subjects"]] == [{"kind": "Group", "name": "ml-devs"}]
    assert data["subjects"][0]["binding"] == "RoleBinding ml/deployers"
    # cluster-wide (no -n): a RoleBinding does not count
    _, out, _ = run("who-can", "create", "deployments.apps", str(manifests), "-f", "json")
    assert json.loads(out)["subjects"] == []


def test_who_can_subresources(manifests: Path) -> None:
    for args in (("pods/exec",), ("pods", "--subresource", "exec")):
        _, out, _ = run("who-can", "create", *args, "-n", "ml", str(manifests), "-f", "json")
        assert [s["subject"]["name"] for s in json.loads(out)["subjects"]] == ["ml-devs"]
    _, out, _ = run("who-can", "create", "pods", "-n", "ml", str(manifests), "-f", "json")
    assert json.loads(out)["subjects"] == []


def test_explain(manifests: Path) -> None:
    code, out, _ = run("explain", "system:serviceaccount:ml:sync", str(manifests), "-f", "json")
    assert code == 0
    data = json.loads(out)
    assert data["subject"] == {"kind": "ServiceAccount", "name": "sync", "namespace": "ml"}
    assert [g["binding"] for g in data["grants"] if not g["bootstrap"]] == ["ClusterRoleBinding sync"]
    # what every ServiceAccount holds from the bootstrap policy is listed, marked as such
    assert "ClusterRoleBinding system:basic-user" in [g["binding"] for g in data["grants"] if g["bootstrap"]]
    assert data["grants"][0]["rules"] == [
        {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["secrets"]}
    ]
    assert {r["id"] for r in data["risky"]} == {"STK-RBAC-002"}
    code, out, _ = run("explain", "Group:ml-devs", str(manifests))
    assert code == 0
    assert "escalation to ServiceAccount ml/sync" in out.replace("\n", " ")
    assert "create,get deployments [apps]" in out  # rules shown literally, not as rich markup


def test_escalations(manifests: Path) -> None:
    code, out, _ = run("escalations", str(manifests), "-f", "json")
    assert code == 0
    paths = json.loads(out)
    assert [(p["subject"], p["target"]) for p in paths] == [("Group ml-devs", "ServiceAccount ml/sync")]
    assert paths[0]["bindings"] == ["RoleBinding ml/deployers"]


def test_usage_errors(manifests: Path, tmp_path: Path) -> None:
    code, _, err = run("explain", "alice", str(manifests))
    assert code == 2 and "subject must be" in err
    code, _, err = run("who-can", "get", "pods")
    assert code == 2 and "give manifest PATH" in err
    code, _, err = run("who-can", "get", "pods", str(manifests), "--context", "x")
    assert code == 2 and "not both" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Role\nmetadata: {name: x\n")
    code, _, err = run("who-can", "get", "pods", str(bad))
    assert code == 2 and f"{bad}:" in err
    code, _, err = run("who-can", "get", "pods", str(tmp_path / "missing.yaml"))
    assert code == 2 and "no such file" in err


# ---- --context: a fake API server on 127.0.0.1 ---------------------------------------------------------


KINDS = {
    "roles": ("Role", RBAC),
    "clusterroles": ("ClusterRole", RBAC),
    "rolebindings": ("RoleBinding", RBAC),
    "clusterrolebindings": ("ClusterRoleBinding", RBAC),
}


@pytest.fixture
def cluster(tmp_path: Path, load_module: Any) -> Iterator[tuple[Any, Path]]:
    fake = load_module("stockade_tests_fake_apiserver", "tests/admission/fake_apiserver.py")
    server = fake.FakeApiServer(KINDS).start()
    plural = {o["kind"]: p for p, (o_kind, _) in KINDS.items() for o in OBJECTS if o["kind"] == o_kind}
    for obj in OBJECTS:
        server.put(plural[obj["kind"]], obj)
    # more ClusterRoles than a page, so listing must follow `continue`
    for i in range(501):
        server.put("clusterroles", {"metadata": {"name": f"filler-{i}"}, "rules": []})
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "fake", "cluster": {"server": server.url}}],
                "users": [{"name": "u", "user": {"token": "not-a-secret"}}],
                "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "u"}}],
                "current-context": "fake",
            }
        )
    )
    try:
        yield server, kubeconfig
    finally:
        server.stop()


def test_context_reads_the_cluster_page_by_page(cluster: tuple[Any, Path]) -> None:
    server, kubeconfig = cluster
    code, out, err = run(
        "who-can", "get", "secrets", "--context", "fake", "--kubeconfig", str(kubeconfig), "-f", "json"
    )
    assert code == 0, err
    assert [s["subject"]["name"] for s in json.loads(out)["subjects"]] == ["sync"]
    lists = server.seen("clusterroles", watch=False)
    assert len(lists) == 2 and all(s.query.get("limit") == "500" for s in lists)
    assert "continue" in lists[1].query
    code, out, _ = run("escalations", "--context", "fake", "--kubeconfig", str(kubeconfig), "-f", "json")
    assert [p["target"] for p in json.loads(out)] == ["ServiceAccount ml/sync"]


def test_context_errors_are_one_line(cluster: tuple[Any, Path]) -> None:
    server, kubeconfig = cluster
    server.fail_next("roles", 403)
    code, _, err = run("who-can", "get", "pods", "--context", "fake", "--kubeconfig", str(kubeconfig))
    assert code == 2
    assert err.strip().startswith("stockade: error: listing roles: HTTP 403")
    assert "not-a-secret" not in err
    code, _, err = run("who-can", "get", "pods", "--context", "nope", "--kubeconfig", str(kubeconfig))
    assert code == 2 and "kubeconfig" in err


def test_who_can_takes_kubectl_singular_and_kind_spellings(manifests: Path) -> None:
    """Issue 19: `who-can get pod` (singular) answered nothing. kubectl accepts `pod`, `Pod` and
    `pods`; so does stockade, as the plural RBAC rules use."""
    _, plural, _ = run("who-can", "get", "secrets", str(manifests), "-f", "json")
    for spelling in ("secret", "Secret"):
        _, out, _ = run("who-can", "get", spelling, str(manifests), "-f", "json")
        data = json.loads(out)
        assert data["request"]["resource"] == "secrets"
        assert data["subjects"] == json.loads(plural)["subjects"] != []
    _, out, _ = run("who-can", "create", "deployment", "-n", "ml", str(manifests), "-f", "json")
    assert [s["subject"] for s in json.loads(out)["subjects"]] == [{"kind": "Group", "name": "ml-devs"}]
    _, out, _ = run("who-can", "create", "pod/exec", "-n", "ml", str(manifests), "-f", "json")
    assert [s["subject"]["name"] for s in json.loads(out)["subjects"]] == ["ml-devs"]


def test_who_can_create_ignores_a_name_and_says_so(tmp_path: Path) -> None:
    """Issue 19: `who-can create secrets --name s1` named a subject whose rule lists resourceNames,
    but a create carries no name, so such a rule never grants it (kube-apiserver's authorizer)."""
    objs = [
        {
            "apiVersion": RBAC,
            "kind": "ClusterRole",
            "metadata": {"name": "named"},
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["secrets"],
                    "verbs": ["create", "get"],
                    "resourceNames": ["s1"],
                }
            ],
        },
        {
            "apiVersion": RBAC,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "named-binding"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "named"},
            "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
        },
    ]
    path = tmp_path / "named.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    code, out, err = run("who-can", "create", "secrets", "--name", "s1", str(path), "-f", "json")
    assert code == 0 and json.loads(out)["subjects"] == []
    assert "a create carries no name" in err
    _, out, _ = run("who-can", "get", "secrets", "--name", "s1", str(path), "-f", "json")
    assert [s["subject"]["name"] for s in json.loads(out)["subjects"]] == ["alice"]


def test_who_can_refuses_a_resource_of_unknown_group(manifests: Path) -> None:
    """Issue 19: an unknown resource was assumed to be core-group, answering "nobody" about a
    resource that does not exist. It must name its group; core, built-in and known custom kinds
    resolve."""
    code, _, err = run("who-can", "get", "widgets", str(manifests))
    assert code == 2 and "widgets.GROUP" in err and "Traceback" not in err
    assert run("who-can", "get", "widgets.example.com", str(manifests))[0] == 0
    assert run("who-can", "get", "widgets", "--api-group", "example.com", str(manifests))[0] == 0
    for known in ("configmaps", "rayclusters", "ingresses", "*"):
        assert run("who-can", "get", known, str(manifests))[0] == 0, known


def test_context_without_pods_says_running_paths_are_not_followed(cluster: tuple[Any, Path]) -> None:
    """The fake server serves no pods (404): the command works and says what it could not follow."""
    _, kubeconfig = cluster
    code, _, err = run("escalations", "--context", "fake", "--kubeconfig", str(kubeconfig), "-f", "json")
    assert code == 0
    assert "warning: listing pods" in err and "not followed" in err and "not-a-secret" not in err


def test_scan_namespace_places_namespaceless_objects_as_kubectl_apply_n(tmp_path: Path) -> None:
    """Issue 22: Argo CD ships its controller without a namespace. The scan treated it as `default`
    silently, so its ServiceAccount's cluster-admin binding (in argocd) was not attributed
    (STK-RBAC-030 missed). Now a note says so, --namespace places them as kubectl apply -n, and
    without it the binding's namespace, which no scanned object occupies, is assumed (issue 37)."""
    docs = [
        {
            "apiVersion": RBAC,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "ctrl-admin"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            },
            "subjects": [
                {"kind": "ServiceAccount", "name": "argocd-application-controller", "namespace": "argocd"}
            ],
        },
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "argocd-application-controller"},
            "spec": {
                "template": {
                    "spec": {
                        "serviceAccountName": "argocd-application-controller",
                        "containers": [{"name": "c", "image": "x"}],
                    }
                }
            },
        },
    ]
    path = tmp_path / "argocd.yaml"
    path.write_text(yaml.safe_dump_all(docs))

    def scan(*extra: str) -> tuple[set[tuple[str, Any]], str]:
        result = runner.invoke(app, ["scan", str(path), "-f", "json", *extra])
        found = {
            (f["rule"]["id"], f["resource"].get("namespace")) for f in json.loads(result.stdout)["findings"]
        }
        return {f for f in found if f[0].startswith("STK-RBAC-03")}, result.stderr

    found, err = scan()
    assert found == {("STK-RBAC-030", None)}  # the controller's account assumed to be argocd's
    assert "1 namespaced object names no namespace" in err and "argocd.yaml:" in err and "--namespace" in err
    found, err = scan("--namespace", "argocd")
    assert ("STK-RBAC-030", "argocd") in found and "names no namespace" not in err


def test_a_namespaceless_object_of_a_json_file_is_named_without_a_line(tmp_path: Path) -> None:
    """JSON files carry no line numbers: the note names the file alone, never `file:None`."""
    path = tmp_path / "pod.json"
    path.write_text(
        json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}})
    )
    result = CliRunner().invoke(app, ["scan", str(path), "-f", "json"])
    assert f"(first: {path} Pod/p)" in result.stderr and ":None" not in result.stderr


def test_a_role_binding_without_a_namespace_binds_where_its_workloads_are_judged(tmp_path: Path) -> None:
    """kubernetes-sigs/lws' tensorrt-llm example: a Role (pods/exec create), a RoleBinding to
    ServiceAccount tensorrt-sa (no namespace on either, nor on the subject) and a workload running as
    tensorrt-sa, all applied with `kubectl apply` into "default". The workload was judged in
    "default" but the RoleBinding in a namespace named "": its pods were "not an API client"
    (STK-SA-001, a wrong fact), their account's pods/exec went unreported (STK-RBAC-030), and the
    binding's escalation read "ServiceAccount /tensorrt-sa" and "(in namespace )"."""
    docs = [
        {
            "apiVersion": RBAC,
            "kind": "Role",
            "metadata": {"name": "tensorrt-sa"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
                {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]},
            ],
        },
        {
            "apiVersion": RBAC,
            "kind": "RoleBinding",
            "metadata": {"name": "tensorrt-sa"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "tensorrt-sa"},
            "subjects": [{"kind": "ServiceAccount", "name": "tensorrt-sa"}],
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "tensorrt"},
            "spec": {
                "template": {
                    "spec": {
                        "serviceAccountName": "tensorrt-sa",
                        "containers": [{"name": "c", "image": "x:1"}],
                    }
                }
            },
        },
    ]
    path = tmp_path / "tensorrt.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = runner.invoke(app, ["scan", str(path), "-f", "json"])
    findings = json.loads(result.stdout)["findings"]
    rules = {(f["rule"]["id"], f["resource"]["kind"]) for f in findings}
    assert ("STK-RBAC-030", "Deployment") in rules and ("STK-SA-001", "Deployment") not in rules, rules
    text = " ".join(f["message"] for f in findings)
    assert "default/tensorrt-sa" in text and " /tensorrt-sa" not in text and "namespace )" not in text
    assert all(f["resource"].get("namespace") is None for f in findings)  # still shown as written
