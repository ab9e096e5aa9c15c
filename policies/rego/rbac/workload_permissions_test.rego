package stockade.rbac.workload_permissions_test

import data.stockade.rbac.workload_permissions
import rego.v1

risky := [
	{"id": "STK-RBAC-002", "permission": "get secrets", "scope": "namespace ml", "binding": "RoleBinding ml/r", "role": "ClusterRole edit", "via": "ServiceAccount ml/t", "roleFound": true},
	{"id": "STK-RBAC-002", "permission": "list secrets", "scope": "namespace ml", "binding": "RoleBinding ml/r", "role": "ClusterRole edit", "via": "ServiceAccount ml/t", "roleFound": true},
	{"id": "STK-RBAC-012", "permission": "create pods/exec", "scope": "namespace ml", "binding": "RoleBinding ml/r", "role": "ClusterRole edit", "via": "ServiceAccount ml/t", "roleFound": true},
]

path(n) := {"subject": "ServiceAccount ml/t", "target": "ServiceAccount ml/admin", "length": n, "steps": ["s1"], "bindings": ["RoleBinding ml/r"], "gains": ["STK-RBAC-006 bind clusterroles.rbac.authorization.k8s.io (cluster-wide)"]}

inp(mounted, escalations) := {
	"object": {"kind": "Deployment", "metadata": {"name": "d", "namespace": "ml"}},
	"pod": {"spec": {"serviceAccountName": "t"}, "metadata": {}, "path": ["spec", "template"]},
	"facts": {"rbac": {"serviceAccount": "ml/t", "tokenMounted": mounted, "risky": risky, "escalations": escalations}},
}

deny(i, max) := d if {
	d := workload_permissions.deny with input as i with data.stockade.config as {"rbac": {"max_path_length": max}}
}

# issue 37: one finding per pod spec and permission set (it was one per rule id and one per path)
test_one_finding_per_permission_set if {
	vs := deny(inp(true, [path(1)]), 3)
	count(vs) == 1
	some v in vs
	v.path == ["spec", "template", "spec", "serviceAccountName"]
	v.msg == "pods mount the token of ServiceAccount ml/t, which holds STK-RBAC-002, STK-RBAC-012 permissions and escalates to ServiceAccount ml/admin"
	v.details.rules == ["STK-RBAC-002", "STK-RBAC-012"]
	v.details.permissions["STK-RBAC-002"] == [
		"get secrets (namespace ml, RoleBinding ml/r -> ClusterRole edit)",
		"list secrets (namespace ml, RoleBinding ml/r -> ClusterRole edit)",
	]
	v.details.escalations == [{"target": "ServiceAccount ml/admin", "steps": ["s1"], "bindings": ["RoleBinding ml/r"], "gains": ["STK-RBAC-006 bind clusterroles.rbac.authorization.k8s.io (cluster-wide)"]}]
}

test_escalations_alone if {
	i := object.union(inp(true, [path(1)]), {"facts": {"rbac": {"risky": []}}})
	some v in deny(i, 3)
	v.msg == "pods mount the token of ServiceAccount ml/t, which escalates to ServiceAccount ml/admin"
}

test_no_token_no_finding if {
	count(deny(inp(false, [path(1)]), 3)) == 0
}

test_paths_longer_than_configured_not_reported if {
	some v in deny(inp(true, [path(2)]), 1)
	v.details.escalations == []
	some w in deny(inp(true, [path(2)]), 2)
	count(w.details.escalations) == 1
}

test_no_facts_no_finding if {
	i := {"object": {"kind": "Pod", "metadata": {"name": "p"}}, "pod": {"spec": {}, "metadata": {}, "path": []}, "facts": {}}
	count(deny(i, 3)) == 0
}

token_inp(risky_held, escalations) := {
	"object": {"kind": "Deployment", "metadata": {"name": "d", "namespace": "ml"}},
	"pod": {"spec": {"serviceAccountName": "t"}, "metadata": {}, "path": ["spec", "template"]},
	"facts": {"rbac": {"serviceAccount": "ml/t", "tokenMounted": false, "risky": [], "escalations": [], "tokenSecrets": [{
		"secret": "ops-token", "path": ["volumes", 0, "secret", "secretName"], "serviceAccount": "ml/ops",
		"risky": risky_held, "escalations": escalations,
	}]}},
}

test_a_mounted_legacy_token_secret_is_its_account_even_without_automount if {
	vs := deny(token_inp(risky, []), 3)
	count(vs) == 1
	some v in vs
	v.path == ["spec", "template", "spec", "volumes", 0, "secret", "secretName"]
	v.msg == "pods read the legacy token Secret \"ops-token\" of ServiceAccount ml/ops, and so act as it: it holds STK-RBAC-002, STK-RBAC-012 permissions"
	v.details.rules == ["STK-RBAC-002", "STK-RBAC-012"]
}

test_a_token_secret_that_only_escalates_within_the_limit if {
	count(deny(token_inp([], [path(2)]), 1)) == 0
	vs := deny(token_inp([], [path(2)]), 3)
	some v in vs
	endswith(v.msg, "escalates to ServiceAccount ml/admin")
}

test_projected_api_token_is_mounted if {
	# issue 23: automount off, but a projected serviceAccountToken the API server accepts
	spec := {"serviceAccountName": "t", "automountServiceAccountToken": false, "volumes": [{"name": "tok", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}]}
	i := object.union(inp(false, []), {"pod": {"spec": spec, "metadata": {}, "path": ["spec", "template"]}})
	count(deny(i, 3)) == 1
	other := json.patch(spec, [{"op": "add", "path": "/volumes/0/projected/sources/0/serviceAccountToken/audience", "value": "vault"}])
	count(deny(object.union(inp(false, []), {"pod": {"spec": other, "metadata": {}, "path": ["spec", "template"]}}), 3)) == 0
}
