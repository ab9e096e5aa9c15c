package stockade.exposure.public_load_balancer_test

import data.stockade.exposure.public_load_balancer
import rego.v1

deny(annotations, spec) := d if {
	obj := {"kind": "Service", "metadata": {"name": "s", "annotations": annotations}, "spec": object.union({"type": "LoadBalancer"}, spec)}
	d := public_load_balancer.deny with input as {"object": obj}
}

test_public_load_balancer_denied if {
	some v in deny({}, {})
	v.path == ["spec", "type"]
	count(deny({"service.beta.kubernetes.io/azure-load-balancer-internal": "false"}, {})) == 1
}

test_internal_load_balancer_allowed if {
	count(deny({"service.beta.kubernetes.io/azure-load-balancer-internal": "true"}, {})) == 0
	count(deny({"service.beta.kubernetes.io/azure-load-balancer-internal": "True"}, {})) == 0
	count(deny({"networking.gke.io/load-balancer-type": "Internal"}, {})) == 0
}

test_private_source_ranges_allowed if {
	count(deny({}, {"loadBalancerSourceRanges": ["10.1.0.0/16", "192.168.4.0/24"]})) == 0
	count(deny({}, {"loadBalancerSourceRanges": ["10.1.0.0/16", "0.0.0.0/0"]})) == 1
	count(deny({}, {"loadBalancerSourceRanges": ["203.0.113.0/24"]})) == 1
	count(deny({}, {"loadBalancerSourceRanges": ["not-a-cidr"]})) == 1
	count(deny({}, {"loadBalancerSourceRanges": ["fd00:1::/64"]})) == 0
	count(deny({}, {"loadBalancerSourceRanges": ["2001:db8::/32"]})) == 1
}

test_other_types_allowed if {
	count(deny({}, {"type": "ClusterIP"})) == 0
	count(deny({}, {"type": "NodePort"})) == 0
}
