"""`stockade policy verify` on ValidatingAdmissionPolicy suites in Kyverno's CLI format
(tests/policies/vap_suites: five suites porting the semantics of Kyverno's own VAP tests,
agent-sandbox's own VAPs with their 38 test cases, and 51 cases of Kubernetes' own VAP plugin tests;
see its README). Each expected result
(pass / fail / skip) must be what stockade decides, and a wrong expectation must fail the command:
the runner is not a test that cannot fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.policies.frameworks.verify_vap import run_kyverno_test

SUITES = sorted((Path(__file__).parent / "vap_suites").glob("*/kyverno-test.yaml"))


@pytest.mark.parametrize("suite", SUITES, ids=[s.parent.name for s in SUITES])
def test_suite_passes(suite: Path) -> None:
    results = list(run_kyverno_test(suite))
    assert results and all(r.ok for r in results), [r for r in results if not r.ok]


def test_agent_sandbox_suite_holds_every_upstream_case() -> None:
    """kubernetes-sigs/agent-sandbox examples/policy/vap: policy_test.go's 30 cases, the egress
    policy's 2, and the README's 6 manifests, all with upstream's expected verdicts."""
    (suite,) = [s for s in SUITES if s.parent.name == "agent-sandbox"]
    results = list(run_kyverno_test(suite))
    assert len(results) == 38 and all(r.ok for r in results)


def test_agent_sandbox_policies_bound_in_a_scan_give_upstreams_verdicts(tmp_path: Path) -> None:
    """The same objects through `stockade scan --policy-dir` (the API server's semantics: the secure
    sandbox policy applies through a binding, which upstream's test applies and its files lack)."""
    import json

    import yaml

    suite = Path(__file__).parent / "vap_suites" / "agent-sandbox"
    policies = tmp_path / "policies"
    policies.mkdir()
    binding = (
        "\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\n"
        "metadata: {name: secure-sandbox-binding}\n"
        "spec: {policyName: secure-sandbox-policy, validationActions: [Deny]}\n"
    )
    (policies / "policy.yaml").write_text((suite / "policy.yaml").read_text() + binding)
    result = CliRunner().invoke(
        app, ["scan", str(suite / "resources.yaml"), "--policy-dir", str(policies), "--format", "json"]
    )
    findings = [f for f in json.loads(result.stdout)["findings"] if f["rule"]["id"].startswith("VAP-")]
    assert not [f for f in findings if "not evaluated" in f["message"]]
    expected = yaml.safe_load((suite / "kyverno-test.yaml").read_text())["results"]
    should_fail = {r for e in expected if e["result"] == "fail" for r in e["resources"]}
    assert {f["resource"]["name"] for f in findings} == should_fail


@pytest.mark.parametrize("variant", ["fail", "ignore"])
def test_a_policy_whose_cel_does_not_compile_is_refused_with_its_file(variant: str) -> None:
    """Kubernetes' plugin test injects an auditAnnotation compile error as an evaluation error; the
    API server's create-time validation refuses such a policy, and so does stockade, in one line."""
    from stockade.policies.frameworks.vap import VapError, load_vap

    path = (
        Path(__file__).parent / "vap_suites" / "kubernetes-validator" / f"policy-invalid-cel-{variant}.yaml"
    )
    with pytest.raises(VapError, match=r"policy-invalid-cel-.*auditAnnotations\[0\]\.valueExpression"):
        load_vap([path])


def test_every_outcome_is_exercised() -> None:
    text = "".join(s.read_text() for s in SUITES)
    assert len(SUITES) == 7
    assert all(f"result: {r}" in text for r in ("pass", "fail", "skip"))


def test_the_command_fails_on_a_wrong_expectation(tmp_path: Path) -> None:
    source = next(s for s in SUITES if s.parent.name == "binding-object-selector")
    for f in source.parent.iterdir():
        (tmp_path / f.name).write_text(
            f.read_text().replace(
                "resources: [batch-big], result: skip", "resources: [batch-big], result: pass"
            )
        )
    runner = CliRunner()
    ok = runner.invoke(app, ["policy", "verify", *map(str, SUITES)])
    assert ok.exit_code == 0, ok.output
    assert f"{sum(len(list(run_kyverno_test(s))) for s in SUITES)} passed, 0 failed" in ok.output
    wrong = runner.invoke(app, ["policy", "verify", str(tmp_path / "kyverno-test.yaml")])
    assert wrong.exit_code == 1 and "expected pass, got skip" in wrong.output


def test_a_missing_file_is_one_failed_case(tmp_path: Path) -> None:
    (tmp_path / "kyverno-test.yaml").write_text(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\n"
        "policies: [nope.yaml]\nresults: []\n"
    )
    (result,) = run_kyverno_test(tmp_path / "kyverno-test.yaml")
    assert not result.ok and "nope.yaml: no such file" in result.reason
