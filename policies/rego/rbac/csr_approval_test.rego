package stockade.rbac.csr_approval_test

import data.stockade.rbac.csr_approval
import rego.v1

role(kind, name, rules) := {"kind": kind, "metadata": {"name": name, "namespace": "team-a"}, "rules": rules}

deny(obj, include_system) := d if {
	d := csr_approval.deny with input as {"object": obj} with data.stockade.config as {"scope": {"include_system_rbac": include_system}}
}

approval_rule := {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests/approval"], "verbs": ["update"]}

signers_rule := {"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["approve"]}

test_denied_0 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, approval_rule, signers_rule]), false)
	count(vs) == 2
	{v.path | some v in vs} == {["rules", 1], ["rules", 2]}
	some v in vs
	contains(v.msg, "ClusterRole \"r\" grants ")
	# a namespaced Role never grants cluster-scoped resources (a RoleBinding cannot)
	count(deny(role("Role", "r", [approval_rule, signers_rule]), false)) == 0
}

test_denied_1 if {
	# both in one rule, with resourceNames on the signer
	r := {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests/approval", "signers"], "verbs": ["update", "approve"], "resourceNames": ["kubernetes.io/kube-apiserver-client"]}
	count(deny(role("ClusterRole", "r", [r]), false)) == 1
}

test_either_alone_approves_nothing if {
	# Kubernetes requires update on certificatesigningrequests/approval and approve on the signer
	count(deny(role("ClusterRole", "r", [approval_rule]), false)) == 0
	count(deny(role("ClusterRole", "r", [signers_rule]), false)) == 0
}

test_allowed_0 if {
	count(deny(role("Role", "r", [{"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"], "verbs": ["create", "get"]}]), false)) == 0
}

test_allowed_1 if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["signers"], "verbs": ["approve"]}]), false)) == 0
}

test_bootstrap_objects_out_of_scope_unless_included if {
	rules := [approval_rule, signers_rule]
	# a system: name without the bootstrapping label is anyone's object: in scope
	count(deny(role("ClusterRole", "system:controller:x", rules), false)) == 2
	labelled := {"kind": "ClusterRole", "metadata": {"name": "admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}, "rules": rules}
	count(deny(labelled, false)) == 0
	count(deny(labelled, true)) == 2
	count(deny(role("ClusterRole", "system:controller:x", rules), true)) == 2
}

test_other_kinds_ignored if {
	count(deny({"kind": "RoleBinding", "metadata": {"name": "b"}, "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests/approval"], "verbs": ["update"]}]}, false)) == 0
}
