"""The plaintext-credential detector (policies/facts/credentials.py), case by case.

Canary credentials are assembled here so that no token-shaped string is committed; none of them is a
real credential.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from stockade.policies.facts import inventory_of
from stockade.policies.facts.credentials import facts, plausible, sensitive_name, types_of

GITHUB = "gh" + "p_" + "R7wQ2mZ9xK4vT1nB8cJ3hL6sD0fG5aY2uE9i"
HUGGING_FACE = "hf" + "_" + "QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUi"
CONNECTION_STRING = (
    "DefaultEndpointsProtocol=https;AccountName=stml;AccountKey="
    + "Zq9/" * 21
    + "Zk==;EndpointSuffix=core.windows.net"
)
IDENTIFIABLE_KEY = "Ab3+" * 19 + "+ASt" + "Xy9Zk" + "Q=="
SAS_URL = (
    "https://stml.blob.core.windows.net/m?sv=2022-11-02&sp=r&sig="
    + "Qm9ndXNTaWduYXR1cmVGb3JUZXN0aW5nT25seTEyMzQ1Njc4%3D"
)
ENTRA = "aB3" + "8Q~" + "Zx9.Wv8_Ut7-Sr6~Qp5.On4_Ml3-Kj2~"
AWS = "AK" + "IA" + "QYLPMN5HHHFPZAM2"
PEM = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
OPENSSH_3_DASHES = "---BEGIN " + "OPENSSH PRIVATE KEY---\nxxxxx\n---END  OPENSSH PRIVATE KEY---\n"


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (GITHUB, "GitHub token"),
        (HUGGING_FACE, "Hugging Face token"),
        (CONNECTION_STRING, "Azure storage account key"),
        (IDENTIFIABLE_KEY, "Azure storage account key"),
        (SAS_URL, "Azure SAS token"),
        (ENTRA, "Entra ID client secret"),
        (AWS, "AWS access key id"),
        (PEM, "private key"),
        (OPENSSH_3_DASHES, "private key"),
        ("sk-" + "proj-" + "Ab9_" * 12, "OpenAI API key"),
        ("sk-" + "ant-api03-" + "Xy7-" * 23 + "AA", "Anthropic API key"),
        ("Bearer abc123def", "bearer token"),
        ("postgres://trainer:Canary-Pw-42@db:5432/runs", "URL with a password"),
    ],
)
def test_formats(value: str, kind: str) -> None:
    assert kind in types_of(value)
    assert kind in types_of(f"prefix {value} suffix")


@pytest.mark.parametrize(
    "value",
    [
        "AKIAIOSFODNN7EXAMPLE",  # AWS's documentation example
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;",
        "Bearer tokens are used here",
        "postgres://user:$(DB_PASSWORD)@db/x",
        "https://example.com/path?sig=short",
        "hello world",
    ],
)
def test_not_credentials(value: str) -> None:
    assert types_of(value) == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("AZURE_CLIENT_SECRET", True),
        ("HF_TOKEN", True),
        ("dbPassword", True),
        ("storage.account-key", True),
        ("AZURE_BATCH_KEY", True),
        ("api-key", True),
        ("SECRET_NAME", False),
        ("TOKEN_TTL", False),
        ("PASSWORD_FILE", False),
        ("CACHE_KEY", False),
        ("AZURE_CLIENT_ID", False),
    ],
)
def test_names(name: str, expected: bool) -> None:
    assert sensitive_name(name) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("hunter2hunter2", True),
        ("$(FROM_SECRET)", False),
        ("{{ .Values.token }}", False),
        ("${TOKEN}", False),
        ("/var/run/secrets/token", False),
        ("<token>", False),
        # under a credential's name, digits are a numeric password (issue 37: redis' requirepass
        # 5241590000000000); decimals and versions are not
        ("3600", True),
        ("5241590000000000", True),
        ("1.5", False),
        ("10.0.0.1", False),
        ("changeme", True),  # a known default is a real, weak credential in a deployed object
        ("$DB_PASSWORD", False),
        ("%(db_password)s", False),
        ("@db.password@", False),
        ("ENC(bXlzZWNyZXQ=)", False),
        ("xxxxxx", True),  # a literal, however weak, is what the server accepts
        ("true", False),
        ("hi", False),
    ],
)
def test_plausible(value: str, expected: bool) -> None:
    assert plausible(value) is expected


def _deployment(container: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "trainer", "namespace": "ml", "annotations": annotations or {}},
        "spec": {"template": {"metadata": {}, "spec": {"containers": [container]}}},
    }


def _facts(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list(facts(obj, inventory_of([obj])).get("credentials", []))


def test_env_args_command_and_annotations_with_paths_and_no_values() -> None:
    container = {
        "name": "app",
        "command": ["sh", "-c", f"git clone https://x:{GITHUB}@github.com/org/repo"],
        "args": ["--key", ENTRA],
        "env": [
            {"name": "HUB", "value": HUGGING_FACE},
            {"name": "DB_PASSWORD", "value": "hunter2hunter2"},
            {"name": "AZURE_CLIENT_SECRET", "valueFrom": {"secretKeyRef": {"name": "sp", "key": "s"}}},
        ],
    }
    found = _facts(_deployment(container, {"ci/token": AWS}))
    by_path = {tuple(e["path"]): e for e in found}
    base = ("spec", "template", "spec", "containers", 0)
    assert set(by_path) == {
        (*base, "command", 2),
        (*base, "args", 1),
        (*base, "env", 0, "value"),
        (*base, "env", 1, "value"),
        ("metadata", "annotations", "ci/token"),
    }
    assert by_path[(*base, "command", 2)]["types"] == ["GitHub token", "URL with a password"]
    assert by_path[(*base, "env", 1, "value")]["name"] == "DB_PASSWORD"
    text = json.dumps(found)
    for secret in (GITHUB, ENTRA, HUGGING_FACE, "hunter2hunter2", AWS):
        assert secret not in text


def test_configmap_data_keys_and_values() -> None:
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings"},
        "data": {
            "storage": CONNECTION_STRING,
            "db-password": "correct-horse-battery",
            "log-level": "debug",
            "token_ttl": "3600",
            "app.yaml": f"hub:\n  token: {HUGGING_FACE}\n",
        },
    }
    found = {tuple(e["path"]): e["types"] for e in _facts(cm)}
    assert found == {
        ("data", "storage"): ["Azure storage account key"],
        ("data", "db-password"): ["value under a credential-named key"],
        # the token's format, and the name it is under inside the YAML text
        ("data", "app.yaml"): ["Hugging Face token", "value under a credential-named key"],
    }


def test_last_applied_configuration_is_decoded() -> None:
    env = [{"name": "HF_TOKEN", "value": HUGGING_FACE}, {"name": "DB_PASSWORD", "value": "plain-text-pw"}]
    applied = json.dumps(
        {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"env": env}]}}}}
    )
    obj = _deployment({"name": "app"}, {"kubectl.kubernetes.io/last-applied-configuration": applied})
    found = _facts(obj)
    assert {tuple(e["inside"]) for e in found} == {
        ("spec", "template", "spec", "containers", 0, "env", 0, "value"),
        ("spec", "template", "spec", "containers", 0, "env", 1, "value"),
    }
    assert all(
        e["path"] == ["metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"]
        for e in found
    )
    # not JSON: read as text
    broken = _deployment({"name": "app"}, {"kubectl.kubernetes.io/last-applied-configuration": "{" + GITHUB})
    assert [e["types"] for e in _facts(broken)] == [["GitHub token"]]


def test_other_kinds_have_no_facts() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "stringData": {"token": GITHUB},
    }
    assert _facts(secret) == []
