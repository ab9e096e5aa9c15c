# Helpers for the egress rules that read a Calico NetworkPolicy or GlobalNetworkPolicy
# (projectcalico.org/v3).
#
# Calico evaluates a policy's egress rules in order; the first rule that matches a packet and has
# action Allow, Deny or Pass decides (Log does not). Allowlist entries apply as for NetworkPolicies,
# except that a Calico `selector` is an expression, not labels, so entries with workload_labels never
# apply; a GlobalNetworkPolicy has no namespace, so only entries without `namespaces` apply.
package stockade.lib.calico

import rego.v1

is_calico if {
	input.object.kind in {"NetworkPolicy", "GlobalNetworkPolicy"}
	startswith(object.get(input.object, "apiVersion", ""), "projectcalico.org/")
}

cfg := object.get(data.stockade.config, "egress", {})

namespace := object.get(input.object.metadata, "namespace", "")

spec := object.get(input.object, "spec", {})

# [index, rule] of every egress rule.
egress_rules contains [i, rule] if {
	is_calico
	some i, rule in spec.egress
}

allow_rules contains [i, rule] if {
	some [i, rule] in egress_rules
	rule.action == "Allow"
}

# Destination fields that narrow where a rule goes; with none of them it goes anywhere (notNets only
# carves holes out of "anywhere").
narrowing := {"nets", "selector", "namespaceSelector", "serviceAccounts", "services", "domains"}

any_destination(rule) if {
	dest := object.get(rule, "destination", {})
	count({f | some f, value in dest; f in narrowing; value}) == 0
}

entry_applies(entry) if {
	count(object.get(entry, "workload_labels", {})) == 0
	namespaces := object.get(entry, "namespaces", [])
	ns_ok(namespaces)
}

ns_ok(namespaces) if count(namespaces) == 0

ns_ok(namespaces) if {
	namespace != ""
	some pattern in namespaces
	glob.match(pattern, null, namespace)
}

allowed_cidrs contains cidr if {
	some entry in object.get(cfg, "allow", [])
	entry_applies(entry)
	some cidr in object.get(entry, "cidrs", [])
}

cidr_allowed(cidr) if {
	net.cidr_is_valid(cidr)
	some allowed in allowed_cidrs
	net.cidr_contains(allowed, cidr)
}

# Rule i is decided before rule k for every packet to `addr`: an earlier Deny (or Pass, which leaves
# this policy) whose only condition is a destination net holding the address.
shadowed(k, addr) if {
	some [i, rule] in egress_rules
	i < k
	rule.action in {"Deny", "Pass"}
	object.keys(object.remove(rule, ["action", "destination", "metadata"])) == set()
	dest := object.get(rule, "destination", {})
	object.keys(object.remove(dest, ["nets", "notNets"])) == set()
	some n in dest.nets
	net.cidr_is_valid(n)
	net.cidr_contains(n, addr)
	not in_not_nets(dest, addr)
}

in_not_nets(dest, addr) if {
	some n in dest.notNets
	net.cidr_is_valid(n)
	net.cidr_contains(n, addr)
}
