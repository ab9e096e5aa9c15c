"""Plaintext credentials (STK-CRED-001) are found at all three gates and never printed.

Canary credentials, one per published format the rule knows and a few plain values under credential
names, are put into a Deployment (env, args, an annotation, the last-applied-configuration
annotation) and a ConfigMap. Then:

- the scan CLI (``stockade scan``) in every report format: STK-CRED-001 at each field, and no canary
  in stdout or stderr;
- the webhook: a real uvicorn HTTPS server on 127.0.0.1 answering a real AdmissionReview v1 (httpx
  client): denied, and no canary in the response or in any log record;
- the audit: ``run_audit`` through the real ``kubernetes`` client against the fake API server of
  ``examples/fleet/apiserver.py`` on loopback; the same findings as the scan, and no canary in any
  report format or in the PolicyReports.

The canaries are assembled at import time so that no token-shaped string is committed; none of them
is a real credential.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from stockade.cli.main import build
from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import Finding
from stockade.scanner.policyreports import build_reports
from stockade.scanner.reports import FORMATS, get_report
from tests.fleet import audit_objects
from tests.reviews import admission_review
from tests.tls_webhook import webhook_client


def _repeat(unit: str, n: int) -> str:
    return unit * n


CANARIES: dict[str, str] = {
    "GitHub token": "gh" + "p_" + "R7wQ2mZ9xK4vT1nB8cJ3hL6sD0fG5aY2uE9i",
    "Hugging Face token": "hf" + "_" + "QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUi",
    "Azure storage account key": "DefaultEndpointsProtocol=https;AccountName=stml;AccountKey="
    + _repeat("Zq9/", 21)
    + "Zk==;EndpointSuffix=core.windows.net",
    "Azure SAS token": "https://stml.blob.core.windows.net/m?sv=2022-11-02&sp=r&sig="
    + "Qm9ndXNTaWduYXR1cmVGb3JUZXN0aW5nT25seTEyMzQ1Njc4"
    + "%3D",
    "Entra ID client secret": "aB3" + "8Q~" + "Zx9.Wv8_Ut7-Sr6~Qp5.On4_Ml3-Kj2~",
    "AWS access key id": "AK" + "IA" + "QYLPMN5HHHFPZAM2",
    "OpenAI API key": "sk-" + "proj-" + _repeat("Ab9_", 12),
    "Anthropic API key": "sk-" + "ant-api03-" + _repeat("Xy7-", 23) + "AA",
    "private key": "-----BEGIN " + "EC PRIVATE KEY-----\nMHcCAQEEIB\n-----END EC PRIVATE KEY-----",
    "URL with a password": "postgres://trainer:" + "Canary-Pw-42" + "@db.internal:5432/runs",
}
PLAIN = {"AZURE_CLIENT_SECRET": "canary-plain-client-secret", "dbPassword": "canary-plain-db-pw"}
CM_PLAIN = "canary-configmap-api-key"
#: canaries inside configuration text (issue 37), one per format; a numeric one as redis allows
TEXT_CANARIES = {
    "redis": "5241590000004242",
    "masterauth": "Ctx1-masterauth-pw",
    "properties": "Ctx2-properties-pw",
    "env": "Ctx3-dotenv-token",
    "ini": "Ctx4-ini-password",
    "yaml": "Ctx5-yaml-password",
    "yaml-number": "7305550000001234",
    "json": "Ctx6-json-secret",
    "basic": "Ctx7-basic-pw",
    "url": "Ctx8-url-pw",
    "env-json": "Ctx9-env-json-pw",
}
BASIC_HEADER = base64.b64encode(f"admin:{TEXT_CANARIES['basic']}".encode()).decode()
CONFIG_TEXT = {
    "redis.conf": f"dir /data\nport 6379\nrequirepass {TEXT_CANARIES['redis']}\n"
    f"masterauth {TEXT_CANARIES['masterauth']}\n",
    "application.properties": f"db.user=app\ndb.password={TEXT_CANARIES['properties']}\n"
    f"db.url=jdbc:postgresql://app:{TEXT_CANARIES['url']}@db:5432/runs\n",
    ".env": f"LOG_LEVEL=debug\nexport API_TOKEN={TEXT_CANARIES['env']}\n",
    "my.cnf": f"[client]\nuser = root\npassword = {TEXT_CANARIES['ini']}\n",
    "app.yaml": f"db:\n  host: db\n  password: {TEXT_CANARIES['yaml']}\n"
    f"cache:\n  secret: {TEXT_CANARIES['yaml-number']}\n",
    "settings.json": '{\n  "auth": {\n    "clientSecret": "' + TEXT_CANARIES["json"] + '"\n  }\n}\n',
    "default.conf": f'location / {{\n  proxy_set_header Authorization "Basic {BASIC_HEADER}";\n}}\n',
}
#: what each text holds: (key, line) of every entry
CONFIG_FOUND = {
    "redis.conf": [("requirepass", 3), ("masterauth", 4)],
    "application.properties": [("db.password", 2), ("db.url", 3)],
    ".env": [("API_TOKEN", 2)],
    "my.cnf": [("[client] password", 3)],
    "app.yaml": [("db.password", 3), ("cache.secret", 5)],
    "settings.json": [("auth.clientSecret", 3)],
    "default.conf": [("proxy_set_header Authorization", 2)],
}
SECRET_PARTS = [
    *CANARIES.values(),
    *PLAIN.values(),
    CM_PLAIN,
    "Canary-Pw-42",
    *TEXT_CANARIES.values(),
    BASIC_HEADER,
    # no prefix of a value either
    *(v[:8] for v in TEXT_CANARIES.values()),
    BASIC_HEADER[:8],
]


def _deployment() -> dict[str, Any]:
    env = [{"name": f"V{i}", "value": v} for i, v in enumerate(CANARIES.values())]
    env += [{"name": k, "value": v} for k, v in PLAIN.items()]
    env.append(
        {
            "name": "SPRING_APPLICATION_JSON",
            "value": '{"spring":{"datasource":{"password":"' + TEXT_CANARIES["env-json"] + '"}}}',
        }
    )
    container = {
        "name": "app",
        "image": "registry.example/app:1.0",
        "env": env,
        "args": ["--hub-token", CANARIES["Hugging Face token"]],
    }
    pod = {"containers": [{"name": "app", "env": env}]}
    applied = {"kind": "Deployment", "spec": {"template": {"spec": pod}}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "trainer",
            "namespace": "ml",
            "annotations": {
                "ci.example/token": CANARIES["GitHub token"],
                "kubectl.kubernetes.io/last-applied-configuration": json.dumps(applied),
            },
        },
        "spec": {
            "selector": {"matchLabels": {"app": "trainer"}},
            "template": {"metadata": {"labels": {"app": "trainer"}}, "spec": {"containers": [container]}},
        },
    }


CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "settings", "namespace": "ml"},
    "data": {"api-key": CM_PLAIN, "storage": CANARIES["Azure storage account key"], "log-level": "debug"},
}
CONFIG_TEXT_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "app-config", "namespace": "ml"},
    "data": {**CONFIG_TEXT, "README": "Set the password in the Secret; never here.\n"},
}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
OBJECTS = [NAMESPACE, _deployment(), CONFIGMAP, CONFIG_TEXT_MAP]
EXPECTED_PATHS = {
    *(("Deployment", ("spec", "template", "spec", "containers", 0, "env", i, "value")) for i in range(13)),
    *(("ConfigMap", ("data", key)) for key in CONFIG_TEXT),
    ("Deployment", ("spec", "template", "spec", "containers", 0, "args", 1)),
    ("Deployment", ("metadata", "annotations", "ci.example/token")),
    ("Deployment", ("metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration")),
    ("ConfigMap", ("data", "api-key")),
    ("ConfigMap", ("data", "storage")),
}


def _data_path(key: str) -> str:
    """A data key's path as the json report writes it."""
    return f"data.{key}"


def test_every_config_text_format_is_one_finding_per_key() -> None:
    """One finding per ConfigMap key holding credentials, listing each credential inside by key and
    line; the README beside them (prose naming a password) is none."""
    from stockade.policies.evaluate import InventoryFacts
    from stockade.policies.facts import inventory_of
    from stockade.policies.model import Operation, Resource

    evaluator = Evaluator.default(parse_config(""))
    facts = InventoryFacts(inventory_of(OBJECTS, complete=True))
    found = evaluator.evaluate(
        Resource(CONFIG_TEXT_MAP), operation=Operation.SCAN, facts=facts.facts(CONFIG_TEXT_MAP)
    )
    by_key = {f.path[1]: f for f in found if f.rule.id == "STK-CRED-001"}
    assert set(by_key) == set(CONFIG_TEXT)
    for key, entries in CONFIG_FOUND.items():
        assert [(e["key"], e["line"]) for e in by_key[key].details["found"]] == entries, key
    assert "requirepass (directive, line 3); masterauth (directive, line 4)" in by_key["redis.conf"].message
    _assert_clean(json.dumps([[f.message, f.details] for f in found]), "the ConfigMap's findings")


def _assert_clean(text: str, where: str) -> None:
    leaked = [s for s in SECRET_PARTS if s in text]
    assert not leaked, f"{where} prints {len(leaked)} canary value(s)"


def _cred(findings: list[Finding]) -> set[tuple[str, tuple[Any, ...], str]]:
    return {(f.resource.kind, tuple(f.path), f.message) for f in findings if f.rule.id == "STK-CRED-001"}


def test_every_canary_type_is_found_in_env() -> None:
    evaluator = Evaluator.default(parse_config(""))
    from stockade.policies.evaluate import InventoryFacts
    from stockade.policies.facts import inventory_of
    from stockade.policies.model import Operation, Resource

    facts = InventoryFacts(inventory_of(OBJECTS, complete=True))
    obj = OBJECTS[1]
    found = evaluator.evaluate(Resource(obj), operation=Operation.SCAN, facts=facts.facts(obj))
    by_path = {tuple(f.path): f for f in found if f.rule.id == "STK-CRED-001"}
    for i, kind in enumerate(CANARIES):
        finding = by_path[("spec", "template", "spec", "containers", 0, "env", i, "value")]
        assert kind in finding.details["types"], kind
    assert {(k, p) for k, p, _ in _cred(found)} == {(k, p) for k, p in EXPECTED_PATHS if k == "Deployment"}


@pytest.fixture(scope="module")
def manifests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("canary")
    (folder / "app.yaml").write_text(yaml.safe_dump_all(OBJECTS, sort_keys=False))
    return folder


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_scan_reports_every_field_and_prints_no_value(manifests: Path, fmt: str) -> None:
    result = CliRunner().invoke(build(), ["scan", str(manifests), "--format", fmt])
    assert result.exit_code == 1, result.output
    _assert_clean(result.stdout + result.stderr, f"scan --format {fmt}")
    if fmt == "json":
        report = json.loads(result.stdout)
        found = {
            (f["resource"]["kind"], f["location"]["path"])
            for f in report["findings"]
            if f["rule"]["id"] == "STK-CRED-001"
        }
        assert len(found) == len(EXPECTED_PATHS)
        assert ("ConfigMap", "data.api-key") in found
        inside = {
            f["location"]["path"]: [(e["key"], e["line"]) for e in f["details"]["found"]]
            for f in report["findings"]
            if f["rule"]["id"] == "STK-CRED-001" and f["resource"]["name"] == "app-config"
        }
        assert inside == {_data_path(key): entries for key, entries in CONFIG_FOUND.items()}


@pytest.fixture
def webhook(tmp_path: Path) -> Iterator[httpx.Client]:
    with webhook_client(tmp_path) as client:
        yield client


def test_webhook_denies_and_neither_answers_nor_logs_a_value(
    webhook: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for obj in OBJECTS[1:]:
        r = webhook.post("/validate", json=admission_review(obj, "ml"))
        assert r.status_code == 200
        response = r.json()["response"]
        assert response["allowed"] is False
        assert "STK-CRED-001" in response["status"]["message"]
        _assert_clean(r.text, f"the webhook's answer for the {obj['kind']}")
    _assert_clean("\n".join(rec.getMessage() for rec in caplog.records), "the webhook's log")


def test_audit_finds_the_same_and_reports_no_value(manifests: Path) -> None:
    evaluator = Evaluator.default(parse_config(""))
    # no pods (simulate=False): the audit judges the Deployment's template, as scan and webhook do
    result = audit_objects(OBJECTS, evaluator)
    assert result.errors == [], result.errors
    found = {(kind, path) for kind, path, _ in _cred(result.findings)}
    assert found == EXPECTED_PATHS
    for fmt in sorted(FORMATS):
        _assert_clean(get_report(fmt).render(result), f"audit --format {fmt}")
    _assert_clean(json.dumps(build_reports(result.findings, now=0)), "the PolicyReports")
