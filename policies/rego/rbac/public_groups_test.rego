package stockade.rbac.public_groups_test

import data.stockade.rbac.public_groups
import rego.v1

binding(name, subjects) := {
	"kind": "ClusterRoleBinding",
	"metadata": {"name": name},
	"roleRef": {"kind": "ClusterRole", "name": "view"},
	"subjects": subjects,
}

deny(obj) := d if {
	d := public_groups.deny with input as {"object": obj} with data.stockade.config as {"scope": {"include_system_rbac": false}}
}

test_each_public_subject_denied if {
	vs := deny(binding("b", [
		{"kind": "Group", "name": "system:authenticated"},
		{"kind": "User", "name": "alice"},
		{"kind": "User", "name": "system:anonymous"},
		{"kind": "Group", "name": "system:unauthenticated"},
	]))
	{v.path | some v in vs} == {["subjects", 0], ["subjects", 2], ["subjects", 3]}
	some v in vs
	v.msg == "ClusterRoleBinding \"b\" grants ClusterRole \"view\" to Group system:authenticated"
}

test_ordinary_subjects_allowed if {
	count(deny(binding("b", [{"kind": "Group", "name": "developers"}, {"kind": "ServiceAccount", "name": "system:authenticated", "namespace": "x"}]))) == 0
	count(deny(binding("b", []))) == 0
}

test_bootstrap_bindings_out_of_scope if {
	b := binding("system:public-info-viewer", [{"kind": "Group", "name": "system:unauthenticated"}])
	labelled := object.union(b, {"metadata": {"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}})
	count(deny(labelled)) == 0

	# the same binding without the label (system:backdoor, say) is anyone's: in scope
	count(deny(b)) == 1
}

# Kubeflow Pipelines publishes its version in the kubeflow-pipelines-public ConfigMap to every
# authenticated user, by design: the role (known to the gate) only reads that named ConfigMap
test_a_role_that_only_publishes_information_is_not_reported if {
	b := binding("kubeflow-pipelines-public", [{"kind": "Group", "name": "system:authenticated"}])
	published := {"rbac": {"role": {"kind": "Role", "name": "kubeflow-pipelines-public", "found": true, "publicInformation": true}}}
	count(public_groups.deny) == 0 with input as {"object": b, "facts": published} with data.stockade.config as {}
	unknown := {"rbac": {"role": {"kind": "Role", "name": "kubeflow-pipelines-public", "found": false}}}
	count(public_groups.deny) == 1 with input as {"object": b, "facts": unknown} with data.stockade.config as {}
}
