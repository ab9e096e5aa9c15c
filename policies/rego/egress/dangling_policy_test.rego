package stockade.egress.dangling_policy_test

import data.stockade.egress.dangling_policy
import rego.v1

inp(facts) := {"object": {"kind": "NetworkPolicy", "metadata": {"name": "api", "namespace": "ml"}, "spec": {"podSelector": {"matchLabels": {"app": "apii"}}}}, "facts": facts}

test_selecting_nothing_warned if {
	vs := dangling_policy.deny with input as inp({"networkPolicy": {"selectsPods": false}})
	some v in vs
	v.path == ["spec", "podSelector"]
	v.msg == "NetworkPolicy \"api\" selects no pod in namespace \"ml\": it isolates nothing"
}

test_selecting_or_unknown_allowed if {
	d1 := dangling_policy.deny with input as inp({"networkPolicy": {"selectsPods": true}})
	count(d1) == 0
	d2 := dangling_policy.deny with input as inp({})
	count(d2) == 0
}

test_cilium_path_and_clusterwide_message if {
	vs := dangling_policy.deny with input as {"object": {"kind": "CiliumClusterwideNetworkPolicy", "metadata": {"name": "gpu"}, "spec": {"endpointSelector": {"matchLabels": {"app": "x"}}}}, "facts": {"networkPolicy": {"selectsPods": false, "path": ["spec", "endpointSelector"]}}}
	some v in vs
	v.path == ["spec", "endpointSelector"]
	v.msg == "CiliumClusterwideNetworkPolicy \"gpu\" selects no pod: it isolates nothing"
}
