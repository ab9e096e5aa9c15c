"""The command line: exit codes (0 clean, 1 violations, 2 usage/input), formats, stdin, init, policy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.cli.scan import Format
from stockade.scanner.reports import FORMATS
from tests.workloads import BAD_POD_YAML as BAD

runner = CliRunner()


def scan(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, ["scan", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    return f


def test_format_enum_matches_the_report_registry() -> None:
    assert {f.value for f in Format} == set(FORMATS)


def test_violation_exits_1_and_json_points_at_the_line(bad: Path) -> None:
    code, out, _ = scan(str(bad), "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert report["schema_version"] == 1
    (f,) = [f for f in report["findings"] if f["rule"]["id"] == "STK-POD-003"]
    assert f["location"] == {
        "file": str(bad),
        "line": 11,
        "path": "spec.containers[0].securityContext.privileged",
        "template": None,
    }
    assert f["resource"]["kind"] == "Pod" and f["resource"]["name"] == "bad"


def test_fail_on_controls_the_exit_code(bad: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "s.yaml"
    cfg.write_text("overrides:\n  - {action: warn}\n")
    assert scan(str(bad), "--config", str(cfg), "-f", "json")[0] == 0
    assert scan(str(bad), "--config", str(cfg), "-f", "json", "--fail-on", "warn")[0] == 1
    assert scan(str(bad), "-f", "json", "--fail-on", "never")[0] == 0


def test_clean_input_exits_0(tmp_path: Path) -> None:
    f = tmp_path / "cm.yaml"
    f.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    assert scan(str(f), "-f", "json")[0] == 0


def test_stdin(bad: Path) -> None:
    code, out, _ = scan("-", "-f", "json", stdin=BAD)
    assert code == 1
    assert {f["location"]["file"] for f in json.loads(out)["findings"]} == {"<stdin>"}


def test_input_error_exits_2_but_other_files_are_scanned(bad: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: Pod\nmetadata:\n  name: [x\n")
    out_file = tmp_path / "r.json"
    code, _, err = scan(str(tmp_path), "-f", "json", "-o", str(out_file))
    assert code == 2
    report = json.loads(out_file.read_text())
    assert report["errors"] == [{"file": str(broken), "line": 3, "message": report["errors"][0]["message"]}]
    assert any(f["rule"]["id"] == "STK-POD-003" for f in report["findings"])
    assert f"{broken}:3: invalid YAML" in err


def test_bad_config_is_one_line_exit_2(bad: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "s.yaml"
    cfg.write_text("pss:\n  level: baseline\n")
    code, _, err = scan(str(bad), "--config", str(cfg))
    assert code == 2
    assert err.strip() == f"stockade: error: {cfg}:2: pss.level: unknown key"


def test_usage_errors_exit_2() -> None:
    assert scan()[0] == 2
    assert scan("x.yaml", "--format", "pdf")[0] == 2
    assert runner.invoke(app, ["scan", "x.yaml", "--values", "v.yaml"]).exit_code == 2


def test_missing_renderer_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    code, _, err = scan("--helm", "charts/x", "-f", "json", "-o", "/dev/null")
    assert code == 2
    assert "charts/x: --helm needs `helm` on PATH; not found" in err


def test_every_format_renders(bad: Path, tmp_path: Path) -> None:
    for fmt in FORMATS:
        out = tmp_path / f"report.{fmt}"
        code, _, _ = scan(str(bad), "-f", fmt, "-o", str(out))
        assert code == 1, fmt
        assert "STK-POD-003" in out.read_text(), fmt


def test_init_writes_a_valid_config(tmp_path: Path, bad: Path) -> None:
    target = tmp_path / "stockade.yaml"
    assert runner.invoke(app, ["init", "--output", str(target)]).exit_code == 0
    assert scan(str(bad), "--config", str(target), "-f", "json")[0] == 1
    assert runner.invoke(app, ["init", "--output", str(target)]).exit_code == 2


def test_policy_list_explain_and_test() -> None:
    listed = runner.invoke(app, ["policy", "list", "--format", "json"])
    assert listed.exit_code == 0
    rules = {r["id"]: r for r in json.loads(listed.stdout)}
    assert rules["STK-POD-003"]["frameworks"][0] == "pss-baseline"
    explained = runner.invoke(app, ["policy", "explain", "STK-POD-003"])
    assert explained.exit_code == 0 and "Remediation:" in explained.stdout
    assert 'judged on:   objects that write "privileged"' in explained.stdout  # METADATA custom.triggers
    assert runner.invoke(app, ["policy", "explain", "STK-NOPE-1"]).exit_code == 2
    tested = runner.invoke(app, ["policy", "test", "--run", "test_*", "--coverage"])
    assert tested.exit_code == 0, tested.stdout
    assert " passed, 0 failed" in tested.stdout and "coverage" in tested.stdout


def test_policy_test_reports_a_failing_test(tmp_path: Path) -> None:
    (tmp_path / "x_test.rego").write_text(
        "package x_test\nimport rego.v1\ntest_ok if true\ntest_bad if false\n"
    )
    result = runner.invoke(app, ["policy", "test", str(tmp_path)])
    assert result.exit_code == 1
    assert "FAIL: x_test.test_bad" in result.stdout and "1 passed, 1 failed" in result.stdout


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_kubectl_plugin(bad: Path) -> None:
    """`kubectl stockade …` finds the installed kubectl-stockade script on PATH."""
    bindir = Path(sys.executable).parent
    assert (bindir / "kubectl-stockade").exists()
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["kubectl", "stockade", "scan", str(bad), "-f", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert any(f["rule"]["id"] == "STK-POD-003" for f in json.loads(done.stdout)["findings"])


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_kustomize_output_is_scanned(tmp_path: Path) -> None:
    """`--kustomize DIR` renders with the real `kubectl kustomize` and scans the result."""
    (tmp_path / "pod.yaml").write_text(BAD)
    (tmp_path / "kustomization.yaml").write_text("resources: [pod.yaml]\nnamespace: overlay-ns\n")
    code, out, _ = scan("--kustomize", str(tmp_path), "-f", "json")
    assert code == 1
    findings = json.loads(out)["findings"]
    assert {f["resource"]["namespace"] for f in findings} == {"overlay-ns"}
    assert any(f["rule"]["id"] == "STK-POD-003" for f in findings)
    # locations in the source file (kustomize's originAnnotations), fields on their own lines
    assert all(f["location"]["file"] == str(tmp_path / "pod.yaml") for f in findings)
    privileged = next(f for f in findings if f["rule"]["id"] == "STK-POD-003")
    assert privileged["location"]["line"] == BAD.splitlines().index("        privileged: true") + 1
    # the origin annotation is kustomize's, for us: the scanned object does not carry it
    assert all("config.kubernetes.io/origin" not in json.dumps(f) for f in findings)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_kustomize_locations_survive_prefixes_generators_and_sarif(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    (base / "pod.yaml").write_text(BAD)
    (base / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "resources: [../base]\nnamePrefix: prod-\n"
        "secretGenerator:\n- name: creds\n  literals: [azurestorageaccountkey=c2VjcmV0c2VjcmV0]\n"
    )
    code, out, _ = scan("--kustomize", str(overlay), "-f", "json")
    assert code == 1
    findings = json.loads(out)["findings"]
    pod = [f for f in findings if f["resource"]["kind"] == "Pod"]
    # renamed by the prefix: the document whose name the built one holds, its fields on their lines
    # (vllm production-stack's operator: every finding of its `production-stack-` objects was at
    # line 1, once a comment)
    assert pod and all(f["location"]["file"] == str(base / "pod.yaml") for f in pod)
    privileged = next(f for f in pod if f["rule"]["id"] == "STK-POD-003")
    assert privileged["location"]["line"] == BAD.splitlines().index("        privileged: true") + 1
    generated = [f for f in findings if f["resource"]["kind"] == "Secret"]
    assert all(f["location"]["file"] == str(overlay / "kustomization.yaml") for f in generated)
    code, sarif, _ = scan("--kustomize", str(overlay), "-f", "sarif")
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for r in json.loads(sarif)["runs"][0]["results"]
        for loc in r["locations"]
    }
    assert uris == {(base / "pod.yaml").as_uri(), (overlay / "kustomization.yaml").as_uri()}, uris


def _scan_written(path: Path, text: str) -> tuple[Path, Any]:
    """``text`` written to ``path``, scanned to JSON by the CLI."""
    path.write_text(text)
    return path, CliRunner().invoke(app, ["scan", str(path), "-f", "json"])


def test_objects_scope_leaves_out_are_said_not_judged(tmp_path: Path) -> None:
    """vllm production-stack's Azure guide ships NVIDIA's device plugin DaemonSet into kube-system,
    with a hostPath: `scope.excluded_namespaces` (kube-system by default) left it out, and the scan
    said nothing of it ("No findings in 0 resources"). A note names it; the exit code is the scan's."""
    path, result = _scan_written(
        tmp_path / "ds.yaml",
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: dp, namespace: kube-system}\n"
        "spec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
        "    spec: {containers: [{name: c, image: 'x:1', securityContext: {privileged: true}}]}\n",
    )
    assert result.exit_code == 0 and json.loads(result.stdout)["findings"] == []
    assert (
        f"1 object in namespaces scope.excluded_namespaces leaves out was not judged (first: {path}:1 "
        "DaemonSet/kube-system/dp)"
    ) in result.stderr
    judged = CliRunner().invoke(app, ["scan", str(path), "-f", "json", "--namespace", "x"])
    assert "leaves out" in judged.stderr  # its own namespace, not --namespace's


def test_the_container_device_interface_spec_directory_is_forbidden(tmp_path: Path) -> None:
    """A CDI spec written to /var/run/cdi adds devices, mounts and hooks the runtime runs on the host
    to every container that asks for the device (kueue review: NVIDIA's device plugin mounts it
    writable, and only a generic hostPath finding said so, where the Pod Security level reports
    hostPath at all)."""
    _, result = _scan_written(
        tmp_path / "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: gpu}\nspec:\n"
        "  containers: [{name: c, image: 'x:1', volumeMounts: [{name: cdi, mountPath: /cdi}]}]\n"
        "  volumes: [{name: cdi, hostPath: {path: /run/cdi}}]\n",
    )
    (found,) = [f for f in json.loads(result.stdout)["findings"] if f["rule"]["id"] == "STK-POD-201"]
    assert "which is forbidden /run/cdi" in found["message"]
