# METADATA
# title: Egress rule without destinations
# description: >-
#   An egress rule of a NetworkPolicy with an empty or missing `to` allows every destination (on its
#   ports): every pod, every namespace, the internet and the cloud metadata endpoints. Deny-by-default
#   egress needs every rule to name its destinations. Calico policies: an Allow egress rule without
#   nets, selectors, service accounts, services or domains in its destination (notNets alone still
#   means the whole internet). Decided on the policy object itself, so admission refuses it.
# custom:
#   id: STK-NET-002
#   severity: high
#   kinds: [NetworkPolicy, GlobalNetworkPolicy]
#   frameworks: [NSA-CISA, egress]
#   remediation: >-
#     Name the destinations in `to`: cluster DNS (namespaceSelector kubernetes.io/metadata.name:
#     kube-system + podSelector k8s-app: kube-dns), namespaces by name, or ipBlocks in egress.allow.
package stockade.egress.any_destination

import data.stockade.lib.calico
import data.stockade.lib.netpol
import rego.v1

deny contains v if {
	some [i, rule] in netpol.egress_rules
	count(object.get(rule, "to", [])) == 0
	v := {
		"msg": sprintf("egress rule %d has no `to`: it allows every destination", [i]),
		"path": ["spec", "egress", i],
		"details": {"rule": i, "ports": object.get(rule, "ports", [])},
	}
}

deny contains v if {
	some [i, rule] in calico.allow_rules
	calico.any_destination(rule)
	v := {
		"msg": sprintf("Calico egress rule %d allows every destination", [i]),
		"path": ["spec", "egress", i],
		"details": {"rule": i},
	}
}
