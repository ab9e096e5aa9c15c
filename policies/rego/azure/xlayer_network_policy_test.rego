package stockade.azure.xlayer_network_policy_test

import data.stockade.azure.xlayer_network_policy as rule
import rego.v1

cluster(np) := {"name": "aks-prod", "networkPolicy": np, "networkDataplane": "azure", "nodePools": []}

np(spec) := {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "deny", "namespace": "t"}, "spec": spec}

on(obj, c) := {"object": obj, "facts": {"azure": {"cluster": c}}}

egress := {"podSelector": {}, "policyTypes": ["Egress"]}

test_no_engine_is_not_enforced if {
	some v in rule.deny with input as on(np(egress), cluster("none"))
	contains(v.msg, "AKS cluster aks-prod has properties.networkProfile.networkPolicy: none")
	contains(v.msg, "its Egress rules are enforced by nothing")
	v.path == ["spec", "policyTypes"]
	v.details.field == "properties.networkProfile.networkPolicy"
}

test_engines_enforce_networkpolicies if {
	every engine in ["azure", "calico", "cilium", "Cilium"] {
		count(rule.deny) == 0 with input as on(np(egress), cluster(engine))
	}
}

test_only_one_layer_says_nothing if {
	count(rule.deny) == 0 with input as {"object": np(egress), "facts": {}}
}

test_directions_default_as_the_api_server_does if {
	some v in rule.deny with input as on(np({"podSelector": {}, "egress": [{}]}), cluster("none"))
	contains(v.msg, "its Ingress and Egress rules")
	v.path == ["spec"]
}

test_cilium_policies_need_cilium if {
	cnp := {"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy", "metadata": {"name": "c"}, "spec": {}}
	some v in rule.deny with input as on(cnp, cluster("azure"))
	contains(v.msg, "Cilium policy c is not enforced")
	count(rule.deny) == 0 with input as on(cnp, cluster("cilium"))
}

test_calico_policies_need_calico if {
	gnp := {"apiVersion": "projectcalico.org/v3", "kind": "GlobalNetworkPolicy", "metadata": {"name": "g"}, "spec": {}}
	count(rule.deny) == 1 with input as on(gnp, cluster("cilium"))
	count(rule.deny) == 0 with input as on(gnp, cluster("calico"))
	calico_np := json.patch(gnp, [{"op": "replace", "path": "/kind", "value": "NetworkPolicy"}])
	count(rule.deny) == 1 with input as on(calico_np, cluster("azure"))
}

test_unknown_engine_is_quoted if {
	marker := "[unknown: set by an expression stockade cannot evaluate: parameters('np'): no value in x]"
	some v in rule.deny with input as on(np(egress), cluster(marker))
	contains(v.msg, "networkPolicy: set by an expression stockade cannot evaluate: parameters('np')")
}
