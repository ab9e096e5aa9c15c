# Helpers for the egress rules that read a Calico NetworkPolicy or GlobalNetworkPolicy
# (projectcalico.org/v3).
#
# Calico evaluates a policy's egress rules in order; the first rule that matches a packet and has
# action Allow, Deny or Pass decides (Log does not). Allowlist entries apply as for NetworkPolicies,
# except that a Calico `selector` is an expression, not labels, so entries with workload_labels never
# apply; a GlobalNetworkPolicy has no namespace, so only entries without `namespaces` apply.
package stockade.lib.calico

import data.stockade.lib.netpol
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

# the cluster DNS addresses (egress.cluster_dns.addresses: NodeLocal DNSCache, kube-dns' IP)
allowed_cidrs contains netpol.address_cidr(address) if {
	some address in object.get(object.get(cfg, "cluster_dns", {}), "addresses", [])
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

# The rule matches traffic to `port` over `proto`: its protocol is unset or that one (by name or
# number), and its destination ports are unset or hold the port (a number or "lo:hi"). Named ports
# never match an address outside the cluster; notPorts are not subtracted (a rule is reported rather
# than missed).
_protocol_numbers := {"TCP": 6, "UDP": 17, "SCTP": 132}

_protocol_ok(rule, _) if not rule.protocol

_protocol_ok(rule, proto) if upper(sprintf("%v", [rule.protocol])) == proto

_protocol_ok(rule, proto) if rule.protocol == _protocol_numbers[proto]

opens_port(rule, proto, _) if {
	_protocol_ok(rule, proto)
	count(object.get(object.get(rule, "destination", {}), "ports", [])) == 0
}

opens_port(rule, proto, port) if {
	_protocol_ok(rule, proto)
	some p in rule.destination.ports
	is_number(p)
	p == port
}

opens_port(rule, proto, port) if {
	_protocol_ok(rule, proto)
	some p in rule.destination.ports
	is_string(p)
	parts := split(p, ":")
	count(parts) == 2
	regex.match(`^[0-9]+$`, parts[0])
	regex.match(`^[0-9]+$`, parts[1])
	to_number(parts[0]) <= port
	port <= to_number(parts[1])
}

opens_port(rule, proto, port) if {
	_protocol_ok(rule, proto)
	some p in rule.destination.ports
	is_string(p)
	regex.match(`^[0-9]+$`, p)
	to_number(p) == port
}
