package stockade.credentials.plaintext_test

import data.stockade.credentials.plaintext
import rego.v1

# What policies/facts/credentials.py computes (tests/policies/test_credentials_facts.py tests that).
inp(entries) := {"object": {"kind": "Deployment", "metadata": {"name": "trainer"}}, "pod": {"spec": {}}, "facts": {"credentials": entries}}

deny(entries, cfg) := d if {
	d := plaintext.deny with input as inp(entries) with data.stockade.config as cfg
}

env_entry := {"path": ["spec", "template", "spec", "containers", 0, "env", 0, "value"], "types": ["Hugging Face token"], "name": null, "inside": null}

test_one_finding_per_field_naming_path_and_types if {
	vs := deny([env_entry], {})
	count(vs) == 1
	some v in vs
	v.path == env_entry.path
	v.msg == "plaintext credential (Hugging Face token) at spec.template.spec.containers[0].env[0].value"
	v.details == {"types": ["Hugging Face token"]}
}

test_last_applied_points_at_the_annotation if {
	e := {"path": ["metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"], "types": ["value of a credential-named variable"], "name": "DB_PASSWORD", "inside": ["spec", "template", "spec", "containers", 0, "env", 1, "value"]}
	some v in deny([e], {})
	v.details.field == "spec.template.spec.containers[0].env[1].value"
	contains(v.msg, "in the kubectl.kubernetes.io/last-applied-configuration annotation")
}

test_configmap_keys_are_quoted_when_needed if {
	e := {"path": ["data", "app.yaml"], "types": ["private key"], "name": null, "inside": null}
	some v in deny([e], {})
	v.msg == "plaintext credential (private key) at data[\"app.yaml\"]"
}

test_allowed_names_are_never_reported if {
	e := object.union(env_entry, {"name": "GRAFANA_ADMIN_PASSWORD", "types": ["value of a credential-named variable"]})
	count(deny([e], {})) == 1
	count(deny([e], {"credentials": {"allowed_names": ["grafana_*"]}})) == 0
}

test_no_facts_no_finding if {
	d := plaintext.deny with input as {"object": {"kind": "ConfigMap"}}
	count(d) == 0
}
