package stockade.egress.namespace_allowlist_test

import data.stockade.egress.namespace_allowlist
import rego.v1

cfg := {"egress": {
	"cluster_dns": {"namespace": "kube-system", "pod_labels": {"k8s-app": "kube-dns"}},
	"allow": [{"namespaces": ["notebooks"], "to_namespaces": ["artifact-*"]}],
}}

np(ns, peer) := {"object": {
	"kind": "NetworkPolicy",
	"metadata": {"name": "p", "namespace": ns},
	"spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [peer]}]},
}}

by_name(name) := {"matchLabels": {"kubernetes.io/metadata.name": name}}

msgs(inp) := {v.msg | some v in namespace_allowlist.deny with input as inp with data.stockade.config as cfg}

test_allowlisted_namespace_allowed if {
	msgs(np("notebooks", {"namespaceSelector": by_name("artifact-mirror")})) == set()
}

test_own_namespace_and_pod_selector_allowed if {
	msgs(np("notebooks", {"namespaceSelector": by_name("notebooks")})) == set()
	msgs(np("notebooks", {"podSelector": {"matchLabels": {"app": "x"}}})) == set()
}

test_cluster_dns_always_allowed if {
	msgs(np("ml", {"namespaceSelector": by_name("kube-system"), "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}})) == set()
}

test_other_namespace_denied if {
	some m in msgs(np("ml", {"namespaceSelector": by_name("artifact-mirror")}))
	contains(m, "\"artifact-mirror\"")
}

test_in_expression_checks_every_name if {
	sel := {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["artifact-a", "prod-db"]}]}
	count(msgs(np("notebooks", {"namespaceSelector": sel}))) == 1
}

test_label_selector_denied if {
	count(msgs(np("notebooks", {"namespaceSelector": {"matchLabels": {"team": "x"}}}))) == 1
	count(msgs(np("notebooks", {"namespaceSelector": {}}))) == 1
}

test_kube_system_without_dns_pods_denied if {
	count(msgs(np("ml", {"namespaceSelector": by_name("kube-system")}))) == 1
}

cnp(kind, ns, rule) := {"object": {
	"kind": kind,
	"metadata": object.union({"name": "p"}, {"namespace": ns}),
	"spec": {"endpointSelector": {}, "egress": [rule]},
}}

test_cilium_own_namespace_and_cluster_dns_allowed if {
	msgs(cnp("CiliumNetworkPolicy", "ml", {"toEndpoints": [{"matchLabels": {"app": "db"}}]})) == set()
	dns_sel := {"matchLabels": {"k8s:io.kubernetes.pod.namespace": "kube-system", "k8s-app": "kube-dns"}}
	msgs(cnp("CiliumNetworkPolicy", "ml", {"toEndpoints": [dns_sel]})) == set()
}

test_cilium_named_namespaces_checked if {
	msgs(cnp("CiliumNetworkPolicy", "notebooks", {"toEndpoints": [{"matchLabels": {"io.kubernetes.pod.namespace": "artifact-mirror"}}]})) == set()
	some m in msgs(cnp("CiliumNetworkPolicy", "ml", {"toEndpoints": [{"matchLabels": {"io.kubernetes.pod.namespace": "prod-db"}}]}))
	contains(m, "\"prod-db\"")
}

test_cilium_clusterwide_unnamed_endpoints_denied if {
	count(msgs(cnp("CiliumClusterwideNetworkPolicy", "", {"toEndpoints": [{"matchLabels": {"app": "db"}}]}))) == 1
}

test_cilium_namespace_expression_other_than_in_denied if {
	sel := {"matchExpressions": [{"key": "io.kubernetes.pod.namespace", "operator": "NotIn", "values": ["kube-system"]}]}
	count(msgs(cnp("CiliumNetworkPolicy", "ml", {"toEndpoints": [sel]}))) == 1
}

test_cilium_cluster_entity_denied if {
	count(msgs(cnp("CiliumNetworkPolicy", "ml", {"toEntities": ["cluster"]}))) == 1
}
