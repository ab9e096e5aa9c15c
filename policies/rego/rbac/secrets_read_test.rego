package stockade.rbac.secrets_read_test

import data.stockade.rbac.secrets_read
import rego.v1

role(kind, name, rules) := {"kind": kind, "metadata": {"name": name, "namespace": "team-a"}, "rules": rules}

deny(obj, include_system) := d if {
	d := secrets_read.deny with input as {"object": obj} with data.stockade.config as {"scope": {"include_system_rbac": include_system}}
}

test_denied_0 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]), false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]), false)) == 1
}

test_denied_1 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"]}]), false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	count(deny(role("Role", "r", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"]}]), false)) == 1
}

test_denied_2 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": ["db"]}]), false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": ["db"]}]), false)) == 1
}

test_allowed_0 if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]), false)) == 0
}

test_allowed_1 if {
	count(deny(role("Role", "r", [{"apiGroups": ["apps"], "resources": ["secrets"], "verbs": ["get"]}]), false)) == 0
}

test_allowed_2 if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "delete"]}]), false)) == 0
}

test_bootstrap_objects_out_of_scope_unless_included if {
	rules := [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]
	# a system: name without the bootstrapping label is anyone's object: in scope
	count(deny(role("ClusterRole", "system:controller:x", rules), false)) == 1
	labelled := {"kind": "ClusterRole", "metadata": {"name": "admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}, "rules": rules}
	count(deny(labelled, false)) == 0
	count(deny(labelled, true)) == 1
	count(deny(role("ClusterRole", "system:controller:x", rules), true)) == 1
}

test_other_kinds_ignored if {
	count(deny({"kind": "RoleBinding", "metadata": {"name": "b"}, "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]}, false)) == 0
}

# spark-operator's webhook: get and update on its own certificate Secret, by name. The message said
# it "reads Secrets, including ServiceAccount tokens and credentials of other workloads".
test_named_secrets_are_what_it_reads if {
	vs := deny(role("Role", "spark-operator-webhook", [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "update"], "resourceNames": ["spark-operator-webhook-certs"]}]), false)
	{v.msg | some v in vs} == {"Role \"spark-operator-webhook\" grants get secrets: it reads the Secrets it names, whatever they hold (a token Secret's account is an escalation, STK-RBAC-031)"}
	ws := deny(role("Role", "r", [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]), false)
	{w.msg | some w in ws} == {"Role \"r\" grants list secrets: it reads Secrets, including ServiceAccount tokens and credentials of other workloads"}
}
