package stockade.rbac.pod_exec_test

import data.stockade.rbac.pod_exec
import rego.v1

role(kind, name, rules) := {"kind": kind, "metadata": {"name": name, "namespace": "team-a"}, "rules": rules}

deny(obj, include_system) := d if {
	d := pod_exec.deny with input as {"object": obj} with data.stockade.config as {"scope": {"include_system_rbac": include_system}}
}

test_denied_0 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]}]), false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]}]), false)) == 1
}

deny_on(obj, version) := d if {
	d := pod_exec.deny with input as {"object": obj} with data.stockade.config as {"rbac": {"kubernetes_version": version}}
}

test_denied_1 if {
	# get alone opens a WebSocket session before Kubernetes 1.35, not from 1.35 (create is required)
	obj := role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": [""], "resources": ["pods/attach"], "verbs": ["get"]}])
	vs := deny_on(obj, "1.34")
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	count(deny_on(role("Role", "r", [{"apiGroups": [""], "resources": ["pods/attach"], "verbs": ["get"]}]), "1.30")) == 1
	count(deny_on(obj, "1.35")) == 0
	count(deny(obj, false)) == 1 # unset: any supported version, so get counts
	count(deny_on(role("Role", "r", [{"apiGroups": [""], "resources": ["pods/attach"], "verbs": ["get", "create"]}]), "1.35")) == 1
}

test_denied_2 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": [""], "resources": ["*/portforward"], "verbs": ["*"]}]), false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["*/portforward"], "verbs": ["*"]}]), false)) == 1
}

test_allowed_0 if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "create"]}]), false)) == 0
}

test_allowed_1 if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["list", "watch"]}]), false)) == 0
}

test_bootstrap_objects_out_of_scope_unless_included if {
	rules := [{"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]}]
	# a system: name without the bootstrapping label is anyone's object: in scope
	count(deny(role("ClusterRole", "system:controller:x", rules), false)) == 1
	labelled := {"kind": "ClusterRole", "metadata": {"name": "admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}, "rules": rules}
	count(deny(labelled, false)) == 0
	count(deny(labelled, true)) == 1
	count(deny(role("ClusterRole", "system:controller:x", rules), true)) == 1
}

test_other_kinds_ignored if {
	count(deny({"kind": "RoleBinding", "metadata": {"name": "b"}, "rules": [{"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]}]}, false)) == 0
}
