package stockade.rbac.escalation_paths_test

import data.stockade.rbac.escalation_paths
import rego.v1

path(target, n) := {
	"subjectIndex": 1,
	"subject": "Group deployers",
	"target": target,
	"length": n,
	"steps": ["Group deployers can create pods in namespace ml (RoleBinding ml/b -> ClusterRole edit), so it acts as ServiceAccount ml/admin"],
	"bindings": ["RoleBinding ml/b"],
	"gains": ["STK-RBAC-006 bind clusterroles.rbac.authorization.k8s.io (cluster-wide)"],
}

binding(name) := {"kind": "RoleBinding", "metadata": {"name": name, "namespace": "ml"}, "roleRef": {"kind": "ClusterRole", "name": "edit"}, "subjects": []}

deny(name, paths, cfg) := d if {
	d := escalation_paths.deny with input as {"object": binding(name), "facts": {"rbac": {"escalations": paths}}} with data.stockade.config as cfg
}

cfg(len, max) := {"scope": {"include_system_rbac": false}, "rbac": {"max_path_length": len, "max_paths_per_binding": max}}

test_path_reported_at_subject if {
	vs := deny("b", [path("ServiceAccount ml/admin", 1)], cfg(3, 20))
	count(vs) == 1
	some v in vs
	v.path == ["subjects", 1]
	v.msg == "RoleBinding \"b\" lets Group deployers escalate to ServiceAccount ml/admin: Group deployers can create pods in namespace ml (RoleBinding ml/b -> ClusterRole edit), so it acts as ServiceAccount ml/admin; it gains STK-RBAC-006 bind clusterroles.rbac.authorization.k8s.io (cluster-wide)"
}

test_no_paths_allowed if {
	count(deny("b", [], cfg(3, 20))) == 0
	count(escalation_paths.deny) == 0 with input as {"object": binding("b"), "facts": {}}
}

# issue 37: one finding per subject (it was one per path), the paths in its details
test_max_length_and_count if {
	ps := [path("ServiceAccount ml/a", 1), path("ServiceAccount ml/b", 2), path("ServiceAccount ml/c", 1), path("ServiceAccount ml/d", 1)]
	some short in deny("b", ps, cfg(1, 20))
	short.details.targets == ["ServiceAccount ml/a", "ServiceAccount ml/c", "ServiceAccount ml/d"]
	vs := deny("b", ps, cfg(3, 2))
	count(vs) == 1
	some v in vs
	count(v.details.paths) == 2
	v.details.morePaths == 2
	contains(v.msg, "escalate to ServiceAccount ml/a; ServiceAccount ml/b; ServiceAccount ml/c; ServiceAccount ml/d:")
	endswith(v.msg, "(the first of 4 paths)")
}

test_one_finding_per_subject if {
	other := object.union(path("ServiceAccount ml/x", 1), {"subjectIndex": 0, "subject": "User alice"})
	vs := deny("b", [path("ServiceAccount ml/a", 1), other], cfg(3, 20))
	{v.path | some v in vs} == {["subjects", 0], ["subjects", 1]}
}

test_bootstrap_binding_out_of_scope if {
	labelled := object.union(binding("system:controller:x"), {"metadata": {"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}})
	d := escalation_paths.deny with input as {"object": labelled, "facts": {"rbac": {"escalations": [path("ServiceAccount ml/admin", 1)]}}} with data.stockade.config as cfg(3, 20)
	count(d) == 0

	# a system: name without the bootstrapping label is anyone's binding: in scope
	count(deny("system:controller:x", [path("ServiceAccount ml/admin", 1)], cfg(3, 20))) == 1
}
