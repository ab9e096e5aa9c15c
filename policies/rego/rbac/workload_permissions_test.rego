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

test_one_finding_per_rule_id_and_path if {
	vs := deny(inp(true, [path(1)]), 3)
	count(vs) == 3
	{v.details.rule | some v in vs; v.details.rule} == {"STK-RBAC-002", "STK-RBAC-012"}
	some v in vs
	v.details.rule == "STK-RBAC-002"
	v.path == ["spec", "template", "spec", "serviceAccountName"]
	v.msg == "pods mount the token of ServiceAccount ml/t, which holds STK-RBAC-002 permissions: get secrets (namespace ml, RoleBinding ml/r -> ClusterRole edit); list secrets (namespace ml, RoleBinding ml/r -> ClusterRole edit)"
}

test_no_token_no_finding if {
	count(deny(inp(false, [path(1)]), 3)) == 0
}

test_paths_longer_than_configured_not_reported if {
	count(deny(inp(true, [path(2)]), 1)) == 2
	count(deny(inp(true, [path(2)]), 2)) == 3
}

test_no_facts_no_finding if {
	i := {"object": {"kind": "Pod", "metadata": {"name": "p"}}, "pod": {"spec": {}, "metadata": {}, "path": []}, "facts": {}}
	count(deny(i, 3)) == 0
}
