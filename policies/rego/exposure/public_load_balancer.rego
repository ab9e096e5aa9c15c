# METADATA
# title: LoadBalancer Service faces the internet
# description: >-
#   A Service of type LoadBalancer gets a public IP unless the cloud is told otherwise: on AKS the
#   annotation service.beta.kubernetes.io/azure-load-balancer-internal "true" (the same for AWS, GKE
#   and OCI with their annotations) puts it on a private IP in the VNet. Model-serving, training and
#   notebook endpoints should not face the internet, as private-linked storage does not. Not reported
#   when loadBalancerSourceRanges lists only private ranges (RFC 1918, RFC 6598, IPv6 ULA), which the
#   cloud enforces. A platform's public ingress gateway is the expected exception: waive it by name.
# custom:
#   id: STK-EXP-002
#   severity: high
#   kinds: [Service]
#   frameworks: [aks-baseline, exposure-best-practice]
#   remediation: >-
#     Annotate the Service with service.beta.kubernetes.io/azure-load-balancer-internal: "true" (or
#     use ClusterIP behind the cluster's ingress), restrict loadBalancerSourceRanges, or waive the one
#     public ingress gateway in exceptions.
package stockade.exposure.public_load_balancer

import data.stockade.lib.exposure
import rego.v1

annotations := object.get(object.get(input.object, "metadata", {}), "annotations", {})

internal if {
	some [key, value] in exposure.internal_load_balancer
	is_string(annotations[key])
	lower(annotations[key]) == value
}

private_ranges := ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"]

restricted if {
	ranges := object.get(input.object.spec, "loadBalancerSourceRanges", [])
	count(ranges) > 0
	every r in ranges {
		is_string(r)
		net.cidr_is_valid(r)
		some p in private_ranges
		contains(p, ":") == contains(r, ":") # same address family
		net.cidr_contains(p, r)
	}
}

deny contains v if {
	input.object.kind == "Service"
	input.object.spec.type == "LoadBalancer"
	not internal
	not restricted
	v := {
		"msg": "LoadBalancer Service gets a public IP: set service.beta.kubernetes.io/azure-load-balancer-internal: \"true\" (or your cloud's internal annotation) or restrict loadBalancerSourceRanges to private ranges",
		"path": ["spec", "type"],
		"details": {},
	}
}
