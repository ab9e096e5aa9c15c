# METADATA
# title: Egress ipBlock outside the allowlist
# description: >-
#   Every ipBlock an egress rule opens must lie inside one CIDR of egress.allow that applies to the
#   policy (an entry applies when its namespaces match the policy's namespace and the policy's
#   podSelector.matchLabels pins its workload_labels). 0.0.0.0/0 (the internet) is never inside a
#   narrower allowlist; `except` narrows the block but is not credited here, and the CIDR must sit
#   inside a single allowlisted CIDR. Nothing is allowlisted by default. Cilium policies are held to
#   the same allowlist: every toCIDR / toCIDRSet CIDR, and toEntities `world` (or `all`), which is the
#   whole address space outside the cluster. Calico policies: every destination net of an Allow
#   egress rule. Decided on the policy object itself, so admission refuses
#   it.
# custom:
#   id: STK-NET-003
#   severity: high
#   kinds: [NetworkPolicy, CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy, GlobalNetworkPolicy]
#   frameworks: [NSA-CISA, egress]
#   remediation: >-
#     Narrow the ipBlock to the subnet the workload needs (a private endpoint, a proxy), or add that
#     subnet to egress.allow for this namespace after review.
package stockade.egress.cidr_allowlist

import data.stockade.lib.calico
import data.stockade.lib.cilium
import data.stockade.lib.netpol
import rego.v1

deny contains v if {
	some [i, j, _, peer] in netpol.egress_peers
	cidr := peer.ipBlock.cidr
	is_string(cidr) # explicit: regorus' VM lets an undefined assignment reach the `not` below
	not netpol.cidr_allowed(cidr)
	v := {
		"msg": sprintf("egress to %s is not in the egress allowlist for namespace %q", [cidr, netpol.namespace]),
		"path": ["spec", "egress", i, "to", j, "ipBlock", "cidr"],
		"details": {"cidr": cidr, "allowed": sort(netpol.allowed_cidrs)},
	}
}

cilium_allowed(cidr, s) if {
	net.cidr_is_valid(cidr)
	some allowed in cilium.allowed_cidrs(s)
	net.cidr_contains(allowed, cidr)
}

deny contains v if {
	some [path, rule, s] in cilium.egress_rules
	some [cpath, cidr, _] in cilium.rule_cidrs(rule, path)
	not cilium_allowed(cidr, s)
	v := {
		"msg": sprintf("egress to %s is not in the egress allowlist", [cidr]),
		"path": cpath,
		"details": {"cidr": cidr, "allowed": sort(cilium.allowed_cidrs(s))},
	}
}

deny contains v if {
	some [path, rule, s] in cilium.egress_rules
	some k, entity in rule.toEntities
	entity in cilium.world_entities
	not cilium_allowed("0.0.0.0/0", s)
	v := {
		"msg": sprintf("egress to entity %q (everything outside the cluster) is not in the egress allowlist", [entity]),
		"path": array.concat(path, ["toEntities", k]),
		"details": {"entity": entity, "allowed": sort(cilium.allowed_cidrs(s))},
	}
}

deny contains v if {
	some [i, rule] in calico.allow_rules
	some j, cidr in rule.destination.nets
	not calico.cidr_allowed(cidr)
	v := {
		"msg": sprintf("egress to %s is not in the egress allowlist", [cidr]),
		"path": ["spec", "egress", i, "destination", "nets", j],
		"details": {"cidr": cidr, "allowed": sort(calico.allowed_cidrs)},
	}
}
