"""The rendered deployment: what each object must say, what is derived, and the dogfood scan.

Dogfood: the manifests pass `stockade scan` with the restricted profile and the whole bundled library,
under a config that takes nothing out of scope (the default config excludes `stockade-system`, which
would make the scan vacuous), approves the image's registry, requires digests everywhere and lists the
webhook as the API client it is (it mounts its token to list and watch). The rendered image is pinned
by digest, as production should; a control test shows the same scan does find a weakened Deployment.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client import ApiClient
from typer.testing import CliRunner

from stockade.admission.inventory import DEFAULT_KINDS, WATCHABLE, WatchedKind
from stockade.cli.main import app
from stockade.policies.config.settings import Config, parse_config
from stockade.policies.engines.library import load_library
from stockade.policies.evaluate import Evaluator
from stockade.policies.facts.inventory import WATCHED_KINDS
from stockade.policies.kinds.api import CUSTOM_ALIAS
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS, WORKLOAD_ALIAS
from stockade.scanner.result import Result
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.files import FileSource
from stockade.webhooks.certs import CertificateAuthority
from stockade.webhooks.kinds import resource_of
from stockade.webhooks.manifests import (
    NAME,
    TLS_SECRET,
    ManifestError,
    Options,
    covered_kinds,
    render,
    tls_secret,
    to_documents,
    webhook_rules,
)

DIGEST = "sha256:" + "ab" * 32
DOGFOOD_CONFIG = """\
apiVersion: stockade.io/v1alpha1
kind: Config
pss: {default_level: restricted}
scope: {excluded_namespaces: []}
images:
  allowed_registries: [ghcr.io/stockade-dev/]
  require_digest_namespaces: ["*"]
service_accounts:
  api_clients:
    - {namespaces: [stockade-system], kinds: [Deployment], names: [stockade-webhook]}
egress:
  allow:
    - {namespaces: [stockade-system], cidrs: [10.0.0.1/32]}
"""
APISERVER = ("10.0.0.1/32",)  # what `--apiserver-cidr` names: the webhook may reach the API server only
CA_PEM = CertificateAuthority.create().cert_pem


def library_kinds() -> list[str]:
    return covered_kinds(load_library())


def objects(**options: Any) -> list[dict[str, Any]]:
    base: dict[str, Any] = {"ca_bundle": CA_PEM, "image_digest": DIGEST}
    return render(Options(**{**base, **options}), library_kinds())


def one(objs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [o for o in objs if o["kind"] == kind]
    return found


def scan(objs: list[dict[str, Any]], tmp_path: Path) -> Result:
    (tmp_path / "webhook.yaml").write_text(to_documents(objs))
    config = parse_config(DOGFOOD_CONFIG)
    files = FileSource([str(tmp_path)])
    return run_scan(files, [], Evaluator.default(config), ScanOptions(config, workers=1), version="test")


# -- dogfood ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cert_manager", [False, True], ids=["certs-dir", "cert-manager"])
def test_rendered_manifests_pass_the_whole_library_at_restricted(tmp_path: Path, cert_manager: bool) -> None:
    result = scan(objects(cert_manager=cert_manager, apiserver_cidrs=APISERVER), tmp_path)
    assert result.errors == []
    active = [
        f"{f.rule.id} {f.resource.kind}/{f.resource.name}: {f.message}"
        for f in result.findings
        if not f.waived
    ]
    assert active == []


def test_without_the_apiserver_cidr_the_webhooks_own_egress_is_reported(tmp_path: Path) -> None:
    """The default NetworkPolicy can only say "port 443/6443 anywhere": the library says so too."""
    ids = {f.rule.id for f in scan(objects(), tmp_path).findings if not f.waived}
    assert "STK-NET-002" in ids


def test_the_dogfood_scan_finds_a_weakened_deployment(tmp_path: Path) -> None:
    """Control: the scan above is not vacuous (the namespace is in scope, the Deployment evaluated)."""
    objs = objects()
    pod = one(objs, "Deployment")["spec"]["template"]["spec"]
    del pod["securityContext"]["seccompProfile"]
    del pod["containers"][0]["securityContext"]["seccompProfile"]
    pod["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = True
    pod["containers"][0]["image"] = "docker.io/library/python:3.12"
    ids = {f.rule.id for f in scan(objs, tmp_path).findings if not f.waived}
    assert {"STK-IMG-001", "STK-IMG-003"} <= ids
    assert len(ids) >= 4


# -- derived lists ---------------------------------------------------------------------------------------


def test_rbac_is_list_and_watch_on_exactly_the_watched_kinds() -> None:
    objs = objects()
    role = one(objs, "ClusterRole")
    granted = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    assert granted == {(k.group, k.plural) for k in DEFAULT_KINDS}
    assert all(rule["verbs"] == ["list", "watch"] for rule in role["rules"])
    assert {k.kind for k in DEFAULT_KINDS} == {k for k in WATCHED_KINDS if k in WATCHABLE}
    assert not [o for o in objs if o["kind"] in ("Role", "RoleBinding")]
    binding = one(objs, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": NAME, "namespace": "stockade-system"}]


def test_rbac_follows_the_watched_kinds() -> None:
    extra = WatchedKind("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False)
    assert extra not in DEFAULT_KINDS
    role = one(render(Options(ca_bundle=CA_PEM), library_kinds(), (*DEFAULT_KINDS, extra)), "ClusterRole")
    assert {
        "apiGroups": ["scheduling.k8s.io"],
        "resources": ["priorityclasses"],
        "verbs": ["list", "watch"],
    } in role["rules"]


def test_every_kind_the_library_covers_is_mapped_and_sent() -> None:
    kinds = library_kinds()
    assert "Pod" in kinds and "Deployment" in kinds
    hook = one(objects(), "ValidatingWebhookConfiguration")["webhooks"][0]
    sent = {(g, r) for rule in hook["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    for kind in kinds:
        if kind == WORKLOAD_ALIAS:  # the pod rules: every custom workload kind is sent too
            for info in DEFAULT_WORKLOADS.custom:
                assert (info.group, info.plural) in sent, info.kind
            continue
        if kind == CUSTOM_ALIAS:  # custom resources no rule names: no API server sends them
            continue
        resource = resource_of(kind)
        assert (resource.group, resource.plural) in sent, kind
    assert ("ray.io", "rayclusters") in sent and ("batch.volcano.sh", "jobs") in sent
    assert ("", "pods/ephemeralcontainers") in sent
    assert all(rule["operations"] == ["CREATE", "UPDATE"] for rule in hook["rules"])


def _sent(config_text: str) -> set[tuple[str, str]]:
    config = parse_config(config_text)
    kinds = covered_kinds(load_library(), config)
    hook = one(
        render(Options(ca_bundle=CA_PEM, config_text=config_text), kinds), "ValidatingWebhookConfiguration"
    )
    return {
        (g, r) for rule in hook["webhooks"][0]["rules"] for g in rule["apiGroups"] for r in rule["resources"]
    }


def test_registration_follows_the_library_and_the_config() -> None:
    """Every kind an enabled rule decides is sent, derived from the library's METADATA; a kind whose
    rules are all disabled is not (issue 21: Helm release Secrets, cert-manager's and Argo CD's must not
    go through a fail-closed webhook that judges none of them)."""
    library = load_library()
    by_kind: dict[str, set[str]] = {}
    for rule in library.rules.values():
        for kind in rule.kinds:
            if "/" not in kind and kind not in (WORKLOAD_ALIAS, CUSTOM_ALIAS):
                by_kind.setdefault(kind, set()).add(rule.id)
    sent = _sent("{}")
    for kind in by_kind:
        resource = resource_of(kind)
        assert (resource.group, resource.plural) in sent, kind
    # Calico's namespaced NetworkPolicy is decided by the Calico-aware STK-NET rules: sent too
    assert ("projectcalico.org", "networkpolicies") in sent
    for kind in ("Secret", "ConfigMap", "Ingress"):
        off = "rules:\n" + "".join(f"  {rid}: {{enabled: false}}\n" for rid in sorted(by_kind[kind]))
        resource = resource_of(kind)
        assert (resource.group, resource.plural) not in _sent(off), kind
    # one of two rules off: still sent
    first = sorted(by_kind["Secret"])[0]
    assert ("", "secrets") in _sent(f"rules:\n  {first}: {{enabled: false}}\n")


def test_a_new_rule_area_is_sent_without_changes_here(tmp_path: Path) -> None:
    (tmp_path / "priority.rego").write_text(
        "# METADATA\n# title: t\n# description: d\n# custom:\n#   id: STK-TST-001\n#   severity: low\n"
        "#   kinds: [PriorityClass, Pod]\n#   frameworks: []\n#   remediation: r\n"
        "package stockade.test.priority\n\nimport rego.v1\n\ndeny contains v if {\n\tfalse\n\tv := {}\n}\n"
    )
    wanted = {
        "apiGroups": ["scheduling.k8s.io"],
        "apiVersions": ["v1"],
        "resources": ["priorityclasses"],
        "operations": ["CREATE", "UPDATE"],
        "scope": "*",
    }
    assert wanted not in webhook_rules(library_kinds())
    assert wanted in webhook_rules(covered_kinds(load_library([tmp_path])))


def test_an_unmapped_kind_is_an_error() -> None:
    with pytest.raises(KeyError, match="FancyThing has no API resource mapping"):
        webhook_rules(["FancyThing"])


# -- what each object says ------------------------------------------------------------------------------


def test_webhook_configuration() -> None:
    objs = objects(namespace="guard", failure_policy="Ignore", timeout_seconds=7)
    (hook,) = one(objs, "ValidatingWebhookConfiguration")["webhooks"]
    assert hook["admissionReviewVersions"] == ["v1"]
    assert hook["sideEffects"] == "None"
    assert (hook["timeoutSeconds"], hook["failurePolicy"]) == (7, "Ignore")
    assert hook["clientConfig"]["service"] == {
        "namespace": "guard",
        "name": NAME,
        "path": "/validate",
        "port": 443,
    }
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == CA_PEM
    (expr,) = hook["namespaceSelector"]["matchExpressions"]
    assert expr == {
        "key": "kubernetes.io/metadata.name",
        "operator": "NotIn",
        "values": ["guard", "kube-node-lease", "kube-public", "kube-system", "stockade-system"],
    }
    # The config's exact out-of-scope names are left out too (globs cannot be in a selector).
    config = "scope: {excluded_namespaces: [team-a, 'kube-*']}\n"
    (hook,) = one(objects(namespace="guard", config_text=config), "ValidatingWebhookConfiguration")[
        "webhooks"
    ]
    assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == ["guard", "kube-system", "team-a"]
    assert hook["matchConditions"] == [
        {"name": "not-being-deleted", "expression": "!has(object.metadata.deletionTimestamp)"}
    ]
    service = one(objs, "Service")
    assert service["metadata"]["namespace"] == "guard" and service["spec"]["ports"][0]["port"] == 443


def test_cert_manager_mode_injects_the_ca() -> None:
    objs = objects(cert_manager=True, ca_bundle=None)
    hook = one(objs, "ValidatingWebhookConfiguration")
    assert hook["metadata"]["annotations"] == {"cert-manager.io/inject-ca-from": f"stockade-system/{NAME}"}
    assert "caBundle" not in hook["webhooks"][0]["clientConfig"]
    certificates = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Certificate"}
    serving = certificates[NAME]["spec"]
    assert serving["secretName"] == TLS_SECRET
    assert f"{NAME}.stockade-system.svc" in serving["dnsNames"]
    ca_issuer = [o for o in objs if o["kind"] == "Issuer" and "ca" in o["spec"]]
    assert serving["issuerRef"] == {"kind": "Issuer", "name": ca_issuer[0]["metadata"]["name"]}


def test_deployment_shape() -> None:
    objs = objects(replicas=4)
    deployment = one(objs, "Deployment")
    assert deployment["spec"]["replicas"] == 4
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == f"ghcr.io/stockade-dev/stockade:{_version()}@{DIGEST}"
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["command"] + container["args"][:8] == [
        "stockade",
        "webhook",
        "serve",
        "--tls-cert",
        "/tls/tls.crt",
        "--tls-key",
        "/tls/tls.key",
        "--config",
        "/config/stockade.yaml",
    ]
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] and sc["runAsNonRoot"] and not sc["allowPrivilegeEscalation"]
    assert sc["capabilities"] == {"drop": ["ALL"]} and sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["securityContext"]["runAsUser"] > 0
    assert {"/readyz", "/healthz"} == {
        container["readinessProbe"]["httpGet"]["path"],
        container["livenessProbe"]["httpGet"]["path"],
    }
    assert container["resources"]["requests"].keys() == {"cpu", "memory"} and container["resources"]["limits"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["tls"]["secret"]["secretName"] == TLS_SECRET
    assert volumes["config"]["configMap"]["name"] == one(objs, "ConfigMap")["metadata"]["name"]
    assert all("subPath" not in m for m in container["volumeMounts"])  # updates must reach the files
    assert pod["affinity"]["podAntiAffinity"]
    assert one(objs, "PodDisruptionBudget")["spec"]["maxUnavailable"] == 1
    namespace = one(objs, "Namespace")["metadata"]["labels"]
    assert namespace["pod-security.kubernetes.io/enforce"] == "restricted"


def test_priority_class_is_set_when_asked() -> None:
    spec = one(objects(), "Deployment")["spec"]["template"]["spec"]
    assert "priorityClassName" not in spec  # the cluster's default unless told
    spec = one(objects(priority_class="stockade-critical"), "Deployment")["spec"]["template"]["spec"]
    assert spec["priorityClassName"] == "stockade-critical"
    with pytest.raises(ManifestError, match="--priority-class"):
        objects(priority_class="Not_A_Name")
    result = CliRunner().invoke(
        app, ["webhook", "manifests", "--cert-manager", "--priority-class", "system-cluster-critical"]
    )
    assert result.exit_code == 0, result.output
    assert "priorityClassName: system-cluster-critical" in result.stdout


def test_tag_only_image_is_always_pulled() -> None:
    container = one(objects(image_digest=None, image="registry.example/stockade:1.2"), "Deployment")["spec"][
        "template"
    ]["spec"]["containers"][0]
    assert (container["image"], container["imagePullPolicy"]) == ("registry.example/stockade:1.2", "Always")


def test_network_policy_limits_egress_when_told() -> None:
    spec = one(objects(apiserver_cidrs=("10.0.0.1/32",)), "NetworkPolicy")["spec"]
    assert spec["policyTypes"] == ["Ingress", "Egress"]
    assert spec["ingress"] == [{"ports": [{"protocol": "TCP", "port": 8443}]}]
    assert spec["egress"][0]["to"] == [{"ipBlock": {"cidr": "10.0.0.1/32"}}]


def test_config_map_carries_the_config() -> None:
    text = DOGFOOD_CONFIG
    cm = one(objects(config_text=text), "ConfigMap")
    assert cm["data"]["stockade.yaml"] == text
    assert parse_config(one(objects(), "ConfigMap")["data"]["stockade.yaml"]) == Config()


def test_no_secret_or_key_material_is_rendered() -> None:
    text = to_documents(objects())
    assert "PRIVATE KEY" not in text
    assert not [d for d in yaml.safe_load_all(text) if d["kind"] == "Secret"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"replicas": 1}, "--replicas must be at least 2"),
        ({"timeout_seconds": 31}, "--timeout"),
        ({"failure_policy": "Maybe"}, "--failure-policy"),
        ({"namespace": "Bad_NS"}, "--namespace"),
        ({"image_digest": "sha256:short"}, "--image-digest"),
        ({"config_text": "kind: Config\nbogus: 1\n"}, "bogus: unknown key"),
        ({"ca_bundle": None}, "caBundle is needed"),
    ],
)
def test_bad_options_are_one_line_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError, match=re.escape(message)):
        objects(**options)


# -- the command -----------------------------------------------------------------------------------------


def test_manifests_command(tmp_path: Path) -> None:
    runner = CliRunner()
    certs = tmp_path / "certs"
    assert runner.invoke(app, ["webhook", "certs", "--output-dir", str(certs)]).exit_code == 0
    args = ["webhook", "manifests", "--certs-dir", str(certs), "--image-digest", DIGEST]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    # issue 21: `kubectl apply -f` of the default output cannot register the webhook before a replica
    # is ready: the webhook configuration is printed apart, by --registration
    expected = [o["kind"] for o in objects()]
    assert [d["kind"] for d in docs] == [k for k in expected if k != "ValidatingWebhookConfiguration"]
    assert "stockade webhook manifests --registration" in result.stdout
    registration = runner.invoke(app, [*args, "--registration"])
    assert registration.exit_code == 0, registration.output
    (hook_doc,) = list(yaml.safe_load_all(registration.stdout))
    hook = hook_doc["webhooks"][0]
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == (certs / "ca.crt").read_bytes()
    assert "PRIVATE KEY" not in result.output + registration.output

    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Config\nimages: {allowed_registry: []}\n")
    result = runner.invoke(app, ["webhook", "manifests", "--cert-manager", "--config", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:2: images.allowed_registry: unknown key" in result.output
    result = runner.invoke(app, ["webhook", "manifests", "--certs-dir", str(certs), "--namespace", "other"])
    assert result.exit_code == 2 and "tls.crt does not name stockade-webhook.other.svc" in result.output
    result = runner.invoke(app, ["webhook", "manifests"])
    assert result.exit_code == 2 and "--certs-dir" in result.output


def _version() -> str:
    from stockade.webhooks.manifests import tool_version

    return tool_version()


def test_rendering_does_not_share_state() -> None:
    first = objects()
    snapshot = copy.deepcopy(first)
    one(first, "ValidatingWebhookConfiguration")["webhooks"][0]["matchConditions"].clear()
    assert objects() == snapshot


@pytest.mark.parametrize("cert_manager", [False, True], ids=["certs-dir", "cert-manager"])
def test_built_in_objects_have_no_unknown_or_misspelt_field(cert_manager: bool) -> None:
    """Each built-in object survives a round trip through the `kubernetes` client's typed models (the
    OpenAPI schema): a misspelt or misplaced field would be dropped, and the round trip would differ."""
    api = ApiClient()
    checked = 0
    for obj in [*objects(cert_manager=cert_manager), tls_secret("stockade-system", b"c", b"k")]:
        if "." in obj["apiVersion"].split("/")[0] and not obj["apiVersion"].endswith(".k8s.io/v1"):
            continue  # cert-manager's kinds have no model here
        model = obj["apiVersion"].split("/")[-1].capitalize() + obj["kind"]
        back = api.sanitize_for_serialization(api.deserialize(json.dumps(obj), model, "application/json"))
        assert back == obj, model
        checked += 1
    assert checked >= 11
    broken = copy.deepcopy(one(objects(), "Deployment"))
    broken["spec"]["template"]["spec"]["containers"][0]["securityContex"] = {}  # the control
    back = api.sanitize_for_serialization(
        api.deserialize(json.dumps(broken), "V1Deployment", "application/json")
    )
    assert back != broken


def test_the_container_command_is_one_serve_accepts() -> None:
    """The Deployment's args parse as `stockade webhook serve` options (it stops at the missing file)."""
    (container,) = one(objects(), "Deployment")["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["stockade"]
    result = CliRunner().invoke(app, container["args"])
    assert result.exit_code == 2
    assert result.output == "stockade: error: /tls/tls.crt: no such file\n"


def test_extra_kinds_never_repeat_the_library_table() -> None:
    """One source per kind: the deployment's extra kinds must not shadow or restate `policies.kinds`."""
    from stockade.policies.kinds.api import KINDS
    from stockade.webhooks.kinds import EXTRA_RESOURCES

    assert not {k.kind for k in EXTRA_RESOURCES} & set(KINDS)


def test_policy_dirs_ship_in_a_configmap_and_extend_the_registered_kinds(tmp_path: Path) -> None:
    """`--policy-dir`: Gatekeeper templates and constraints (and extra Rego) go into a ConfigMap
    mounted at /policies and served with `--policy-dir /policies`; the constraints' kinds are
    registered; the flattened files load as the originals do; the whole still passes the dogfood scan."""
    from stockade.webhooks.manifests import POLICY_MOUNT, policy_files

    gk = Path(__file__).resolve().parents[2] / "examples" / "gatekeeper"
    files = policy_files([gk])
    assert files and all("/" not in key for key, _ in files)
    assert not any(key.endswith("_test.rego") for key, _ in files)
    objs = objects(apiserver_cidrs=APISERVER, policy_files=files)
    (policies,) = [
        o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-policies")
    ]
    assert policies["data"] == dict(files)
    container = one(objs, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][container["args"].index("--policy-dir") + 1] == POLICY_MOUNT
    assert {"name": "policies", "mountPath": POLICY_MOUNT, "readOnly": True} in container["volumeMounts"]
    # the served copy loads the same rules as the source folder
    served = tmp_path / "policies"
    served.mkdir()
    for key, text in files:
        (served / key).write_text(text)
    assert set(load_library([served]).rules) == set(load_library([gk]).rules)
    # the CLI renders it too, and the sample constraints' kinds stay registered
    out = tmp_path / "out.yaml"
    result = CliRunner().invoke(
        app,
        ["webhook", "manifests", "--cert-manager", "--policy-dir", str(gk), "--registration", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    rendered = list(yaml.safe_load_all(out.read_text()))
    rules = one(rendered, "ValidatingWebhookConfiguration")["webhooks"][0]["rules"]
    assert any("namespaces" in r["resources"] for r in rules)
    (tmp_path / "scan").mkdir()
    dogfood = scan(objs, tmp_path / "scan")
    assert dogfood.errors == [] and [f for f in dogfood.findings if not f.waived] == []
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "c.yaml").write_text(
        "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: Missing\nmetadata: {name: x}\n"
    )
    result = CliRunner().invoke(app, ["webhook", "manifests", "--cert-manager", "--policy-dir", str(broken)])
    assert result.exit_code == 2 and "Missing/x has no ConstraintTemplate" in result.stderr


def test_continuous_audit_cronjob(tmp_path: Path) -> None:
    """`manifests --audit SCHEDULE`: a CronJob running `audit --in-cluster` as its own ServiceAccount,
    bound to exactly the ClusterRoles `audit --print-rbac` prints, with the webhook's config."""
    runner = CliRunner()
    base = ["webhook", "manifests", "--cert-manager", "--cluster", "gpu-east-1"]
    result = runner.invoke(
        app, [*base, "--audit", "*/30 * * * *", "--audit-push-metrics", "http://pgw.monitoring:9091"]
    )
    assert result.exit_code == 0, result.output
    objects = [d for d in yaml.safe_load_all(result.stdout) if d]
    (cron,) = [o for o in objects if o["kind"] == "CronJob"]
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert cron["spec"]["schedule"] == "*/30 * * * *" and cron["spec"]["concurrencyPolicy"] == "Forbid"
    assert pod["serviceAccountName"] == "stockade-audit"
    args = pod["containers"][0]["args"]
    assert args[:3] == ["audit", "--in-cluster", "gpu-east-1"]
    assert "--write-policy-reports" in args and args[-2:] == ["--push-metrics", "http://pgw.monitoring:9091"]
    printed = runner.invoke(app, ["audit", "--print-rbac"])
    roles = [d for d in yaml.safe_load_all(printed.stdout) if d]
    ours = {o["metadata"]["name"]: o["rules"] for o in objects if o["kind"] == "ClusterRole"}
    for role in roles:
        assert ours[role["metadata"]["name"]] == role["rules"]
    bound = {
        o["roleRef"]["name"]
        for o in objects
        if o["kind"] == "ClusterRoleBinding" and o["subjects"][0]["name"] == "stockade-audit"
    }
    assert bound == {r["metadata"]["name"] for r in roles}
    (policy,) = [
        o for o in objects if o["kind"] == "NetworkPolicy" and o["metadata"]["name"] == "stockade-audit"
    ]
    assert {"protocol": "TCP", "port": 9091} in [
        p for rule in policy["spec"]["egress"] for p in rule["ports"]
    ]

    bad = runner.invoke(app, [*base, "--audit", "every hour"])
    assert bad.exit_code == 2 and "is not a cron schedule" in bad.output and "Traceback" not in bad.output
    orphan = runner.invoke(app, [*base, "--audit-push-metrics", "http://pgw:9091"])
    assert orphan.exit_code == 2 and "needs --audit" in orphan.output
