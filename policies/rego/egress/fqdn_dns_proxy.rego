# METADATA
# title: toFQDNs without the DNS rule Cilium needs
# description: >-
#   Cilium enforces toFQDNs from the DNS answers its DNS proxy sees; the proxy only sees lookups that an
#   egress rule to the DNS server sends through it (toPorts with `rules: {dns: [...]}`). Without such a
#   rule the allowed names never resolve to allowed addresses, the workload breaks, and the usual "fix"
#   is a wide-open rule. Decided on the policy object: a rule set with toFQDNs and no DNS-proxy rule is
#   reported as a warning, since the DNS rule may live in another policy selecting the same pods (a
#   clusterwide DNS policy, for example).
# custom:
#   id: STK-NET-009
#   severity: medium
#   action: warn
#   kinds: [CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy]
#   frameworks: [egress]
#   remediation: >-
#     Add an egress rule to cluster DNS (toEndpoints k8s:io.kubernetes.pod.namespace: kube-system,
#     k8s-app: kube-dns) with toPorts [{ports: [{port: "53", protocol: ANY}], rules: {dns:
#     [{matchPattern: "*"}]}}].
package stockade.egress.fqdn_dns_proxy

import data.stockade.lib.cilium
import rego.v1

deny contains v if {
	some [prefix, s] in cilium.rule_sets
	some i, rule in s.egress
	count(object.get(rule, "toFQDNs", [])) > 0
	not cilium.has_dns_proxy_rule(s)
	v := {
		"msg": "toFQDNs without an egress rule that sends DNS through Cilium's DNS proxy (toPorts rules.dns)",
		"path": array.concat(prefix, ["egress", i, "toFQDNs"]),
		"details": {},
	}
}
