package stockade.egress.isolation_test

import data.stockade.egress.isolation
import rego.v1

wl(facts) := {"object": {"kind": "Deployment", "metadata": {"name": "w", "namespace": "ml"}}, "facts": facts}

test_not_isolated_denied if {
	some v in isolation.deny with input as wl({"egress": {"isolated": false, "namespaceDefaultDeny": false}})
	contains(v.msg, "\"ml\"")
	v.details.namespaceDefaultDeny == false
}

test_isolated_allowed if {
	count(isolation.deny) == 0 with input as wl({"egress": {"isolated": true}})
}

test_unknown_allowed if {
	count(isolation.deny) == 0 with input as wl({"egress": {"isolated": null}})
}

test_no_facts_allowed if {
	count(isolation.deny) == 0 with input as wl({})
}
