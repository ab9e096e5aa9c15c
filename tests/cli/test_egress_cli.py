"""`stockade egress reach`: formats, the --workload filter, and bad input (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from stockade.cli.main import app

runner = CliRunner()

MANIFESTS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  template:
    metadata: {labels: {app: trainer}}
    spec: {containers: [{name: c, image: x}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: store, namespace: data}
spec:
  template:
    metadata: {labels: {app: store}}
    spec: {containers: [{name: c, image: x, ports: [{name: api, containerPort: 9000}]}]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: trainer-egress, namespace: ml}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
    - to: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: data}}}]
      ports: [{port: api}]
    - to: [{ipBlock: {cidr: 10.240.8.0/24}}]
      ports: [{port: 443}]
"""


def reach(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFESTS)
    result = runner.invoke(app, ["egress", "reach", str(path), *args])
    return result.exit_code, result.stdout, result.stderr


def test_connlist(tmp_path: Path) -> None:
    code, out, _ = reach(tmp_path, "--format", "connlist")
    assert code == 0
    assert out.splitlines() == [
        "0.0.0.0-255.255.255.255[External] => data/store[Deployment] : All Connections",
        "0.0.0.0-255.255.255.255[External] => ml/trainer[Deployment] : All Connections",
        # destinations outside the cluster are split at every CIDR an egress rule names
        "data/store[Deployment] => 0.0.0.0-10.240.7.255[External] : All Connections",
        "data/store[Deployment] => 10.240.8.0-10.240.8.255[External] : All Connections",
        "data/store[Deployment] => 10.240.9.0-255.255.255.255[External] : All Connections",
        "data/store[Deployment] => ml/trainer[Deployment] : All Connections",
        "ml/trainer[Deployment] => 10.240.8.0-10.240.8.255[External] : TCP 443",
        "ml/trainer[Deployment] => data/store[Deployment] : TCP 9000",
    ]


def test_json_for_one_workload(tmp_path: Path) -> None:
    code, out, _ = reach(tmp_path, "--format", "json", "--workload", "ml/trainer")
    assert code == 0
    doc = json.loads(out)
    (wl,) = doc["workloads"]
    assert wl["egressIsolated"] is True and wl["egressPolicies"] == ["ml/trainer-egress"]
    assert wl["namespaces"] == ["data"]
    assert {d["peer"]: d["connections"] for d in wl["destinations"]} == {
        "data/store[Deployment]": {"TCP": ["9000"]},
        "10.240.8.0-10.240.8.255[External]": {"TCP": ["443"]},
    }
    assert [d.get("cidrs") for d in wl["destinations"] if d["type"] == "ipBlock"] == [["10.240.8.0/24"]]


def test_table(tmp_path: Path) -> None:
    code, out, _ = reach(tmp_path)
    assert code == 0
    assert "ml/trainer[Deployment]" in out and "10.240.8.0/24" in out and "NOT isolated" in out


def test_unknown_workload_and_bad_input_exit_2(tmp_path: Path) -> None:
    code, _, err = reach(tmp_path, "--workload", "ml/nope")
    assert code == 2 and "no such workload" in err
    code, _, err = reach(tmp_path, "--workload", "trainer")
    assert code == 2 and "NAMESPACE/NAME" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    result = runner.invoke(app, ["egress", "reach", str(bad)])
    assert result.exit_code == 2 and "bad.yaml:" in result.stderr


def test_bad_calico_selector_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "calico.yaml"
    bad.write_text(
        "apiVersion: projectcalico.org/v3\nkind: GlobalNetworkPolicy\nmetadata: {name: broken}\n"
        "spec: {selector: \"app === 'x'\", egress: [{action: Allow}]}\n"
    )
    result = runner.invoke(app, ["egress", "reach", str(bad)])
    assert result.exit_code == 2 and "GlobalNetworkPolicy broken" in result.stderr


def test_context_reads_a_live_cluster_like_its_manifests(tmp_path: Path, load_module: Any) -> None:
    """`--context`: the real `kubernetes` client against our own fake API server on 127.0.0.1
    (`examples/fleet/apiserver.py`, a stdlib http.server app), which also runs the controllers
    (ReplicaSets and pods with ownerReferences) and answers 404 for CRDs that are not installed.
    The cluster gives the same connections as the manifests it was made from."""
    import yaml

    fleet = Path(__file__).resolve().parents[2] / "examples" / "fleet"
    fake = load_module("stockade_fleet_apiserver", "examples/fleet/apiserver.py")
    (cluster,) = [c for c in fake.load_fleet(fleet / "fleet.yaml") if c.name == "gpu-bm-1"]
    with fake.ServedCluster(cluster) as served:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(fake.kubeconfig({"gpu-bm-1": served.url})))
        live = runner.invoke(
            app,
            ["egress", "reach", "--context", "gpu-bm-1", "--kubeconfig", str(kubeconfig), "-f", "json"],
        )
        wrong = runner.invoke(app, ["egress", "reach", "--context", "nope", "--kubeconfig", str(kubeconfig)])
    files = runner.invoke(app, ["egress", "reach", str(fleet / "gpu-bm-1"), "-f", "json"])
    assert live.exit_code == 0 == files.exit_code, live.output
    assert json.loads(live.stdout) == json.loads(files.stdout)
    # controllers stand for what they own; a bare pod is a workload of its own
    assert [w["workload"] for w in json.loads(live.stdout)["workloads"]] == [
        "infra-debug/node-debugger[DaemonSet]",
        "pretrain/data-loader[Deployment]",
        "pretrain/gpu-shell[Pod]",
        "pretrain/llm-pretrain[StatefulSet]",
    ]
    assert wrong.exit_code == 2 and "kubeconfig" in wrong.stderr


def test_paths_or_context_not_both(tmp_path: Path) -> None:
    code, _, err = reach(tmp_path, "--context", "x")
    assert code == 2 and "one of the two" in err
    result = runner.invoke(app, ["egress", "reach"])
    assert result.exit_code == 2 and "one of the two" in result.stderr
