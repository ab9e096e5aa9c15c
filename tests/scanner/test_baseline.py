"""`stockade scan --write-baseline FILE` / `--baseline FILE`, through the real command line (typer's
runner, in this process) on manifests written to a temporary directory: a baseline accepts today's
findings wherever their object moves, fails only on new ones and lists the entries no longer found."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.policies.model import Action, Finding, Resource, ResourceRef, Rule, Severity
from stockade.scanner.baseline import BaselineMatcher, Entry, dumps, fingerprint, loads, stable_path

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: app
          image: registry.example.com/web@sha256:%s
          securityContext:
            privileged: true
""" % ("0" * 64)

INTRUDER = """\
---
apiVersion: v1
kind: Pod
metadata:
  name: intruder
  namespace: shop
spec:
  containers:
    - name: sh
      image: registry.example.com/sh:1.0
      securityContext:
        privileged: true
"""

runner = CliRunner()


def scan(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, ["scan", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "web.yaml").write_text(WEB)
    return tmp_path


def baselined(repo: Path) -> Path:
    base = repo / ".stockade-baseline.json"
    code, _, err = scan(repo / "k8s", "--write-baseline", base, "-o", repo / "first.json", "-f", "json")
    assert code == 0, err
    assert f"wrote baseline {base}" in err
    return base


def active(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["exception"] is None]


def test_write_baseline_records_every_finding_one_sorted_line_each(repo: Path) -> None:
    base = baselined(repo)
    text = base.read_text()
    lines = text.splitlines()
    assert lines[0] == '{"version": 1, "findings": [' and lines[-1] == "]}"
    entries = [json.loads(line.rstrip(",")) for line in lines[1:-1]]
    first = json.loads((repo / "first.json").read_text())
    # every finding of the run, each accepted by it; a finding folded into another (a privileged
    # container's restricted-profile gaps) is recorded on its own, so fixing the primary adds nothing
    recorded = [*first["findings"], *(m for f in first["findings"] for m in f["details"].get("folded", ()))]
    assert len(entries) == len(recorded) > 5
    assert len(recorded) > len(first["findings"])
    assert all(f["exception"]["name"] == "baseline" for f in first["findings"])
    assert entries == sorted(entries, key=lambda e: [e[k] or "" for k in Entry.__slots__])
    pod003 = next(e for e in entries if e["rule"] == "STK-POD-003")
    assert pod003 == {
        "rule": "STK-POD-003",
        "group": "apps",
        "kind": "Deployment",
        "namespace": "shop",
        "name": "web",
        "template": None,
        "path": "spec.template.spec.containers[name=app].securityContext.privileged",
    }
    assert "line" not in text and "web.yaml" not in text  # no position, no file
    assert json.loads(text)["version"] == 1


def test_lines_added_above_and_a_move_to_another_file_stay_baselined(repo: Path) -> None:
    base = baselined(repo)
    web = repo / "k8s" / "web.yaml"
    web.write_text("# owned by the shop team\n# and reviewed\n\n" + WEB)
    code, out, err = scan(repo / "k8s", "--baseline", base, "-f", "json")
    assert code == 0, err
    report = json.loads(out)
    assert not active(report) and report["summary"]["waived"] == len(report["findings"])
    assert f"baseline {base}: {len(report['findings'])} baselined, 0 new, 0 no longer found" in err
    # the object moves to another file, behind another document
    web.unlink()
    (repo / "k8s" / "apps").mkdir()
    other = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop}\ndata: {a: b}\n---\n"
    (repo / "k8s" / "apps" / "all.yaml").write_text(other + WEB)
    code, _, err = scan(repo / "k8s", "--baseline", base)
    assert code == 0, err


def test_a_new_violation_fails_and_only_it_is_active(repo: Path) -> None:
    base = baselined(repo)
    (repo / "k8s" / "web.yaml").write_text(WEB + INTRUDER)
    code, out, err = scan(repo / "k8s", "--baseline", base, "-f", "json")
    assert code == 1
    report = json.loads(out)
    new = active(report)
    assert new and {f["resource"]["name"] for f in new} == {"intruder"}
    assert {f["exception"]["name"] for f in report["findings"] if f["exception"]} == {"baseline"}
    assert f", {len(new)} new, 0 no longer found" in err


def test_a_container_added_before_the_baselined_one_is_the_only_new_finding(repo: Path) -> None:
    """Containers are fingerprinted by name: the baselined one moving to index 1 stays baselined."""
    base = repo / "b.json"
    assert scan(repo / "k8s", "--rule", "STK-POD-003", "--write-baseline", base)[0] == 0
    sidecar = "        - name: debug\n          image: registry.example.com/dbg:1\n" + (
        "          securityContext: {privileged: true}\n"
    )
    (repo / "k8s" / "web.yaml").write_text(
        WEB.replace("      containers:\n", "      containers:\n" + sidecar)
    )
    code, out, err = scan(repo / "k8s", "--rule", "STK-POD-003", "--baseline", base, "-f", "json")
    assert code == 1, err
    (new,) = active(json.loads(out))
    assert new["location"]["path"] == "spec.template.spec.containers[0].securityContext.privileged"
    assert "1 baselined, 1 new, 0 no longer found" in err


def test_a_fixed_finding_is_listed_as_no_longer_found(repo: Path) -> None:
    base = baselined(repo)
    (repo / "k8s" / "web.yaml").write_text(WEB.replace("privileged: true", "privileged: false"))
    code, _, err = scan(repo / "k8s", "--baseline", base)
    assert code == 0, err
    assert "0 new, 1 no longer found (fixed, or not scanned): refresh with --write-baseline" in err
    gone = [line for line in err.splitlines() if "no longer found:" in line]
    assert gone == [
        "stockade:   no longer found: STK-POD-003 Deployment.apps/shop/web "
        "spec.template.spec.containers[name=app].securityContext.privileged"
    ]
    # refreshing drops the entry
    assert scan(repo / "k8s", "--baseline", base, "--write-baseline", base)[0] == 0
    assert "STK-POD-003" not in base.read_text()


def test_rules_not_run_are_not_reported_as_fixed(repo: Path) -> None:
    base = baselined(repo)
    code, _, err = scan(repo / "k8s", "--baseline", base, "--rule", "STK-POD-003")
    assert code == 0 and "1 baselined, 0 new, 0 no longer found" in err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read baseline: No such file or directory"),
        ("{not json", ":1: not valid JSON"),
        ('{"version": 2, "findings": []}', "baseline version 2 is not supported (expected 1)"),
        ('{"version": 1, "findings": [{"rule": "X"}]}', "findings[0]: expected the keys"),
        ("[]", "not a stockade baseline"),
    ],
)
def test_an_unusable_baseline_is_exit_2_in_one_line(repo: Path, content: str | None, expected: str) -> None:
    base = repo / "b.json"
    if content is not None:
        base.write_text(content)
    code, out, err = scan(repo / "k8s", "--baseline", base)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"stockade: error: {base}") and expected in err
    assert "Traceback" not in err


def test_no_baseline_is_written_when_the_scan_has_input_errors(repo: Path) -> None:
    (repo / "k8s" / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n    x: 1\n")
    base = repo / "b.json"
    code, _, err = scan(repo / "k8s", "--write-baseline", base)
    assert code == 2 and not base.exists() and "not written: the scan had input errors" in err


RULE = Rule("STK-X-001", "t", "d", "pod", Severity.HIGH, ("*",), (), "", "data.x", "x.rego")


def _finding(path: tuple[str | int, ...], message: str = "m") -> Finding:
    ref = ResourceRef("apps/v1beta1", "Deployment", "shop", "web")
    return Finding(RULE, Action.DENY, message, ref, file="a.yaml", line=3, path=path)


def test_the_fingerprint_ignores_message_version_file_and_line_and_names_list_items() -> None:
    obj = {"spec": {"containers": [{"name": "app"}, {"image": "x"}]}}
    resource = Resource(obj)
    a = fingerprint(resource, _finding(("spec", "containers", 0, "image"), "tag 1.2"))
    b = fingerprint(resource, _finding(("spec", "containers", 0, "image"), "tag 1.3"))
    assert a == b and a.group == "apps" and a.path == "spec.containers[name=app].image"
    assert stable_path(obj, ("spec", "containers", 1, "image")) == "spec.containers[1].image"
    assert stable_path(obj, ("spec", "missing", 4)) == "spec.missing[4]"


def test_a_baseline_is_a_multiset() -> None:
    """Two identical fingerprints accepted; a third is new. The file round-trips."""
    resource = Resource({"spec": {}})
    entry = fingerprint(resource, _finding(("spec",)))
    matcher = BaselineMatcher(Counter({entry: 2}), "b.json")
    findings = matcher.apply(resource, [_finding(("spec",)) for _ in range(3)])
    assert [f.exception is not None for f in findings] == [True, True, False]
    matcher.count(resource, findings)  # as the report shows them (folding changes nothing here)
    assert matcher.new == 1 and matcher.baselined == 2 and matcher.fixed({RULE.id}) == []
    assert loads(dumps(matcher.seen), "b.json") == Counter({entry: 3})
