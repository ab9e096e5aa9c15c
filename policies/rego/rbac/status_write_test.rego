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

# gpu-operator's operand roles patch nodes only: the message said they also rewrite pod status and
# Service load-balancer status, which they do not grant. It names what each granted write steers.
test_the_message_names_only_what_is_granted if {
	nodes := deny(role("ClusterRole", "nvidia-cc-manager", [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch", "watch"]}]))
	{v.msg | some v in nodes} == {"ClusterRole \"nvidia-cc-manager\" grants patch nodes: it rewrites what steers traffic and scheduling: node labels and taints (draws pods onto a node it controls)"}
	nfd := deny(role("ClusterRole", "nfd", [{"apiGroups": [""], "resources": ["nodes", "nodes/status"], "verbs": ["patch"]}]))
	{v.msg | some v in nfd} == {"ClusterRole \"nfd\" grants patch nodes, patch nodes/status: it rewrites what steers traffic and scheduling: node labels and taints (draws pods onto a node it controls), node status (the addresses the API server sends exec and log traffic to, the capacity that draws pods)"}
	svc := deny(role("Role", "r", [{"apiGroups": [""], "resources": ["services/status", "pods/status"], "verbs": ["update"]}]))
	{v.msg | some v in svc} == {"Role \"r\" grants update pods/status, update services/status: it rewrites what steers traffic and scheduling: pod status (joins Service endpoints), Service load-balancer status (intercepts traffic, CVE-2020-8554)"}
}
