package stockade.egress.dns_test

import data.stockade.egress.dns
import rego.v1

cfg := {"egress": {"cluster_dns": {"namespace": "kube-system", "pod_labels": {"k8s-app": "kube-dns"}}}}

np(peer, ports) := {"object": {
	"kind": "NetworkPolicy",
	"metadata": {"name": "p", "namespace": "ml"},
	"spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [peer], "ports": ports}]},
}}

kube_dns := {
	"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
	"podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
}

denied(inp) := {v.path | some v in dns.deny with input as inp with data.stockade.config as cfg}

test_cluster_dns_allowed if {
	denied(np(kube_dns, [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}])) == set()
}

test_outside_resolver_denied if {
	denied(np({"ipBlock": {"cidr": "8.8.8.8/32"}}, [{"protocol": "UDP", "port": 53}])) == {["spec", "egress", 0, "to", 0]}
}

test_dns_pods_in_any_namespace_denied if {
	peer := {"namespaceSelector": {}, "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}
	count(denied(np(peer, [{"protocol": "UDP", "port": 53}]))) == 1
}

test_port_range_covering_53_denied if {
	count(denied(np({"ipBlock": {"cidr": "10.0.0.0/8"}}, [{"port": 1, "endPort": 1024}]))) == 1
}

test_other_ports_allowed if {
	denied(np({"ipBlock": {"cidr": "10.0.0.0/8"}}, [{"port": 443}, {"port": 54, "endPort": 60}])) == set()
}

cnp(rule) := {"object": {
	"kind": "CiliumNetworkPolicy",
	"metadata": {"name": "p", "namespace": "ml"},
	"spec": {"endpointSelector": {}, "egress": [rule]},
}}

dns_ports := [{"ports": [{"port": "53", "protocol": "ANY"}], "rules": {"dns": [{"matchPattern": "*"}]}}]

test_cilium_cluster_dns_allowed if {
	sel := {"matchLabels": {"k8s:io.kubernetes.pod.namespace": "kube-system", "k8s:k8s-app": "kube-dns"}}
	denied(cnp({"toEndpoints": [sel], "toPorts": dns_ports})) == set()
}

test_cilium_outside_resolver_denied if {
	denied(cnp({"toCIDR": ["1.1.1.1/32"], "toPorts": dns_ports})) == {["spec", "egress", 0, "toCIDR", 0]}
	count(denied(cnp({"toEntities": ["world"], "toPorts": [{"ports": [{"port": "1", "endPort": 1024, "protocol": "UDP"}]}]}))) == 1
}

test_cilium_other_ports_allowed if {
	denied(cnp({"toCIDR": ["10.0.0.0/8"], "toPorts": [{"ports": [{"port": "443", "protocol": "TCP"}]}]})) == set()
	denied(cnp({"toCIDR": ["10.0.0.0/8"], "toPorts": [{"ports": [{"port": "https", "protocol": "TCP"}]}]})) == set()
}

# NodeLocal DNSCache: pods send DNS to a link-local address on their node.
node_local := {"ipBlock": {"cidr": "169.254.20.10/32"}}

node_local_cfg := {"egress": {"cluster_dns": {
	"namespace": "kube-system",
	"pod_labels": {"k8s-app": "kube-dns"},
	"addresses": ["169.254.20.10"],
}}}

test_node_local_dns_address_is_cluster_dns_when_declared if {
	inp := np(node_local, [{"protocol": "UDP", "port": 53}])
	found := {v.path | some v in dns.deny with input as inp with data.stockade.config as node_local_cfg}
	found == set()
}

test_node_local_dns_address_is_an_outside_resolver_when_not_declared if {
	denied(np(node_local, [{"protocol": "UDP", "port": 53}])) == {["spec", "egress", 0, "to", 0]}
}

test_a_wider_block_around_the_dns_address_is_not_cluster_dns if {
	inp := np({"ipBlock": {"cidr": "169.254.0.0/16"}}, [{"protocol": "UDP", "port": 53}])
	found := {v.path | some v in dns.deny with input as inp with data.stockade.config as node_local_cfg}
	found == {["spec", "egress", 0, "to", 0]}
}

test_cilium_to_cidr_node_local_dns_is_cluster_dns_when_declared if {
	inp := {"object": {"kind": "CiliumNetworkPolicy", "metadata": {"name": "p", "namespace": "ml"}, "spec": {
		"endpointSelector": {},
		"egress": [{"toCIDR": ["169.254.20.10/32"], "toPorts": [{"ports": [{"port": "53", "protocol": "UDP"}]}]}],
	}}}
	found := {v.path | some v in dns.deny with input as inp with data.stockade.config as node_local_cfg}
	found == set()
	count({v | some v in dns.deny with input as inp with data.stockade.config as cfg}) == 1
}
