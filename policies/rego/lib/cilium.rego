# Helpers for the egress rules that read a CiliumNetworkPolicy or CiliumClusterwideNetworkPolicy.
#
# A Cilium policy holds one rule set in `spec` or several in `specs`; each selects endpoints by
# `endpointSelector` and allows egress by `egress` rules (toEndpoints, toCIDR, toCIDRSet, toEntities,
# toFQDNs, toServices, with toPorts), while `egressDeny` rules deny and always win over allows.
# Allowlist entries apply as for NetworkPolicies (lib/netpol.rego), with the endpointSelector's
# matchLabels in place of the podSelector's; a clusterwide policy has no namespace, so only entries
# without `namespaces` apply to it.
package stockade.lib.cilium

import data.stockade.lib.netpol
import rego.v1

kinds := {"CiliumNetworkPolicy", "CiliumClusterwideNetworkPolicy"}

is_cilium if input.object.kind in kinds

cfg := object.get(data.stockade.config, "egress", {})

namespace := object.get(input.object.metadata, "namespace", "")

# [path prefix, spec] of every rule set.
rule_sets contains [["spec"], s] if {
	is_cilium
	s := input.object.spec
	is_object(s)
}

rule_sets contains [["specs", k], s] if {
	is_cilium
	some k, s in input.object.specs
}

# [path of the rule, rule, rule set] of every egress allow rule.
egress_rules contains [array.concat(prefix, ["egress", i]), rule, s] if {
	some [prefix, s] in rule_sets
	some i, rule in s.egress
}

entry_applies(entry, s) if {
	namespaces := object.get(entry, "namespaces", [])
	ns_ok(namespaces)
	every k, v in object.get(entry, "workload_labels", {}) {
		object.get(s, ["endpointSelector", "matchLabels", k], null) == v
	}
}

ns_ok(namespaces) if count(namespaces) == 0

ns_ok(namespaces) if {
	namespace != ""
	some pattern in namespaces
	glob.match(pattern, null, namespace)
}

allowed_cidrs(s) := {cidr |
	some entry in object.get(cfg, "allow", [])
	entry_applies(entry, s)
	some cidr in object.get(entry, "cidrs", [])
} | dns_address_cidrs

# The cluster DNS addresses (egress.cluster_dns.addresses), as CIDRs.
dns_address_cidrs := {netpol.address_cidr(a) | some a in object.get(dns, "addresses", [])}

allowed_fqdns(s) := {f |
	some entry in object.get(cfg, "allow", [])
	entry_applies(entry, s)
	some f in object.get(entry, "fqdns", [])
}

# [path, cidr, except] of every CIDR an egress (or egressDeny) rule names.
rule_cidrs(rule, path) := {[array.concat(path, ["toCIDR", j]), c, []] | some j, c in rule.toCIDR} | {[
	array.concat(path, ["toCIDRSet", j, "cidr"]),
	set.cidr,
	object.get(set, "except", []),
] |
	some j, set in rule.toCIDRSet
}

# Entities outside the cluster (Cilium's `world` and its per-family forms; `all` includes them).
world_entities := {"world", "world-ipv4", "world-ipv6", "all"}

# The names a DNS-proxy rule lets the endpoint resolve: any toPorts rule with `rules.dns`.
has_dns_proxy_rule(s) if {
	some rule in s.egress
	some tp in rule.toPorts
	count(object.get(tp, ["rules", "dns"], [])) > 0
}

ns_keys := {"io.kubernetes.pod.namespace", "k8s:io.kubernetes.pod.namespace"}

# A label of an endpoint selector, with or without Cilium's k8s: source prefix.
sel_label(sel, key) := v if {
	some k, v in object.get(sel, "matchLabels", {})
	k in {key, concat("", ["k8s:", key])}
}

# The namespaces an endpoint selector pins by name: by its labels, else by its In expressions; empty
# when it names none. One body, always defined, and no lookup that may be undefined bound by `:=`:
# the compiled VM answers an `else` chain whose branch fails undefined instead of trying the next,
# and keeps an undefined lookup's result in a comprehension as a value ("<undefined>"), where the
# interpreter does neither (tests/policies/test_vm_differential.py). Callers test `count(...) == 0`.
pinned_namespaces(sel) := names if {
	labelled := {v |
		labels := sel.matchLabels
		is_object(labels)
		some k, v in labels
		k in ns_keys
	}
	expressed := {v |
		exprs := sel.matchExpressions
		is_array(exprs)
		some e in exprs
		e.key in ns_keys
		e.operator == "In"
		is_array(e.values)
		some v in e.values
	}
	names := labelled | {v | count(labelled) == 0; some v in expressed}
}

mentions_namespace(sel) if {
	some k, _ in object.get(sel, "matchLabels", {})
	k in ns_keys
}

mentions_namespace(sel) if {
	some e in sel.matchExpressions
	e.key in ns_keys
}

dns := object.get(cfg, "cluster_dns", {"namespace": "kube-system", "pod_labels": {"k8s-app": "kube-dns"}})

cluster_dns_endpoint(sel) if {
	pinned_namespaces(sel) == {dns.namespace}
	every k, v in dns.pod_labels {
		sel_label(sel, k) == v
	}
}

allowed_namespace_patterns(s) := {p |
	some entry in object.get(cfg, "allow", [])
	entry_applies(entry, s)
	some p in object.get(entry, "to_namespaces", [])
}

namespace_allowed(name, _) if name == namespace

namespace_allowed(name, s) if {
	some pattern in allowed_namespace_patterns(s)
	glob.match(pattern, null, name)
}

# The rule's toPorts open DNS (port 53 over UDP, TCP or ANY, alone or inside a range).
dns_port(rule) if {
	some tp in rule.toPorts
	some p in tp.ports
	upper(object.get(p, "protocol", "ANY")) in {"UDP", "TCP", "ANY"}
	port_text := sprintf("%v", [p.port])
	regex.match(`^[0-9]+$`, port_text) # named ports are not DNS here
	port := to_number(port_text)
	port <= 53
	object.get(p, "endPort", port) >= 53
	port > 0
}

# [path, peer] of every peer of a rule other than cluster DNS endpoints.
non_dns_peers(rule, path) := {[array.concat(path, ["toEndpoints", j]), sel] |
	some j, sel in rule.toEndpoints
	not cluster_dns_endpoint(sel)
} | {[array.concat(path, [field, j]), peer] |
	some field in ["toCIDR", "toCIDRSet", "toEntities", "toFQDNs", "toServices"]
	some j, peer in rule[field]
	not _dns_address_peer(peer)
}

_dns_address_peer(peer) if netpol.dns_address_cidr(peer)

_dns_address_peer(peer) if {
	is_object(peer)
	count(object.get(peer, "except", [])) == 0
	netpol.dns_address_cidr(peer.cidr)
}

# The rule's toPorts let traffic to `port` over `proto` through: no toPorts (every port), or a port
# entry of that protocol (or ANY, the default) whose port is unset, 0 (every port) or a number or
# range holding it. Named ports never match an address outside the cluster.
opens_port(rule, _, _) if count(object.get(rule, "toPorts", [])) == 0

opens_port(rule, _, _) if {
	some tp in rule.toPorts
	count(object.get(tp, "ports", [])) == 0
}

opens_port(rule, proto, port) if {
	some tp in rule.toPorts
	some p in tp.ports
	upper(object.get(p, "protocol", "ANY")) in {proto, "ANY"}
	_port_holds(p, port)
}

_port_holds(p, _) if not p.port

_port_holds(p, _) if sprintf("%v", [p.port]) == "0"

_port_holds(p, port) if {
	text := sprintf("%v", [p.port])
	regex.match(`^[0-9]+$`, text)
	number := to_number(text)
	number <= port
	port <= object.get(p, "endPort", number)
}
