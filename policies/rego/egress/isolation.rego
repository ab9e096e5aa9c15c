# METADATA
# title: Workload not isolated for egress
# description: >-
#   Egress is deny-by-default: every pod must be selected by a NetworkPolicy that has Egress in its
#   policyTypes (or egress rules when policyTypes is omitted), normally a namespace-wide default deny
#   (podSelector {}, policyTypes [Egress], no rules) with narrow allowances on top. A pod no egress
#   policy selects may connect anywhere, including the cloud metadata endpoints. Decided from
#   input.facts.egress, computed from the NetworkPolicies of the workload's namespace: in a cluster
#   (admission, audit) all of them; in a scan, only when the scanned files hold the namespace's
#   Namespace object or at least one of its NetworkPolicies (otherwise the answer is unknown and
#   nothing is reported). Isolation is what the CNI applies: a Kubernetes NetworkPolicy with Egress, a
#   Cilium policy with egress rules (unless enableDefaultDeny.egress is false), or a Calico policy of
#   the default tier with Egress selecting the pods. AdminNetworkPolicies do not isolate (they allow,
#   deny or pass given peers); `stockade egress reach` shows what each workload can reach.
# custom:
#   id: STK-NET-001
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [CIS-5.3.2, NSA-CISA, egress]
#   remediation: >-
#     Add a default-deny egress NetworkPolicy to the namespace (podSelector: {}, policyTypes: [Egress])
#     and allow only what the workload needs: cluster DNS and the destinations in egress.allow.
package stockade.egress.isolation

import rego.v1

facts := input.facts.egress

namespace := object.get(input.object.metadata, "namespace", "default")

deny contains v if {
	facts.isolated == false
	v := {
		"msg": sprintf(
			"no NetworkPolicy selects these pods for egress in namespace %q: they can connect anywhere",
			[namespace],
		),
		"path": ["metadata"],
		"details": {"namespace": namespace, "namespaceDefaultDeny": facts.namespaceDefaultDeny},
	}
}
