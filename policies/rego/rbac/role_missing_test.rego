package stockade.rbac.role_missing_test

import data.stockade.rbac.role_missing
import rego.v1

binding(labels) := {"kind": "RoleBinding", "metadata": {"name": "b", "namespace": "ml", "labels": labels}, "roleRef": {"kind": "Role", "name": "gone"}}

deny(found, complete, labels) := d if {
	f := {"rbac": {"role": {"kind": "Role", "name": "gone", "found": found}, "inventoryComplete": complete}}
	d := role_missing.deny with input as {"object": binding(labels), "facts": f} with data.stockade.config as {}
}

test_a_finding_where_the_gate_sees_the_cluster if {
	vs := deny(false, true, {})
	count(vs) == 1
	some v in vs
	v.path == ["roleRef", "name"]
	not v.details.note
	contains(v.msg, "which does not exist")
}

test_a_note_in_a_scan if {
	vs := deny(false, false, {})
	count(vs) == 1
	some v in vs
	v.details.note == true
}

test_nothing_when_the_role_exists if {
	count(deny(true, true, {})) == 0
	count(deny(true, false, {})) == 0
}

test_bootstrap_bindings_are_out_of_scope if {
	count(deny(false, true, {"kubernetes.io/bootstrapping": "rbac-defaults"})) == 0
}

test_a_system_role_in_a_scan_says_it_is_not_modelled if {
	f := {"rbac": {"role": {"kind": "ClusterRole", "name": "system:controller:job-controller", "found": false}, "inventoryComplete": false}}
	obj := {"kind": "ClusterRoleBinding", "metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "system:controller:job-controller"}}
	vs := role_missing.deny with input as {"object": obj, "facts": f} with data.stockade.config as {}
	some v in vs
	contains(v.msg, "does not model the API server's system: roles in a scan")
}
