"""STK-NET-006 honours ports and protocols, and NodeLocal DNS can be declared cluster DNS (issue 22):
end to end through a scan, where the workload's facts carry each range's ports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stockade.cli.main import app

runner = CliRunner()

WORKLOAD = """\
apiVersion: v1
kind: Namespace
metadata: {name: ml}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: fetcher, namespace: ml}
spec:
  selector: {matchLabels: {app: fetcher}}
  template:
    metadata: {labels: {app: fetcher}}
    spec:
      containers: [{name: c, image: registry.example/fetcher:1}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: out, namespace: ml}
spec:
  podSelector: {matchLabels: {app: fetcher}}
  policyTypes: [Egress]
  egress:
    - to: [{ipBlock: {cidr: 0.0.0.0/0}}]
      ports: %s
"""


def _net006(tmp_path: Path, ports: str, config: str | None = None) -> list[dict[str, object]]:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(WORKLOAD % ports)
    args = ["scan", str(manifest), "-f", "json"]
    if config is not None:
        (tmp_path / "stockade.yaml").write_text(config)
        args += ["-c", str(tmp_path / "stockade.yaml")]
    out = runner.invoke(app, args)
    assert out.exit_code in (0, 1), out.stdout + out.stderr
    return [f for f in json.loads(out.stdout)["findings"] if f["rule"]["id"] == "STK-NET-006"]


def test_https_only_to_the_internet_does_not_reach_the_metadata_endpoints(tmp_path: Path) -> None:
    assert _net006(tmp_path, "[{protocol: TCP, port: 443}]") == []


@pytest.mark.parametrize(
    "ports",
    ["[{protocol: TCP, port: 80}]", "[{port: 1, endPort: 1024}]", "[{protocol: TCP}]", "[]"],
)
def test_a_rule_opening_port_80_reaches_them(tmp_path: Path, ports: str) -> None:
    found = _net006(tmp_path, ports)
    # one finding per object and egress rule: the other metadata address is folded into it
    kinds = {(f["resource"]["kind"], f["details"]["address"]) for f in found}  # type: ignore[index]
    kinds |= {
        (f["resource"]["kind"], m["details"]["address"])
        for f in found
        for m in f["details"].get("folded", ())
    }  # type: ignore[index, union-attr, attr-defined]
    # the policy object (admission refuses it) and the workload it opens (audit, scan) both
    assert ("NetworkPolicy", "169.254.169.254") in kinds and ("Deployment", "169.254.169.254") in kinds
    assert all(f["details"]["port"] == "TCP 80" for f in found)  # type: ignore[index]


def test_udp_dns_only_does_not_reach_them(tmp_path: Path) -> None:
    assert _net006(tmp_path, "[{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]") == []


def test_configured_metadata_ports_are_the_ones_checked(tmp_path: Path) -> None:
    config = "egress:\n  metadata_ports: [TCP/443]\n"
    found = _net006(tmp_path, "[{protocol: TCP, port: 443}]", config)
    assert found and all(f["details"]["port"] == "TCP 443" for f in found)  # type: ignore[index]


def test_a_bad_metadata_port_is_a_config_error(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(WORKLOAD % "[]")
    (tmp_path / "stockade.yaml").write_text("egress:\n  metadata_ports: [HTTP/80]\n")
    out = runner.invoke(app, ["scan", str(manifest), "-c", str(tmp_path / "stockade.yaml")])
    assert out.exit_code == 2 and "PROTOCOL/PORT" in out.stderr


NODE_LOCAL = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: dns, namespace: ml}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
    - to: [{ipBlock: {cidr: 169.254.20.10/32}}]
      ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]
"""


def test_node_local_dns_is_cluster_dns_by_default(tmp_path: Path) -> None:
    """NodeLocal DNSCache's 169.254.20.10 is cluster DNS out of the box (issue 37: it was reported as
    an outside resolver); a configuration that lists other addresses makes it an outside one."""
    manifest = tmp_path / "dns.yaml"
    manifest.write_text(NODE_LOCAL)
    plain = runner.invoke(app, ["scan", str(manifest), "-f", "json", "--no-config"])
    assert plain.exit_code == 0, plain.stdout
    assert json.loads(plain.stdout)["findings"] == []
    (tmp_path / "stockade.yaml").write_text("egress:\n  cluster_dns: {addresses: [10.0.0.10]}\n")
    other = runner.invoke(app, ["scan", str(manifest), "-f", "json", "-c", str(tmp_path / "stockade.yaml")])
    ids = {f["rule"]["id"] for f in json.loads(other.stdout)["findings"]}
    assert {"STK-NET-005", "STK-NET-003"} <= ids  # not declared: an outside resolver, outside the allowlist
