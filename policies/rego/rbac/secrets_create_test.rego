package stockade.rbac.secrets_create_test

import data.stockade.rbac.secrets_create
import rego.v1

role(kind, name, rules) := {"kind": kind, "metadata": {"name": name, "namespace": "team-a"}, "rules": rules}

deny(obj) := d if {
	d := secrets_create.deny with input as {"object": obj} with data.stockade.config as {}
}

test_create_secrets_is_reported if {
	vs := deny(role("Role", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}]))
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "create secrets")
}

test_wildcards_count if {
	count(deny(role("ClusterRole", "r", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]))) == 1
}

test_a_create_never_matches_resource_names if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"], "resourceNames": ["x"]}]))) == 0
}

test_reading_or_updating_is_not_creating if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "update", "patch"]}]))) == 0
}

test_bootstrap_objects_are_out_of_scope if {
	obj := {"kind": "ClusterRole", "metadata": {"name": "system:x", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}, "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}]}
	count(deny(obj)) == 0
}
