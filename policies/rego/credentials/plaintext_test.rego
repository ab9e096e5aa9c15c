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

redis := {"path": ["data", "redis.conf"], "types": ["value of a password directive", "value under a credential-named key"], "name": null, "inside": null, "found": [
	{"format": "directive", "key": "requirepass", "line": 6, "types": ["value of a password directive"]},
	{"format": "directive", "key": "masterauth", "line": 7, "types": ["value of a password directive"]},
	{"format": "YAML", "key": null, "line": 9, "types": ["URL with a password"]},
	{"format": "JSON", "key": "db.password", "line": null, "types": ["value under a credential-named key"]},
	{"format": "text", "key": null, "line": null, "types": ["private key"]},
]}

test_one_finding_per_text_listing_what_is_inside if {
	vs := deny([redis], {})
	count(vs) == 1
	some v in vs
	v.path == ["data", "redis.conf"]
	v.msg == "plaintext credential (value of a password directive, value under a credential-named key) at data[\"redis.conf\"]: requirepass (directive, line 6); masterauth (directive, line 7); line 9 (YAML); db.password (JSON); across lines (text)"
	v.details.found == redis.found
	v.details.types == redis.types
}

test_found_inside_the_last_applied_annotation if {
	e := object.union(redis, {"path": ["metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"], "inside": ["data", "redis.conf"]})
	some v in deny([e], {})
	v.details.field == "data[\"redis.conf\"]"
	count(v.details.found) == 5
	endswith(v.msg, "at data[\"redis.conf\"]: requirepass (directive, line 6); masterauth (directive, line 7); line 9 (YAML); db.password (JSON); across lines (text)")
}

test_an_empty_found_list_adds_nothing if {
	some v in deny([object.union(env_entry, {"found": []})], {})
	v.details == {"types": ["Hugging Face token"]}
	v.msg == "plaintext credential (Hugging Face token) at spec.template.spec.containers[0].env[0].value"
}
