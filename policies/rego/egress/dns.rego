# METADATA
# title: DNS to a server other than cluster DNS
# description: >-
#   Workloads must resolve names through the cluster DNS service (egress.cluster_dns: its namespace,
#   pinned by name, and its pods' labels; or an ipBlock / toCIDR of exactly one of
#   egress.cluster_dns.addresses, by default NodeLocal DNSCache's 169.254.20.10): an egress rule that
#   opens port 53 (TCP or UDP, as a number
#   or inside a port range) to any other peer lets pods use an outside resolver, a classic channel for
#   exfiltration and a way around DNS-based egress controls. Rules without explicit ports are reported
#   by the allowlist rules instead. Cilium policies: toPorts opening port 53 to any peer but the cluster
#   DNS endpoints. Decided on the policy object itself, so admission refuses it.
# custom:
#   id: STK-NET-005
#   severity: medium
#   kinds: [NetworkPolicy, CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy]
#   frameworks: [egress]
#   remediation: >-
#     Send DNS only to the cluster DNS pods: namespaceSelector kubernetes.io/metadata.name: kube-system
#     with podSelector k8s-app: kube-dns (as configured in egress.cluster_dns), or to a cluster DNS
#     address (egress.cluster_dns.addresses: NodeLocal DNSCache's 169.254.20.10 by default, kube-dns'
#     Service IP once listed).
package stockade.egress.dns

import data.stockade.lib.cilium
import data.stockade.lib.netpol
import rego.v1

deny contains v if {
	some [i, j, rule, peer] in netpol.egress_peers
	netpol.dns_port(rule)
	not netpol.cluster_dns_peer(peer)
	v := {
		"msg": sprintf("egress rule %d opens DNS (port 53) to a peer that is not cluster DNS", [i]),
		"path": ["spec", "egress", i, "to", j],
		"details": {"peer": peer},
	}
}

deny contains v if {
	some [path, rule, _] in cilium.egress_rules
	cilium.dns_port(rule)
	some [ppath, peer] in cilium.non_dns_peers(rule, path)
	v := {
		"msg": "egress rule opens DNS (port 53) to a peer that is not cluster DNS",
		"path": ppath,
		"details": {"peer": peer},
	}
}
