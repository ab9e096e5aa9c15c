"""The plaintext-credential detector (policies/facts/credentials.py), case by case.

Canary credentials are assembled here so that no token-shaped string is committed; none of them is a
real credential.
"""

from __future__ import annotations

import base64
import itertools
import json
import random
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stockade.policies.facts import credentials, inventory_of
from stockade.policies.facts.credentials import facts, in_text, plausible, sensitive_name, types_of

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


def test_managed_fields_and_status_are_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """An UPDATE's object carries managedFields, which name the object's own fields (set members by
    value); they are not walked: the credentials are found where they are, once, and an UPDATE's
    facts are its object's."""
    container = {"name": "app", "env": [{"name": "DB_PASSWORD", "value": "hunter2hunter2"}]}
    plain = _deployment(container, {})
    managed = {
        "manager": "kubectl",
        "operation": "Update",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:spec": {
                "f:template": {
                    "f:spec": {
                        "f:containers": {
                            'k:{"name":"app"}': {
                                "f:env": {'k:{"name":"DB_PASSWORD"}': {".": {}, "f:value": {}}}
                            }
                        }
                    }
                }
            },
            "f:metadata": {"f:finalizers": {f'v:"{GITHUB}"': {}}},
        },
    }
    updated = {
        **plain,
        "metadata": {**plain["metadata"], "managedFields": [managed]},
        "status": {"x": GITHUB},
    }
    assert _facts(updated) == _facts(plain) and _facts(plain)
    walked: list[Any] = []
    real = credentials._found
    monkeypatch.setattr(
        credentials, "_found", lambda node, *a, **k: walked.append(node) or real(node, *a, **k)
    )
    _facts(updated)
    assert walked and all("managedFields" not in w["metadata"] and "status" not in w for w in walked)


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


def test_configuration_text_under_a_credential_named_key_is_read_for_what_it_holds() -> None:
    """KServe's inferenceservice-config holds `credentials`: JSON naming the Secret and the keys its
    controller reads (pkg/credentials: s3AccessKeyIDName: AWS_ACCESS_KEY_ID), no secret value. It
    was "plaintext credential (value under a credential-named key) at data.credentials" in every
    KServe install. Configuration text under such a key is read inside, like any other key's: a
    value there is still found, by its name or its format."""
    kserve = (
        '{\n  "storageSpecSecretName": "storage-config",\n  "gcs": {"gcsCredentialFileName": '
        '"gcloud-application-credentials.json"},\n  "s3": {"s3AccessKeyIDName": "AWS_ACCESS_KEY_ID",\n'
        '    "s3SecretAccessKeyName": "AWS_SECRET_ACCESS_KEY", "s3Endpoint": "", "s3UseHttps": ""}\n}'
    )
    leaked = f'{{"s3": {{"secretAccessKey": "{PW}"}}}}'
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEA" * 20 + "\n-----END RSA PRIVATE KEY-----\n"
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config"},
        "data": {"credentials": kserve, "aws_credentials": leaked, "private_key": pem},
    }
    found = {tuple(e["path"]): e for e in _facts(cm)}
    assert set(found) == {("data", "aws_credentials"), ("data", "private_key")}
    assert [f["key"] for f in found[("data", "aws_credentials")]["found"]] == ["s3.secretAccessKey"]
    assert PW not in json.dumps(list(found.values()))


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


# ---- credentials inside configuration text (issue 37) ----------------------------------------------

PW = "Canary-Text-Pw-7"  # a value no report may print
DIRECTIVE, NAMED = "value of a password directive", "value under a credential-named key"


def _configmap(data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": data}


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (  # kuberay's redis-config: a numeric requirepass
            "redis.conf",
            "dir /data\nport 6379\nbind 0.0.0.0\nappendonly yes\nprotected-mode no\n"
            "requirepass 5241590000000000\n",
            [("directive", "requirepass", 6, [DIRECTIVE])],
        ),
        (
            "redis.conf",
            'masterauth "' + PW + '"\n# requirepass old-pw-here\n',
            [("directive", "masterauth", 1, [DIRECTIVE])],
        ),
        (
            "sentinel.conf",
            f"sentinel monitor m 10.0.0.1 6379 2\nsentinel auth-pass m {PW}\n",
            [("directive", "sentinel auth-pass", 2, [DIRECTIVE])],
        ),
        (
            "users.acl",
            f"user default off\nuser app on >{PW} ~* +@all\n",
            [("directive", "user app", 2, [DIRECTIVE])],
        ),
        (
            "application.properties",
            f"db.url=jdbc:postgresql://db/x\ndb.user=app\ndb.password={PW}\n! db.password=old-one\n",
            [("properties/.env", "db.password", 3, [NAMED])],
        ),
        (
            ".env",
            f'export API_TOKEN="{PW}"\nLOG_LEVEL=debug\n',
            [("properties/.env", "API_TOKEN", 1, [NAMED])],
        ),
        (
            "my.cnf",
            f"[mysqld]\nport = 3306\n[client]\nuser = root\npassword = {PW} ; set by ops\n",
            [("INI", "[client] password", 5, [NAMED])],
        ),
        (
            "app.yaml",
            f"server:\n  port: 8080\ndatabase:\n  host: db\n  password: {PW}\n"
            "  pin: 12345678\n  secret: 987654\n",
            [("YAML", "database.password", 5, [NAMED]), ("YAML", "database.secret", 7, [NAMED])],
        ),
        (  # a YAML password of digits is decoded as a number: still a password
            "values.yaml",
            "redis:\n  auth:\n    password: 5241590000000000\n",
            [("YAML", "redis.auth.password", 3, [NAMED])],
        ),
        (  # a pod spec inside a ConfigMap: name/value pairs, as in a manifest
            "job.yaml",
            f"env:\n- name: DB_PASSWORD\n  value: {PW}\n",
            [("YAML", "env[0].value", 3, [NAMED])],
        ),
        (
            "settings.json",
            '{\n  "db": {\n    "user": "app",\n    "password": "' + PW + '"\n  },\n  "n": 1\n}',
            [("JSON", "db.password", 4, [NAMED])],
        ),
        ("inline.json", '{"clientSecret": "' + PW + '"}', [("JSON", "clientSecret", 1, [NAMED])]),
        (
            "default.conf",
            'location / {\n  proxy_pass http://up;\n  proxy_set_header Authorization "Basic '
            + base64.b64encode(f"admin:{PW}".encode()).decode()
            + '";\n}\n',
            [("directive", "proxy_set_header Authorization", 3, ["HTTP basic credentials"])],
        ),
        (
            "config",
            f"DATABASE_URL=postgres://app:{PW}@db:5432/runs\n",
            [("properties/.env", "DATABASE_URL", 1, ["URL with a password"])],
        ),
    ],
)
def test_credentials_inside_text(name: str, text: str, expected: list[tuple[Any, ...]]) -> None:
    found = in_text(text, name)
    assert [(e["format"], e["key"], e["line"], e["types"]) for e in found] == expected
    dumped = json.dumps(found)
    for secret in (PW, "5241590000000000", "12345678", "987654"):
        assert secret not in dumped


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("redis.conf", 'requirepass ""\nmasterauth ${MASTER_AUTH}\n'),
        ("nginx.conf", "auth_basic on;\nauth_basic_user_file /etc/nginx/.htpasswd;\n"),  # a path
        ("app.properties", "db.password=${DB_PASSWORD}\ndb.token=$(TOKEN)\napi.key=\napi_key=<api-key>\n"),
        ("app.properties", "db.password=@db.password@\nsecret=ENC(bXlzZWNyZXQ=)\npassword=$DB_PW\n"),
        ("app.yaml", 'password: "{{ .Values.password }}"\ntoken_ttl: 3600\nsecret_name: db\n'),
        ("sync.py", 'import os\npassword = os.environ["DB_PASSWORD"]\ntoken = get_token()\n'),
        ("run", "#!/bin/sh\nPASSWORD=hunter2hunter2 exec app\n"),  # a program: formats only
        ("notes", "Use basic authentication here, or basic auth with a token.\n"),
        ("version.yaml", "secret: 1.5\npassword: 10.0.0.1\nsecret_key: true\n"),
    ],
)
def test_not_credentials_inside_text(name: str, text: str) -> None:
    assert in_text(text, name) == []


def test_a_config_file_with_five_credentials_is_one_finding_with_five_entries() -> None:
    text = (
        "[main]\nuser = app\n"
        f"password = {PW}1\napi_key = {PW}2\n"
        f"[replica]\npassword = {PW}3\nurl = redis://default:{PW}4@replica:6379\nclient_secret = {PW}5\n"
    )
    cm = _configmap({"service.ini": text, "log-level": "debug"})
    found = _facts(cm)
    assert len(found) == 1
    entry = found[0]
    assert entry["path"] == ["data", "service.ini"]
    assert [(e["key"], e["line"]) for e in entry["found"]] == [
        ("[main] password", 3),
        ("[main] api_key", 4),
        ("[replica] password", 6),
        ("[replica] url", 7),
        ("[replica] client_secret", 8),
    ]
    assert entry["types"] == ["URL with a password", NAMED]
    assert PW not in json.dumps(found)


def test_env_var_values_that_are_configuration_text() -> None:
    container = {
        "name": "app",
        "env": [
            {
                "name": "SPRING_APPLICATION_JSON",
                "value": '{"spring":{"datasource":{"password":"' + PW + '"}}}',
            },
            {"name": "CONFIG", "value": f"user=app\npassword={PW}\n"},
            {"name": "GREETING", "value": "hello\nworld"},
        ],
    }
    found = {tuple(e["path"][-3:]): e for e in _facts(_deployment(container))}
    assert set(found) == {("env", 0, "value"), ("env", 1, "value")}
    keys = sorted(f["key"] for e in found.values() for f in e["found"])
    assert keys == ["password", "spring.datasource.password"]
    assert PW not in json.dumps(list(found.values()))


def test_a_key_is_never_the_value_itself() -> None:
    # the line's first word is the token: it is not printed as a key
    found = in_text(f"{GITHUB} is the deploy token\n", "notes")
    assert [e["types"] for e in found] == [["GitHub token"]]
    assert GITHUB not in json.dumps(found)
    # a YAML key holding the value, and a value that is part of its key
    found = in_text(f"{HUGGING_FACE}:\n  token: {HUGGING_FACE}\nab-pw-cd-token: ab-pw\n", "odd.yaml")
    assert HUGGING_FACE not in json.dumps(found) and 'ab-pw"' not in json.dumps(found)


def test_the_last_applied_annotation_of_a_configmap_is_read_inside() -> None:
    cm = _configmap({"redis.conf": "requirepass 5241590000000000\n"})
    cm["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(cm)}
    found = _facts(cm)
    inside = [e for e in found if e["inside"] is not None]
    assert [e["inside"] for e in inside] == [["data", "redis.conf"]]
    assert inside[0]["found"][0]["key"] == "requirepass"


FORMAT_VALUES = [GITHUB, HUGGING_FACE, CONNECTION_STRING, IDENTIFIABLE_KEY, SAS_URL, ENTRA, AWS, PEM]
FORMAT_VALUES += [OPENSSH_3_DASHES, "Bearer abc123def", "postgres://trainer:Canary-Pw-42@db:5432/runs"]


def _deployment_with(value: Any, where: str) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "registry.example.com/app:1"}
    if where == "args":
        container["args"] = ["--token", value]
    else:
        container["env"] = [{"name": "X", "value": value}]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ml", "annotations": {"note": 'a"quote\\'}},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }


@pytest.mark.parametrize("where", ["args", "env"])
@pytest.mark.parametrize("value", FORMAT_VALUES)
def test_the_whole_object_prefilter_keeps_every_format(value: str, where: str) -> None:
    """A workload's strings are searched one by one only when its JSON text can match (RE2, once):
    every format is still found, quoted, escaped or split across lines."""
    for text in (value, f'say "{value}"\\n', value.replace("-----", "-----\t"), f"\u00e9 {value}"):
        obj = _deployment_with(text, where)
        found = facts(obj, inventory_of([]))
        assert found, text
        assert found["credentials"] == facts_without_prefilter(obj)["credentials"]


def facts_without_prefilter(obj: dict[str, Any]) -> dict[str, Any]:
    real = credentials._possible
    credentials._possible = lambda _obj: (True, True)
    try:
        return credentials.facts(obj, inventory_of([]))
    finally:
        credentials._possible = real


def _deployment_with_env(env: list[dict[str, Any]]) -> dict[str, Any]:
    container = {"name": "app", "image": "registry.example.com/app:1", "env": env}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ml"},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }


ENV_NAMES = ["DB_PASSWORD", "clientSecret", "api-key", "HOME", "name", "x", "SPRING_APPLICATION_JSON", ""]
ENV_VALUES = ["hunter2-correct-horse", "/tmp", '{"password": "Secr3t-Value-9"}', '  {"token": "abcd1234"}']
ENV_VALUES += ["user=admin\npassword=Secr3t!x", "a\\b", 'say "hi"', "\u00e9t\u00e9"]
ENV_VALUES += ["requirepass 5241590000000000"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "name": st.one_of(st.sampled_from(ENV_NAMES), st.text(max_size=12), st.integers()),
                "value": st.one_of(st.sampled_from(ENV_VALUES), st.text(max_size=30), st.none()),
            }
        ),
        max_size=4,
    )
)
def test_the_whole_object_sieve_keeps_every_named_value(env: list[dict[str, Any]]) -> None:
    """A workload whose JSON text holds no credential format, no credential-named "name" and no
    configuration text is not walked at all; whatever the names and values (Unicode, quotes,
    backslashes, newlines, a leading brace), the facts are those of the full walk."""
    obj = _deployment_with_env(env)
    assert facts(obj, inventory_of([])) == facts_without_prefilter(obj)


@pytest.mark.parametrize(
    ("name", "value", "walked"),
    [
        ("HOME", "/tmp", False),
        ("DB_PASSWORD", "hunter2-correct-horse", True),
        ("CONFIG", '  {"password": "Secr3t-Value-9"}', True),
        ("CONFIG", "password=x\nuser=y", True),  # a backslash: read string by string
        ("CONFIG", "caf\u00e9", True),  # not ASCII
    ],
)
def test_the_sieve_walks_only_what_can_hold_a_named_value(name: str, value: str, walked: bool) -> None:
    assert credentials._possible(_deployment_with_env([{"name": name, "value": value}]))[1] is walked


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["db", "Pass", "word", "client", "Secret", "API", "-", "_", ".", "key", "TOKEN", "str"]
        )
    )
)
def test_the_one_pass_sieve_keeps_every_credential_name(parts: list[str]) -> None:
    """Every name :func:`sensitive_name` accepts, in any case and spelling, is walked: the one search
    that decides most workloads finds one of the name stems in it."""
    name = "".join(parts)
    obj = _deployment_with_env([{"name": name, "value": "hunter2-correct-horse"}])
    if credentials.sensitive_name(name):
        assert credentials._possible(obj)[1], name
    assert facts(obj, inventory_of([])) == facts_without_prefilter(obj)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=60), st.sampled_from(["args", "env"]))
def test_the_prefilter_never_hides_a_string_the_pattern_matches(text: str, where: str) -> None:
    """Any text, Unicode included: the prefilter says "possible" for every string `_ANY` matches."""
    for value in (text, "sig=" + text, text + "\u017fig=" + text, "://" + text + ":" + text + "@"):
        obj = _deployment_with(value, where)
        if credentials._ANY.search(value):
            assert credentials._possible(obj)[0], value
        assert facts(obj, inventory_of([])) == facts_without_prefilter(obj)


@pytest.mark.parametrize("value", ["bas\u0130c x", "bas\u0131c x", "\u017fig=abc"])
def test_text_where_python_folds_case_beyond_re2_is_searched_string_by_string(value: str) -> None:
    """Python's case-insensitive match takes the dotted and dotless i for `i`; RE2 does not: such
    text is never prefiltered out."""
    assert credentials._ANY.search(value)
    obj = _deployment_with(value, "args")
    assert credentials._possible(obj)[0]
    assert facts(obj, inventory_of([])) == facts_without_prefilter(obj)


def _many_entries_configmap(rng: Any, n: int) -> dict[str, Any]:
    names = ["DB_PASSWORD", "clientSecret", "api-key", "storageKey", "conn_str", "sasUrl", "x", "keyContent"]
    names += ["userName", "replicas", "Passwd", "TOKEN", "authToken", "credentials", "notes", "K\u212aey"]
    values: list[Any] = ["plain", "hunter2-correct-horse", "user=admin\npassword=Secr3t!x", AWS, SAS_URL]
    values += [" user x", "\x1cuser y", "key: v\nsecret: s3cr3tValue", "", "${REF}", 42, None, "bas\u0130c x"]
    values += ["postgres://trainer:Canary-Pw-42@db:5432/runs", "Bearer abc123def", GITHUB]
    data = {}
    for i in range(n):
        name = rng.choice(names) if rng.random() < 0.1 else f"k{i:05d}"
        key = f"{name}{i}" if rng.random() < 0.5 else f"{i}.{name}"
        data[key] = rng.choice(values) if rng.random() < 0.1 else "v" * 20
    metadata = {"name": "big", "namespace": "ml"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


@pytest.mark.parametrize("seed", range(12))
def test_many_data_entries_sifted_at_once_give_the_same_facts(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past MANY_ENTRIES, a ConfigMap's names and values are sifted by one RE2 search each; the facts
    are those of reading every entry (names that need a word of _NAME, values with a hint or a
    format, whitespace as Python reads it, non-ASCII text and non-string values)."""
    obj = _many_entries_configmap(random.Random(seed), 400 + seed * 50)
    if seed % 3 == 0:  # ASCII only: both sieves apply
        obj["data"] = {
            k: v for k, v in obj["data"].items() if k.isascii() and (not isinstance(v, str) or v.isascii())
        }
    sifted = facts(obj, inventory_of([]))
    monkeypatch.setattr(credentials, "MANY_ENTRIES", 10**9)
    assert sifted == facts(obj, inventory_of([]))
    assert sifted  # the mix holds credentials


def _spellings(word: str) -> set[str]:
    """Every text a name of _NAME's alternation matches: each `_?` and `s?` present or not."""
    parts = re.split(r"(_\?|s\?)", word)
    options = [[p[0], ""] if p in ("_?", "s?") else [p] for p in parts]
    return {"".join(choice) for choice in itertools.product(*options)}


def test_the_name_sieve_has_a_word_of_every_name_the_pattern_takes() -> None:
    """Every credential name of _NAME, in each spelling it takes, contains a word of _NAME_STEMS."""
    alternation = credentials._NAME.pattern.split("(?:", 2)[2].rsplit(")$", 1)[0]
    for word in alternation.split("|"):
        for spelled in _spellings(word):
            assert credentials._NAME.match(spelled), spelled
            assert credentials._NAME_STEMS.search(spelled), spelled


def test_a_credential_variable_filled_in_before_apply_is_reported() -> None:
    """kubernetes-sigs/lws' guides apply their examples through envsubst: `value: $HF_TOKEN` puts
    the Hugging Face token into the LeaderWorkerSet in plaintext (8 containers, said nowhere). Only
    a whole `$NAME` or `${NAME}` under a credential's name in a container's env: Kubernetes' own
    `$(NAME)` refers to another variable, a ConfigMap's `${NAME}` is often the application's."""
    container = {
        "name": "app",
        "env": [
            {"name": "HF_TOKEN", "value": "$HF_TOKEN"},
            {"name": "DB_PASSWORD", "value": " ${DB_PASSWORD} "},
            {"name": "API_TOKEN", "value": "$(OTHER_TOKEN)"},
            {"name": "MODEL", "value": "$MODEL"},
            {"name": "AUTH_TOKEN", "value": "prefix-${TOKEN}"},
        ],
    }
    found = {e["path"][-2]: e for e in _facts(_deployment(container))}
    assert set(found) == {0, 1}
    assert found[0]["types"] == [credentials.SUBSTITUTED] and found[0]["name"] == "HF_TOKEN"
    assert not _facts(_configmap({"password": "${DB_PASSWORD}"}))


# ---- custom resources (rule kind @custom) --------------------------------------------------------------


def _scan_findings(*objects: dict[str, Any]) -> list[Any]:
    from stockade.policies.config.settings import parse_config
    from stockade.policies.evaluate import Evaluator
    from stockade.policies.model import Resource
    from stockade.scanner.scan import ScanOptions, scan

    evaluator = Evaluator.default(parse_config("{}"))
    result = scan([Resource(o) for o in objects], evaluator, ScanOptions(evaluator.config), version="t")
    assert result.errors == []
    return [f for f in result.findings if f.rule.id == "STK-CRED-001"]


def test_a_credential_in_a_custom_resource_is_found() -> None:
    """A TrainJob's trainer env holding a Hugging Face token, and an Argo CD Application whose Helm
    values hold an OpenAI key, passed a scan: no rule read their kinds. A custom resource no rule names
    is evaluated under `@custom` by the rules that read any object's text; a built-in kind's
    reference (an Ingress annotation naming its auth Secret), a CRD's schema and a SealedSecret's
    encrypted data are not credentials."""
    train_job = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "llm", "namespace": "ml"},
        "spec": {"trainer": {"image": "pytorch:2", "env": [{"name": "HF_TOKEN", "value": HUGGING_FACE}]}},
    }
    key = "sk-" + "proj-" + "Ab9_" * 12
    application = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "chat", "namespace": "argocd"},
        "spec": {"source": {"helm": {"values": f"openai:\n  apiKey: {key}\n"}}},
    }
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {
            "name": "web",
            "namespace": "ml",
            "annotations": {"nginx.ingress.kubernetes.io/auth-secret": "basic-auth"},
        },
        "spec": {"rules": []},
    }
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "trainjobs.trainer.kubeflow.org"},
        "spec": {"group": "trainer.kubeflow.org", "names": {"kind": "TrainJob"}, "versions": []},
    }
    sealed = {
        "apiVersion": "bitnami.com/v1alpha1",
        "kind": "SealedSecret",
        "metadata": {"name": "db", "namespace": "ml"},
        "spec": {"encryptedData": {"password": base64.b64encode(bytes(range(200))).decode()}},
    }
    found = _scan_findings(train_job, application, ingress, crd, sealed)
    assert sorted((f.resource.kind, f.path) for f in found) == [
        ("Application", ("spec", "source", "helm", "values")),
        ("TrainJob", ("spec", "trainer", "env", 0, "value")),
    ]
    assert "Hugging Face token" in next(f.message for f in found if f.resource.kind == "TrainJob")
    assert all(HUGGING_FACE not in f.message and key not in f.message for f in found)
