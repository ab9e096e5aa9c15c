# Helpers for the egress rules that read a Kubernetes NetworkPolicy object (input.object).
#
# The allowlist (data.stockade.config.egress): cluster DNS is always allowed; `allow` entries add
# CIDRs and in-cluster namespaces for the workloads they pick (source namespaces by glob, pod labels).
# For a NetworkPolicy, an entry applies when its namespaces match the policy's namespace and every
# workload label it names is pinned by the policy's podSelector.matchLabels (so all pods the policy
# selects carry it).
package stockade.lib.netpol

import rego.v1

cfg := object.get(data.stockade.config, "egress", {})

namespace := object.get(input.object.metadata, "namespace", "default")

spec := object.get(input.object, "spec", {})

# A networking.k8s.io NetworkPolicy (Calico's projectcalico.org/v3 NetworkPolicy shares the kind).
kubernetes_policy if {
	input.object.kind == "NetworkPolicy"
	startswith(object.get(input.object, "apiVersion", "networking.k8s.io/v1"), "networking.k8s.io/")
}

# The policy constrains egress: Egress in policyTypes, or policyTypes omitted and egress rules present.
applies_to_egress if {
	kubernetes_policy
	"Egress" in spec.policyTypes
}

applies_to_egress if {
	kubernetes_policy
	not spec.policyTypes
	count(object.get(spec, "egress", [])) > 0
}

# Every egress rule, with its index: [i, rule].
egress_rules contains [i, rule] if {
	applies_to_egress
	some i, rule in spec.egress
}

# Every peer of a rule with a non-empty `to`: [i, j, rule, peer].
egress_peers contains [i, j, rule, peer] if {
	some [i, rule] in egress_rules
	some j, peer in rule.to
}

selected_labels := object.get(spec, ["podSelector", "matchLabels"], {})

entry_applies(entry) if {
	namespaces := object.get(entry, "namespaces", [])
	ns_ok(namespaces)
	every k, v in object.get(entry, "workload_labels", {}) {
		selected_labels[k] == v
	}
}

ns_ok(namespaces) if count(namespaces) == 0

ns_ok(namespaces) if {
	some pattern in namespaces
	glob.match(pattern, null, namespace)
}

allowed_cidrs contains cidr if {
	some entry in object.get(cfg, "allow", [])
	entry_applies(entry)
	some cidr in object.get(entry, "cidrs", [])
}

allowed_namespace_patterns contains pattern if {
	some entry in object.get(cfg, "allow", [])
	entry_applies(entry)
	some pattern in object.get(entry, "to_namespaces", [])
}

# A CIDR is covered when one allowlisted CIDR contains it (ipBlock.except is not credited), or when
# it is one of the cluster DNS addresses (NodeLocal DNSCache's link-local address, kube-dns' IP).
cidr_allowed(cidr) if dns_address_cidr(cidr)

cidr_allowed(cidr) if {
	net.cidr_is_valid(cidr) # the API server rejects invalid CIDRs; never let one abort evaluation
	some allowed in allowed_cidrs
	net.cidr_contains(allowed, cidr)
}

name_label := "kubernetes.io/metadata.name"

# The namespace names a namespaceSelector pins through kubernetes.io/metadata.name (the label the API
# server sets and nobody can change); undefined when the selector selects by other labels only.
pinned_names(sel) := {sel.matchLabels[name_label]} if {
	sel.matchLabels[name_label]
}

pinned_names(sel) := names if {
	not sel.matchLabels[name_label]
	names := {v |
		some e in sel.matchExpressions
		e.key == name_label
		e.operator == "In"
		some v in e.values
	}
	count(names) > 0
}

# The namespaces a peer reaches when they are pinned by name; a podSelector-only peer: the policy's own.
peer_namespaces(peer) := {namespace} if {
	not peer.ipBlock
	not peer.namespaceSelector
} else := names if {
	names := pinned_names(peer.namespaceSelector)
}

namespace_allowed(name) if name == namespace

namespace_allowed(name) if {
	some pattern in allowed_namespace_patterns
	glob.match(pattern, null, name)
}

dns := object.get(cfg, "cluster_dns", {"namespace": "kube-system", "pod_labels": {"k8s-app": "kube-dns"}})

# A peer that is exactly the cluster DNS pods: the DNS namespace pinned by name, and a podSelector
# that requires the DNS pods' labels.
cluster_dns_peer(peer) if dns_address_cidr(peer.ipBlock.cidr)

# The CIDR is within one cluster DNS address (egress.cluster_dns.addresses: a /32 or /128 of it).
dns_address_cidr(cidr) if {
	is_string(cidr)
	net.cidr_is_valid(cidr)
	some address in object.get(dns, "addresses", [])
	net.cidr_contains(address_cidr(address), cidr)
}

address_cidr(address) := concat("", [address, "/128"]) if contains(address, ":")

address_cidr(address) := concat("", [address, "/32"]) if not contains(address, ":")

cluster_dns_peer(peer) if {
	peer_namespaces(peer) == {dns.namespace}
	peer.namespaceSelector
	every k, v in dns.pod_labels {
		peer.podSelector.matchLabels[k] == v
	}
}

# The rule's ports include DNS (53, TCP or UDP, as a number or within a port range).
dns_port(rule) if {
	some p in rule.ports
	object.get(p, "protocol", "TCP") in {"TCP", "UDP"}
	is_number(p.port)
	p.port <= 53
	object.get(p, "endPort", p.port) >= 53
}

# The rule lets traffic to `port` over `proto` through: no ports (every port), or an entry of that
# protocol (TCP when unset) without a port, with that number, or with a range holding it. A named
# port never matches here: it names a port of a destination pod, and these callers ask about
# addresses outside the cluster (ipBlock), as netpol-analyzer decides.
opens_port(rule, _, _) if count(object.get(rule, "ports", [])) == 0

opens_port(rule, proto, _) if {
	some p in rule.ports
	upper(object.get(p, "protocol", "TCP")) == proto
	not p.port
}

opens_port(rule, proto, port) if {
	some p in rule.ports
	upper(object.get(p, "protocol", "TCP")) == proto
	number := port_number(p.port)
	number <= port
	port <= object.get(p, "endPort", number)
}

port_number(value) := value if is_number(value)

port_number(value) := to_number(value) if {
	is_string(value)
	regex.match(`^[0-9]+$`, value)
}
