# METADATA
# title: Egress to namespaces outside the allowlist
# description: >-
#   An egress peer with a namespaceSelector reaches pods of other namespaces. Each namespace it reaches
#   must be the policy's own or match egress.allow[].to_namespaces (for an entry that applies to the
#   policy); cluster DNS is always allowed. Only namespaces pinned by name (the
#   kubernetes.io/metadata.name label, which the API server sets and nobody can change) can be checked:
#   a selector by other labels (or an empty one, which is every namespace) reaches any namespace
#   someone labels that way later, so it is reported too. Cilium policies: toEndpoints reach other
#   namespaces when they name them (io.kubernetes.pod.namespace), and every namespace when a
#   clusterwide policy does not; toEntities `cluster` and `all` reach every namespace. Decided on the
#   policy object itself, so admission refuses it.
# custom:
#   id: STK-NET-004
#   severity: medium
#   kinds: [NetworkPolicy, CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy]
#   frameworks: [egress]
#   remediation: >-
#     Select destination namespaces by name (matchLabels kubernetes.io/metadata.name: <ns>) and list
#     them in egress.allow[].to_namespaces for this namespace.
package stockade.egress.namespace_allowlist

import data.stockade.lib.cilium
import data.stockade.lib.netpol
import rego.v1

deny contains v if {
	some [i, j, _, peer] in netpol.egress_peers
	sel := peer.namespaceSelector
	is_object(sel) # explicit: regorus' VM lets an undefined assignment reach the `not` below
	not netpol.cluster_dns_peer(peer)
	not netpol.pinned_names(sel)
	v := {
		"msg": "egress peer selects namespaces by label, not by name: it reaches namespaces outside the allowlist",
		"path": ["spec", "egress", i, "to", j, "namespaceSelector"],
		"details": {"namespaceSelector": sel},
	}
}

deny contains v if {
	some [i, j, _, peer] in netpol.egress_peers
	sel := peer.namespaceSelector
	is_object(sel) # explicit: regorus' VM lets an undefined assignment reach the `not` below
	not netpol.cluster_dns_peer(peer)
	some name in netpol.pinned_names(sel)
	not netpol.namespace_allowed(name)
	v := {
		"msg": sprintf("egress to namespace %q is not in the egress allowlist for namespace %q", [name, netpol.namespace]),
		"path": ["spec", "egress", i, "to", j, "namespaceSelector"],
		"details": {"namespace": name, "allowed": sort(netpol.allowed_namespace_patterns)},
	}
}

deny contains v if {
	some [path, rule, s] in cilium.egress_rules
	some j, sel in rule.toEndpoints
	not cilium.cluster_dns_endpoint(sel)
	some name in cilium.pinned_namespaces(sel)
	not cilium.namespace_allowed(name, s)
	v := {
		"msg": sprintf("egress to namespace %q is not in the egress allowlist", [name]),
		"path": array.concat(path, ["toEndpoints", j]),
		"details": {"namespace": name, "allowed": sort(cilium.allowed_namespace_patterns(s))},
	}
}

deny contains v if {
	input.object.kind == "CiliumClusterwideNetworkPolicy"
	some [path, rule, _] in cilium.egress_rules
	some j, sel in rule.toEndpoints
	count(cilium.pinned_namespaces(sel)) == 0
	v := {
		"msg": "clusterwide egress to endpoints of any namespace (the selector names none): outside the allowlist",
		"path": array.concat(path, ["toEndpoints", j]),
		"details": {"endpointSelector": sel},
	}
}

deny contains v if {
	input.object.kind != "CiliumClusterwideNetworkPolicy"
	some [path, rule, _] in cilium.egress_rules
	some j, sel in rule.toEndpoints
	cilium.mentions_namespace(sel)
	count(cilium.pinned_namespaces(sel)) == 0
	v := {
		"msg": "egress to endpoints of namespaces not named (a namespace expression other than In): outside the allowlist",
		"path": array.concat(path, ["toEndpoints", j]),
		"details": {"endpointSelector": sel},
	}
}

deny contains v if {
	some [path, rule, _] in cilium.egress_rules
	some k, entity in rule.toEntities
	entity in {"cluster", "all"}
	v := {
		"msg": sprintf("egress to entity %q reaches every namespace: outside the allowlist", [entity]),
		"path": array.concat(path, ["toEntities", k]),
		"details": {"entity": entity},
	}
}
