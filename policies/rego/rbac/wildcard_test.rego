package stockade.rbac.wildcard_test

import data.stockade.rbac.wildcard
import rego.v1

role(name, rules) := {"kind": "ClusterRole", "metadata": {"name": name}, "rules": rules}

deny(obj, include_system) := d if {
	d := wildcard.deny with input as {"object": obj} with data.stockade.config as {"scope": {"include_system_rbac": include_system}}
}

test_each_wildcard_field_reported if {
	vs := deny(role("r", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]), false)
	{v.path | some v in vs} == {["rules", 0, "verbs"], ["rules", 0, "resources"], ["rules", 0, "apiGroups"]}
}

test_wildcard_verbs_only if {
	vs := deny({"kind": "Role", "metadata": {"name": "r", "namespace": "a"}, "rules": [
		{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
		{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]},
	]}, false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1, "verbs"]
	v.msg == "Role \"r\" grants `*` in verbs of rules[1]"
}

test_subresource_wildcard_is_not_a_resource_wildcard if {
	count(deny(role("r", [{"apiGroups": [""], "resources": ["*/scale"], "verbs": ["get"]}]), false)) == 0
}

test_explicit_rules_allowed if {
	count(deny(role("r", [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"]}]), false)) == 0
	count(deny(role("r", []), false)) == 0
	count(deny({"kind": "ClusterRole", "metadata": {"name": "r"}}, false)) == 0
}

test_bootstrap_roles_out_of_scope_unless_included if {
	admin := {"kind": "ClusterRole", "metadata": {"name": "cluster-admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}, "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}
	count(deny(admin, false)) == 0
	count(deny(admin, true)) == 3
	# a system: name without the bootstrapping label is anyone's object: in scope
	count(deny(role("system:x", [{"apiGroups": ["*"], "resources": ["pods"], "verbs": ["get"]}]), false)) == 1
}
