# METADATA
# title: Egress FQDN outside the allowlist
# description: >-
#   A Cilium policy's toFQDNs opens egress to DNS names. Each matchName must match, and each
#   matchPattern must be covered by, a name or pattern in egress.allow[].fqdns of an entry that
#   applies to the policy (patterns are globs whose `*` stays within one DNS label, as Cilium's do;
#   a lone `*` in the policy is every name and is covered only by `*`). Nothing is allowlisted by
#   default. Decided on the policy object itself, so admission refuses it.
# custom:
#   id: STK-NET-008
#   severity: high
#   kinds: [CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy]
#   frameworks: [egress]
#   remediation: >-
#     Narrow toFQDNs to the names the workload needs, or add them to egress.allow[].fqdns for this
#     namespace after review.
package stockade.egress.fqdn_allowlist

import data.stockade.lib.cilium
import rego.v1

covered(name, s) if {
	some allowed in cilium.allowed_fqdns(s)
	glob.match(lower(allowed), ["."], lower(trim_suffix(name, ".")))
}

deny contains v if {
	some [path, rule, s] in cilium.egress_rules
	some k, fqdn in rule.toFQDNs
	some field in ["matchName", "matchPattern"]
	name := fqdn[field]
	is_string(name) # explicit: regorus' VM lets an undefined assignment reach the `not` below
	not covered(name, s)
	v := {
		"msg": sprintf("egress to %s %q is not in the egress allowlist", [field, name]),
		"path": array.concat(path, ["toFQDNs", k, field]),
		"details": {field: name, "allowed": sort(cilium.allowed_fqdns(s))},
	}
}
