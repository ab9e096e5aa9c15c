package stockade.azure.aks_egress_firewall_test

import data.stockade.azure.aks_egress_firewall as rule
import rego.v1

aks(outbound, facts) := {
	"object": {"type": "Microsoft.ContainerService/managedClusters", "properties": {"networkProfile": {"outboundType": outbound}}},
	"facts": {"aks": facts},
}

fw_route := {"found": true, "nextHopType": "VirtualAppliance", "nextHopIpAddress": "10.0.1.4", "firewall": "fw-hub"}

test_firewall_allowlist_allowed if {
	count(rule.deny) == 0 with input as aks("userDefinedRouting", {"defaultRoute": fw_route, "routeKnown": true, "firewallWildcardRules": []})
}

test_load_balancer_denied if {
	denied := rule.deny with input as aks("loadBalancer", {})
	some v in denied
	v.details.outboundType == "loadBalancer"
}

test_wildcard_denied if {
	denied := rule.deny with input as aks("userDefinedRouting", {"defaultRoute": fw_route, "routeKnown": true, "firewallWildcardRules": ["app/allow-all"]})
	some v in denied
	v.details.rule == "app/allow-all"
}

test_route_to_other_appliance_denied if {
	r := json.patch(fw_route, [{"op": "replace", "path": "/firewall", "value": null}])
	count(rule.deny) == 1 with input as aks("userDefinedRouting", {"defaultRoute": r, "routeKnown": true})
}

test_no_default_route_denied if {
	count(rule.deny) == 1 with input as aks("userDefinedRouting", {"defaultRoute": null, "routeKnown": true})
}

test_unknown_route_reported_only_when_complete if {
	count(rule.deny) == 0 with input as aks("userDefinedRouting", {"defaultRoute": null, "routeKnown": false, "complete": false})
	count(rule.deny) == 1 with input as aks("userDefinedRouting", {"defaultRoute": null, "routeKnown": false, "complete": true})
}
