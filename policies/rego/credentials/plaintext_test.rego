package stockade.credentials.plaintext_test

import data.stockade.credentials.plaintext
import rego.v1

# Canary credentials in their published formats, assembled here so that no token-shaped string is
# committed (secret scanners would flag the repository itself). None of them is a real credential.
github := concat("", ["gh", "p_", "R7wQ2mZ9xK4vT1nB8cJ3hL6sD0fG5aY2uE9i"])

hugging_face := concat("", ["hf", "_", "QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUi"])

storage_key := concat("", [strings.replace_n({"x": "Ab3+"}, "xxxxxxxxxxxxxxxxxxx"), "+ASt", "Xy9Zk", "Q=="])

connection_string := concat("", ["DefaultEndpointsProtocol=https;AccountName=stml;AccountKey=", strings.replace_n({"x": "Zq9/"}, "xxxxxxxxxxxxxxxxxxxxx"), "Zk==;EndpointSuffix=core.windows.net"])

sas_url := concat("", ["https://stml.blob.core.windows.net/models?sv=2022-11-02&ss=b&sp=r&se=2030-01-01&sig=", "Qm9ndXNTaWduYXR1cmVGb3JUZXN0aW5nT25seTEyMzQ1Njc4", "%3D"])

entra_secret := concat("", ["aB3", "8Q~", "Zx9.Wv8_Ut7-Sr6~Qp5.On4_Ml3-Kj2~"])

aws_key := concat("", ["AK", "IA", "QYLPMN5HHHFPZAM2"])

pem := concat("", ["-----BEGIN ", "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"])

deployment(container) := {
	"object": {"kind": "Deployment", "metadata": {"name": "trainer", "namespace": "ml"}},
	"pod": {"spec": {"containers": [container]}, "metadata": {}, "path": ["spec", "template"]},
}

deny(i) := d if {
	d := plaintext.deny with input as i with data.stockade.config as {}
}

no_value(vs, value) if {
	every v in vs {
		not contains(json.marshal(v), value)
	}
}

test_formats_in_env_are_found_by_type if {
	c := {"name": "app", "env": [
		{"name": "HUB", "value": hugging_face},
		{"name": "GH", "value": github},
		{"name": "STORAGE", "value": connection_string},
		{"name": "MODELS", "value": sas_url},
		{"name": "AWS_ID", "value": aws_key},
	]}
	vs := deny(deployment(c))
	types := {t | some v in vs; some t in v.details.types}
	types == {"Hugging Face token", "GitHub token", "Azure storage account key", "Azure SAS token", "AWS access key id"}
	some v in vs
	v.path == ["spec", "template", "spec", "containers", 0, "env", 0, "value"]
	v.msg == "plaintext credential (Hugging Face token) at spec.template.spec.containers[0].env[0].value"
	no_value(vs, hugging_face)
	no_value(vs, github)
	no_value(vs, sas_url)
}

test_credential_names_with_plain_values if {
	c := {"name": "app", "env": [
		{"name": "AZURE_CLIENT_SECRET", "value": "not-a-format-but-a-secret"},
		{"name": "dbPassword", "value": "hunter2hunter2"},
		{"name": "OPENAI_API_KEY", "value": "abcdefgh"},
	]}
	vs := deny(deployment(c))
	count(vs) == 3
	every v in vs {
		v.details.types == ["value of a credential-named variable"]
	}
	no_value(vs, "hunter2hunter2")
}

test_references_paths_and_other_names_are_not_credentials if {
	c := {"name": "app", "env": [
		{"name": "AZURE_CLIENT_SECRET", "valueFrom": {"secretKeyRef": {"name": "sp", "key": "secret"}}},
		{"name": "DB_PASSWORD", "value": "$(PASSWORD_FROM_SECRET)"},
		{"name": "API_TOKEN", "value": "{{ .Values.token }}"},
		{"name": "HF_TOKEN", "value": "/var/run/secrets/hf/token"},
		{"name": "TOKEN_TTL", "value": "3600"},
		{"name": "SECRET_NAME", "value": "trainer-credentials"},
		{"name": "PASSWORD_FILE", "value": "/etc/pw"},
		{"name": "AZURE_CLIENT_ID", "value": "00000000-0000-0000-0000-000000000000"},
		{"name": "ACCESS_TOKEN", "value": "<token>"},
		{"name": "REFRESH_TOKEN", "value": "true"},
	]}
	count(deny(deployment(c))) == 0
}

test_published_examples_are_not_credentials if {
	c := {"name": "app", "env": [
		{"name": "AWS_ID", "value": "AKIAIOSFODNN7EXAMPLE"},
		{"name": "AZURITE", "value": "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"},
	]}
	count(deny(deployment(c))) == 0
}

test_args_command_and_annotations if {
	c := {"name": "app", "command": ["sh", "-c", concat("", ["git clone https://x:", github, "@github.com/org/repo"])], "args": ["--key", entra_secret]}
	i := object.union(deployment(c), {"object": {"metadata": {"annotations": {"ci/token": aws_key}}}, "pod": {"metadata": {"annotations": {"key": pem}}}})
	vs := deny(i)
	paths := {v.path | some v in vs}
	paths == {
		["spec", "template", "spec", "containers", 0, "command", 2],
		["spec", "template", "spec", "containers", 0, "args", 1],
		["metadata", "annotations", "ci/token"],
		["spec", "template", "metadata", "annotations", "key"],
	}
	some v in vs
	v.path == ["spec", "template", "spec", "containers", 0, "command", 2]
	v.details.types == ["GitHub token", "URL with a password"]
	no_value(vs, github)
	no_value(vs, entra_secret)
}

test_configmap_data if {
	cm := {"object": {"kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {
		"storage": connection_string,
		"db-password": "correct-horse-battery",
		"log-level": "debug",
		"token_ttl": "3600",
		"app.yaml": concat("", ["hub:\n  token: ", hugging_face, "\n"]),
	}}}
	vs := deny(cm)
	{[v.path, v.details.types] | some v in vs} == {
		[["data", "storage"], ["Azure storage account key"]],
		[["data", "db-password"], ["value under a credential-named key"]],
		[["data", "app.yaml"], ["Hugging Face token"]],
	}
	no_value(vs, "correct-horse-battery")
}

test_last_applied_configuration_is_decoded if {
	applied := json.marshal({"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"name": "app", "env": [{"name": "HF_TOKEN", "value": hugging_face}, {"name": "DB_PASSWORD", "value": "plain-text-pw"}]}]}}}})
	i := {"object": {"kind": "Deployment", "metadata": {"name": "t", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": applied}}}, "pod": {"spec": {"containers": [{"name": "app"}]}, "metadata": {}, "path": ["spec", "template"]}}
	vs := deny(i)
	count(vs) == 2
	every v in vs {
		v.path == ["metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"]
	}
	{v.details.field | some v in vs} == {"spec.template.spec.containers[0].env[0].value", "spec.template.spec.containers[0].env[1].value"}
	no_value(vs, hugging_face)
	no_value(vs, "plain-text-pw")
}

test_last_applied_configmap_keys if {
	applied := json.marshal({"kind": "ConfigMap", "data": {"api-key": "k-123456789"}})
	vs := deny({"object": {"kind": "ConfigMap", "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": applied}}}})
	some v in vs
	v.details.field == "data.api-key"
}

test_allowed_names if {
	c := {"name": "app", "env": [{"name": "GRAFANA_ADMIN_PASSWORD", "value": "admin-admin"}]}
	count(deny(deployment(c))) == 1
	d := plaintext.deny with input as deployment(c) with data.stockade.config as {"credentials": {"allowed_names": ["grafana_*"]}}
	count(d) == 0
}
