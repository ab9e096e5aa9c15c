package stockade.rbac.status_write_test

import data.stockade.rbac.status_write
import rego.v1

role(kind, name, rules) := {"kind": kind, "metadata": {"name": name, "namespace": "team-a"}, "rules": rules}

deny(obj) := d if {
	d := status_write.deny with input as {"object": obj} with data.stockade.config as {}
}

test_node_labels_and_status_cluster_wide if {
	vs := deny(role("ClusterRole", "r", [{"apiGroups": [""], "resources": ["nodes", "nodes/status"], "verbs": ["patch"]}]))
	count(vs) == 1
	some v in vs
	contains(v.msg, "patch nodes")
	contains(v.msg, "patch nodes/status")
}

test_pod_and_service_status_in_a_namespace if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["pods/status"], "verbs": ["update"]}]))) == 1
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["services/status"], "verbs": ["patch"]}]))) == 1
}

test_a_role_never_grants_nodes if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["nodes", "nodes/status"], "verbs": ["patch"]}]))) == 0
}

test_pods_alone_do_not_match_their_status if {
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["update"]}]))) == 0
	count(deny(role("Role", "r", [{"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["get", "list"]}]))) == 0
}
