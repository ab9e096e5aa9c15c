package stockade.rbac.workload_write_test

import data.stockade.rbac.workload_write
import rego.v1

role(kind, name, rules) := {"kind": kind, "metadata": {"name": name, "namespace": "team-a"}, "rules": rules}

deny(obj, include_system) := d if {
	d := workload_write.deny with input as {"object": obj} with data.stockade.config as {"scope": {"include_system_rbac": include_system}}
}

test_denied_0 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}]), false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}]), false)) == 1
}

test_denied_1 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["patch"]}]), false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	count(deny(role("Role", "r", [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["patch"]}]), false)) == 1
}

test_denied_2 if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, {"apiGroups": ["batch"], "resources": ["*"], "verbs": ["update"]}]), false)
	count(vs) == 1
	some v in vs
	v.path == ["rules", 1]
	contains(v.msg, "ClusterRole \"r\" grants ")
	count(deny(role("Role", "r", [{"apiGroups": ["batch"], "resources": ["*"], "verbs": ["update"]}]), false)) == 1
}

test_allowed_0 if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "delete"]}]), false)) == 0
}

test_allowed_1 if {
	count(deny(role("Role", "r", [{"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["update"]}]), false)) == 0
}

test_allowed_2 if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"], "resourceNames": ["p"]}]), false)) == 0
}

test_bootstrap_objects_out_of_scope_unless_included if {
	rules := [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}]
	# a system: name without the bootstrapping label is anyone's object: in scope
	count(deny(role("ClusterRole", "system:controller:x", rules), false)) == 1
	labelled := {"kind": "ClusterRole", "metadata": {"name": "admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}, "rules": rules}
	count(deny(labelled, false)) == 0
	count(deny(labelled, true)) == 1
	count(deny(role("ClusterRole", "system:controller:x", rules), true)) == 1
}

test_other_kinds_ignored if {
	count(deny({"kind": "RoleBinding", "metadata": {"name": "b"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}]}, false)) == 0
}

# volcano-scheduler: get, list, watch, patch, delete pods. A pod's update cannot change its
# ServiceAccount or volumes; it can change its containers' images. Said so, not "runs pods as any
# ServiceAccount of the namespace, with any volume it may mount", which needs create.
test_pod_edits_alone_say_what_they_do if {
	scheduler := role("ClusterRole", "volcano-scheduler", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "patch", "delete"]}])
	vs := deny(scheduler, false)
	{v.msg | some v in vs} == {"ClusterRole \"volcano-scheduler\" grants patch pods: it changes the image of pods already running (the one container field a pod's update may change), so runs its own code as their ServiceAccounts, with their volumes"}
	creates := role("Role", "r", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "patch"]}])
	ws := deny(creates, false)
	{w.msg | some w in ws} == {"Role \"r\" grants create pods, patch pods: it runs pods as any ServiceAccount of the namespace, with any volume it may mount"}
	cluster := role("ClusterRole", "c", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}])
	cs := deny(cluster, false)
	{c.msg | some c in cs} == {"ClusterRole \"c\" grants create pods: it runs pods as any ServiceAccount of each namespace it is granted in, with any volume it may mount"}
	controller := role("Role", "r", [{"apiGroups": ["", "apps"], "resources": ["pods", "deployments"], "verbs": ["update"]}])
	xs := deny(controller, false)
	{x.msg | some x in xs} == {"Role \"r\" grants update deployments.apps, update pods: it runs pods as any ServiceAccount of the namespace, with any volume it may mount"}
}

# Kueue's controller: update and patch on Jobs. A Job's pod template is immutable (a suspended Job's
# scheduling directives aside), so updating one runs no pod as another account; creating one does.
test_a_job_update_runs_no_pod if {
	updates := role("ClusterRole", "kueue", [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "update", "patch"]}])
	count(deny(updates, false)) == 0
	creates := role("ClusterRole", "kueue", [{"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": ["create", "update"]}])
	{v.msg | some v in deny(creates, false)} == {"ClusterRole \"kueue\" grants create cronjobs.batch, create jobs.batch, update cronjobs.batch: it runs pods as any ServiceAccount of each namespace it is granted in, with any volume it may mount"}
}
