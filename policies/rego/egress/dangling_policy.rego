# METADATA
# title: Network policy selects no pod
# description: >-
#   A network policy whose selector matches no pod protects nothing: a typo in a label or a renamed
#   app leaves the pods its author meant to isolate open, while the policy's presence suggests
#   otherwise. Kubernetes NetworkPolicies (podSelector), Cilium's namespaced and clusterwide policies
#   (the endpointSelector of every rule set; host policies with a nodeSelector are not decided) and
#   Calico's namespaced NetworkPolicies (the selector expression, with the namespace labels a pod
#   inherits as pcns.*). Decided where the inventory is complete (an audit, a synced webhook:
#   input.facts.networkPolicy) from the labels of the pods every workload and Pod runs; a scan does
#   not see every workload and does not decide. Selectors on labels that are not the pod's own
#   (Cilium's reserved: and ServiceAccount identities, Calico's projectcalico.org/ and pcsa. labels,
#   a serviceAccountSelector) and Calico GlobalNetworkPolicies (which also select host endpoints) are
#   not decided. An empty selector (a default for every pod, present or future) is never reported.
#   A warning by default: a policy applied before its workload selects nothing yet.
# custom:
#   id: STK-NET-010
#   severity: low
#   action: warn
#   kinds: [NetworkPolicy, CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy]
#   frameworks: [egress]
#   remediation: >-
#     Fix the podSelector to the labels the workload's pods carry (kubectl get pods --show-labels), or
#     delete the policy.
package stockade.egress.dangling_policy

import rego.v1

deny contains v if {
	input.facts.networkPolicy.selectsPods == false
	v := {
		"msg": sprintf("%s %q selects no pod%s: it isolates nothing", [input.object.kind, object.get(input.object.metadata, "name", ""), where]),
		"path": object.get(input.facts.networkPolicy, "path", ["spec", "podSelector"]),
		"details": {},
	}
}

where := "" if input.object.kind == "CiliumClusterwideNetworkPolicy"

else := sprintf(" in namespace %q", [object.get(input.object.metadata, "namespace", "default")])
