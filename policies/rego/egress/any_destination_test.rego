package stockade.egress.any_destination_test

import data.stockade.egress.any_destination
import rego.v1

np(spec) := {"object": {"kind": "NetworkPolicy", "metadata": {"name": "p", "namespace": "ml"}, "spec": spec}}

paths(spec) := {v.path | some v in any_destination.deny with input as np(spec)}

test_empty_to_denied if {
	paths({"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"ports": [{"port": 443}]}, {"to": []}]}) == {
		["spec", "egress", 0],
		["spec", "egress", 1],
	}
}

test_policy_types_omitted_with_egress_rules_denied if {
	paths({"podSelector": {}, "egress": [{}]}) == {["spec", "egress", 0]}
}

test_named_destinations_allowed if {
	paths({"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/24"}}]}]}) == set()
}

test_ingress_only_policy_ignores_egress_rules if {
	paths({"podSelector": {}, "policyTypes": ["Ingress"], "egress": [{}]}) == set()
}

calico(kind, egress) := {"object": {
	"apiVersion": "projectcalico.org/v3",
	"kind": kind,
	"metadata": {"name": "p"},
	"spec": {"selector": "all()", "types": ["Egress"], "egress": egress},
}}

test_calico_allow_without_destination_denied if {
	rules := [{"action": "Deny", "destination": {"nets": ["169.254.169.254/32"]}}, {"action": "Allow", "destination": {"notNets": ["10.0.0.0/8"]}}]
	{v.path | some v in any_destination.deny with input as calico("GlobalNetworkPolicy", rules)} == {["spec", "egress", 1]}
}

test_calico_policy_is_not_read_as_kubernetes if {
	rules := [{"action": "Allow", "destination": {"selector": "app == 'db'"}}]
	count(any_destination.deny) == 0 with input as calico("NetworkPolicy", rules)
}
