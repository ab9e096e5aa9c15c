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

all_ports := [["SCTP", 1, 65535], ["TCP", 1, 65535], ["UDP", 1, 65535]]

test_isolated_workload_reaching_it_denied if {
	details(wl({"isolated": true, "cidrs": ["0.0.0.0/0", "::/0"], "policies": ["ml/open"], "cidrPorts": [
		{"cidr": "0.0.0.0/0", "ports": all_ports},
		{"cidr": "::/0", "ports": all_ports},
	]})) == {"169.254.169.254", "168.63.129.16"}
}

test_isolated_workload_open_on_443_only_allowed if {
	details(wl({"isolated": true, "cidrs": ["0.0.0.0/0"], "policies": ["ml/https"], "cidrPorts": [{"cidr": "0.0.0.0/0", "ports": [["TCP", 443, 443]]}]})) == set()
}

test_isolated_workload_port_range_over_80_denied if {
	details(wl({"isolated": true, "cidrs": ["0.0.0.0/0"], "policies": ["ml/web"], "cidrPorts": [{"cidr": "0.0.0.0/0", "ports": [["TCP", 1, 1024]]}]})) == {"169.254.169.254", "168.63.129.16"}
}

np_ports(block, ports) := {"object": {
	"kind": "NetworkPolicy",
	"metadata": {"name": "p", "namespace": "ml"},
	"spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [{"ipBlock": block}], "ports": ports}]},
}}

test_rule_limited_to_tcp_443_allowed if {
	details(np_ports({"cidr": "0.0.0.0/0"}, [{"protocol": "TCP", "port": 443}])) == set()
}

test_rule_limited_to_dns_allowed if {
	details(np_ports({"cidr": "0.0.0.0/0"}, [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}])) == set()
}

test_rule_on_port_80_default_tcp_denied if {
	details(np_ports({"cidr": "0.0.0.0/0"}, [{"port": 80}])) == {"169.254.169.254", "168.63.129.16"}
}

test_rule_on_wireserver_range_denied if {
	details(np_ports({"cidr": "168.63.129.0/24"}, [{"protocol": "TCP", "port": 30000, "endPort": 33000}])) == {"168.63.129.16"}
}

test_rule_on_udp_80_allowed if {
	details(np_ports({"cidr": "0.0.0.0/0"}, [{"protocol": "UDP", "port": 80}])) == set()
}

test_named_port_never_opens_an_address_range if {
	details(np_ports({"cidr": "0.0.0.0/0"}, [{"protocol": "TCP", "port": "http"}])) == set()
}

test_configured_ports_replace_the_defaults if {
	inp := np_ports({"cidr": "0.0.0.0/0"}, [{"protocol": "TCP", "port": 443}])
	found := {v.details.port | some v in metadata.deny with input as inp with data.stockade.config as {"egress": {"metadata_ports": ["TCP/443"]}}}
	found == {"TCP 443"}
}

test_cilium_to_ports_443_allowed if {
	details(cnp({"endpointSelector": {}, "egress": [{"toEntities": ["world"], "toPorts": [{"ports": [{"port": "443", "protocol": "TCP"}]}]}]})) == set()
}

test_cilium_to_ports_any_80_denied if {
	details(cnp({"endpointSelector": {}, "egress": [{"toCIDR": ["0.0.0.0/0"], "toPorts": [{"ports": [{"port": "80"}]}]}]})) == {"169.254.169.254", "168.63.129.16"}
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

test_calico_allow_tcp_443_allowed if {
	details(calico([{"action": "Allow", "protocol": "TCP", "destination": {"nets": ["0.0.0.0/0"], "ports": [443]}}])) == set()
}

test_calico_allow_port_range_over_80_denied if {
	details(calico([{"action": "Allow", "protocol": 6, "destination": {"nets": ["0.0.0.0/0"], "ports": ["1:1024"]}}])) == {"169.254.169.254", "168.63.129.16"}
}

test_calico_allow_udp_only_allowed if {
	details(calico([{"action": "Allow", "protocol": "UDP", "destination": {"nets": ["0.0.0.0/0"]}}])) == set()
}

test_the_wireserver_is_named_as_such if {
	startswith(endpoint_of("168.63.129.16"), "Azure's WireServer")
	endpoint_of("169.254.169.254") == "the metadata endpoint 169.254.169.254"
}

endpoint_of(addr) := metadata.endpoint(addr)
