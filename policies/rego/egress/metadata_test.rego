package stockade.egress.metadata_test

import data.stockade.egress.metadata
import rego.v1

np(block) := {"object": {
	"kind": "NetworkPolicy",
	"metadata": {"name": "p", "namespace": "ml"},
	"spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [{"ipBlock": block}]}]},
}}

wl(egress) := {"object": {"kind": "Deployment", "metadata": {"name": "w", "namespace": "ml"}}, "facts": {"egress": egress}}

details(inp) := {v.details.address | some v in metadata.deny with input as inp with data.stockade.config as {}}

test_link_local_block_denied if {
	details(np({"cidr": "169.254.0.0/16"})) == {"169.254.169.254"}
}

test_internet_reaches_both if {
	details(np({"cidr": "0.0.0.0/0"})) == {"169.254.169.254", "168.63.129.16"}
}

test_except_removes_it if {
	details(np({"cidr": "0.0.0.0/0", "except": ["169.254.169.254/32", "168.63.129.16/32"]})) == set()
}

test_private_subnet_allowed if {
	details(np({"cidr": "10.240.8.0/24"})) == set()
}

test_isolated_workload_reaching_it_denied if {
	details(wl({"isolated": true, "cidrs": ["0.0.0.0/0", "::/0"], "policies": ["ml/open"]})) == {"169.254.169.254", "168.63.129.16"}
}

test_isolated_workload_on_private_subnet_allowed if {
	details(wl({"isolated": true, "cidrs": ["10.240.8.0/24"], "policies": []})) == set()
}

test_unisolated_workload_left_to_stk_net_001 if {
	details(wl({"isolated": false, "cidrs": ["0.0.0.0/0"], "policies": []})) == set()
}

cnp(spec) := {"object": {"kind": "CiliumNetworkPolicy", "metadata": {"name": "p", "namespace": "ml"}, "spec": spec}}

test_cilium_world_reaches_metadata if {
	details(cnp({"endpointSelector": {}, "egress": [{"toEntities": ["world"]}]})) == {"169.254.169.254", "168.63.129.16"}
}

test_cilium_egress_deny_wins if {
	spec := {
		"endpointSelector": {},
		"egress": [{"toCIDRSet": [{"cidr": "0.0.0.0/0"}]}],
		"egressDeny": [{"toCIDR": ["169.254.169.254/32", "168.63.129.16/32"]}],
	}
	details(cnp(spec)) == set()
}

test_cilium_cidr_except if {
	spec := {"endpointSelector": {}, "egress": [{"toCIDRSet": [{"cidr": "168.63.0.0/16", "except": ["168.63.129.16/32"]}]}]}
	details(cnp(spec)) == set()
	details(cnp({"endpointSelector": {}, "egress": [{"toCIDR": ["168.63.0.0/16"]}]})) == {"168.63.129.16"}
}

calico(egress) := {"object": {
	"apiVersion": "projectcalico.org/v3",
	"kind": "GlobalNetworkPolicy",
	"metadata": {"name": "p"},
	"spec": {"selector": "all()", "egress": egress},
}}

allow_internet := {"action": "Allow", "destination": {"nets": ["0.0.0.0/0"]}}

test_calico_allow_internet_reaches_metadata if {
	details(calico([allow_internet])) == {"169.254.169.254", "168.63.129.16"}
}

test_calico_earlier_deny_wins if {
	deny_imds := {"action": "Deny", "destination": {"nets": ["169.254.169.254/32"]}}
	details(calico([deny_imds, allow_internet])) == {"168.63.129.16"}
}

test_calico_later_deny_does_not_help if {
	deny_imds := {"action": "Deny", "destination": {"nets": ["169.254.169.254/32"]}}
	details(calico([allow_internet, deny_imds])) == {"169.254.169.254", "168.63.129.16"}
}

test_calico_deny_limited_to_a_port_does_not_shadow if {
	deny_80 := {"action": "Deny", "protocol": "TCP", "destination": {"nets": ["169.254.169.254/32"], "ports": [80]}}
	details(calico([deny_80, allow_internet])) == {"169.254.169.254", "168.63.129.16"}
}
