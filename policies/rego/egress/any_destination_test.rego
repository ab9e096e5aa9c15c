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
