package stockade.rbac.nodes_proxy_test

import data.stockade.rbac.nodes_proxy
import rego.v1

role(kind, name, rules) := {"kind": kind, "metadata": {"name": name, "namespace": "team-a"}, "rules": rules}

deny(obj, include_system) := d if {
	d := nodes_proxy.deny with input as {"object": obj} with data.stockade.config as {"scope": {"include_system_rbac": include_system}}
}

test_denied_0 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": [""], "resources": ["nodes/proxy"], "verbs": ["get"]}]), false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	# a namespaced Role never grants cluster-scoped resources (a RoleBinding cannot)
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["nodes/proxy"], "verbs": ["get"]}]), false)) == 0
}

test_denied_1 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": [""], "resources": ["*/proxy"], "verbs": ["create"]}]), false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	# a namespaced Role never grants cluster-scoped resources (a RoleBinding cannot)
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["*/proxy"], "verbs": ["create"]}]), false)) == 0
}

test_allowed_0 if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]), false)) == 0
}

test_allowed_1 if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["nodes/metrics", "nodes/stats"], "verbs": ["get"]}]), false)) == 0
}

test_bootstrap_objects_out_of_scope_unless_included if {
	rules := [{"apiGroups": [""], "resources": ["nodes/proxy"], "verbs": ["get"]}]
	# a system: name without the bootstrapping label is anyone's object: in scope
	count(deny(role("ClusterRole", "system:controller:x", rules), false)) == 1
	labelled := {"kind": "ClusterRole", "metadata": {"name": "admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}, "rules": rules}
	count(deny(labelled, false)) == 0
	count(deny(labelled, true)) == 1
	count(deny(role("ClusterRole", "system:controller:x", rules), true)) == 1
}

test_other_kinds_ignored if {
	count(deny({"kind": "RoleBinding", "metadata": {"name": "b"}, "rules": [{"apiGroups": [""], "resources": ["nodes/proxy"], "verbs": ["get"]}]}, false)) == 0
}
