package stockade.rbac.admission_webhooks_test

import data.stockade.rbac.admission_webhooks
import rego.v1

role(kind, name, rules) := {"kind": kind, "metadata": {"name": name, "namespace": "team-a"}, "rules": rules}

deny(obj, include_system) := d if {
	d := admission_webhooks.deny with input as {"object": obj} with data.stockade.config as {"scope": {"include_system_rbac": include_system}}
}

test_denied_0 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations"], "verbs": ["patch"]}]), false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	# a namespaced Role never grants cluster-scoped resources (a RoleBinding cannot)
	count(deny(role("Role", "r", [{"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations"], "verbs": ["patch"]}]), false)) == 0
}

test_denied_1 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["validatingwebhookconfigurations"], "verbs": ["delete"]}]), false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	# a namespaced Role never grants cluster-scoped resources (a RoleBinding cannot)
	count(deny(role("Role", "r", [{"apiGroups": ["admissionregistration.k8s.io"], "resources": ["validatingwebhookconfigurations"], "verbs": ["delete"]}]), false)) == 0
}

test_allowed_0 if {
	count(deny(role("Role", "r", [{"apiGroups": ["admissionregistration.k8s.io"], "resources": ["validatingwebhookconfigurations"], "verbs": ["get", "list", "watch"]}]), false)) == 0
}

test_bootstrap_objects_out_of_scope_unless_included if {
	rules := [{"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations"], "verbs": ["patch"]}]
	# a system: name without the bootstrapping label is anyone's object: in scope
	count(deny(role("ClusterRole", "system:controller:x", rules), false)) == 1
	labelled := {"kind": "ClusterRole", "metadata": {"name": "admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}, "rules": rules}
	count(deny(labelled, false)) == 0
	count(deny(labelled, true)) == 1
	count(deny(role("ClusterRole", "system:controller:x", rules), true)) == 1
}

test_other_kinds_ignored if {
	count(deny({"kind": "RoleBinding", "metadata": {"name": "b"}, "rules": [{"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations"], "verbs": ["patch"]}]}, false)) == 0
}

# spark-operator's webhook updates its own configurations by name: still the whole risk (its rules
# and endpoint can be widened), but not "or disables policy" of the others, which needs their names.
test_named_configurations_say_what_they_allow if {
	r := {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"], "verbs": ["get", "update"], "resourceNames": ["spark-operator-webhook"]}
	vs := deny(role("ClusterRole", "spark-operator-webhook", [r]), false)
	{v.msg | some v in vs} == {"ClusterRole \"spark-operator-webhook\" grants update mutatingwebhookconfigurations.admissionregistration.k8s.io, update validatingwebhookconfigurations.admissionregistration.k8s.io: it rewrites the admission webhook configurations it names: their rules and endpoint can be widened to read or mutate every object admitted"}
}
