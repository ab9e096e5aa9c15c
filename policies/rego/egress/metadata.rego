# METADATA
# title: Cloud metadata endpoint reachable
# description: >-
#   The instance metadata service (169.254.169.254) hands out the node's cloud credentials, and Azure's
#   WireServer (168.63.129.16) serves the VM's extension configuration; no workload should reach them
#   (egress.metadata_addresses). Reported on a NetworkPolicy whose egress ipBlock contains one of them
#   without an `except` that removes it, and on an isolated workload whose egress policies let it reach
#   one (input.facts.egress.cidrPorts; a workload that is not isolated at all is reported by STK-NET-001).
#   Only rules that open a port the services answer on count (egress.metadata_ports, default TCP 80 and
#   TCP 32526, the WireServer's second port): a rule limited to TCP 443 or UDP 53 does not reach them.
#   Cilium policies: a toCIDR / toCIDRSet or toEntities world that covers an address, unless an
#   egressDeny rule of the same rule set denies it (egressDeny always wins). Calico policies: an Allow
#   rule whose destination nets hold an address, unless its notNets exclude it or an earlier rule
#   (rules apply in order, first match wins) denies that net unconditionally.
# custom:
#   id: STK-NET-006
#   severity: critical
#   kinds: [NetworkPolicy, CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy, GlobalNetworkPolicy, "@workloads"]
#   frameworks: [NSA-CISA, egress]
#   remediation: >-
#     Add 169.254.169.254/32 and 168.63.129.16/32 to the ipBlock's `except`, or narrow the ipBlock to
#     the subnets the workload needs.
package stockade.egress.metadata

import data.stockade.lib.calico
import data.stockade.lib.cilium
import data.stockade.lib.netpol
import rego.v1

addresses := object.get(data.stockade.config, ["egress", "metadata_addresses"], ["169.254.169.254", "168.63.129.16"])

# how a message names an address: Azure's WireServer is not the instance metadata service
endpoint(addr) := "Azure's WireServer 168.63.129.16" if addr == "168.63.129.16"

endpoint(addr) := sprintf("the metadata endpoint %s", [addr]) if addr != "168.63.129.16"

# "PROTO/PORT" -> [PROTO, port]
ports := [[upper(parts[0]), to_number(parts[1])] |
	some text in object.get(data.stockade.config, ["egress", "metadata_ports"], ["TCP/80", "TCP/32526"])
	parts := split(text, "/")
]

# The metadata ports among `opens`, in configuration order (always defined: the compiled VM lets an
# undefined function value through an assignment, so emptiness is tested in the rule body).
opened(opens) := [pp | some pp in ports; opens[pp]]

# "TCP 80", for messages
port_text(pp) := concat(" ", [pp[0], format_int(pp[1], 10)])

excepted(block, addr) if {
	some cut in object.get(block, "except", [])
	net.cidr_is_valid(cut)
	net.cidr_contains(cut, addr)
}

deny contains v if {
	input.object.kind == "NetworkPolicy"
	some [i, j, rule, peer] in netpol.egress_peers
	cidr := peer.ipBlock.cidr
	is_string(cidr)
	net.cidr_is_valid(cidr)
	some addr in addresses
	net.cidr_contains(cidr, addr)
	not excepted(peer.ipBlock, addr)
	found := opened({[proto, n] | some [proto, n] in ports; netpol.opens_port(rule, proto, n)})
	count(found) > 0
	port := port_text(found[0])
	v := {
		"msg": sprintf("egress to %s on %s includes %s", [cidr, port, endpoint(addr)]),
		"path": ["spec", "egress", i, "to", j, "ipBlock"],
		"details": {"cidr": cidr, "address": addr, "port": port},
	}
}

deny contains v if {
	input.facts.egress.isolated == true
	some addr in addresses
	found := opened({[proto, n] |
		some [proto, n] in ports
		some entry in input.facts.egress.cidrPorts
		net.cidr_contains(entry.cidr, addr)
		some [p, lo, hi] in entry.ports
		p == proto
		lo <= n
		n <= hi
	})
	count(found) > 0
	port := port_text(found[0])
	v := {
		"msg": sprintf("the egress policies of these pods let them reach %s on %s", [endpoint(addr), port]),
		"path": ["metadata"],
		"details": {"address": addr, "port": port, "policies": input.facts.egress.policies},
	}
}

# egressDeny of the same rule set removes the address (a deny always wins in Cilium).
cilium_denied(s, addr) if {
	some i, rule in s.egressDeny
	some [_, cidr, cuts] in cilium.rule_cidrs(rule, ["egressDeny", i])
	net.cidr_is_valid(cidr)
	net.cidr_contains(cidr, addr)
	not cut_out(cuts, addr)
}

cilium_denied(s, _) if {
	some rule in s.egressDeny
	some entity in rule.toEntities
	entity in cilium.world_entities
}

cut_out(cuts, addr) if {
	some cut in cuts
	net.cidr_is_valid(cut)
	net.cidr_contains(cut, addr)
}

deny contains v if {
	some [path, rule, s] in cilium.egress_rules
	some [cpath, cidr, cuts] in cilium.rule_cidrs(rule, path)
	net.cidr_is_valid(cidr)
	some addr in addresses
	net.cidr_contains(cidr, addr)
	not cut_out(cuts, addr)
	not cilium_denied(s, addr)
	found := opened({[proto, n] | some [proto, n] in ports; cilium.opens_port(rule, proto, n)})
	count(found) > 0
	port := port_text(found[0])
	v := {
		"msg": sprintf("egress to %s on %s includes %s", [cidr, port, endpoint(addr)]),
		"path": cpath,
		"details": {"cidr": cidr, "address": addr, "port": port},
	}
}

deny contains v if {
	some [path, rule, s] in cilium.egress_rules
	some k, entity in rule.toEntities
	entity in cilium.world_entities
	some addr in addresses
	not cilium_denied(s, addr)
	found := opened({[proto, n] | some [proto, n] in ports; cilium.opens_port(rule, proto, n)})
	count(found) > 0
	port := port_text(found[0])
	v := {
		"msg": sprintf("egress to entity %q on %s includes %s", [entity, port, endpoint(addr)]),
		"path": array.concat(path, ["toEntities", k]),
		"details": {"entity": entity, "address": addr, "port": port},
	}
}

deny contains v if {
	some [i, rule] in calico.allow_rules
	some j, cidr in rule.destination.nets
	net.cidr_is_valid(cidr)
	some addr in addresses
	net.cidr_contains(cidr, addr)
	not calico.in_not_nets(rule.destination, addr)
	not calico.shadowed(i, addr)
	found := opened({[proto, n] | some [proto, n] in ports; calico.opens_port(rule, proto, n)})
	count(found) > 0
	port := port_text(found[0])
	v := {
		"msg": sprintf("egress to %s on %s includes %s", [cidr, port, endpoint(addr)]),
		"path": ["spec", "egress", i, "destination", "nets", j],
		"details": {"cidr": cidr, "address": addr, "port": port},
	}
}
