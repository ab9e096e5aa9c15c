package stockade.egress.cidr_allowlist_test

import data.stockade.egress.cidr_allowlist
import rego.v1

cfg := {"egress": {"allow": [
	{"namespaces": ["ml-*"], "cidrs": ["10.240.0.0/16"]},
	{"namespaces": ["web"], "workload_labels": {"app": "proxy"}, "cidrs": ["0.0.0.0/0"]},
]}}

np(ns, selector, cidr) := {"object": {
	"kind": "NetworkPolicy",
	"metadata": {"name": "p", "namespace": ns},
	"spec": {"podSelector": selector, "policyTypes": ["Egress"], "egress": [{"to": [{"ipBlock": {"cidr": cidr}}]}]},
}}

denied(inp) := {v.path | some v in cidr_allowlist.deny with input as inp with data.stockade.config as cfg}

test_inside_allowlist_allowed if {
	denied(np("ml-training", {}, "10.240.8.0/24")) == set()
}

test_internet_denied if {
	denied(np("ml-training", {}, "0.0.0.0/0")) == {["spec", "egress", 0, "to", 0, "ipBlock", "cidr"]}
}

test_other_namespace_denied if {
	count(denied(np("notebooks", {}, "10.240.8.0/24"))) == 1
}

test_workload_label_entry_needs_the_selector_to_pin_it if {
	denied(np("web", {"matchLabels": {"app": "proxy"}}, "0.0.0.0/0")) == set()
	count(denied(np("web", {}, "0.0.0.0/0"))) == 1
}

test_nothing_allowed_by_default if {
	some v in cidr_allowlist.deny with input as np("ml", {}, "10.0.0.0/8") with data.stockade.config as {}
	v.details.allowed == []
}

cnp(ns, rule) := {"object": {
	"kind": "CiliumNetworkPolicy",
	"metadata": {"name": "p", "namespace": ns},
	"spec": {"endpointSelector": {}, "egress": [rule]},
}}

test_cilium_cidrs if {
	denied(cnp("ml-a", {"toCIDR": ["10.240.1.0/24"], "toCIDRSet": [{"cidr": "10.240.2.0/24"}]})) == set()
	denied(cnp("ml-a", {"toCIDRSet": [{"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}]})) == {["spec", "egress", 0, "toCIDRSet", 0, "cidr"]}
}

test_cilium_world_entity_denied if {
	denied(cnp("ml-a", {"toEntities": ["cluster", "world"]})) == {["spec", "egress", 0, "toEntities", 1]}
}

calico(ns, nets) := {"object": {
	"apiVersion": "projectcalico.org/v3",
	"kind": "NetworkPolicy",
	"metadata": {"name": "p", "namespace": ns},
	"spec": {"selector": "all()", "egress": [{"action": "Allow", "destination": {"nets": nets}}, {"action": "Deny", "destination": {"nets": ["0.0.0.0/0"]}}]},
}}

test_calico_nets if {
	denied(calico("ml-a", ["10.240.3.0/24"])) == set()
	denied(calico("ml-a", ["10.240.3.0/24", "8.8.8.8/32"])) == {["spec", "egress", 0, "destination", "nets", 1]}
}

test_declared_cluster_dns_address_is_allowed if {
	dns_cfg := {"egress": {"cluster_dns": {"addresses": ["169.254.20.10"]}}}
	inp := np("ml", {}, "169.254.20.10/32")
	found := {v.path | some v in cidr_allowlist.deny with input as inp with data.stockade.config as dns_cfg}
	found == set()
	count(denied(inp)) == 1
}
